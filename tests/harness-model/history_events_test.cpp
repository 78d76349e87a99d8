// History events (model/history_events.h): the shapes the builders make are
// the ones model/history.h documents and the oracles read.
#include <catch2/catch.hpp>

#include "model/history_events.h"
#include "model/operation.h"

using namespace idemproof;

namespace {

const RequestSubject kSubject{"create_order", "idem-r-k1", "k1", "biz-r-b1", "b1", "default"};
const RecordedRequest kRequest{"POST", "http://127.0.0.1:1/orders", {{"Idempotency-Key", "idem-r-k1"}}, "{}"};

RecordedExchange Answered(int status) {
  RecordedExchange x;
  x.type = EventType::kOk;
  x.status = status;
  x.headers = {{"Idempotent-Replayed", "true"}};
  x.body = R"({"id":1})";
  return x;
}

}  // namespace

TEST_CASE("history events: a send and its answer", "[model][history]") {
  HistoryEvent invoke = RequestInvoke(event_process::Client(0), event_f::kSend, kSubject, kRequest, 3);
  CHECK(invoke.type == EventType::kInvoke);
  CHECK(invoke.process == "client-0");
  CHECK(invoke.f == "send");
  CHECK(invoke.is_request());
  CHECK(invoke.key_name == "k1");
  CHECK(invoke.biz == "biz-r-b1");
  CHECK(invoke.step == 3);
  CHECK(invoke.value == nlohmann::json::parse(
                            R"({"request":{"method":"POST","url":"http://127.0.0.1:1/orders",
                                "headers":[["Idempotency-Key","idem-r-k1"]],"body":"{}"}})"));
  HistoryEvent done = RequestCompletion(invoke, Answered(201));
  CHECK(done.type == EventType::kOk);
  CHECK(done.action == "create_order");
  CHECK(done.value == nlohmann::json::parse(R"({"connection_reused":false,
      "response":{"status":201,"headers":[["Idempotent-Replayed","true"]],"body":"{\"id\":1}"}})"));
  History h;
  h.Append(invoke);
  h.Append(done);
  auto ops = PairOperations(h);
  REQUIRE(ops.size() == 1);
  REQUIRE(ops[0].answer());
  CHECK(ops[0].answer()->status == 201);
}

TEST_CASE("history events: no answer is info with the error, a resend is counted", "[model][history]") {
  HistoryEvent invoke = RequestInvoke(event_process::Burst(2), event_f::kBurst, kSubject, kRequest, 0);
  CHECK(invoke.process == "burst-2");
  RecordedExchange lost;
  lost.type = EventType::kInfo;
  lost.error = "timeout";
  lost.send_attempts = 2;
  HistoryEvent done = RequestCompletion(invoke, lost);
  CHECK(done.type == EventType::kInfo);
  CHECK(done.value.at("error") == "timeout");
  CHECK(done.value.at("send_attempts") == 2);
  CHECK_FALSE(done.value.contains("response"));
  lost.send_attempts = 1;
  CHECK_FALSE(RequestCompletion(invoke, lost).value.contains("send_attempts"));
}

TEST_CASE("history events: probes, faults, process control and notes on their lanes", "[model][history]") {
  HistoryEvent records = RecordsProbeInvoke("create_order", "biz-r-b1", "b1");
  CHECK(records.process == event_process::kProbe);
  CHECK(records.f == event_f::kProbe);
  CHECK(records.value.at("probe") == "records");
  CHECK(records.value.at("label") == "records:create_order:b1");
  CHECK(records.biz_name == "b1");

  HistoryEvent fault = FaultInvoke("drop", false, 4);
  CHECK(fault.process == event_process::kNemesis);
  CHECK(fault.value == nlohmann::json({{"fault", "drop"}, {"phase", "heal"}}));
  HistoryEvent healed = CompletionOf(fault, EventType::kOk);
  CHECK(healed.type == EventType::kOk);
  CHECK(healed.value == fault.value);

  HistoryEvent kill = ProcessInvoke(event_f::kKill, 2, {{"pid", 9}});
  CHECK(IsTargetControl(kill));
  CHECK(IsTargetDown(kill));
  CHECK_FALSE(IsTargetDown(ProcessInvoke(event_f::kRestart, 2, {})));
  CHECK_FALSE(IsTargetControl(ProcessInvoke(event_f::kSpawn, 2, {})));

  HistoryEvent note = Note(1, "not sent");
  CHECK(note.process == event_process::kHarness);
  CHECK(note.type == EventType::kInfo);
  CHECK(note.value == nlohmann::json({{"note", "not sent"}}));
  CHECK(InjectorEvent({{"phase", "injected"}}).process == event_process::kProxy);
}

TEST_CASE("history events: batch runs and deliveries repeat their own info in the completion", "[model][history]") {
  const nlohmann::json info = {{"job", "job-r-j1"}, {"role", "run"}};
  HistoryEvent run = BatchInvoke(kRequest, info, 0);
  CHECK(run.process == event_process::kBatch);
  HistoryEvent ran = BatchCompletion(run, Answered(200));
  CHECK(ran.value.at("batch") == info);
  CHECK(ran.value.at("response").at("status") == 200);

  HistoryEvent push = DeliverInvoke(kSubject, 1, kRequest, {{"round", 1}}, 0);
  CHECK(push.process == "deliverer-1");
  HistoryEvent pushed = DeliverCompletion(push, Answered(200), true);
  CHECK(pushed.value.at("delivery") == nlohmann::json({{"round", 1}}));
  CHECK(pushed.value.at("ack_lost") == true);
  CHECK_FALSE(DeliverCompletion(push, Answered(200), false).value.contains("ack_lost"));
}

TEST_CASE("history events: a body cut by the run's max_kept is recorded and read back as such", "[model][history]") {
  RecordedExchange x = Answered(200);
  x.body = std::string(4096, 'x');
  x.body_truncated = true;
  x.body_size = 70000;
  x.body_cut_by_kept = true;
  const nlohmann::json response = ResponseJson(x);
  CHECK(response["truncated"] == nlohmann::json::parse(R"({"kept":4096,"size":70000,"exact":false,"by":"max_kept"})"));
  auto a = AnswerFromJson(response);
  REQUIRE(a);
  CHECK(a->truncated);
  CHECK(a->cut_by_kept);
  CHECK(a->CutBy() == "the run's max_kept");
  CHECK(AnswerToJson(*a) == response);
  x.body_cut_by_kept = false;  // cut at max_body: no "by"
  CHECK_FALSE(ResponseJson(x)["truncated"].contains("by"));
  CHECK(AnswerFromJson(ResponseJson(x))->CutBy() == "max_body");
}

TEST_CASE("evidence quotes a body's head only, marks the cut, and never splits a UTF-8 character", "[model][history]") {
  HttpAnswer a;
  a.status = 200;
  a.body = std::string(kEvidenceQuote - 1, 'x') + "\xc3\xa9" + std::string(5000, 'y');  // é across the quote's end
  a.truncated = true;
  a.size = 1 << 20;
  const nlohmann::json quoted = AnswerEvidenceJson(a);
  const std::string body = quoted["body"];
  CHECK(body == std::string(kEvidenceQuote - 1, 'x') + "\u2026 5002 bytes cut");
  CHECK(quoted["truncated"]["kept"] == a.body.size());  // what the history kept
  CHECK(quoted["status"] == 200);
  // A short body is quoted whole, as AnswerToJson does.
  HttpAnswer small;
  small.status = 201;
  small.body = R"({"id":1})";
  CHECK(AnswerEvidenceJson(small) == AnswerToJson(small));
}

// Issue 43: a burst of endless answers wrote each one's share of max_kept
// into history.jsonl (67 MB for 24); a cut body is recorded as its head.
TEST_CASE("history events: a cut body is recorded once as its first 4 KiB with its length", "[model][history]") {
  RecordedExchange x = Answered(200);
  x.body = std::string(kTruncatedBodyHead - 1, 'x') + "\xc3\xa9" + std::string(3 << 20, 'y');  // é across the cut
  x.body_truncated = true;
  x.body_size = x.body.size() + 16384;  // what arrived before the transfer was aborted
  const nlohmann::json response = ResponseJson(x);
  CHECK(response["body"] == std::string(kTruncatedBodyHead - 1, 'x'));  // never half a UTF-8 character
  CHECK(response["truncated"] ==
        nlohmann::json({{"kept", kTruncatedBodyHead - 1}, {"size", x.body_size}, {"exact", false}}));
  auto a = AnswerFromJson(response);
  REQUIRE(a);
  CHECK(a->TruncationNote() == "4095 of more than " + std::to_string(x.body_size) + " bytes kept");
  // A body that was not cut is recorded whole, however long.
  x.body_truncated = false;
  CHECK(ResponseJson(x)["body"].get<std::string>().size() == x.body.size());
  CHECK_FALSE(ResponseJson(x).contains("truncated"));
}

TEST_CASE("the event readers read what the builders write, and nothing from other shapes", "[history_events]") {
  HistoryEvent send;
  send.f = event_f::kSend;
  send.value = {{"request", {{"method", "POST"}, {"url", "http://127.0.0.1:1/orders"}}}, {"instance", "b"}};
  CHECK(RequestLineOf(send).method == "POST");
  CHECK(RequestLineOf(send).url == "http://127.0.0.1:1/orders");
  CHECK(EventText(send, "instance") == "b");
  CHECK(EventText(send, "error").empty());
  HistoryEvent odd;
  odd.value = {{"request", "not an object"}, {"instance", 3}, {"count", "3"}};
  CHECK(RequestLineOf(odd).method.empty());
  CHECK(EventText(odd, "instance").empty());  // not a string: not read as one
  CHECK_FALSE(ProbeCountText(odd).has_value());
  HistoryEvent probe;
  probe.value = {{"count", 3}};
  CHECK(ProbeCountText(probe) == std::optional<std::string>("3"));

  HistoryEvent note = NoteWith(4, {{"note", "burst spread"},
                                   {"burst", {{"n", 8}, {"mode", "h2"}, {"harness_spread_us", 12.5}}}});
  const auto spread = BurstSpreadOf(note);
  REQUIRE(spread.has_value());
  CHECK(spread->step == 4);  // the note's step when the burst names none
  CHECK(spread->n == 8);
  CHECK(spread->mode == "h2");
  CHECK(spread->harness_spread_us == 12.5);
  CHECK_FALSE(spread->target_spread_us.has_value());
  CHECK_FALSE(BurstSpreadOf(Note(4, "no burst here")).has_value());
}
