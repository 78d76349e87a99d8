#include "sim/simulation.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

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

// One run of one plan; owns the store file, the clock, the provider's
// ledger and the scheduler, and the process that crashes and restarts.
class Trial {
 public:
  explicit Trial(const SimConfig& config) : config_(config), clock_(kSimEpoch), provider_(scheduler_) {
    service_.flaw = config.flaw;
    service_.lease = config.lease;
  }

  ~Trial() {
    scheduler_.AbandonAll();  // unwinds through the process: before it goes
    process_.reset();
    if (keeper_ != nullptr) sqlite3_close(keeper_);  // frees the in-memory store
    if (config_.medium == SimConfig::Medium::file && !path_.empty()) RemoveStore(path_);
  }

  TrialOutcome Run(const SimPlan& plan) {
    TrialOutcome out;
    try {
      OpenStore();
      process_ = std::make_unique<SimulatedProcess>(path_, service_, clock_, scheduler_, provider_, claims_);
      for (const SimOp& op : plan.ops) Apply(op);
      while (!scheduler_.InFlight().empty()) Advance(scheduler_.InFlight().front(), /*drained=*/true);
      for (std::size_t id = 1; id <= scheduler_.RequestCount(); ++id) {
        const std::string& failure = scheduler_.Failure(static_cast<int>(id));
        if (!failure.empty()) out.error = "r" + std::to_string(id) + " threw: " + failure;
      }
      if (out.error.empty()) out.violations = CheckInvariants(History(), config_.lease);
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    scheduler_.AbandonAll();
    out.trace = scheduler_.trace();
    return out;
  }

 private:
  // Creates the trial's store: a copy of the template file, or a fresh shared
  // in-memory database held open by keeper_ so that it outlives crashes.
  void OpenStore() {
    if (config_.medium == SimConfig::Medium::file) {
      const fs::path dir = WorkDir(config_.work_dir);
      path_ = NewStorePath(dir);
      fs::copy_file(StoreTemplate::For(dir), path_, fs::copy_options::overwrite_existing);
      return;
    }
    static std::atomic<std::uint64_t> counter{0};
    path_ = "file:idemproof-sim-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)) +
            "?mode=memory&cache=shared";
    if (sqlite3_open_v2(path_.c_str(), &keeper_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                        nullptr) != SQLITE_OK) {
      throw ref::StoreError("open " + path_ + ": " + (keeper_ ? sqlite3_errmsg(keeper_) : "out of memory"));
    }
  }

  void Apply(const SimOp& op) {
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
        process_.reset();
        process_ = std::make_unique<SimulatedProcess>(path_, service_, clock_, scheduler_, provider_, claims_);
        if (process_->reconciled() > 0) {
          scheduler_.Note("; reconciled " + std::to_string(process_->reconciled()) + " payment intent(s)");
        }
        return;
      }
      case SimOpKind::wait: {
        const ref::Nanos by = config_.lease + std::chrono::seconds(1);
        clock_.advance(by);
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
    if (const auto& answer = scheduler_.Answer(id)) scheduler_.Note(DescribeAnswer(*answer));
  }

  SimHistory History() {
    SimHistory h;
    for (std::size_t i = 0; i < actions_.size(); ++i) {
      h.requests.push_back({static_cast<int>(i + 1), actions_[i], scheduler_.Answer(static_cast<int>(i + 1))});
    }
    h.claims = claims_;
    for (const SimAction& a : ActionPool()) {
      if (a.kind == SimAction::Kind::create_order) {
        h.orders_by_biz[a.biz_no] = process_->OrderCount(a.biz_no);
      } else {
        h.effects_by_biz[a.biz_no] = 0;
      }
    }
    for (const ProviderEffect& e : provider_.effects()) ++h.effects_by_biz[e.reference];
    return h;
  }

  SimConfig config_;
  std::string path_;
  ref::ServiceConfig service_;
  ref::FakeClock clock_;
  StepScheduler scheduler_;
  SimulatedProvider provider_;
  std::vector<ClaimSeen> claims_;
  std::vector<int> actions_;  // request id - 1 -> action index
  std::unique_ptr<SimulatedProcess> process_;
  sqlite3* keeper_ = nullptr;  // shared_memory: keeps the database alive
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
