#include "model/results.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

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
    const auto& needs = v.details.lists.needs;
    if (!needs || needs->empty()) continue;
    std::string out = "needs ";
    for (std::size_t i = 0; i < needs->size(); ++i) out += (i ? ", " : "") + (*needs)[i];
    return out;
  }
  return verdicts.empty() ? "no oracle to judge it" : verdicts.front().evidence;
}

int CombineExitCodes(int suite, int hunt) {
  for (int code : {1, 130, 3})
    if (suite == code || hunt == code) return code;
  return suite;
}

int RunResults::ExitCode() const {
  return hunt ? CombineExitCodes(SuiteExitCode(), hunt->exit_code) : SuiteExitCode();
}

int RunResults::SuiteExitCode() const {
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

std::string HuntResults::Line() const {
  std::string line = "hunt (" + budget + "): ";
  if (outcome == "not_run") return line + "NOT RUN: " + reason + " (no pass)";
  const std::string counted = std::to_string(workloads) + " workload(s), " + std::to_string(operations) +
                              " operation(s), " + std::to_string(faults_fired) + " fault(s) fired";
  if (outcome == "violation" && failure) {
    std::string oracles;
    for (const auto& [oracle, evidence] : failure->invalid)
      if (oracles.find(oracle) == std::string::npos) oracles += (oracles.empty() ? "" : ", ") + oracle;
    return line + "VIOLATION" + (oracles.empty() ? "" : " of " + oracles) + " (" + counted +
           "); the first failing workload shrunk from " + std::to_string(failure->first_failure_ops) + " to " +
           std::to_string(failure->minimal_ops) + " op(s), replay: " + failure->repro_command;
  }
  if (outcome == "clean")
    return line + "no violation (" + counted + "; " + std::to_string(passed) + " judged clean, " +
           std::to_string(undecided) + " undecided, " + std::to_string(unexercised) + " unexercised)";
  return line + "UNDECIDED: " + (stop_reason.empty() ? "no workload was judged" : stop_reason) + " (" + counted +
         "; " + std::to_string(passed) + " judged clean)";
}

}  // namespace idemproof
