// CurlMultiBurst: the third burst mode of the bench: N requests on N fresh
// connections driven by one libcurl multi handle (what an HTTP-client-based
// harness does). Not in the injectors library: it exists to be compared.
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idemproof::bench {

struct CurlMultiAnswer {
  bool answered = false;
  long status = 0;
  std::optional<std::int64_t> arrival_ns;  // X-Arrival-Ns
};

struct CurlMultiResult {
  std::vector<CurlMultiAnswer> answers;
  std::optional<std::int64_t> target_spread_ns;
};

// `method` `url` with `headers` and `body`, n times at once; deadline `timeout_ms`.
CurlMultiResult curl_multi_burst(std::size_t n, const std::string& method, const std::string& url,
                                 const std::vector<std::string>& headers, const std::string& body,
                                 long timeout_ms);

}  // namespace idemproof::bench
