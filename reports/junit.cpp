#include "reports/junit.h"


#include "model/results_json.h"
#include "reports/markup_escape.h"

namespace idemproof {
namespace {

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

std::string Attr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + XmlEscape(value, true) + "\"";
}

std::string CountAttrs(const Counts& c) {
  return Attr("tests", std::to_string(c.tests)) + Attr("failures", std::to_string(c.failures)) +
         Attr("errors", std::to_string(c.errors)) + Attr("skipped", std::to_string(c.skipped));
}

Counts CountOf(const ScenarioResult& s, bool strict) {
  Counts c;
  if (!s.error.empty() && s.verdicts.empty()) {
    c.tests = 1;
    c.errors = 1;
    return c;
  }
  for (const auto& v : s.verdicts) {
    ++c.tests;
    if (v.is_deviation() && !strict) continue;  // a passing testcase, marked
    if (v.status == VerdictStatus::kInvalid) ++c.failures;
    if (v.status == VerdictStatus::kUnknown) ++c.errors;
    if (v.status == VerdictStatus::kNotApplicable) ++c.skipped;
  }
  return c;
}

std::string Seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace

std::string RenderJUnit(const RunResults& r) {
  Counts total;
  std::string suites;
  for (const auto& s : r.scenarios) {
    Counts c = CountOf(s, r.strict);
    total.tests += c.tests;
    total.failures += c.failures;
    total.errors += c.errors;
    total.skipped += c.skipped;
    std::string classname = s.layer + "." + s.name;
    // CI lists testcases by name alone: the binding and the shard in it tell
    // two bindings' (and two shards') rows of one oracle apart.
    std::string where;
    for (const auto& [param, name] : s.binding) where += (where.empty() ? " [" : ", ") + param + "=" + name;
    if (!where.empty()) where += "]";
    if (r.shard) where += " (shard " + r.shard->shard.ToString() + ")";
    suites += "  <testsuite" + Attr("name", s.name) + CountAttrs(c) + Attr("time", Seconds(s.elapsed_ms)) +
              Attr("timestamp", r.started) + ">\n";
    suites += "    <properties>\n";
    auto prop = [&](const std::string& n, const std::string& v) {
      suites += "      <property" + Attr("name", n) + Attr("value", v) + "/>\n";
    };
    prop("file", s.file);
    prop("layer", s.layer);
    prop("hunts", s.hunts);
    if (!s.bound_from.empty()) prop("scenario", s.bound_from);
    for (const auto& [param, name] : s.binding) prop("binding." + param, name);
    prop("seed", std::to_string(r.seed));
    if (!r.flaw.empty()) prop("flaw", r.flaw);
    prop("profile", r.profile);
    for (const auto& [fault, n] : s.fault_counts) prop("fault." + fault, std::to_string(n));
    for (const auto& w : s.warnings) prop("warning", w);
    suites += "    </properties>\n";
    if (!s.error.empty() && s.verdicts.empty()) {
      suites += "    <testcase" + Attr("classname", classname) + Attr("name", "run" + where) + ">\n";
      suites += "      <error" + Attr("message", s.error) + Attr("type", "run_error") + "/>\n";
      suites += "    </testcase>\n";
    }
    for (const auto& v : s.verdicts) {
      suites += "    <testcase" + Attr("classname", classname) + Attr("name", v.oracle + where) + Attr("file", s.file) +
                ">\n";
      std::string details = VerdictDetailsToJson(v.details).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      // A deviation is a SHOULD missed: CI renders the testcase property and
      // its output; it fails the case only under --strict.
      std::string props;
      auto case_prop = [&](const std::string& n, const std::string& value) {
        props += "<property" + Attr("name", n) + Attr("value", value) + "/>";
      };
      if (v.is_deviation()) case_prop("severity", "deviation");
      if (v.is_violation()) case_prop("severity", "violation");
      if (!v.rule.id.empty()) {
        case_prop("rule", v.rule.id);
        case_prop("rule.level", v.rule.level);
        case_prop("rule.text", v.rule.text);
      }
      if (!v.premise.what.empty()) {
        case_prop("premise", v.premise.what);
        case_prop("premise.count", v.premise.count ? std::to_string(*v.premise.count) : "not counted");
      }
      if (!props.empty()) suites += "      <properties>" + props + "</properties>\n";
      if (v.is_deviation()) {
        if (r.strict) {
          suites += "      <failure" + Attr("message", "deviation: " + v.evidence) + Attr("type", "deviation") + ">" +
                    XmlEscape(v.evidence + "\n" + details) + "</failure>\n";
        } else {
          suites += "      <system-out>" + XmlEscape("DEVIATION (a SHOULD missed; --strict fails it): " + v.evidence +
                                                  "\n" + details) +
                    "</system-out>\n";
        }
        suites += "    </testcase>\n";
        continue;
      }
      switch (v.status) {
        case VerdictStatus::kInvalid:
          suites += "      <failure" + Attr("message", v.evidence) + Attr("type", "invalid") + ">" +
                    XmlEscape(v.evidence + "\n" + details) + "</failure>\n";
          break;
        case VerdictStatus::kUnknown:
          suites += "      <error" + Attr("message", v.evidence) + Attr("type", "unknown") + ">" +
                    XmlEscape(v.evidence + "\n" + details) + "</error>\n";
          break;
        case VerdictStatus::kNotApplicable:
          suites += "      <skipped" + Attr("message", v.evidence) + "/>\n";
          break;
        case VerdictStatus::kValid:
          suites += "      <system-out>" + XmlEscape(v.evidence) + "</system-out>\n";
          break;
      }
      suites += "    </testcase>\n";
    }
    suites += "  </testsuite>\n";
  }
  std::string name = "idemproof " + r.target_name + (r.flaw.empty() ? "" : " --flaw " + r.flaw);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + Attr("name", name) + CountAttrs(total) + ">\n" +
         suites + "</testsuites>\n";
}

}  // namespace idemproof
