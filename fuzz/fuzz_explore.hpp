// fuzz/fuzz_explore.hpp: what the two explorer targets (schedule, explore) share: a command line
// made of the input's lines, and the run of one schedule as `--explore NAME --schedule LIST` makes
// it (stress_explore_run_schedule, stress/explore/explore_main.hpp).
//
// Ownership: none kept. Threading: the fuzzer's thread (a small world's run starts a SimScheduler
// on it, which is allowed: the fuzzer's thread is no runtime's). Errors: a broken property aborts
// (fuzz_support.hpp).
#pragma once

#include <string>
#include <vector>

#include "cli/stress_options.hpp"
#include "explore/explore_main.hpp"
#include "fuzz_support.hpp"

namespace readyport::fuzz {

// At most this many arguments are taken from an input (a command line is short).
inline constexpr std::size_t kFuzzArgumentsMax = 16;

// readyport-stress's options from `arguments` (argv[1..]); the parser's contract checked: ok, or
// kInvalidArgument with a message.
inline Result<StressOptions> fuzz_parse_command_line(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv = {"readyport-stress"};
  for (const std::string& argument : arguments) {
    argv.push_back(argument.c_str());
  }
  Result<StressOptions> options = stress_options_parse(static_cast<int>(argv.size()), argv.data());
  if (!options.ok()) {
    fuzz_require(options.status().code() == StatusCode::kInvalidArgument,
                 "stress_options_parse refuses with kInvalidArgument",
                 options.status().to_string());
    fuzz_require_error(options.status(), "stress_options_parse");
  }
  return options;
}

// `--schedule`'s run: ok, or kInvalidArgument saying why the schedule does not fit its world; run
// twice, the same trace hash and verdict.
inline void fuzz_run_schedule(const StressOptions& options) {
  const Result<StressScheduleRun> run = stress_explore_run_schedule(
      options.explore, options.explore_schedule, options.explore_faults);
  if (!run.ok()) {
    fuzz_require(run.status().code() == StatusCode::kInvalidArgument,
                 "a schedule that does not fit is kInvalidArgument", run.status().to_string());
    fuzz_require_error(run.status(), "stress_explore_run_schedule");
    return;
  }
  fuzz_require(run.value().trace_hash.size() == 16, "a schedule's run has a trace hash");
  fuzz_require(run.value().faults == 0 || options.explore_faults > 0,
               "no fault fires where faults are not choices");
  // A run is a function of its choices: what --replay of an exploration's bundle relies on.
  const Result<StressScheduleRun> again = stress_explore_run_schedule(
      options.explore, options.explore_schedule, options.explore_faults);
  fuzz_require(again.ok() && again.value().trace_hash == run.value().trace_hash &&
                   again.value().verdict.message() == run.value().verdict.message(),
               "a schedule run twice gives the same trace", options.explore_schedule);
}

}  // namespace readyport::fuzz
