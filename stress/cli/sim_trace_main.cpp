// readyport-sim-trace: runs the standard multi-threaded scenario (sim_scenario.hpp) under
// SimScheduler for one seed (or a range) and prints its trace hash, and with --print the trace.
//
//   readyport-sim-trace --seed 42                      # one summary line
//   readyport-sim-trace --seed 42 --strategy pct --depth 3 --print
//   readyport-sim-trace --seed 0 --count 200           # one summary line per seed 0..199
//   readyport-sim-trace --version | --help
//
// The command line is CLI11's, like readyport-stress's: `--opt value` or `--opt=value`; numbers
// are whole decimals in each option's range (stress/cli/cli_number.hpp, shared with
// readyport-stress: `--seed -5` is refused, not run as 2^64-5); an option given twice is refused.
//
// Summary line (stable; ci/compare_traces.sh diffs it between builds):
//   seed=<n> strategy=<name> hash=<16 hex> lines=<n> steps=<n> switches=<n> outcome=<name>
//   status=<ok|message>
// Exit status: 0 when every run completed and its invariants held, 1 otherwise, 2 on bad usage.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/cli_number.hpp"
#include "readyport/version.hpp"
#include "sim_scenario.hpp"

namespace {

// Seeds per invocation at most (a limit, as everything has one).
constexpr std::uint64_t kCountMax = 100'000'000;
constexpr std::uint64_t kDepthMax = 64;
constexpr std::uint64_t kEstimateMax = 1'000'000'000;

const char* const kExamples =
    "Examples:\n"
    "  readyport-sim-trace --seed 42                            one summary line\n"
    "  readyport-sim-trace --seed 42 --strategy pct --depth 3 --print\n"
    "  readyport-sim-trace --seed 0 --count 200                 seeds 0..199\n"
    "\n"
    "Summary line: seed=<n> strategy=<name> hash=<16 hex> lines=<n> steps=<n> switches=<n>\n"
    "outcome=<name> status=<ok|message>. Exit status: 0 every run held, 1 otherwise, 2 bad "
    "usage.\n";

struct Command {
  readyport::ScenarioRunOptions options;
  std::uint64_t count = 1;
  bool print = false;
  bool version = false;
};

// Runs seeds first..first+count-1; returns the exit status.
int run(Command command) {
  readyport::ScenarioRunOptions& options = command.options;
  options.trace.keep_full = command.print;
  options.trace.tail_lines_max = 0;
  int exit_code = 0;
  const std::uint64_t first_seed = options.seed;
  for (std::uint64_t k = 0; k < command.count; ++k) {
    options.seed = first_seed + k;
    const readyport::ScenarioRunResult result = readyport::run_standard_scenario(options);
    std::printf(
        "seed=%llu strategy=%s hash=%s lines=%llu steps=%llu switches=%llu outcome=%s "
        "status=%s\n",
        static_cast<unsigned long long>(options.seed),
        readyport::sim_strategy_name(options.strategy), readyport::hash_hex(result.hash).c_str(),
        static_cast<unsigned long long>(result.lines),
        static_cast<unsigned long long>(result.stats.steps),
        static_cast<unsigned long long>(result.stats.switches),
        readyport::sim_outcome_name(result.outcome), result.status.to_string().c_str());
    if (command.print) {
      std::fputs(result.text.c_str(), stdout);
    }
    if (!result.status.ok()) {
      exit_code = 1;
    }
  }
  std::fflush(stdout);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  Command command;
  std::string strategy;
  CLI::App app{
      "readyport-sim-trace: the standard scenario under SimScheduler, one seed's trace hash "
      "(docs/simulation.md).",
      "readyport-sim-trace"};
  app.footer(kExamples);
  CLI::Option* seed =
      readyport::cli_add_number(app, "--seed", &command.options.seed, 0, readyport::kCliNumberMax,
                                "master seed (schedule and workload streams)");
  readyport::cli_add_number(app, "--count", &command.count, 1, kCountMax,
                            "run seeds N .. N+C-1 (default 1)");
  app.add_option("--strategy", strategy, "scheduling strategy (default random)")
      ->check(CLI::IsMember({"random", "pct", "round_robin"}));
  readyport::cli_add_number(app, "--depth", &command.options.pct_depth, 1, kDepthMax,
                            "PCT depth: D-1 priority change points (default 3)");
  readyport::cli_add_number(app, "--estimate", &command.options.pct_steps_estimate, 1, kEstimateMax,
                            "PCT step estimate: change points in [1, K] (default 120)");
  app.add_flag("--print", command.print, "print each run's full trace after its summary line");
  app.add_flag("--version", command.version, "print the version and git commit and exit");
  try {
    app.parse(argc, argv);
    if (command.version) {
      std::printf("readyport-sim-trace %s (commit %s)\n", readyport::version_string(),
                  readyport::version_commit());
      return 0;
    }
    if (seed->count() == 0) {
      throw CLI::RequiredError("--seed");
    }
    if (command.count - 1 > readyport::kCliNumberMax - command.options.seed) {
      throw CLI::ValidationError("--count", "the seed range wraps around past 2^64-1");
    }
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);  // --help: the usage on stdout, exit 0
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "readyport-sim-trace: %s (readyport-sim-trace --help)\n", error.what());
    return 2;
  }
  if (!strategy.empty()) {
    (void)readyport::sim_strategy_parse(strategy, &command.options.strategy);
  }
  return run(command);
}
