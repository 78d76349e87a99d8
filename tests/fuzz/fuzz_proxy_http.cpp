// The chaos proxy's HTTP parsing and relaying (injectors/chaos_proxy.cpp,
// proxy_exchange.cpp): Beast's request and response parsers with a body
// limit, then what the proxy does before it writes a message on: a request
// goes upstream kept alive, an answer goes to a kept-alive client framed by
// FrameForRelay. Any bytes parse or fail cleanly, and a relayed message reads
// back, by its own framing (no close needed), as the same method, target,
// status and body: nothing the proxy relays changes meaning or hangs a client.
// (This target found the unframed HTTP/1.0 answer; regressions/proxy_http.)
#include <sstream>

#include "fuzz_support.h"
#include "http_bytes.h"
#include "injectors/message_framing.h"

namespace {
constexpr std::size_t kBodyLimit = 1 << 20;

template <bool IsRequest>
void Relay(const std::string& bytes) {
  auto first = idemproof::fuzz::ParseHttp<IsRequest>(bytes, kBodyLimit);
  if (!first) return;
  if constexpr (IsRequest) {
    idemproof::injectors::FrameForRelay(*first, /*keep_alive=*/true);  // send_upstream()
  } else {
    idemproof::injectors::FrameForRelay(*first, /*keep_alive=*/true);  // answer_client()
  }
  std::ostringstream out;
  out << *first;
  auto second = idemproof::fuzz::ParseHttp<IsRequest>(out.str(), kBodyLimit, /*until_close=*/false);
  FUZZ_ASSERT(second.has_value());
  FUZZ_ASSERT(second->body() == first->body());
  FUZZ_ASSERT(second->version() == first->version());
  if constexpr (IsRequest) {
    FUZZ_ASSERT(second->method_string() == first->method_string());
    FUZZ_ASSERT(second->target() == first->target());
  } else {
    FUZZ_ASSERT(second->result_int() == first->result_int());
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = FuzzText(data, size);
  Relay<true>(bytes);
  Relay<false>(bytes);
  return 0;
}
