// fuzz/explore_fuzz.cpp: the explorer's names and bounds on readyport-stress's command line
// (`--explore NAME|all --preemptions K --faults F --schedules-max N [--schedule LIST]`, with any
// other option beside them), then the exploration they ask for, cut short: the first
// kSchedulesPerWorld schedules of each world named, with the bounds as parsed (SimExplorer over
// small_world_run, as explore_one() in stress/explore/explore_main.cpp runs them, without the
// printing and the failure bundle).
//
// Contract: the parser gives options or a kInvalidArgument Status with a message (an unknown
// world, a bound out of range, options that do not go together), never a crash, an exception, a
// sanitizer report or a hang. Options it accepts for --explore hold: a known world or "all",
// --preemptions and --faults at most kStressExploreBoundMax, --schedules-max at least 1, a
// --schedule only with --explore. Each world's first schedules pass: they have no preemption and
// at most one fault, within what ctest stress.explore checks in full; a failure there is a finding
// (an engine or oracle bug). A --schedule runs as in the schedule target (fuzz_explore.hpp).
// Input: the arguments, one a line (at most kFuzzArgumentsMax). Corpus: the explorer's command
// lines from the docs, the tests and CI (fuzz/corpus/explore/); dictionary fuzz/dict/explore.dict.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "explore/small_worlds.hpp"
#include "fuzz_explore.hpp"
#include "readyport/fake/sim_explorer.hpp"

namespace readyport::fuzz {
namespace {

// Schedules run per world: enough to go past the first decision, few enough to stay fast.
constexpr std::uint64_t kSchedulesPerWorld = 2;

void check_bounds(const StressOptions& options) {
  fuzz_require(options.explore == "all" || small_world_find(options.explore) != nullptr,
               "--explore names a small world or all", options.explore);
  fuzz_require(options.preemptions <= kStressExploreBoundMax, "--preemptions within its bound");
  fuzz_require(options.explore_faults <= kStressExploreBoundMax, "--faults within its bound");
  fuzz_require(options.schedules_max >= 1, "--schedules-max at least 1");
}

// The exploration the options ask for, kSchedulesPerWorld schedules a world.
void explore_cut_short(const StressOptions& options) {
  for (const SmallWorld& world : small_worlds()) {
    if (options.explore != "all" && options.explore != world.name) {
      continue;
    }
    const ExploreResult result =
        SimExplorer(
            ExploreOptions{.preemptions_max = options.preemptions,
                           .faults_max = options.explore_faults,
                           .schedules_max = std::min(options.schedules_max, kSchedulesPerWorld)})
            .explore([&](SimChoices& choices) {
              return small_world_run(world, choices, options.explore_faults > 0).run;
            });
    fuzz_require(result.failure.ok(), "a small world's first schedules pass",
                 std::string(world.name) + ": " + result.failure.to_string());
    fuzz_require(result.schedules <= kSchedulesPerWorld, "--schedules-max bounds the schedules");
  }
}

}  // namespace
}  // namespace readyport::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  std::vector<std::string> arguments = fuzz::fuzz_split(fuzz::fuzz_text(data, size), '\n');
  if (arguments.size() > fuzz::kFuzzArgumentsMax) {
    return 0;
  }
  const Result<StressOptions> options = fuzz::fuzz_parse_command_line(arguments);
  if (!options.ok()) {
    return 0;
  }
  const StressOptions& o = options.value();
  fuzz::fuzz_require(o.explore_schedule.empty() || !o.explore.empty(),
                     "--schedule only with --explore");
  if (o.explore.empty()) {
    return 0;
  }
  fuzz::check_bounds(o);
  if (!o.explore_schedule.empty()) {
    fuzz::fuzz_run_schedule(o);
    return 0;
  }
  fuzz::explore_cut_short(o);
  return 0;
}
