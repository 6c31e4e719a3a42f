// readyport-sim-trace: runs the standard multi-threaded scenario (sim_scenario.hpp) under
// SimScheduler for one seed (or a range) and prints its trace hash, and with --print the trace.
//
//   readyport-sim-trace --seed 42                      # one summary line
//   readyport-sim-trace --seed 42 --strategy pct --depth 3 --print
//   readyport-sim-trace --seed 0 --count 200           # one summary line per seed 0..199
//
// Summary line (stable; ci/compare_traces.sh diffs it between builds):
//   seed=<n> strategy=<name> hash=<16 hex> lines=<n> steps=<n> switches=<n> outcome=<name>
//   status=<ok|message>
// Exit status: 0 when every run completed and its invariants held, 1 otherwise, 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "readyport/fake/sim_scenario.hpp"

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: readyport-sim-trace --seed N [--count C] [--strategy random|pct|round_robin]\n"
      "                           [--depth D] [--estimate K] [--print]\n"
      "  --seed N      master seed (schedule and workload streams)\n"
      "  --count C     run seeds N .. N+C-1 (default 1)\n"
      "  --strategy S  scheduling strategy (default random)\n"
      "  --depth D     PCT depth: D-1 priority change points (default 3)\n"
      "  --estimate K  PCT step estimate: change points in [1, K] (default 120)\n"
      "  --print       print each run's full trace after its summary line\n");
}

bool parse_u64(const char* text, std::uint64_t* value_out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (end == nullptr || *end != '\0') return false;
  *value_out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  readyport::ScenarioRunOptions options;
  bool seed_given = false;
  bool print = false;
  std::uint64_t count = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    std::uint64_t number = 0;
    if (std::strcmp(arg, "--print") == 0) {
      print = true;
    } else if (std::strcmp(arg, "--seed") == 0 && parse_u64(next, &options.seed)) {
      seed_given = true;
      ++i;
    } else if (std::strcmp(arg, "--count") == 0 && parse_u64(next, &count) && count > 0) {
      ++i;
    } else if (std::strcmp(arg, "--strategy") == 0 && next != nullptr &&
               readyport::sim_strategy_parse(next, &options.strategy)) {
      ++i;
    } else if (std::strcmp(arg, "--depth") == 0 && parse_u64(next, &number) && number >= 1 &&
               number <= 64) {
      options.pct_depth = static_cast<std::uint32_t>(number);
      ++i;
    } else if (std::strcmp(arg, "--estimate") == 0 && parse_u64(next, &number) && number >= 1) {
      options.pct_steps_estimate = number;
      ++i;
    } else {
      std::fprintf(stderr, "readyport-sim-trace: bad argument '%s'\n", arg);
      usage();
      return 2;
    }
  }
  if (!seed_given) {
    usage();
    return 2;
  }
  options.trace.keep_full = print;
  options.trace.tail_lines_max = 0;
  int exit_code = 0;
  const std::uint64_t first_seed = options.seed;
  for (std::uint64_t k = 0; k < count; ++k) {
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
    if (print) std::fputs(result.text.c_str(), stdout);
    if (!result.status.ok()) exit_code = 1;
  }
  std::fflush(stdout);
  return exit_code;
}
