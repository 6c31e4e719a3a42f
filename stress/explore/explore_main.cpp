// --explore. See explore_main.hpp.
#include "explore/explore_main.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "explore/small_worlds.hpp"
#include "files/bundle.hpp"
#include "files/file_io.hpp"
#include "readyport/fake/trace.hpp"

namespace readyport {
namespace {

// The schedule running, as the command that runs it alone: an engine assertion aborts the
// process, and the SIGABRT handler names it (not async-signal-safe beyond the write: the process
// is dying of an assertion already).
std::string g_running;

extern "C" void explore_on_abort(int) {
  std::fflush(stdout);
  std::fwrite(g_running.data(), 1, g_running.size(), stderr);
  std::fflush(stderr);
}

std::string schedule_text(const std::vector<std::uint32_t>& schedule) {
  std::string text;
  for (const std::uint32_t id : schedule) {
    text += (text.empty() ? "" : ",") + std::to_string(id);
  }
  return text;
}

// Parses "1,2,1": thread ids; false on anything else.
bool schedule_parse(const std::string& text, std::vector<std::uint32_t>* schedule_out) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (item.empty() || item.size() > 2 ||
        item.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    const unsigned long id = std::stoul(item);
    if (id < 1 || id > 64) {
      return false;
    }
    schedule_out->push_back(static_cast<std::uint32_t>(id));
    at = comma + 1;
  }
  return true;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

// Runs the failing schedule again (a run is a function of its choices) and writes its bundle;
// prints where and how to replay it. False when the bundle could not be written.
bool write_failure_bundle(const StressOptions& options, const SmallWorld& world,
                          const ExploreResult& result, const std::vector<std::string>& command_line,
                          std::ostream& out) {
  SimChoices choices;
  choices.prefix = result.failing_prefix;
  const SmallWorldRun run = small_world_run(world, choices, options.explore_faults > 0, true);
  StressExploreFailure failure;
  failure.world = world.name;
  failure.preemptions_max = options.preemptions;
  failure.faults_max = options.explore_faults;
  failure.schedule = schedule_text(result.failing_prefix);
  failure.preemptions = result.failing_preemptions;
  failure.faults = result.failing_faults;
  failure.verdict = run.run.verdict;
  failure.trace_hash = hash_hex(run.trace_hash);
  failure.trace_lines = run.trace_lines;
  failure.trace_tail = run.trace_tail;
  const std::string path = stress_explore_bundle_path(options.bundle_dir, world.name);
  const StressBundleContext context{
      command_line, path,
      "explore " + std::string(world.name) + " (" + std::to_string(options.preemptions) +
          " preemptions, " + std::to_string(options.explore_faults) + " faults at most)"};
  const Status written = stress_file_write(
      path, stress_explore_bundle_json(failure, context).dump(2) + "\n", StressWriteMode::kReplace);
  if (!written.ok()) {
    out << "  bundle: NOT written: " << written.to_string() << "\n";
    return false;
  }
  const std::string program = command_line.empty() ? "readyport-stress" : command_line[0];
  out << "  bundle: " << path << "\n  replay it: " << program << " --replay " << path << "\n";
  if (run.run.verdict.code() != result.failure.code() ||
      run.run.verdict.message() != result.failure.message()) {
    out << "  note: the failing schedule run again gave " << run.run.verdict.to_string() << "\n";
  }
  return true;
}

// Explores one world; prints its line; true when every schedule passed.
bool explore_one(const StressOptions& options, const SmallWorld& world,
                 const std::vector<std::string>& command_line, std::ostream& out,
                 std::uint64_t* schedules_total) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> traces;  // every run's trace hash and projection (8 bytes a run)
  std::vector<std::uint64_t> projections;
  std::uint64_t schedules_run = 0;
  const ExploreResult result =
      SimExplorer(ExploreOptions{.preemptions_max = options.preemptions,
                                 .faults_max = options.explore_faults,
                                 .schedules_max = options.schedules_max})
          .explore([&](SimChoices& choices) {
            g_running =
                "\nexplore: ABORTED in " + std::string(world.name) + ", schedule " +
                std::to_string(schedules_run) + " (" +
                std::to_string(*schedules_total + schedules_run + 1) + " schedules in all; " +
                std::to_string(choices.prefix_preemptions) + " preemption(s), " +
                std::to_string(choices.prefix_faults) +
                " fault(s)); run it alone: readyport-stress --explore " + world.name +
                (options.explore_faults > 0 ? " --faults " + std::to_string(options.explore_faults)
                                            : std::string()) +
                (choices.prefix.empty() ? std::string()
                                        : " --schedule " + schedule_text(choices.prefix)) +
                "\n";
            schedules_run += 1;
            const SmallWorldRun run = small_world_run(world, choices, options.explore_faults > 0);
            traces.push_back(run.trace_hash);
            projections.push_back(run.projection_hash);
            return run.run;
          });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *schedules_total += result.schedules;
  const std::uint64_t traces_distinct = sim_distinct_count(traces);
  const std::uint64_t projections_distinct = sim_distinct_count(projections);
  out << world.name << ": " << result.schedules << " schedules run, " << result.pruned
      << " pruned by sleep sets (" << result.runs_joined << " runs joined a class run elsewhere); "
      << result.distinct_classes << " classes under the dependence relation, "
      << projections_distinct << " observably distinct (each thread's own lines), "
      << traces_distinct << " distinct traces; " << result.decisions_max << " decisions at most; "
      << seconds_text(seconds) << ": ";
  if (!result.failure.ok()) {
    out << "FAILED with " << result.failing_preemptions << " preemption(s) and "
        << result.failing_faults << " fault(s)\n  " << result.failure.to_string()
        << "\n  run it alone: readyport-stress --explore " << world.name
        << (options.explore_faults > 0 ? " --faults " + std::to_string(options.explore_faults)
                                       : std::string())
        << " --schedule " << schedule_text(result.failing_prefix) << "\n";
    (void)write_failure_bundle(options, world, result, command_line, out);
    return false;
  }
  if (result.complete) {
    out << "complete to bound " << options.preemptions << "\n";
  } else {
    out << "stopped at --schedules-max " << options.schedules_max << " (NOT complete to bound "
        << options.preemptions << ")\n";
  }
  return true;
}

// --schedule: the one schedule it names.
int run_one_schedule(const StressOptions& options, std::ostream& out) {
  const Result<StressScheduleRun> run = stress_explore_run_schedule(
      options.explore, options.explore_schedule, options.explore_faults);
  if (!run.ok()) {
    out << "readyport-stress: --schedule: " << run.status().message() << "\n";
    return 2;
  }
  const StressScheduleRun& r = run.value();
  out << options.explore << " schedule " << options.explore_schedule << ": " << r.preemptions
      << " preemption(s), " << r.faults << " fault(s), " << r.decisions << " decisions, trace "
      << r.trace_hash << ": " << (r.verdict.ok() ? "ok" : r.verdict.to_string()) << "\n";
  return r.verdict.ok() ? 0 : 1;
}

}  // namespace

Result<StressScheduleRun> stress_explore_run_schedule(const std::string& world_name,
                                                      const std::string& schedule_list,
                                                      std::uint32_t faults) {
  const SmallWorld* world = small_world_find(world_name);
  std::vector<std::uint32_t> schedule;
  if (world == nullptr || !schedule_parse(schedule_list, &schedule)) {
    return Status(StatusCode::kInvalidArgument,
                  "needs one small world (not all) and thread ids 1..64, comma-separated (got '" +
                      world_name + "', '" + schedule_list + "')");
  }
  SimChoices choices;
  choices.prefix = schedule;
  const SmallWorldRun run = small_world_run(*world, choices, faults > 0);
  if (choices.diverged_at != SimChoices::kFollowed || choices.decisions.size() < schedule.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "schedule " + schedule_list + " does not fit " + world_name + ": decision " +
                      std::to_string(std::min(choices.diverged_at, choices.decisions.size())) +
                      " cannot run the thread it names (the run had " +
                      std::to_string(choices.decisions.size()) + " decisions)");
  }
  StressScheduleRun result;
  result.verdict = run.run.verdict;
  result.trace_hash = hash_hex(run.trace_hash);
  result.preemptions = sim_preemptions(choices.decisions, choices.decisions.size());
  result.faults = sim_choices_yes(choices.decisions, choices.decisions.size());
  result.decisions = choices.decisions.size();
  return result;
}

int stress_explore_main(const StressOptions& options, const std::vector<std::string>& command_line,
                        std::ostream& out) {
  if (!options.explore_schedule.empty()) {
    return run_one_schedule(options, out);
  }
  std::signal(SIGABRT, explore_on_abort);
  out << "readyport-stress --explore " << options.explore << ": every schedule with at most "
      << options.preemptions << " preemption(s) and " << options.explore_faults
      << " fault(s) (each hit of a world's fault sites a choice), at most " << options.schedules_max
      << " schedules a world\n";
  const auto start = std::chrono::steady_clock::now();
  std::uint32_t worlds = 0;
  std::uint32_t failed = 0;
  std::uint64_t schedules = 0;
  std::string first_failure;
  for (const SmallWorld& world : small_worlds()) {
    if (options.explore != "all" && options.explore != world.name) {
      continue;
    }
    worlds += 1;
    if (!explore_one(options, world, command_line, out, &schedules)) {
      failed += 1;
      if (first_failure.empty()) {
        // The schedules of the worlds before it count: the order is small_worlds()'s.
        first_failure =
            std::string(world.name) + " after " + std::to_string(schedules) +
            " schedules in all, " +
            seconds_text(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      if (options.stop_on_failure) {
        break;
      }
    }
  }
  if (!first_failure.empty()) {
    out << "first failure: " << first_failure << "\n";
  }
  out << worlds << " world(s), " << schedules << " schedules: " << (worlds - failed) << " passed, "
      << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace readyport
