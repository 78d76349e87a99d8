// The reference's request handling (ReferenceService::handle_request, as
// reference-impl/server/http_server.cpp calls it) over any bytes read as an
// HTTP request, on a real SQLite file and a fake clock: every answer has a
// status 100-599, and an error answer is problem+json. A 500 is a bug (the
// service turns an escaped exception into 500): the input is a finding.
// Routes that sleep on request (?slow_ms=, /_chaos) are left out: they would
// only slow the fuzzer down.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "http_bytes.h"
#include "idemproof/ref/clock.h"
#include "idemproof/ref/reference_service.h"
#include "idemproof/ref/sqlite_store.h"

using namespace idemproof;

namespace {
struct Service {
  std::string db = "/tmp/idemproof-fuzz-reference-" + std::to_string(::getpid()) + ".db";
  ref::FakeClock clock{ref::from_epoch_ns(1'700'000'000'000'000'000)};
  ref::SqliteStore store{db};
  ref::ServiceConfig config;
  ref::ReferenceService service{config, store, clock};
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Service* s = new Service;  // one store for the process: records accumulate, as in a real run
  auto message = fuzz::ParseHttp<true>(FuzzText(data, size), 64 * 1024);
  if (!message) return 0;
  HttpRequest request;
  request.method = std::string(message->method_string());
  request.target = std::string(message->target());
  if (request.target.find("slow_ms") != std::string::npos || request.target.find("_chaos") != std::string::npos)
    return 0;
  for (const auto& field : *message)
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  request.body = message->body();
  s->clock.advance(std::chrono::milliseconds(10));
  HttpResponse response = s->service.handle_request(request);
  FUZZ_ASSERT(response.status >= 100 && response.status <= 599);
  if (response.status == 500) {
    std::fprintf(stderr, "500 for %s %s: %s\n", request.method.c_str(), request.target.c_str(), response.body.c_str());
    FUZZ_ASSERT(response.status != 500);
  }
  if (response.status >= 400) {
    auto type = find_header(response.headers, "Content-Type");
    FUZZ_ASSERT(type && type->find("problem+json") != std::string::npos);
  }
  return 0;
}
