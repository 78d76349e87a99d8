#include "sim/simulate_command.h"

#include <unistd.h>

#include <cstdio>
#include <random>

#include "idemproof/ref/flaw.h"
#include "sim/simulation.h"

namespace idemproof::sim {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitViolation = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUndecided = 3;

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

int RunSimulateCommand(const SimulateArgs& args, std::ostream& out, std::ostream& err) {
  const auto flaw = ref::parse_flaw(args.flaw);
  if (!flaw) {
    err << "idemproof simulate: unknown flaw '" << args.flaw << "' (idemproof-ref --flaw list names them)\n";
    return kExitUsage;
  }
  if (!SimulationCovers(*flaw)) {
    err << "idemproof simulate: the simulation cannot show flaw '" << args.flaw
        << "' (its requests are create_order and pay; a pass would say nothing): use idemproof run or explore\n";
    return kExitUsage;
  }
  SimulateOptions options;
  options.config.flaw = *flaw;
  options.config.work_dir = args.work_dir;
  options.config.medium = args.store == "file" ? SimConfig::Medium::file : SimConfig::Medium::shared_memory;
  options.trials = args.trials;
  options.max_ops = args.max_steps;
  options.seed = args.seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  const bool tty = ::isatty(1) == 1;
  if (tty) {
    options.on_progress = [&out](std::int64_t n) {
      if (n % 500 == 0) out << "\r\033[K" << n << " interleavings..." << std::flush;
    };
  }
  out << "idemproof simulate: reference core, flaw " << ref::flaw_name(*flaw) << ", store " << args.store << "\n"
      << "seed " << options.seed << " (replay with --seed " << options.seed << ")\n"
      << std::flush;

  const SimulateReport report = Simulate(options);
  if (tty) out << "\r\033[K";
  out << "interleavings explored: " << report.interleavings << " (" << report.trials << " generated";
  if (report.violation) out << ", " << report.interleavings - report.trials << " while shrinking";
  out << ") in " << Fixed(report.elapsed_s, 2) << " s: " << Fixed(report.interleavings_per_s, 0)
      << " interleavings/s\n";
  if (!report.error.empty()) {
    err << "idemproof simulate: the simulation failed: " << report.error << "\n";
    return kExitUndecided;
  }
  if (!report.violation) {
    out << "no violation in " << report.trials << " plans\n";
    return kExitOk;
  }
  out << "VIOLATION after " << Fixed(*report.to_first_violation_s, 3) << " s; shrunk to "
      << report.minimal.ops.size() << " op(s): " << report.minimal.ToString() << "\n"
      << "interleaving (" << report.minimal_run.trace.size() << " steps):\n"
      << FormatTrace(report.minimal_run.trace);
  out << "broken invariants:\n";
  for (const Violation& v : report.minimal_run.violations) {
    out << "  " << v.invariant << ": " << v.evidence << "\n";
  }
  out << "replay: idemproof simulate --flaw " << ref::flaw_name(*flaw) << " --seed " << report.seed
      << " --trials " << args.trials << " --max-steps " << args.max_steps
      << (args.store == "file" ? " --store file" : "") << "\n";
  return kExitViolation;
}

}  // namespace idemproof::sim
