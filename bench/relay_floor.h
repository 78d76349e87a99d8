// The floor under the proxy-overhead table: what one extra loopback hop costs
// on this machine with nothing but blocking sockets. A responder thread
// answers a fixed HTTP/1.1 200 to each read; a relay thread copies each
// request to it and its answer back (no parsing, no event loop). The caller's
// thread times `requests` round trips direct and through the relay,
// interleaved, on keep-alive connections.
#pragma once

#include <vector>

namespace idemproof::bench {

struct RelayFloor {
  std::vector<double> direct_us, relayed_us;  // one per round trip
  bool ok = false;                            // every socket call succeeded
};

RelayFloor measure_relay_floor(int requests);

}  // namespace idemproof::bench
