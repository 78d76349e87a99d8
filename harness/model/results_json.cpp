#include "model/results_json.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "model/conformance.h"

namespace idemproof {

// A probe value in details: {"label", "value"} (WriteFields/ReadFields use these).
void to_json(nlohmann::json& j, const FindingValue& v) { j = {{"label", v.label}, {"value", v.value}}; }
void from_json(const nlohmann::json& j, FindingValue& v) {
  v.label = j.at("label").get<std::string>();
  v.value = j.at("value");
}

namespace {

// One typed member of a kind of detail and its JSON name.
template <class Kind, class T>
struct Field {
  const char* name;
  std::optional<T> Kind::*member;
};

using Tally = std::map<std::string, std::int64_t>;
using Lines = std::vector<std::string>;

constexpr Field<DetailCounts, std::int64_t> kCountFields[] = {
    {"judged", &DetailCounts::judged},
    {"undecided", &DetailCounts::undecided},
    {"unprobed", &DetailCounts::unprobed},
    {"shared_keys", &DetailCounts::shared_keys},
    {"keys", &DetailCounts::keys},
    {"replays_checked", &DetailCounts::replays_checked},
    {"replay_marked", &DetailCounts::replay_marked},
    {"past_window", &DetailCounts::past_window},
    {"overlapping_duplicates", &DetailCounts::overlapping_duplicates},
    {"in_progress_answers", &DetailCounts::in_progress_answers},
    {"honouring_clients", &DetailCounts::honouring_clients},
    {"retryable_answers", &DetailCounts::retryable_answers},
    {"executed_retries", &DetailCounts::executed_retries},
    {"retries_in_window", &DetailCounts::retries_in_window},
    {"window_ns", &DetailCounts::window_ns},
    {"window_executions", &DetailCounts::window_executions},
    {"repeated_deliveries", &DetailCounts::repeated_deliveries},
    {"failed_during_store_outage", &DetailCounts::failed_during_store_outage},
    {"bytes_fingerprint_refusals", &DetailCounts::bytes_fingerprint_refusals},
    {"natural_key_refusals", &DetailCounts::natural_key_refusals},
    {"keys_given_up", &DetailCounts::keys_given_up},
    {"applied", &DetailCounts::applied},
    {"counter", &DetailCounts::counter},
    {"before", &DetailCounts::before},
    {"definite", &DetailCounts::definite},
    {"uncertain", &DetailCounts::uncertain},
    {"deliveries", &DetailCounts::deliveries},
    {"broker_redeliveries", &DetailCounts::broker_redeliveries},
    {"effects", &DetailCounts::effects},
    {"successes", &DetailCounts::successes},
    {"struck_event", &DetailCounts::struck_event},
};

constexpr Field<DetailTallies, Tally> kTallyFields[] = {
    {"answered", &DetailTallies::answered},   {"auth_refused", &DetailTallies::auth_refused},
    {"key_unheld", &DetailTallies::key_unheld}, {"refused", &DetailTallies::refused},
    {"set_aside", &DetailTallies::set_aside}, {"messages", &DetailTallies::messages},
    {"worth", &DetailTallies::worth},         {"injected", &DetailTallies::injected},
    {"picked", &DetailTallies::picked},
};

constexpr Field<DetailTexts, std::string> kTextFields[] = {
    {"counts", &DetailTexts::counts},
    {"retry_after", &DetailTexts::retry_after},
    {"min", &DetailTexts::min},
    {"refused_by_authentication", &DetailTexts::refused_by_authentication},
    {"downstream", &DetailTexts::downstream},
    {"method", &DetailTexts::method},
    {"path", &DetailTexts::path},
    {"by", &DetailTexts::by},
    {"job", &DetailTexts::job},
    {"markers", &DetailTexts::markers_note},
    {"redone_rows", &DetailTexts::redone_rows_note},
};

constexpr Field<DetailLists, Lines> kListFields[] = {
    {"needs", &DetailLists::needs},
    {"request_differences", &DetailLists::request_differences},
    {"not_the_other_caller", &DetailLists::not_the_other_caller},
    {"effect_ids", &DetailLists::effect_ids},
    {"downstream_keys", &DetailLists::downstream_keys},
    {"undecided", &DetailLists::undecided_lines},
};

constexpr Field<DetailProbes, FindingValue> kProbeFields[] = {
    {"a", &DetailProbes::a},
    {"b", &DetailProbes::b},
};

constexpr Field<DetailRecords, nlohmann::json> kRecordFields[] = {
    {"judged", &DetailRecords::judged_rows},
    {"keys", &DetailRecords::key_rows},
    {"requests", &DetailRecords::requests},
    {"calls", &DetailRecords::calls},
    {"ledger", &DetailRecords::ledger},
    {"recorded", &DetailRecords::recorded},
    {"markers", &DetailRecords::markers},
    {"redone_rows", &DetailRecords::redone_rows},
    {"clean_totals", &DetailRecords::clean_totals},
    {"after_rerun", &DetailRecords::after_rerun},
    {"later_reruns", &DetailRecords::later_reruns},
    {"failing_run", &DetailRecords::failing_run},
    {"reruns", &DetailRecords::reruns},
    {"clean_run", &DetailRecords::clean_run},
    {"final", &DetailRecords::final_comparison},
    {"missed", &DetailRecords::missed},
};

// Every member of a kind has its row: a member added without one fails to
// compile here (each kind holds members of one type only).
template <class Kind, class T, std::size_t N>
constexpr bool EveryMemberHasARow(const Field<Kind, T> (&)[N]) {
  return sizeof(Kind) == N * sizeof(std::optional<T>);
}
static_assert(EveryMemberHasARow(kCountFields), "a DetailCounts member lacks its row in kCountFields");
static_assert(EveryMemberHasARow(kTallyFields), "a DetailTallies member lacks its row in kTallyFields");
static_assert(EveryMemberHasARow(kTextFields), "a DetailTexts member lacks its row in kTextFields");
static_assert(EveryMemberHasARow(kListFields), "a DetailLists member lacks its row in kListFields");
static_assert(EveryMemberHasARow(kProbeFields), "a DetailProbes member lacks its row in kProbeFields");
static_assert(EveryMemberHasARow(kRecordFields), "a DetailRecords member lacks its row in kRecordFields");

template <class Kind, class T, std::size_t N>
void WriteFields(const Kind& kind, const Field<Kind, T> (&fields)[N], nlohmann::json& out) {
  for (const auto& f : fields)
    if (const auto& value = kind.*f.member) out[f.name] = *value;
}

// Moves each member of `rest` that a field names and `fits` into `kind`.
template <class Kind, class T, std::size_t N, class Fits>
void ReadFields(nlohmann::json& rest, Kind& kind, const Field<Kind, T> (&fields)[N], Fits fits) {
  for (const auto& f : fields) {
    auto it = rest.find(f.name);
    if (it == rest.end() || !fits(*it)) continue;
    kind.*f.member = it->template get<T>();
    rest.erase(it);
  }
}

bool IsProbe(const nlohmann::json& j) {
  return j.is_object() && j.size() == 2 && j.contains("label") && j["label"].is_string() && j.contains("value");
}

bool IsTally(const nlohmann::json& j) {
  return j.is_object() && std::all_of(j.begin(), j.end(), [](const nlohmann::json& n) { return n.is_number_integer(); });
}
bool IsLines(const nlohmann::json& j) {
  return j.is_array() && std::all_of(j.begin(), j.end(), [](const nlohmann::json& n) { return n.is_string(); });
}

}  // namespace

nlohmann::json VerdictDetailsToJson(const VerdictDetails& d) {
  nlohmann::json out = d.unknown.is_object() ? d.unknown : nlohmann::json::object();
  if (d.violations) {
    nlohmann::json list = nlohmann::json::array();
    for (const Finding& f : *d.violations) list.push_back(FindingToJson(f));
    out["violations"] = std::move(list);
  }
  WriteFields(d.counts, kCountFields, out);
  WriteFields(d.tallies, kTallyFields, out);
  WriteFields(d.texts, kTextFields, out);
  WriteFields(d.lists, kListFields, out);
  WriteFields(d.probes, kProbeFields, out);
  WriteFields(d.records, kRecordFields, out);
  return out;
}

VerdictDetails VerdictDetailsFromJson(const nlohmann::json& doc) {
  VerdictDetails d;
  if (!doc.is_object()) return d;
  nlohmann::json rest = doc;
  if (auto it = rest.find("violations"); it != rest.end() && it->is_array()) {
    d.violations.emplace();
    for (const auto& f : *it) d.violations->push_back(FindingFromJson(f));
    rest.erase(it);
  }
  ReadFields(rest, d.counts, kCountFields, [](const nlohmann::json& j) { return j.is_number_integer(); });
  ReadFields(rest, d.tallies, kTallyFields, IsTally);
  ReadFields(rest, d.texts, kTextFields, [](const nlohmann::json& j) { return j.is_string(); });
  ReadFields(rest, d.lists, kListFields, IsLines);
  ReadFields(rest, d.probes, kProbeFields, IsProbe);
  ReadFields(rest, d.records, kRecordFields, [](const nlohmann::json&) { return true; });
  d.unknown = std::move(rest);
  return d;
}

nlohmann::json VerdictToJson(const Verdict& v) {
  nlohmann::json out = {{"oracle", v.oracle},
                        {"status", VerdictStatusName(v.status)},
                        {"evidence", v.evidence},
                        {"details", VerdictDetailsToJson(v.details)}};
  if (v.status == VerdictStatus::kInvalid) out["severity"] = SeverityName(v.severity);
  if (!v.rule.id.empty()) out["rule"] = {{"id", v.rule.id}, {"text", v.rule.text}, {"level", v.rule.level}};
  if (!v.premise.what.empty())
    out["premise"] = {{"what", v.premise.what},
                      {"count", v.premise.count ? nlohmann::json(*v.premise.count) : nlohmann::json(nullptr)}};
  return out;
}

Result<Verdict> VerdictFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("verdict: expected an object");
  Verdict v;
  try {
    v.oracle = doc.at("oracle").get<std::string>();
    auto st = ParseVerdictStatus(doc.at("status").get<std::string>());
    if (!st.ok()) return st.status();
    v.status = *st;
    v.evidence = doc.value("evidence", "");
    auto severity = ParseSeverity(doc.value("severity", "violation"));
    if (!severity.ok()) return severity.status();
    v.severity = *severity;
    if (doc.contains("details")) v.details = VerdictDetailsFromJson(doc["details"]);
    if (doc.contains("rule") && doc["rule"].is_object()) {
      const auto& r = doc["rule"];
      v.rule = {r.value("id", std::string()), r.value("text", std::string()), r.value("level", std::string())};
    }
    if (doc.contains("premise") && doc["premise"].is_object()) {
      const auto& p = doc["premise"];
      v.premise.what = p.value("what", std::string());
      if (p.contains("count") && p["count"].is_number_integer()) v.premise.count = p["count"].get<std::int64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("verdict: ") + e.what());
  }
  return v;
}

nlohmann::json ScenarioResultToJson(const ScenarioResult& r) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : r.verdicts) verdicts.push_back(VerdictToJson(v));
  nlohmann::json out = {{"name", r.name},
          {"file", r.file},
          {"layer", r.layer},
          {"hunts", r.hunts},
          {"outcome", VerdictStatusName(r.Outcome())},
          {"verdicts", verdicts},
          {"fault_counts", r.fault_counts},
          {"warnings", r.warnings},
          {"error", r.error},
          {"events", r.events},
          {"elapsed_ms", r.elapsed_ms},
          {"history_file", r.history_file},
          {"metrics", MetricsToJson(r.metrics)}};
  if (r.Deviations() > 0) out["deviations"] = r.Deviations();  // absent = none (goldens stay)
  // Only bound rows carry their binding (older readers and goldens stay as they were).
  if (!r.bound_from.empty()) {
    out["scenario"] = r.bound_from;
    out["binding"] = r.binding;
  }
  return out;
}

Result<ScenarioResult> ScenarioResultFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("scenario result: expected an object");
  ScenarioResult r;
  try {
    r.name = doc.at("name").get<std::string>();
    r.file = doc.value("file", "");
    r.layer = doc.value("layer", "");
    r.hunts = doc.value("hunts", "");
    r.bound_from = doc.value("scenario", "");
    r.binding = doc.value("binding", std::map<std::string, std::string>{});
    for (const auto& v : doc.value("verdicts", nlohmann::json::array())) {
      auto verdict = VerdictFromJson(v);
      if (!verdict.ok()) return verdict.status();
      r.verdicts.push_back(*verdict);
    }
    r.fault_counts = doc.value("fault_counts", std::map<std::string, std::int64_t>{});
    r.warnings = doc.value("warnings", std::vector<std::string>{});
    r.error = doc.value("error", "");
    r.events = doc.value("events", std::int64_t{0});
    r.elapsed_ms = doc.value("elapsed_ms", std::int64_t{0});
    r.history_file = doc.value("history_file", "");
    if (doc.contains("metrics")) {
      auto m = MetricsFromJson(doc["metrics"]);
      if (!m.ok()) return m.status();
      r.metrics = *m;
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("scenario result: ") + e.what());
  }
  return r;
}

nlohmann::json HuntResultsToJson(const HuntResults& h) {
  nlohmann::json j = {{"budget", h.budget},
                      {"spec_file", h.spec_file},
                      {"oracles", h.oracles},
                      {"exit_code", h.exit_code},
                      {"outcome", h.outcome}};
  if (h.outcome == "not_run") {
    j["reason"] = h.reason;
    return j;
  }
  j["run_dir"] = h.run_dir;
  j["seed"] = h.seed;
  j["namespace"] = h.run_namespace;
  j["workloads"] = h.workloads;
  j["runs"] = h.runs;
  j["passed"] = h.passed;
  j["undecided"] = h.undecided;
  j["unexercised"] = h.unexercised;
  j["errors"] = h.errors;
  j["operations"] = h.operations;
  j["ops_by_kind"] = h.ops_by_kind;
  j["faults_fired"] = h.faults_fired;
  j["elapsed_ms"] = h.elapsed_ms;
  j["time_budget_hit"] = h.time_budget_hit;
  if (!h.stop_reason.empty()) j["stop_reason"] = h.stop_reason;
  j["excluded"] = nlohmann::json::array();
  for (const auto& x : h.excluded) j["excluded"].push_back({{"op", x.op}, {"reason", x.reason}});
  if (h.failure) {
    const HuntFailure& f = *h.failure;
    nlohmann::json invalid = nlohmann::json::array();
    for (const auto& [oracle, evidence] : f.invalid) invalid.push_back({{"oracle", oracle}, {"evidence", evidence}});
    j["failure"] = {{"first_failure", f.first_failure},
                    {"first_failure_ops", f.first_failure_ops},
                    {"to_first_failure_ms", f.to_first_failure_ms},
                    {"minimal", f.minimal},
                    {"minimal_ops", f.minimal_ops},
                    {"shrink_steps", f.shrink_steps},
                    {"shrinking_ms", f.shrinking_ms},
                    {"reproduced", f.reproduced},
                    {"confirm_runs", f.confirm_runs},
                    {"invalid", invalid},
                    {"repro_file", f.repro_file},
                    {"repro_command", f.repro_command}};
  }
  return j;
}

Result<HuntResults> HuntResultsFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("hunt: expected an object");
  HuntResults h;
  try {
    h.budget = doc.value("budget", "");
    h.spec_file = doc.value("spec_file", "");
    h.oracles = doc.value("oracles", std::vector<std::string>{});
    h.exit_code = doc.value("exit_code", 3);
    h.outcome = doc.value("outcome", std::string("undecided"));
    h.reason = doc.value("reason", "");
    h.run_dir = doc.value("run_dir", "");
    h.seed = doc.value("seed", std::uint64_t{0});
    h.run_namespace = doc.value("namespace", "");
    h.workloads = doc.value("workloads", std::int64_t{0});
    h.runs = doc.value("runs", std::int64_t{0});
    h.passed = doc.value("passed", std::int64_t{0});
    h.undecided = doc.value("undecided", std::int64_t{0});
    h.unexercised = doc.value("unexercised", std::int64_t{0});
    h.errors = doc.value("errors", std::int64_t{0});
    h.operations = doc.value("operations", std::int64_t{0});
    h.ops_by_kind = doc.value("ops_by_kind", std::map<std::string, std::int64_t>{});
    h.faults_fired = doc.value("faults_fired", std::int64_t{0});
    h.elapsed_ms = doc.value("elapsed_ms", std::int64_t{0});
    h.time_budget_hit = doc.value("time_budget_hit", false);
    h.stop_reason = doc.value("stop_reason", "");
    for (const auto& x : doc.value("excluded", nlohmann::json::array()))
      h.excluded.push_back({x.value("op", ""), x.value("reason", "")});
    if (doc.contains("failure") && doc["failure"].is_object()) {
      const nlohmann::json& f = doc["failure"];
      HuntFailure failure;
      failure.first_failure = f.value("first_failure", "");
      failure.first_failure_ops = f.value("first_failure_ops", std::int64_t{0});
      failure.to_first_failure_ms = f.value("to_first_failure_ms", std::int64_t{0});
      failure.minimal = f.value("minimal", "");
      failure.minimal_ops = f.value("minimal_ops", std::int64_t{0});
      failure.shrink_steps = f.value("shrink_steps", std::int64_t{0});
      failure.shrinking_ms = f.value("shrinking_ms", std::int64_t{0});
      failure.reproduced = f.value("reproduced", std::int64_t{0});
      failure.confirm_runs = f.value("confirm_runs", std::int64_t{0});
      for (const auto& v : f.value("invalid", nlohmann::json::array()))
        failure.invalid.emplace_back(v.value("oracle", ""), v.value("evidence", ""));
      failure.repro_file = f.value("repro_file", "");
      failure.repro_command = f.value("repro_command", "");
      h.failure = std::move(failure);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("hunt: ") + e.what());
  }
  return h;
}

nlohmann::json RunResultsToJson(const RunResults& r) {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : r.scenarios) scenarios.push_back(ScenarioResultToJson(s));
  nlohmann::json doc = {{"format", r.format},
                        {"run_id", r.run_id},
                        {"seed", r.seed},
                        {"target", {{"name", r.target_name}, {"file", r.target_file}}},
                        {"flaw", r.flaw},
                        {"started", r.started},
                        {"finished", r.complete ? nlohmann::json(r.finished) : nlohmann::json(false)},
                        {"tool_version", r.tool_version},
                        {"exit_code", r.ExitCode()},
                        {"nothing_tested", r.NothingTested()},
                        {"metrics", MetricsToJson(r.TotalMetrics())},
                        {"scenarios", scenarios}};
  if (!r.run_namespace.empty()) doc["namespace"] = r.run_namespace;
  if (r.tls_unverified) doc["target"]["tls_verification"] = "off";
  if (!r.tls_unverified_peers.empty()) doc["target"]["tls_unverified"] = r.tls_unverified_peers;
  if (r.strict) doc["strict"] = true;
  doc["profile"] = r.profile;
  // Derived from the verdicts (model/conformance.h); not read back.
  doc["conformance"] = ConformanceToJson(Conformance(r), r);
  if (r.shard) doc["shard"] = ShardOfRunToJson(*r.shard);
  if (r.merged_shards) doc["merged_shards"] = MergedShardsToJson(*r.merged_shards, r.Incomplete());
  if (r.hunt) doc["hunt"] = HuntResultsToJson(*r.hunt);
  return doc;
}

Result<RunResults> RunResultsFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("results: expected an object");
  RunResults r;
  try {
    r.run_id = doc.at("run_id").get<std::string>();
    r.seed = doc.value("seed", std::uint64_t{0});
    r.run_namespace = doc.value("namespace", "");
    if (doc.contains("target")) {
      r.target_name = doc["target"].value("name", "");
      r.target_file = doc["target"].value("file", "");
      r.tls_unverified = doc["target"].value("tls_verification", "") == "off";
      r.tls_unverified_peers = doc["target"].value("tls_unverified", std::vector<std::string>{});
    }
    r.flaw = doc.value("flaw", "");
    r.started = doc.value("started", "");
    if (doc.contains("finished") && doc["finished"].is_boolean()) {
      r.complete = doc["finished"].get<bool>();  // false: the run never finished
    } else {
      r.finished = doc.value("finished", "");
    }
    r.tool_version = doc.value("tool_version", "");
    r.format = doc.value("format", 1);  // format 1 wrote none
    if (r.format < 1 || r.format > kHistoryFormat)
      return Status::InvalidArgument("results: format " + std::to_string(r.format) + " (this idemproof reads formats 1 to " +
                                     std::to_string(kHistoryFormat) + ")");
    r.strict = doc.value("strict", false);
    r.profile = doc.value("profile", std::string("ietf"));
    if (doc.contains("shard")) {
      auto shard = ShardOfRunFromJson(doc["shard"]);
      if (!shard.ok()) return shard.status();
      r.shard = *shard;
    }
    if (doc.contains("merged_shards")) {
      auto merged = MergedShardsFromJson(doc["merged_shards"]);
      if (!merged.ok()) return merged.status();
      r.merged_shards = *merged;
    }
    if (doc.contains("hunt")) {
      auto hunt = HuntResultsFromJson(doc["hunt"]);
      if (!hunt.ok()) return hunt.status();
      r.hunt = std::move(*hunt);
    }
    for (const auto& s : doc.value("scenarios", nlohmann::json::array())) {
      auto sr = ScenarioResultFromJson(s);
      if (!sr.ok()) return sr.status();
      r.scenarios.push_back(*sr);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("results: ") + e.what());
  }
  return r;
}

Status WriteRunResults(const RunResults& results, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("cannot write results '" + tmp + "'");
    // A target's answers may not be UTF-8: replace, never throw.
    out << RunResultsToJson(results).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.flush();
    if (!out) return Status::IoError("write failed for results '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
  return Status::Ok();
}

Result<RunResults> ReadRunResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read results '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based byte the parser stopped at: name its line:column.
    const std::size_t stop = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    SourceMark mark{path, 1, 1};
    for (std::size_t i = 0; i < stop; ++i) {
      if (text[i] == '\n') {
        ++mark.line;
        mark.column = 1;
      } else {
        ++mark.column;
      }
    }
    return Status(StatusCode::kInvalidArgument, std::string("not valid JSON: ") + e.what(), mark);
  }
  auto results = RunResultsFromJson(doc);
  if (!results.ok()) return Status(results.status().code(), results.status().message(), SourceMark{path});
  return results;
}

}  // namespace idemproof
