// idemproof-sim-bench: the deterministic simulation's numbers (harness/sim/)
// as a Markdown table: interleavings per second on the correct core, and per
// flaw the time and plans to the first violation and the size of the shrunk
// interleaving, over several seeds (median, and the worst seed). Throughput
// is also given per CPU-second of the simulating thread: on a shared machine
// the wall-clock figure says as much about the other builds as about the
// simulation.
//
//   idemproof-sim-bench [--seeds N] [--trials N] [--first-seed S]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "idemproof/ref/flaw.h"
#include "sim/simulation.h"

using namespace idemproof;

namespace {

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? T{} : v[v.size() / 2];
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// CPU time the calling thread has used, in seconds.
double ThreadCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"idemproof-sim-bench: deterministic simulation throughput and time to first violation"};
  int seeds = 5;
  int trials = 5000;
  std::uint64_t first_seed = 1;
  app.add_option("--seeds", seeds, "seeds per flaw")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--trials", trials, "plans on the correct core (throughput)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--first-seed", first_seed, "seeds are first-seed, first-seed + 1, ...")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  sim::SimulateOptions correct;
  correct.seed = first_seed;
  correct.trials = trials;
  const double cpu_before = ThreadCpuSeconds();
  const sim::SimulateReport none = sim::Simulate(correct);
  const double cpu_s = ThreadCpuSeconds() - cpu_before;
  if (!none.error.empty()) {
    std::cerr << "idemproof-sim-bench: " << none.error << "\n";
    return 3;
  }
  std::cout << "### Deterministic simulation (in-process reference core, no sockets)\n\n"
            << "correct core: " << none.interleavings << " interleavings in " << Fixed(none.elapsed_s, 2)
            << " s = **" << Fixed(none.interleavings_per_s, 0) << " interleavings/s** ("
            << Fixed(cpu_s, 2) << " s CPU: " << Fixed(cpu_s > 0 ? static_cast<double>(none.interleavings) / cpu_s : 0, 0)
            << " per CPU-second), "
            << (none.violation ? "VIOLATION (a bug)" : "0 violations") << " (seed " << first_seed << ")\n\n"
            << "| flaw | seeds found | plans to first violation (median / max) | time to first violation "
               "(median / max) | shrunk: ops / steps (median / max) | shrink runs (median) | invariant |\n"
            << "|---|---|---|---|---|---|---|\n";
  const ref::Flaw flaws[] = {ref::Flaw::check_then_insert, ref::Flaw::unfenced_takeover,
                             ref::Flaw::no_lease_expiry, ref::Flaw::no_intent};
  int exit_code = 0;
  for (ref::Flaw flaw : flaws) {
    std::vector<std::int64_t> plans, ops, steps, shrink_runs;
    std::vector<double> seconds;
    std::string invariant;
    int found = 0;
    for (int i = 0; i < seeds; ++i) {
      sim::SimulateOptions options;
      options.config.flaw = flaw;
      options.seed = first_seed + static_cast<std::uint64_t>(i);
      const sim::SimulateReport r = sim::Simulate(options);
      if (!r.error.empty()) {
        std::cerr << "idemproof-sim-bench: " << ref::flaw_name(flaw) << ": " << r.error << "\n";
        return 3;
      }
      if (!r.violation) continue;
      ++found;
      plans.push_back(r.trials);
      seconds.push_back(*r.to_first_violation_s);
      ops.push_back(static_cast<std::int64_t>(r.minimal.ops.size()));
      steps.push_back(static_cast<std::int64_t>(r.minimal_run.trace.size()));
      shrink_runs.push_back(r.interleavings - r.trials);
      if (!r.minimal_run.violations.empty()) invariant = r.minimal_run.violations.front().invariant;
    }
    if (found < seeds) exit_code = 1;
    auto max_of = [](const auto& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); };
    std::cout << "| " << ref::flaw_name(flaw) << " | " << found << "/" << seeds << " | " << Median(plans)
              << " / " << max_of(plans) << " | " << Fixed(Median(seconds) * 1000, 1) << " ms / "
              << Fixed(max_of(seconds) * 1000, 1) << " ms | " << Median(ops) << " / " << Median(steps)
              << " (max " << max_of(ops) << " / " << max_of(steps) << ") | " << Median(shrink_runs) << " | "
              << invariant << " |\n";
  }
  return exit_code;
}
