#include "sim/simulation.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/sqlite_store.h"
#include "search/property_search.h"
#include "sim/simulated_process.h"
#include "sim/simulated_provider.h"

namespace idemproof::sim {

namespace fs = std::filesystem;

namespace {

// 2024-01-01T00:00:00Z: created_at values are the same on every run.
const ref::TimePoint kSimEpoch = ref::from_epoch_ns(1'704'067'200'000'000'000);

fs::path WorkDir(const std::string& work_dir) {
  if (!work_dir.empty()) return work_dir;
  std::error_code ec;
  return fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
}

std::string NewStorePath(const fs::path& dir) {
  static std::atomic<std::uint64_t> counter{0};
  return (dir / ("idemproof-sim-" + std::to_string(::getpid()) + "-" +
                 std::to_string(counter.fetch_add(1)) + ".db"))
      .string();
}

void RemoveStore(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
}

// A store file with the schema already created by the real stores'
// constructors, copied for each trial: creating the schema costs more than
// most plans. One per work dir per process; removed at exit.
class StoreTemplate {
 public:
  // The template for `dir`, created on first use. Throws ref::StoreError.
  static const std::string& For(const fs::path& dir) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<StoreTemplate>> templates;
    std::lock_guard lock(mu);
    auto& t = templates[dir.string()];
    if (!t) t = std::make_unique<StoreTemplate>(dir);
    return t->path_;
  }

  explicit StoreTemplate(const fs::path& dir)
      : path_((dir / ("idemproof-sim-" + std::to_string(::getpid()) + "-template.db")).string()) {
    RemoveStore(path_);
    // Closing both checkpoints the WAL into the file: the copy is complete.
    ref::SqliteStore store(path_);
    ref::EffectStore effects(path_);
  }
  ~StoreTemplate() { RemoveStore(path_); }

 private:
  std::string path_;
};

// Before SQLite's first use in the process (later it is a no-op: the same
// runs, slower): no memory statistics, a global mutex around every SQLite
// allocation that nobody here reads; no per-connection mutex, since each
// connection is used by one thread at a time (its store's mutex; a trial's
// thread). The shared cache's own locking stays.
void ConfigureSqliteOnce() {
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    return true;
  }();
  (void)configured;
}

// The shared-memory medium's stores for one thread and one flaw: one SQLite
// in-memory database with both stores' connections open on it, kept for the
// thread's next trials and emptied before each, instead of a new database,
// schema and connections per trial and per restart (most of a trial's cost).
// Emptying deletes every row of every table (sqlite_sequence included, so
// ids restart at 1): a trial sees what a new database would show it.
class MemoryStores {
 public:
  // This thread's stores for `flaw`, emptied, with their check-then-insert
  // pause made a step point of `scheduler`. Throws ref::StoreError.
  static MemoryStores& ForTrial(ref::Flaw flaw, StepScheduler& scheduler) {
    thread_local std::map<ref::Flaw, std::unique_ptr<MemoryStores>> by_flaw;
    auto& stores = by_flaw[flaw];
    if (!stores) stores = std::make_unique<MemoryStores>(flaw);
    try {
      stores->Empty();
    } catch (...) {
      stores.reset();  // a store left in a state emptying cannot undo: the next trial opens anew
      throw;
    }
    stores->scheduler_ = &scheduler;
    return *stores;
  }

  explicit MemoryStores(ref::Flaw flaw) {
    ConfigureSqliteOnce();
    static std::atomic<std::uint64_t> counter{0};
    const std::string uri = "file:idemproof-sim-" + std::to_string(::getpid()) + "-" +
                            std::to_string(counter.fetch_add(1)) + "?mode=memory&cache=shared";
    // The keeper holds the database while the stores come and go, and empties it.
    if (sqlite3_open_v2(uri.c_str(), &keeper_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                        nullptr) != SQLITE_OK) {
      const std::string message = keeper_ ? sqlite3_errmsg(keeper_) : "out of memory";
      sqlite3_close(keeper_);
      throw ref::StoreError("open " + uri + ": " + message);
    }
    try {
      durable_ = std::make_unique<ref::SqliteStore>(uri, ProcessStoreOptions(flaw, &scheduler_));
      effects_ = std::make_unique<ref::EffectStore>(uri);
      std::vector<std::string> tables;
      ForEachRow("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", [&](sqlite3_stmt* s) {
        tables.push_back("\"" + std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) + "\"");
      });
      std::string occupied = "SELECT ";
      for (std::size_t i = 0; i < tables.size(); ++i) {
        occupied += (i ? ", " : "") + std::string("EXISTS (SELECT 1 FROM ") + tables[i] + ")";
        delete_all_.push_back(Prepare("DELETE FROM " + tables[i]));
      }
      occupied_ = Prepare(occupied);
    } catch (...) {
      Close();
      throw;
    }
  }
  ~MemoryStores() { Close(); }
  MemoryStores(const MemoryStores&) = delete;
  MemoryStores& operator=(const MemoryStores&) = delete;

  ProcessStores stores() { return {*durable_, *effects_}; }

  // A crash must not fall inside a store transaction: the stores' connections
  // outlive it, so an open transaction would survive the restart (a reopened
  // file would have rolled it back). Throws ref::StoreError if one is open.
  void CheckNoTransactionOpen() {
    // Any write transaction of the stores' connections locks the keeper out.
    Exec("BEGIN IMMEDIATE", "a crash fell inside a store transaction");
    Exec("ROLLBACK", "rollback");
  }

 private:
  void Empty() {
    Exec("BEGIN IMMEDIATE", "empty the store (a transaction is open)");
    // Clearing even an empty table writes its root page: only the occupied ones.
    std::vector<bool> occupied(delete_all_.size(), true);
    if (sqlite3_step(occupied_) == SQLITE_ROW) {
      for (std::size_t i = 0; i < occupied.size(); ++i) {
        occupied[i] = sqlite3_column_int(occupied_, static_cast<int>(i)) != 0;
      }
    }
    sqlite3_reset(occupied_);
    for (std::size_t i = 0; i < delete_all_.size(); ++i) {
      if (!occupied[i]) continue;
      sqlite3_stmt* s = delete_all_[i];
      const int rc = sqlite3_step(s);
      sqlite3_reset(s);
      if (rc != SQLITE_DONE) {
        const std::string message = sqlite3_errmsg(keeper_);
        sqlite3_exec(keeper_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw ref::StoreError("empty the store: " + message);
      }
    }
    Exec("COMMIT", "empty the store");
  }

  // Runs one of the keeper's few statements, prepared on first use: parsing
  // BEGIN and COMMIT again for every trial showed in the profile.
  void Exec(const std::string& sql, const char* what) {
    sqlite3_stmt*& s = prepared_[sql];
    if (s == nullptr) s = Prepare(sql);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) throw ref::StoreError(std::string(what) + ": " + sqlite3_errmsg(keeper_));
  }

  sqlite3_stmt* Prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(keeper_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      throw ref::StoreError("prepare " + sql + ": " + sqlite3_errmsg(keeper_));
    }
    return s;
  }

  template <typename OnRow>
  void ForEachRow(const std::string& sql, OnRow on_row) {
    sqlite3_stmt* s = Prepare(sql);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) on_row(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) throw ref::StoreError(sql + ": " + sqlite3_errmsg(keeper_));
  }

  void Close() {
    for (sqlite3_stmt* s : delete_all_) sqlite3_finalize(s);
    delete_all_.clear();
    sqlite3_finalize(occupied_);
    occupied_ = nullptr;
    for (auto& [sql, s] : prepared_) sqlite3_finalize(s);
    prepared_.clear();
    effects_.reset();
    durable_.reset();
    sqlite3_close(keeper_);  // the last connection: frees the database
    keeper_ = nullptr;
  }

  StepScheduler* scheduler_ = nullptr;  // the running trial's (ProcessStoreOptions reads it)
  sqlite3* keeper_ = nullptr;
  std::unique_ptr<ref::SqliteStore> durable_;
  std::unique_ptr<ref::EffectStore> effects_;
  std::vector<sqlite3_stmt*> delete_all_;  // one DELETE per table
  sqlite3_stmt* occupied_ = nullptr;       // one column per table: has it a row?
  std::map<std::string, sqlite3_stmt*> prepared_;  // Exec's
};

// " => 201", " => 409 request-in-progress".
std::string DescribeAnswer(const HttpResponse& r) {
  std::string out = " => " + std::to_string(r.status);
  if (r.status >= 400) {
    const auto body = nlohmann::json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("type") && body["type"].is_string()) {
      std::string type = body["type"].get<std::string>();
      const std::string prefix = "urn:idemproof:";
      if (type.starts_with(prefix)) type = type.substr(prefix.size());
      out += " " + type;
    }
  }
  if (r.header("Idempotent-Replayed")) out += " (replay)";
  return out;
}

HttpRequest ToRequest(const SimAction& a) {
  HttpRequest r;
  r.method = a.method;
  r.target = a.target;
  r.headers = {{"Idempotency-Key", a.key}, {"Content-Type", "application/json"}};
  r.body = a.body;
  return r;
}

// One run of one plan; owns the store file (or borrows the thread's memory
// stores), the clock, the provider's ledger and the scheduler, and the
// process that crashes and restarts.
class Trial {
 public:
  explicit Trial(const SimConfig& config) : config_(config), clock_(kSimEpoch), provider_(scheduler_) {
    service_.flaw = config.flaw;
    service_.lease = config.lease;
  }

  ~Trial() {
    scheduler_.AbandonAll();  // unwinds through the process: before it goes
    process_.reset();
    file_effects_.reset();
    file_durable_.reset();
    if (config_.medium == SimConfig::Medium::file && !path_.empty()) RemoveStore(path_);
  }

  TrialOutcome Run(const SimPlan& plan) {
    TrialOutcome out;
    try {
      OpenStore();
      process_ = std::make_unique<SimulatedProcess>(Stores(), service_, clock_, scheduler_, provider_);
      for (std::size_t i = 0; i < plan.ops.size(); ++i) Apply(plan.ops[i], static_cast<int>(i));
      while (!scheduler_.InFlight().empty()) Advance(scheduler_.InFlight().front(), /*drained=*/true);
      for (std::size_t id = 1; id <= scheduler_.RequestCount(); ++id) {
        const std::string& failure = scheduler_.Failure(static_cast<int>(id));
        if (!failure.empty()) out.error = "r" + std::to_string(id) + " threw: " + failure;
      }
      if (out.error.empty()) {
        Probe();
        Judgement judged = JudgeSimulation(recorder_.history(), SimTarget(config_.lease, service_.dedup_ttl));
        out.violations = std::move(judged.violations);
        out.error = std::move(judged.error);
        out.history = std::move(recorder_).Take();
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    scheduler_.AbandonAll();
    out.trace = scheduler_.trace();
    return out;
  }

 private:
  // The trial's store: the thread's memory stores, emptied; or a copy of the
  // template file, opened.
  void OpenStore() {
    if (config_.medium == SimConfig::Medium::shared_memory) {
      memory_ = &MemoryStores::ForTrial(config_.flaw, scheduler_);
      return;
    }
    const fs::path dir = WorkDir(config_.work_dir);
    path_ = NewStorePath(dir);
    fs::copy_file(StoreTemplate::For(dir), path_, fs::copy_options::overwrite_existing);
    OpenFileStores();
  }

  void OpenFileStores() {
    file_durable_ = std::make_unique<ref::SqliteStore>(path_, ProcessStoreOptions(config_.flaw, &scheduler_ptr_));
    file_effects_ = std::make_unique<ref::EffectStore>(path_);
  }

  ProcessStores Stores() {
    if (memory_ != nullptr) return memory_->stores();
    return {*file_durable_, *file_effects_};
  }

  // The process is gone: the file medium's connections die with it (their
  // reopening is part of the restart); the memory stores outlive it.
  void RestartStores() {
    if (memory_ != nullptr) {
      memory_->CheckNoTransactionOpen();
      return;
    }
    file_effects_.reset();
    file_durable_.reset();
    OpenFileStores();
  }

  // The simulated clock, as the history's time base.
  std::int64_t NowNs() const { return ref::to_epoch_ns(clock_.now()) - ref::to_epoch_ns(kSimEpoch); }

  // `step`: the op's index in the plan (the history's step).
  void Apply(const SimOp& op, int step) {
    switch (op.kind) {
      case SimOpKind::send: {
        if (static_cast<int>(scheduler_.InFlight().size()) >= config_.max_in_flight) return;
        const SimAction& a = ActionPool().at(static_cast<std::size_t>(op.action));
        std::string title = a.name;
        for (std::size_t i = 0; i < actions_.size(); ++i) {
          if (actions_[i] == op.action) {
            title += " (retry of r" + std::to_string(i + 1) + ")";
            break;
          }
        }
        actions_.push_back(op.action);
        // The scheduler numbers requests 1, 2, ... as they are sent: this one is the last.
        recorder_.Sent(static_cast<int>(actions_.size()), op.action, step, NowNs());
        const HttpRequest request = ToRequest(a);
        const int id = scheduler_.Send(title, [this, request] { return process_->Handle(request); });
        NoteIfAnswered(id);
        return;
      }
      case SimOpKind::step: {
        std::vector<int> candidates;  // in flight, of this action, lowest id first
        for (int id : scheduler_.InFlight()) {
          if (actions_[static_cast<std::size_t>(id - 1)] == op.action) candidates.push_back(id);
        }
        if (candidates.empty()) return;
        Advance(candidates[static_cast<std::size_t>(op.nth) % candidates.size()], /*drained=*/false);
        return;
      }
      case SimOpKind::crash: {
        const auto abandoned = scheduler_.AbandonAll();
        std::string line = "crash";
        if (!abandoned.empty()) {
          line += " (";
          for (std::size_t i = 0; i < abandoned.size(); ++i) {
            line += (i ? ", r" : "r") + std::to_string(abandoned[i]);
          }
          line += " abandoned, answers lost)";
        }
        scheduler_.Log(line + "; restart");
        recorder_.Crashed(abandoned, step, NowNs());
        process_.reset();
        RestartStores();
        process_ = std::make_unique<SimulatedProcess>(Stores(), service_, clock_, scheduler_, provider_);
        if (process_->reconciled() > 0) {
          scheduler_.Note("; reconciled " + std::to_string(process_->reconciled()) + " payment intent(s)");
        }
        return;
      }
      case SimOpKind::wait: {
        const ref::Nanos by = config_.lease + std::chrono::seconds(1);
        clock_.advance(by);
        recorder_.Waited(std::chrono::duration_cast<std::chrono::seconds>(by).count(), step, NowNs());
        scheduler_.Log("wait " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(by).count()) +
                       "s (past the lease)");
        return;
      }
    }
  }

  void Advance(int id, bool drained) {
    scheduler_.Advance(id, drained);
    NoteIfAnswered(id);
  }

  void NoteIfAnswered(int id) {
    if (const auto& answer = scheduler_.Answer(id)) {
      recorder_.Answered(id, *answer, NowNs());
      scheduler_.Note(DescribeAnswer(*answer));
    }
  }

  // The end of the run, as a scenario ends: the records of every order
  // business id of the pool (read from the store) and the provider's ledger
  // of every payment business id.
  void Probe() {
    std::set<std::string> orders, payments;
    for (const SimAction& a : ActionPool()) {
      (a.kind == SimAction::Kind::create_order ? orders : payments).insert(a.biz_no);
    }
    for (const std::string& biz : orders) {
      recorder_.Records(biz, static_cast<std::int64_t>(process_->OrderCount(biz)), NowNs());
    }
    for (const std::string& biz : payments) {
      std::vector<std::string> transactions;
      for (const ProviderEffect& e : provider_.effects()) {
        if (e.reference == biz) transactions.push_back(e.transaction_id);
      }
      recorder_.Ledger(biz, transactions, NowNs());
    }
  }

  SimConfig config_;
  std::string path_;
  ref::ServiceConfig service_;
  ref::FakeClock clock_;
  StepScheduler scheduler_;
  SimulatedProvider provider_;
  SimRecorder recorder_;
  std::vector<int> actions_;  // request id - 1 -> action index
  StepScheduler* scheduler_ptr_ = &scheduler_;  // the file store's check-then-insert pause reads it
  MemoryStores* memory_ = nullptr;              // shared_memory: this thread's, borrowed
  std::unique_ptr<ref::SqliteStore> file_durable_;  // file: this process life's connections
  std::unique_ptr<ref::EffectStore> file_effects_;
  std::unique_ptr<SimulatedProcess> process_;
};

}  // namespace

bool SimulationCovers(ref::Flaw flaw) {
  switch (flaw) {
    case ref::Flaw::none:
    case ref::Flaw::check_then_insert:
    case ref::Flaw::unfenced_takeover:
    case ref::Flaw::no_lease_expiry:
    case ref::Flaw::no_intent:
    case ref::Flaw::request_id_key:
    case ref::Flaw::memory_store:
    case ref::Flaw::volatile_replay:
    case ref::Flaw::empty_replay:
      return true;
    default:
      return false;
  }
}

TrialOutcome RunPlan(const SimPlan& plan, const SimConfig& config) {
  Trial trial(config);
  return trial.Run(plan);
}

std::string FormatTrace(const std::vector<TraceLine>& trace) {
  std::string out;
  int n = 0;
  for (const TraceLine& line : trace) {
    ++n;
    out += (n < 10 ? "   " : "  ") + std::to_string(n) + ". " + line.text + (line.drained ? "   [drain]" : "") + "\n";
  }
  return out;
}

SimulateReport Simulate(const SimulateOptions& options) {
  using SteadyClock = std::chrono::steady_clock;
  SimulateReport report;
  report.seed = options.seed;
  const auto start = SteadyClock::now();
  const auto seconds_since_start = [&] {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
  };
  const auto property = [&](const SimPlan& plan) -> std::optional<std::string> {
    if (!report.error.empty()) return std::nullopt;  // the search stopped: pass the rest unexamined
    TrialOutcome outcome = RunPlan(plan, options.config);
    ++report.interleavings;
    if (!report.violation) ++report.trials;
    if (options.on_progress) options.on_progress(report.interleavings);
    if (!outcome.error.empty()) {
      report.error = "plan [" + plan.ToString() + "]: " + outcome.error;
      return std::nullopt;
    }
    if (!outcome.violated()) return std::nullopt;
    if (!report.violation) {
      report.violation = true;
      report.first_failure = plan;
      report.to_first_violation_s = seconds_since_start();
    }
    // The last failure is the minimal plan (the search's counterexample): its run is the one to show.
    const std::string evidence = outcome.violations.front().invariant + ": " + outcome.violations.front().evidence;
    report.minimal_run = std::move(outcome);
    return evidence;
  };
  search::SearchParams params;
  params.name = "simulate";
  params.seed = options.seed;
  params.max_success = options.trials;
  params.max_size = std::max(1, options.max_ops);
  search::SearchResult<SimPlan> result = search::SearchProperty<SimPlan>(SimPlanGen(options.max_ops), property, params);
  if (result.counterexample) report.minimal = std::move(*result.counterexample);
  if (result.outcome == search::SearchOutcome::kError && report.error.empty()) {
    report.error = "RapidCheck: " + result.message;
  }
  report.elapsed_s = seconds_since_start();
  report.interleavings_per_s = report.elapsed_s > 0 ? static_cast<double>(report.interleavings) / report.elapsed_s : 0;
  return report;
}

}  // namespace idemproof::sim
