// With --store postgres://, the batch tables (RangeMarkerStore) and the
// side-effect tables (EffectStore) live in the PostgreSQL database too, on
// the PostgresStore's pool: the stores on a fresh schema of a server each
// test case starts itself (postgres_server.h), then two real instances
// sharing one database through HTTP. Checked: a refund callback's dedup row,
// state and stock release commit or roll back as one; concurrent callbacks
// of one biz serialise; intents, callback and inbox dedup are shared by
// instances; a batch rerun on another instance
// resumes from the markers in PostgreSQL; the flaws act as on SQLite.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/postgres_store.h"
#include "idemproof/ref/range_marker_store.h"
#include "order_api.h"
#include "postgres_server.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref;
using namespace idemproof::ref::testing;
using nlohmann::json;

namespace {

std::int64_t stock_of(Store& store, const std::string& sku) {
  std::int64_t available = -1;
  store.transact([&](StoreTransaction& tx) {
    available = tx.available_stock(sku);
    return true;
  });
  return available;
}

// One instance on `store_url` with its own --db file (which, with --store,
// should hold nothing the instances share).
std::vector<std::string> instance_args(const TempDir& dir, const std::string& name, const std::string& store_url,
                                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--port", "0", "--db", dir.file(name + ".db"), "--store", store_url,
                                "--batch-partition-rows", "10"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

json post_json(const OrderApi& api, const std::string& path, const json& body) {
  const auto r = api.call("POST", path, body.dump(), {"Content-Type: application/json"});
  json out = json::parse(r.body, nullptr, false);
  out["_status"] = r.status;
  return out;
}

json get_json(const OrderApi& api, const std::string& path) {
  const auto r = api.call("GET", path);
  json out = json::parse(r.body, nullptr, false);
  out["_status"] = r.status;
  return out;
}

}  // namespace

TEST_CASE("postgres: a refund callback's dedup row, state and stock release commit as one transaction",
          "[effects][postgres][slow]") {
  PostgresServer pg;
  const std::string url = pg.fresh_schema_url();
  const std::string schema = pg.last_schema();
  PostgresStore store(url);
  EffectStore effects(store);
  store.transact([](StoreTransaction& tx) {
    tx.insert_order(OrderDraft{"b1", "s1", 3, 300, "2024-05-01T12:00:00Z"});
    tx.adjust_stock("s1", -3);
    return true;
  });
  REQUIRE(stock_of(store, "s1") == 997);

  REQUIRE(effects.apply_callback("1", "b1", "paid", Dedup::on).applied);
  CHECK(pg.query_value("SELECT count(*) FROM " + schema + ".provider_callbacks") == "1");
  CHECK(pg.query_value("SELECT state FROM " + schema + ".callback_states WHERE biz_no = 'b1'") == "paid");

  // The state write fails after the stock release ran: all of it rolls back,
  // so the redelivery applies the refund exactly once.
  pg.execute("ALTER TABLE " + schema + ".callback_states ADD CONSTRAINT no_refunds CHECK (state <> 'refunded')");
  CHECK_THROWS_AS(effects.apply_callback("2", "b1", "refunded", Dedup::on), StoreError);
  CHECK(stock_of(store, "s1") == 997);
  CHECK(pg.query_value("SELECT count(*) FROM " + schema + ".provider_callbacks WHERE seq = '2'") == "0");
  CHECK(effects.callback_state("b1")["state"] == "paid");

  pg.execute("ALTER TABLE " + schema + ".callback_states DROP CONSTRAINT no_refunds");
  const auto refund = effects.apply_callback("2", "b1", "refunded", Dedup::on);
  CHECK(refund.applied);
  CHECK(refund.state == "refunded");
  CHECK(stock_of(store, "s1") == 1000);
  const auto again = effects.apply_callback("2", "b1", "refunded", Dedup::on);
  CHECK(again.duplicate);
  CHECK_FALSE(again.applied);
  CHECK(stock_of(store, "s1") == 1000);
}

TEST_CASE("postgres: intents, callbacks and the inbox are shared by every store on the database, flaws kept",
          "[effects][postgres][slow]") {
  PostgresServer pg;
  const std::string url = pg.fresh_schema_url();
  const std::string schema = pg.last_schema();
  // Two instances' stores on one database.
  PostgresStore store_a(url), store_b(url);
  EffectStore a(store_a), b(store_b);

  SECTION("one intent per scope key, seen and settled by either") {
    const auto first = a.open_intent("k1", "b1", 500, "2024-05-01T12:00:00Z");
    const auto second = b.open_intent("k1", "b1", 500, "2024-05-01T12:00:01Z");
    CHECK(second.token == first.token);
    CHECK(first.state == "pending");
    CHECK(pg.query_value("SELECT count(*) FROM " + schema + ".payment_intents") == "1");
    REQUIRE(a.pending_intents().size() == 1);
    b.note_call(first.token);
    b.finish_intent(first.token, "tx-1");
    a.fail_intent(first.token, 503);  // a settled intent does not move again
    CHECK(a.pending_intents().empty());
    const auto paid = a.payments("b1");
    REQUIRE(paid.size() == 1);
    CHECK(paid[0].transaction_id == "tx-1");
    CHECK(paid[0].calls == 1);
    // The no-intent flaw's after-the-fact record is listed too.
    b.record_unkeyed_payment("b1", 700, "tx-2", "2024-05-01T12:00:02Z");
    CHECK(a.payments("b1").size() == 2);
  }

  SECTION("a callback's sequence number is applied once across stores; callback-no-dedup applies it again") {
    CHECK(a.apply_callback("7", "b2", "paid", Dedup::on).applied);
    const auto dup = b.apply_callback("7", "b2", "paid", Dedup::on);
    CHECK(dup.duplicate);
    CHECK(b.callback_state("b2")["applied"] == 1);
    const auto not_allowed = b.apply_callback("8", "b2", "paid", Dedup::on);
    CHECK_FALSE(not_allowed.applied);
    CHECK(not_allowed.ignored == "transition paid -> paid not allowed");
    const auto flawed = b.apply_callback("7", "b2", "paid", Dedup::off);
    CHECK(flawed.applied);
    CHECK(flawed.applied_count == 2);
    CHECK(b.callback_state("unknown") == json{{"biz_no", "unknown"}, {"state", "none"}, {"applied", 0}});
  }

  SECTION("an inbox message is applied once across stores; inbox-no-dedup applies every delivery") {
    CHECK(a.apply_message("m1", "acc", 5, Dedup::on).applied);
    const auto dup = b.apply_message("m1", "acc", 5, Dedup::on);
    CHECK_FALSE(dup.applied);
    CHECK(dup.balance == 5);
    CHECK(pg.query_value("SELECT count(*) FROM " + schema + ".inbox_messages") == "1");
    const auto flawed = b.apply_message("m1", "acc", 5, Dedup::off);
    CHECK(flawed.applied);
    CHECK(flawed.balance == 10);
    CHECK(a.account("acc") == json{{"account", "acc"}, {"balance", 10}, {"applied", 2}});
  }
}

TEST_CASE("postgres: concurrent callbacks of one biz serialise: of 8 different sequence numbers one pays",
          "[effects][postgres][slow]") {
  PostgresServer pg;
  PostgresStore store(pg.fresh_schema_url());
  EffectStore effects(store);
  // Rounds of 8 callbacks released together (8: the pool's connections), each
  // round on a biz of its own: the race needs the rounds to show up.
  for (int round = 0; round < 20; ++round) {
    const std::string biz = "b" + std::to_string(round);
    std::atomic<bool> go{false};
    std::vector<std::future<CallbackOutcome>> calls;
    for (int i = 0; i < 8; ++i) {
      calls.push_back(std::async(std::launch::async, [&, i] {
        while (!go.load()) std::this_thread::yield();
        return effects.apply_callback(biz + "-" + std::to_string(i), biz, "paid", Dedup::on);
      }));
    }
    go = true;
    int applied = 0;
    for (auto& c : calls) applied += c.get().applied ? 1 : 0;
    INFO("biz " << biz);
    CHECK(applied == 1);
    CHECK(effects.callback_state(biz)["applied"] == 1);
  }
}

TEST_CASE("postgres: batch markers live in PostgreSQL and a rerun on another instance resumes from them",
          "[batch][postgres][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess a(instance_args(dir, "a", pg.url())), b(instance_args(dir, "b", pg.url()));
  OrderApi api_a(a.url()), api_b(b.url());

  const json failed = post_json(api_a, "/jobs/j1/run", {{"from", 0}, {"to", 100}, {"fail_after", 35}});
  CHECK(failed["_status"] == 500);
  CHECK(failed["rows_written"] == 35);
  CHECK(pg.query_value("SELECT count(*) FROM range_markers WHERE job = 'j1'") == "3");

  const json rerun = post_json(api_b, "/jobs/j1/run", {{"from", 0}, {"to", 100}});
  CHECK(rerun["_status"] == 200);
  CHECK(rerun["run"] == 2);
  CHECK(rerun["partitions_skipped"] == 3);
  CHECK(rerun["partitions_processed"] == 7);
  CHECK(rerun["rows_written"] == 70);

  const json result = get_json(api_a, "/jobs/j1/result?rows=true");
  CHECK(result["runs"] == 2);
  CHECK(result["totals"]["rows"] == 100);
  CHECK(result["markers"].size() == 10);
  std::map<std::int64_t, int> copies;
  for (const auto& r : result["rows"]) ++copies[r["id"].get<std::int64_t>()];
  CHECK(copies.size() == 100);
  CHECK(copies.rbegin()->second == 1);
  CHECK(pg.query_value("SELECT count(*) FROM batch_results WHERE job = 'j1'") == "100");

  // A third run has nothing left to do.
  const json third = post_json(api_a, "/jobs/j1/run", {{"from", 0}, {"to", 100}});
  CHECK(third["partitions_skipped"] == 10);
  CHECK(third["rows_written"] == 0);
}

TEST_CASE("postgres: flaw no-range-marker still doubles a rerun's rows", "[batch][flaw][postgres][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess a(instance_args(dir, "a", pg.url(), {"--flaw", "no-range-marker"}));
  OrderApi api(a.url());
  post_json(api, "/jobs/j1/run", {{"from", 0}, {"to", 100}, {"fail_after", 35}});
  post_json(api, "/jobs/j1/run", {{"from", 0}, {"to", 100}});
  const json result = get_json(api, "/jobs/j1/result");
  CHECK(result["markers"].empty());
  CHECK(result["totals"]["rows"] == 135);
  CHECK(pg.query_value("SELECT count(*) FROM batch_results_log WHERE job = 'j1'") == "135");
}

TEST_CASE("postgres: callbacks and the inbox are deduplicated across instances, a refund releases stock once",
          "[effects][postgres][instances][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess a(instance_args(dir, "a", pg.url())), b(instance_args(dir, "b", pg.url()));
  OrderApi api_a(a.url()), api_b(b.url());

  REQUIRE(api_a.post_order("k-1", order_json("b1", "s1", 2)).status == 201);
  REQUIRE(api_a.stock("s1") == 998);
  CHECK(post_json(api_a, "/callbacks/payment", {{"seq", 1}, {"biz_no", "b1"}, {"event", "paid"}})["applied"] == true);
  // The refund arrives at the other instance, then is redelivered to both.
  const json refund = post_json(api_b, "/callbacks/payment", {{"seq", 2}, {"biz_no", "b1"}, {"event", "refunded"}});
  CHECK(refund["applied"] == true);
  CHECK(refund["state"] == "refunded");
  for (const auto* api : {&api_a, &api_b}) {
    const json again = post_json(*api, "/callbacks/payment", {{"seq", 2}, {"biz_no", "b1"}, {"event", "refunded"}});
    CHECK(again["duplicate"] == true);
    CHECK(api->stock("s1") == 1000);
  }
  CHECK(get_json(api_a, "/callbacks/payment?biz_no=b1")["applied"] == 2);

  const json message = {{"message_id", "m1"}, {"account", "acc"}, {"amount", 5}};
  CHECK(post_json(api_a, "/inbox", message)["applied"] == true);
  const json redelivered = post_json(api_b, "/inbox", message);
  CHECK(redelivered["_status"] == 200);
  CHECK(redelivered["applied"] == false);
  CHECK(get_json(api_b, "/accounts?account=acc")["balance"] == 5);
  CHECK(pg.query_value("SELECT count(*) FROM inbox_messages") == "1");
}
