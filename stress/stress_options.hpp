// stress/stress_options.hpp: the command line of readyport-stress.
//
//   readyport-stress [--seeds N] [--first-seed S] [--seed S] [--shard I/N]
//                    [--strategy random|pct|mixed] [--depth D] [--runtime sim|free]
//                    [--steps-max N] [--faults drawn|off|PLAN] [--require-coverage]
//                    [--stop-on-failure] [--trace] [--verbose] [--help]
//   readyport-stress --seed S --trace-out FILE       (the seed's trace, for --check-trace)
//   readyport-stress --check-trace FILE [--runtime free]
//   readyport-stress --seed S [...] --shrink [--actions-max N] [--clients-max N] [--peers-max N]
//
// Ownership: plain values. Threading: none. Errors: parse returns a Status naming the bad
// argument; nothing is run then.
#pragma once

#include <cstdint>
#include <string>

#include "readyport/status.hpp"

namespace readyport {

// How a seed's schedule is chosen.
enum class StressStrategy : std::uint8_t {
  kRandom,  // SimStrategy::kRandom for every seed
  kPct,     // SimStrategy::kPct for every seed
  kMixed,   // even seeds random, odd seeds PCT (the default)
};

// Where the engine's threads run.
enum class StressRuntime : std::uint8_t {
  kSim,   // SimScheduler: one thread at a time, replays from the seed (the default)
  kFree,  // FreeRuntime: real threads (for ThreadSanitizer); not replayable
};

struct StressOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 300;       // seeds run (before sharding)
  std::uint32_t shard_index = 0;   // 0-based; seeds whose offset % shard_count == shard_index
  std::uint32_t shard_count = 1;
  StressStrategy strategy = StressStrategy::kMixed;
  std::uint32_t pct_depth = 3;
  StressRuntime runtime = StressRuntime::kSim;
  std::uint64_t steps_max = 2'000'000;  // per seed
  // The fault plan: drawn from each seed (swarm, the default), none, or exactly `fault_plan`.
  enum class Faults : std::uint8_t { kDrawn, kOff, kPlan } faults = Faults::kDrawn;
  std::string fault_plan;        // with kPlan: FaultPlan::to_string() syntax, checked by parse
  bool require_coverage = false;  // exit 1 when a coverage row is zero at the end
  bool stop_on_failure = false;   // stop at the first failing seed (canary runs)
  bool trace = false;     // print each seed's full trace (use with --seed)
  bool verbose = false;   // print each seed's parameters and result
  bool help = false;
  // Judge this recorded trace file with the LifetimeOracle instead of running seeds (with
  // --runtime free: a trace from real threads, judged by the order-free rules only).
  std::string check_trace;
  // Write the full trace of the (one) seed run to this file, as text (needs --seed).
  std::string trace_out;
  // Shrink the failing seed (needs --seed): fewer fault sites, a lower PCT depth, a smaller
  // workload, while it still fails with the same rule; prints the minimal replay command.
  bool shrink = false;
  // Caps on the drawn workload (kNoCap: none): director actions, clients, raw peers. Set by
  // --shrink and printed in its replay command.
  static constexpr std::uint32_t kNoCap = ~std::uint32_t{0};
  std::uint32_t actions_max = kNoCap;
  std::uint32_t clients_max = kNoCap;
  std::uint32_t peers_max = kNoCap;
};

// Parses argv[1..argc). Errors: kInvalidArgument naming the argument.
Result<StressOptions> stress_options_parse(int argc, const char* const* argv);
// The --help text.
const char* stress_usage();
const char* stress_strategy_name(StressStrategy strategy);
const char* stress_runtime_name(StressRuntime runtime);

}  // namespace readyport
