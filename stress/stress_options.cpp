#include "stress_options.hpp"

#include "readyport/fake/fault_plan.hpp"

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

namespace readyport {
namespace {

Status bad(std::string_view argument, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                "argument '" + std::string(argument) + "': " + std::string(why) +
                    " (readyport-stress --help)");
}

// Parses a whole decimal number in [minimum, maximum].
bool parse_number(std::string_view text, std::uint64_t minimum, std::uint64_t maximum,
                  std::uint64_t* value_out) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || text.empty()) return false;
  if (value < minimum || value > maximum) return false;
  *value_out = value;
  return true;
}

// "I/N" with 1 <= I <= N <= 4096.
bool parse_shard(std::string_view text, std::uint32_t* index_out, std::uint32_t* count_out) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  if (!parse_number(text.substr(0, slash), 1, 4096, &index)) return false;
  if (!parse_number(text.substr(slash + 1), 1, 4096, &count)) return false;
  if (index > count) return false;
  *index_out = static_cast<std::uint32_t>(index - 1);
  *count_out = static_cast<std::uint32_t>(count);
  return true;
}

}  // namespace

const char* stress_usage() {
  return "readyport-stress: the echo workload on the engine over FakeOs, one run per seed.\n"
         "\n"
         "  --seeds N          seeds to run (default 300)\n"
         "  --first-seed S     the first seed (default 1); seeds are S, S+1, ...\n"
         "  --seed S           run exactly seed S (same as --first-seed S --seeds 1)\n"
         "  --shard I/N        run only the I-th of N interleaved shards of the seeds\n"
         "  --strategy X       random | pct | mixed (default: even seeds random, odd pct)\n"
         "  --depth D          PCT depth (default 3)\n"
         "  --runtime X        sim (SimScheduler, replayable; default) | free (real threads)\n"
         "  --steps-max N      scheduler steps per seed at most (default 2000000)\n"
         "  --faults X         drawn (default: a fault plan drawn from each seed, swarm),\n"
         "                     off, or a plan: SITE[@PERCENT],... (e.g. psn.remove_fails@25)\n"
         "  --require-coverage exit 1 when a row of the coverage table is zero\n"
         "  --stop-on-failure  stop at the first failing seed\n"
         "  --trace            print each seed's full trace (use with --seed)\n"
         "  --shrink           with --seed: shrink a failing seed (fault sites, PCT depth, workload)\n"
         "                     while it fails with the same rule; prints the minimal replay\n"
         "  --actions-max N, --clients-max N, --peers-max N   cap the drawn workload\n"
         "  --trace-out F      write the seed's full trace to the file F (with --seed)\n"
         "  --check-trace F    judge the recorded trace file F with the lifetime oracle (no run);\n"
         "                     with --runtime free, as a trace of real threads\n"
         "  --verbose          print each seed's drawn parameters and result\n"
         "\n"
         "Every failure prints the one command that replays its seed. Exit status 1 on any\n"
         "failure, 2 on bad arguments.\n";
}

const char* stress_strategy_name(StressStrategy strategy) {
  switch (strategy) {
    case StressStrategy::kRandom: return "random";
    case StressStrategy::kPct: return "pct";
    case StressStrategy::kMixed: return "mixed";
  }
  READYPORT_UNREACHABLE();
}

const char* stress_runtime_name(StressRuntime runtime) {
  switch (runtime) {
    case StressRuntime::kSim: return "sim";
    case StressRuntime::kFree: return "free";
  }
  READYPORT_UNREACHABLE();
}

Result<StressOptions> stress_options_parse(int argc, const char* const* argv) {
  StressOptions options;
  bool seed_given = false;
  bool seeds_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    const std::string_view value = has_value ? std::string_view(argv[i + 1]) : std::string_view();
    std::uint64_t number = 0;
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--trace") {
      options.trace = true;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--require-coverage") {
      options.require_coverage = true;
    } else if (arg == "--shrink") {
      options.shrink = true;
    } else if (arg == "--stop-on-failure") {
      options.stop_on_failure = true;
    } else if (!has_value) {
      return bad(arg, "unknown, or missing its value");
    } else if (arg == "--seeds") {
      if (!parse_number(value, 1, 100'000'000, &number)) return bad(value, "--seeds takes 1..1e8");
      options.seeds = number;
      seeds_given = true;
      ++i;
    } else if (arg == "--first-seed" || arg == "--seed") {
      if (!parse_number(value, 0, ~std::uint64_t{0}, &number)) return bad(value, "a seed is a decimal 64-bit number");
      options.first_seed = number;
      if (arg == "--seed") seed_given = true;
      ++i;
    } else if (arg == "--shard") {
      if (!parse_shard(value, &options.shard_index, &options.shard_count)) {
        return bad(value, "--shard takes I/N with 1 <= I <= N <= 4096");
      }
      ++i;
    } else if (arg == "--strategy") {
      if (value == "random") options.strategy = StressStrategy::kRandom;
      else if (value == "pct") options.strategy = StressStrategy::kPct;
      else if (value == "mixed") options.strategy = StressStrategy::kMixed;
      else return bad(value, "--strategy takes random, pct or mixed");
      ++i;
    } else if (arg == "--depth") {
      if (!parse_number(value, 1, 64, &number)) return bad(value, "--depth takes 1..64");
      options.pct_depth = static_cast<std::uint32_t>(number);
      ++i;
    } else if (arg == "--runtime") {
      if (value == "sim") options.runtime = StressRuntime::kSim;
      else if (value == "free") options.runtime = StressRuntime::kFree;
      else return bad(value, "--runtime takes sim or free");
      ++i;
    } else if (arg == "--actions-max" || arg == "--clients-max" || arg == "--peers-max") {
      if (!parse_number(value, 0, 1'000'000, &number)) return bad(value, "a cap is 0..1e6");
      const auto cap = static_cast<std::uint32_t>(number);
      if (arg == "--actions-max") options.actions_max = cap;
      if (arg == "--clients-max") options.clients_max = cap;
      if (arg == "--peers-max") options.peers_max = cap;
      ++i;
    } else if (arg == "--trace-out") {
      if (value.empty()) return bad(arg, "--trace-out takes a file name");
      options.trace_out = std::string(value);
      ++i;
    } else if (arg == "--check-trace") {
      if (value.empty()) return bad(arg, "--check-trace takes a file name");
      options.check_trace = std::string(value);
      ++i;
    } else if (arg == "--faults") {
      if (value == "drawn") {
        options.faults = StressOptions::Faults::kDrawn;
      } else if (value == "off" || value == "none") {
        options.faults = StressOptions::Faults::kOff;
      } else {
        Result<FaultPlan> plan = FaultPlan::parse(value);
        if (!plan.ok()) return bad(value, plan.status().message());
        options.faults = StressOptions::Faults::kPlan;
        options.fault_plan = plan.value().to_string();
      }
      ++i;
    } else if (arg == "--steps-max") {
      if (!parse_number(value, 1000, 1'000'000'000, &number)) return bad(value, "--steps-max takes 1000..1e9");
      options.steps_max = number;
      ++i;
    } else {
      return bad(arg, "unknown");
    }
  }
  if (seed_given) {
    if (seeds_given && options.seeds != 1) return bad("--seed", "--seed runs one seed; drop --seeds");
    options.seeds = 1;
  }
  if (options.shrink && options.seeds != 1)
    return bad("--shrink", "--shrink works on one failing seed: use it with --seed");
  if (!options.trace_out.empty() && options.seeds != 1)
    return bad("--trace-out", "--trace-out writes one seed's trace: use it with --seed");
  if (options.seeds - 1 > ~std::uint64_t{0} - options.first_seed) return bad("--first-seed", "seed range wraps around");
  return options;
}

}  // namespace readyport
