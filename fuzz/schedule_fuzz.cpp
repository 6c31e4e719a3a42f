// fuzz/schedule_fuzz.cpp: `readyport-stress --explore NAME --schedule LIST [--faults F]`, the one
// schedule of a small world a failure prints (and an exploration bundle's replay runs), on any
// NAME, LIST and F: the command line's parser (stress_options_parse), then the schedule's run
// (stress_explore_run_schedule, stress/explore/explore_main.hpp).
//
// Contract: a refused command line (an unknown world, a bound out of range) or a refused schedule
// (not thread ids 1..64 and commas; a thread that cannot run at some decision) is a
// kInvalidArgument Status with a message; a schedule that fits runs its world to a verdict, never
// a crash, an engine assertion, a sanitizer report, a hang or unbounded memory. The verdict itself
// is not judged here: a schedule may fire more faults than any exploration allows (each hit of the
// world's sites is its choice), and what the engine owes there is the explorer's and the main
// job's to check, not the parser's. Checked here as well: a run has a trace hash, fires no fault
// unless faults are choices, and gives the same trace and verdict when run again.
// Input: up to three lines: NAME, LIST, and F (absent: no --faults). Corpus: the first schedules
// of every small world, as the explorer runs them (fuzz/corpus/schedule/); dictionary
// fuzz/dict/explore.dict.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_explore.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::vector<std::string> lines = fuzz::fuzz_split(fuzz::fuzz_text(data, size), '\n');
  if (lines.size() < 2 || lines.size() > 3) {
    return 0;
  }
  std::vector<std::string> arguments = {"--explore", lines[0], "--schedule", lines[1]};
  if (lines.size() == 3) {
    arguments.insert(arguments.end(), {"--faults", lines[2]});
  }
  const Result<StressOptions> options = fuzz::fuzz_parse_command_line(arguments);
  if (!options.ok() || options.value().explore_schedule.empty()) {
    return 0;
  }
  fuzz::fuzz_run_schedule(options.value());
  return 0;
}
