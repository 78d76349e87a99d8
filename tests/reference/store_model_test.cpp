// The durable stores against a std::map model: random sequences of claim /
// complete / release / lookup / sweep / clock moves (rc::state). The same
// commands run against SqliteStore (a fresh database file per run) and
// PostgresStore (a server of the test's own per test case, a fresh schema per
// run: CREATE SCHEMA costs about nothing, CREATE DATABASE ~40 ms).
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>
#include <rapidcheck/state.h>

#include <atomic>
#include <map>

#include "idemproof/ref/postgres_store.h"
#include "idemproof/ref/sqlite_store.h"
#include "postgres_server.h"
#include "temp_dir.h"

using namespace idemproof::ref;
using namespace std::chrono_literals;
using idemproof::ref::testing::PostgresServer;
using idemproof::ref::testing::TempDir;

namespace {

constexpr Nanos kLease = 3s;
constexpr Nanos kTtl = 5s;
const TimePoint kStart = from_epoch_ns(1'700'000'000'000'000'000);

struct ModelRecord {
  std::string fingerprint;
  bool completed = false;
  std::string owner;
  TimePoint lease_expires;
  int status = 0;
  TimePoint expires;

  bool live_at(TimePoint now) const { return completed ? now < expires : now < lease_expires; }
};

struct Model {
  TimePoint now = kStart;
  std::map<std::string, ModelRecord> records;  // by key; one method + route

  std::optional<ModelRecord> live(const std::string& key) const {
    auto it = records.find(key);
    if (it == records.end() || !it->second.live_at(now)) return std::nullopt;
    return it->second;
  }
};

// The store takes "now" as an argument: the model's clock is the only clock.
// `store` is either store, fresh and empty.
struct System {
  std::unique_ptr<TempDir> dir;  // SqliteStore's file
  std::unique_ptr<Store> owned;
  Store& store;

  static System sqlite() {
    auto dir = std::make_unique<TempDir>();
    auto store = std::make_unique<SqliteStore>(dir->file("model.db"));
    return System(std::move(dir), std::move(store));
  }
  static System postgres(PostgresServer& server) {
    return System(nullptr, std::make_unique<PostgresStore>(server.fresh_schema_url()));
  }

 private:
  System(std::unique_ptr<TempDir> d, std::unique_ptr<Store> s) : dir(std::move(d)), owned(std::move(s)), store(*owned) {}
};

RequestScope scope_of(const std::string& key) { return {"POST", "/orders", key}; }

std::string fresh_owner() {
  static std::atomic<int> counter{0};
  return "owner-" + std::to_string(counter++);
}

// The current owner of `key` in the model, or a token nobody holds.
std::string owner_to_use(const Model& m, const std::string& key, bool stale) {
  auto it = m.records.find(key);
  if (stale || it == m.records.end()) return "stale-owner";
  return it->second.owner;
}

const auto gen_key = [] { return rc::gen::element<std::string>("a", "b", "c"); };

struct Claim : rc::state::Command<Model, System> {
  std::string key = *gen_key();
  std::string fingerprint = *rc::gen::element<std::string>("f1", "f2");
  std::string owner = fresh_owner();

  void apply(Model& m) const override {
    if (m.live(key)) return;
    m.records[key] = ModelRecord{fingerprint, false, owner, m.now + kLease, 0, {}};
  }
  void run(const Model& m, System& s) const override {
    const auto outcome = s.store.claim(
        ClaimRequest{scope_of(key), fingerprint, Lease{owner, m.now + kLease}, m.now});
    const auto live = m.live(key);
    if (!live) {
      const bool had_dead = m.records.count(key) > 0;
      RC_ASSERT(outcome.kind == (had_dead ? ClaimKind::took_over : ClaimKind::claimed));
    } else if (live->fingerprint != fingerprint) {
      RC_ASSERT(outcome.kind == ClaimKind::mismatch);
    } else {
      RC_ASSERT(outcome.kind ==
                (live->completed ? ClaimKind::completed : ClaimKind::in_progress));
      RC_ASSERT(outcome.existing.has_value());
      RC_ASSERT(outcome.existing->lease.owner == live->owner);
    }
  }
  void show(std::ostream& os) const override {
    os << "claim(" << key << ", " << fingerprint << ", " << owner << ")";
  }
};

struct Complete : rc::state::Command<Model, System> {
  std::string key;
  std::string owner;
  int status = *rc::gen::element(201, 400, 409);

  explicit Complete(const Model& m)
      : key(*gen_key()), owner(owner_to_use(m, key, *rc::gen::arbitrary<bool>())) {}

  bool succeeds(const Model& m) const {
    auto it = m.records.find(key);
    return it != m.records.end() && !it->second.completed && it->second.owner == owner;
  }
  void apply(Model& m) const override {
    if (!succeeds(m)) return;
    auto& r = m.records[key];
    r.completed = true;
    r.status = status;
    r.expires = m.now + kTtl;
  }
  void run(const Model& m, System& s) const override {
    const bool done = s.store.transact([&](StoreTransaction& tx) {
      return tx.complete(scope_of(key), owner,
                         StoredResponse{status, "application/json", "", "body-" + key}, m.now,
                         m.now + kTtl, Fencing::by_owner);
    });
    RC_ASSERT(done == succeeds(m));
  }
  void show(std::ostream& os) const override {
    os << "complete(" << key << ", " << owner << ", " << status << ")";
  }
};

struct Release : rc::state::Command<Model, System> {
  std::string key;
  std::string owner;

  explicit Release(const Model& m)
      : key(*gen_key()), owner(owner_to_use(m, key, *rc::gen::arbitrary<bool>())) {}

  bool succeeds(const Model& m) const {
    auto it = m.records.find(key);
    return it != m.records.end() && !it->second.completed && it->second.owner == owner;
  }
  void apply(Model& m) const override {
    if (succeeds(m)) m.records.erase(key);
  }
  void run(const Model& m, System& s) const override {
    RC_ASSERT(s.store.release(scope_of(key), owner) == succeeds(m));
  }
  void show(std::ostream& os) const override { os << "release(" << key << ", " << owner << ")"; }
};

struct Lookup : rc::state::Command<Model, System> {
  std::string key = *gen_key();

  void run(const Model& m, System& s) const override {
    const auto found = s.store.lookup(scope_of(key), m.now);
    const auto expected = m.live(key);
    RC_ASSERT(found.has_value() == expected.has_value());
    if (!expected) return;
    RC_ASSERT(found->fingerprint == expected->fingerprint);
    RC_ASSERT(found->lease.owner == expected->owner);
    RC_ASSERT((found->state == RecordState::completed) == expected->completed);
    if (expected->completed) {
      RC_ASSERT(found->response.has_value());
      RC_ASSERT(found->response->status == expected->status);
      RC_ASSERT(found->response->body == "body-" + key);
      RC_ASSERT(found->expires_at == expected->expires);
    }
  }
  void show(std::ostream& os) const override { os << "lookup(" << key << ")"; }
};

struct Sweep : rc::state::Command<Model, System> {
  void apply(Model& m) const override {
    std::erase_if(m.records, [&](const auto& e) { return !e.second.live_at(m.now); });
  }
  void run(const Model& m, System& s) const override {
    std::size_t dead = 0;
    for (const auto& [key, r] : m.records) dead += r.live_at(m.now) ? 0 : 1;
    RC_ASSERT(s.store.sweep(m.now) == dead);
  }
  void show(std::ostream& os) const override { os << "sweep"; }
};

struct Advance : rc::state::Command<Model, System> {
  Nanos by = std::chrono::seconds(*rc::gen::inRange(0, 4));

  void apply(Model& m) const override { m.now += by; }
  void show(std::ostream& os) const override {
    os << "advance(" << std::chrono::duration_cast<std::chrono::seconds>(by).count() << "s)";
  }
};

}  // namespace

namespace {

template <typename MakeSystem>
void check_against_model(MakeSystem make_system) {
  rc::prop("claim/complete/release/lookup/sweep/expire agree with the model", [&] {
    Model initial;
    System system = make_system();
    rc::state::check(initial, system,
                     rc::state::gen::execOneOfWithArgs<Claim, Complete, Release, Lookup, Sweep,
                                                        Advance>());
  });
}

}  // namespace

TEST_CASE("SqliteStore behaves like the map model", "[store][model][slow]") {
  check_against_model([] { return System::sqlite(); });
}

TEST_CASE("PostgresStore behaves like the map model", "[store][model][postgres][slow]") {
  PostgresServer server;
  check_against_model([&] { return System::postgres(server); });
}
