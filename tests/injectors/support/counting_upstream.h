// CountingUpstream: a minimal HTTP/1.1 upstream for the proxy tests that
// counts what reached it.
//
// Every request gets `200 {"n": <its number>, "method", "target", "body"}`
// with X-Arrival-Ns (steady clock); a request carrying `X-Upstream-Delay-Ms: D`
// is answered D ms later; one carrying `X-Upstream-Unframed` gets an HTTP/1.0
// answer without Content-Length, ended by closing; one carrying
// `X-Upstream-Oversize-Mib: N` gets its header and an N MiB body in one write,
// then a close. Keep-alive is honoured. One thread per connection
// (Beast, synchronous); stop() (and the destructor) closes everything and
// joins every thread.
//
// Thread-safety: counters are safe to read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace idemproof::testkit {

class CountingUpstream {
 public:
  CountingUpstream();  // listens on 127.0.0.1, ephemeral port, serving at once
  ~CountingUpstream();
  CountingUpstream(const CountingUpstream&) = delete;
  CountingUpstream& operator=(const CountingUpstream&) = delete;

  std::uint16_t port() const;
  std::int64_t requests() const;     // requests fully read
  std::int64_t answered() const;     // answers fully written
  std::int64_t connections() const;  // connections accepted
  std::vector<std::string> targets() const;  // "METHOD target" in arrival order
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace idemproof::testkit
