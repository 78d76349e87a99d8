// ProviderStub: the fake external system a target calls (a payment
// provider), as a map from an HTTP request to a StubReply. The server
// (main.cpp) owns sockets and carries out a reply's disposition (holding the
// connection, signalling the caller); this class never touches a socket or a
// process, so its tests need neither.
//
// Routes (docs/external-stub.md):
//   POST   /charge        {"reference": str, "amount": int}, optional
//                         Idempotency-Key header -> 201 {"transaction_id", ...}
//                         (200 + "replayed": true for a key already charged)
//   GET    /charges?idempotency_key=K|reference=R  -> {"count", "items": [effect]}
//   GET    /ledger[?reference=R]  -> {"count": effects, "effects", "attempts",
//                                     "faults_injected"}
//   POST   /_faults  (see charge_fault.h)   GET / DELETE /_faults
//   DELETE /ledger   forget everything
//   GET    /healthz
//
// Thread-safe: handle() may run concurrently (it blocks for a delay fault).
#pragma once

#include <chrono>
#include <string>

#include "charge_fault.h"
#include "base/http_message.h"
#include "ledger.h"

namespace idemproof::stub {

// What the server must do with a reply.
enum class Disposition {
  answer,             // write the response
  hold,               // write nothing; keep the connection open for `hold_for`, then close
  kill_then_close,    // SIGKILL `pid`, then close without an answer
  stop_answer_kill,   // SIGSTOP `pid`, write the response, SIGKILL `pid`
};

struct StubReply {
  HttpResponse response;
  Disposition disposition = Disposition::answer;
  long pid = 0;
  std::chrono::milliseconds hold_for{0};
};

class ProviderStub {
 public:
  explicit ProviderStub(bool honour_keys = true, std::string key_header = "Idempotency-Key")
      : ledger_(honour_keys), key_header_(std::move(key_header)) {}

  StubReply handle(const HttpRequest& request);

  const Ledger& ledger() const { return ledger_; }
  ChargeFaults& faults() { return faults_; }

 private:
  StubReply charge(const HttpRequest& request);

  Ledger ledger_;
  ChargeFaults faults_;
  std::string key_header_;
};

}  // namespace idemproof::stub
