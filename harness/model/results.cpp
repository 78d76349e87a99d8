#include "model/results.h"

#include "model/conformance.h"
#include "model/not_applicable.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace idemproof {

VerdictStatus ScenarioResult::Outcome(bool strict) const {
  bool unknown = !error.empty(), valid = false;
  for (const auto& v : verdicts) {
    if (v.is_deviation() && !strict) {
      valid = true;  // a SHOULD missed: shown, not failed
      continue;
    }
    if (v.status == VerdictStatus::kInvalid) return VerdictStatus::kInvalid;
    if (v.status == VerdictStatus::kUnknown) unknown = true;
    if (v.status == VerdictStatus::kValid) valid = true;
  }
  if (unknown) return VerdictStatus::kUnknown;
  return valid ? VerdictStatus::kValid : VerdictStatus::kNotApplicable;
}

int ScenarioResult::Deviations() const {
  return static_cast<int>(std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.is_deviation(); }));
}

bool ScenarioResult::Exercised() const {
  return std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) {
    return v.status == VerdictStatus::kValid || v.status == VerdictStatus::kInvalid;
  });
}

std::string ScenarioResult::NotApplicableReason() const {
  if (Outcome() != VerdictStatus::kNotApplicable) return "";
  for (const auto& v : verdicts) {
    const auto needs = v.details.find("needs");
    if (needs == v.details.end() || !needs->is_array() || needs->empty()) continue;
    std::string out = "needs ";
    for (std::size_t i = 0; i < needs->size(); ++i) {
      const auto& n = (*needs)[i];
      out += (i ? ", " : "") + (n.is_string() ? n.get<std::string>() : n.dump());
    }
    return out;
  }
  return verdicts.empty() ? "no oracle to judge it" : verdicts.front().evidence;
}

int RunResults::ExitCode() const {
  bool undecided = false;
  for (const auto& s : scenarios) {
    VerdictStatus o = s.Outcome(strict);
    if (o == VerdictStatus::kInvalid) return 1;
    if (o == VerdictStatus::kUnknown) undecided = true;
  }
  return undecided || !complete || Incomplete() || NothingTested() ? 3 : 0;
}

bool RunResults::NothingTested() const {
  if (shard) return false;
  return std::none_of(scenarios.begin(), scenarios.end(), [](const ScenarioResult& s) { return s.Exercised(); });
}

std::vector<std::pair<std::string, int>> RunResults::NotApplicableGroups() const {
  std::map<std::string, int> count;
  for (const auto& s : scenarios) {
    if (std::string why = s.NotApplicableReason(); !why.empty()) ++count[why];
  }
  std::vector<std::pair<std::string, int>> out(count.begin(), count.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string RunResults::NotApplicableNote() const {
  const auto groups = NotApplicableGroups();
  std::string out = NotApplicableHeadline(*this);
  if (groups.empty()) return out;
  out += ":";
  for (std::size_t i = 0; i < groups.size(); ++i)
    out += std::string(i ? ";" : "") + " " + std::to_string(groups[i].second) + " " + groups[i].first;
  return out;
}

bool RunResults::Incomplete() const {
  if (shard) return scenarios.empty();
  if (merged_shards)
    return !merged_shards->missing.empty() || scenarios.size() < static_cast<std::size_t>(merged_shards->bound);
  return false;
}

std::string RunResults::TlsNote() const {
  std::string note;
  if (tls_unverified)
    note = "TLS verification was off (tls: {insecure: true}): the target's certificate was not checked, "
           "so this run cannot tell it from an impostor.";
  if (tls_unverified_peers.empty()) return note;
  std::string peers;
  for (const auto& p : tls_unverified_peers) peers += (peers.empty() ? "" : ", ") + p;
  return note + (note.empty() ? "" : " ") + "TLS verification was off for " + peers +
         " (tls: {insecure: true}): " + (tls_unverified_peers.size() == 1 ? "its certificate was" : "their certificates were") +
         " not checked.";
}

std::string RunResults::ShardNote() const {
  if (shard) {
    const std::string line = "shard " + shard->shard.ToString() + ": " + std::to_string(scenarios.size()) + " of " +
                             std::to_string(shard->bound) + " bound scenario(s)";
    return scenarios.empty() ? line + " (EMPTY: no scenario was dealt to this shard; use at most " +
                                   std::to_string(shard->bound) + " shards)"
                             : line;
  }
  if (!merged_shards) return "";
  const MergedShards& m = *merged_shards;
  auto list = [](const std::vector<int>& shards) {
    std::string out;
    for (int k : shards) out += (out.empty() ? "" : ", ") + std::to_string(k);
    return out;
  };
  std::string line = "merged shards " + list(m.merged) + " of " + std::to_string(m.count) + ": " +
                     std::to_string(scenarios.size()) + " of " + std::to_string(m.bound) + " bound scenario(s)";
  if (!Incomplete()) return line;
  line += " (INCOMPLETE";
  if (!m.missing.empty()) line += ": shard(s) " + list(m.missing) + " of " + std::to_string(m.count) + " missing";
  return line + "; not a pass)";
}

Metrics RunResults::TotalMetrics() const {
  Metrics total;
  for (const auto& s : scenarios) total.Add(s.metrics);
  return total;
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

std::string NowRfc3339() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms));
  return out;
}

}  // namespace idemproof
