// Hand-written histories for oracle and metric tests: each call appends what
// the runtime would record for one request, probe or fault, at explicit times
// (milliseconds), so a test reads like a timeline.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "model/history.h"
#include "model/history_events.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"

namespace idemproof::testing {

// The target every oracle test uses (parsed by the real loader): replay
// marker Idempotent-Replayed: true, window 4s, compare_headers [Location],
// target-wide volatile $.trace, actions create_order (records probe, other
// payload) and cancel_order (no records probe), probe stock.
const TargetDescription& ShopTarget();
// ShopTarget() with two callers, alice and bob (Authorization headers);
// `marked` false: without the replay marker.
const TargetDescription& CallersTarget(bool marked = true);
// ShopTarget() judged by another semantics profile (model/profile.h).
TargetDescription ShopTargetUnder(const std::string& profile);
// The same without replay marker and window.
const TargetDescription& PlainTarget();
// ShopTarget() with the replay marker in the body: {"meta": {"replayed": true}}.
const TargetDescription& BodyMarkedTarget();

struct Answer {
  int status = 201;
  std::string body = R"({"id":1})";
  HeaderList headers = {};
};

class LiteralHistory {
 public:
  // One request on `process`: invoke at t0 ms, ok completion at t1 ms.
  LiteralHistory& Send(const std::string& process, const std::string& action, const std::string& key,
                       const std::string& biz, int t0, int t1, const Answer& answer,
                       const std::string& payload = "default");
  // A request whose answer never came (info completion at t1).
  LiteralHistory& Lost(const std::string& process, const std::string& action, const std::string& key,
                       const std::string& biz, int t0, int t1);
  // A request that could not connect (fail completion at t1): never sent.
  LiteralHistory& NotSent(const std::string& process, const std::string& action, const std::string& key,
                          const std::string& biz, int t0, int t1);
  // A request still open at the end (invoke only).
  LiteralHistory& Open(const std::string& process, const std::string& action, const std::string& key,
                       const std::string& biz, int t0);
  LiteralHistory& Records(const std::string& action, const std::string& biz, int count, int t);
  // The requests added after this go as target caller `caller` ("" = none).
  LiteralHistory& As(const std::string& caller) {
    caller_ = caller;
    return *this;
  }
  // The answered requests (Send) added after this carry request variant
  // `variant` ("" = none), as after a `cause:` step.
  LiteralHistory& Variant(const std::string& variant) {
    variant_ = variant;
    return *this;
  }
  // The requests added after this carry malformed key form `form`
  // (model/key_forms.h; "" = none), as a send with `key_form:` records.
  LiteralHistory& KeyForm(const std::string& form) {
    key_form_ = form;
    return *this;
  }
  // The requests added after this carry `request` as sent (default: POST
  // /orders with the body {}).
  LiteralHistory& Carrying(RecordedRequest request) {
    request_ = std::move(request);
    return *this;
  }
  LiteralHistory& Probe(const std::string& probe, const std::string& label, const nlohmann::json& value, int t);
  LiteralHistory& Fault(const std::string& name, const std::string& phase, int t);

  const History& history() const { return h_; }

 private:
  History h_;
  std::string caller_;
  std::string variant_;
  std::string key_form_;
  std::optional<RecordedRequest> request_;
};

// A replay answer: the same body with the marker.
Answer Replay(int status = 201, const std::string& body = R"({"id":1})");

// `base` with a completed process-control event of the target (f: kill,
// stop, restart, pause) at `t` ms, as the runtime records it.
History WithControl(const History& base, const std::string& f, int t);

// Runs one oracle by name with params over the history, against `target`.
Verdict RunOracle(const std::string& name, const History& history, const TargetDescription& target = ShopTarget(),
                  nlohmann::json params = nlohmann::json::object());

}  // namespace idemproof::testing
