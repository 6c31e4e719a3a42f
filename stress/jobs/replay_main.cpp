#include "jobs/replay_main.hpp"

#include <cstdio>
#include <string>

#include "cli/build_info.hpp"
#include "explore/explore_main.hpp"
#include "files/bundle.hpp"
#include "files/corpus.hpp"
#include "files/file_io.hpp"
#include "files/json_fields.hpp"
#include "files/options_json.hpp"
#include "files/trace_out.hpp"
#include "jobs/abort_report.hpp"
#include "jobs/failure_report.hpp"
#include "jobs/stress_shrink.hpp"
#include "runs/stress_run.hpp"

namespace readyport {
namespace {

// What a file to replay says: a bundle (with its record) or a corpus entry (none).
struct ReplayInput {
  StressBundle bundle;        // for a corpus entry: seed, options, origin only
  bool recorded = false;      // a bundle: commit, failure and trace hash are known
  std::string expect_canary;  // a corpus entry's
};

Result<ReplayInput> read_input(const std::string& path) {
  Result<std::string> text = stress_file_read(path, kStressBundleBytesMax);
  if (!text.ok()) {
    return text.status();
  }
  Result<Json> document = json_parse_document(text.value(), path);
  if (!document.ok()) {
    return document.status();
  }
  std::string format;
  if (Status s = json_field_string(document.value(), path, "format", &format); !s.ok()) {
    return s;
  }
  ReplayInput input;
  if (format == kStressCorpusFormat) {
    Result<StressCorpusEntry> entry = stress_corpus_entry_from_json(document.value(), path);
    if (!entry.ok()) {
      return entry.status();
    }
    input.bundle.seed = entry.value().seed;
    input.bundle.options = entry.value().options;
    input.bundle.origin = "corpus entry: " + entry.value().why;
    input.expect_canary = entry.value().expect_canary;
    return input;
  }
  Result<StressBundle> bundle = stress_bundle_from_json(document.value(), path);
  if (!bundle.ok()) {
    return bundle.status();
  }
  input.bundle = bundle.value();
  input.recorded = true;
  return input;
}

// Compares the replay with the bundle's record, prints how, and returns the exit status: 0 the
// same verdict (failure signature) and the same trace hash, kStressReplaySameVerdictOtherTrace
// the same verdict with another trace (or none recorded: the recorded run aborted), and
// kStressReplayNotReproduced another verdict.
int print_record_comparison(const StressBundle& bundle, const Status& status,
                            const std::string& trace_hash) {
  const std::string signature = status.ok() ? "" : stress_failure_signature(status);
  std::string compared = "the same";
  if (signature.empty()) {
    compared = "now none: it passes";
  } else if (signature != bundle.signature) {
    compared = "now " + signature;
  }
  std::printf("recorded: %s: %s (signature %s: %s)\n", bundle.status.c_str(),
              bundle.message.c_str(), bundle.signature.c_str(), compared.c_str());
  const bool same_trace = !bundle.trace_hash.empty() && trace_hash == bundle.trace_hash;
  if (bundle.trace_hash.empty()) {
    std::printf("trace hash: %s (none recorded: the recorded run aborted)\n", trace_hash.c_str());
  } else {
    std::printf("trace hash: %s (recorded %s: %s)\n", trace_hash.c_str(), bundle.trace_hash.c_str(),
                same_trace ? "matches" : "DIFFERS");
  }
  if (signature != bundle.signature) {
    std::printf("replay: NOT reproduced (exit %d)\n", kStressReplayNotReproduced);
    return kStressReplayNotReproduced;
  }
  if (!same_trace) {
    std::printf("replay: the same verdict, another trace (exit %d)\n",
                kStressReplaySameVerdictOtherTrace);
    return kStressReplaySameVerdictOtherTrace;
  }
  std::printf("replay: reproduced exactly (verdict and trace hash)\n");
  return 0;
}

// What replays, from which bundle, and each way this build differs from the bundle's.
void print_replay_header(const StressOptions& options, const ReplayInput& input) {
  const StressBundle& bundle = input.bundle;
  const StressBuildInfo build = stress_build_info();
  // An exploration's bundle names its run by a schedule, a seed's by the seed.
  const std::string what = bundle.explore_world.empty() ? "seed " + std::to_string(bundle.seed)
                                                        : "a schedule of " + bundle.explore_world;
  std::printf("replay: %s from %s (%s%s%s)\n", what.c_str(), options.replay.c_str(),
              bundle.origin.c_str(), input.recorded ? ", commit " : "",
              input.recorded ? bundle.commit.c_str() : "");
  if (input.recorded && bundle.commit != build.commit) {
    std::printf(
        "warning: the bundle was written by commit %s, this is commit %s: the run may "
        "differ (replay on the bundle's commit for an exact replay)\n",
        bundle.commit.c_str(), build.commit.c_str());
  }
  if (input.recorded && bundle.tree == "dirty") {
    std::printf(
        "warning: the bundle's build had uncommitted changes to commit %s: a build of that "
        "commit alone may run differently\n",
        bundle.commit.c_str());
  }
  if (input.recorded && bundle.canary != build.canary) {
    std::printf("warning: the bundle's build had canary '%s', this build has '%s'\n",
                bundle.canary.c_str(), build.canary.c_str());
  }
  if (!input.expect_canary.empty()) {
    std::printf("expected: %s in a build with canary %s, a pass in any other (this build: %s)\n",
                "a failure", input.expect_canary.c_str(),
                build.canary.empty() ? "no canary" : build.canary.c_str());
  }
}

// An exploration's bundle: its one schedule of its small world, judged as when it was explored.
int replay_explore(const StressBundle& bundle) {
  std::printf("explore: world %s, schedule %s, %u fault(s) allowed\n", bundle.explore_world.c_str(),
              bundle.explore_schedule.c_str(), bundle.explore_faults);
  std::fflush(stdout);
  const Result<StressScheduleRun> run = stress_explore_run_schedule(
      bundle.explore_world, bundle.explore_schedule, bundle.explore_faults);
  if (!run.ok()) {
    std::printf("replay: the bundle's schedule does not run here: %s (exit %d)\n",
                run.status().message().c_str(), kStressReplayNotReproduced);
    return kStressReplayNotReproduced;
  }
  const StressScheduleRun& r = run.value();
  std::printf("schedule: %u preemption(s), %u fault(s), %llu decisions\n", r.preemptions, r.faults,
              static_cast<unsigned long long>(r.decisions));
  std::printf("verdict: %s\n", r.verdict.ok() ? "ok" : r.verdict.to_string().c_str());
  return print_record_comparison(bundle, r.verdict, r.trace_hash);
}

}  // namespace

int stress_replay_main(const StressOptions& options, const std::vector<std::string>& command_line) {
  Result<ReplayInput> input = read_input(options.replay);
  if (!input.ok()) {
    std::fprintf(stderr, "readyport-stress: --replay: %s\n", input.status().to_string().c_str());
    return 2;
  }
  const StressBundle& bundle = input.value().bundle;
  print_replay_header(options, input.value());
  if (!bundle.explore_world.empty()) {
    return replay_explore(bundle);
  }
  if (bundle.options.os == StressOs::kWindows) {
    // Its threads ran on a real OS: neither the fake nor this machine's scheduler reproduces it.
    std::printf(
        "this bundle is from --os windows: its seed reproduces the workload and the fault "
        "plan, not the interleaving. Judge its recorded trace offline with "
        "`readyport-stress --check-trace <seed-%llu.trace>` (its header says how it was "
        "recorded), or run the seed "
        "again on Windows: readyport-stress --os windows --seed %llu\n",
        static_cast<unsigned long long>(bundle.seed), static_cast<unsigned long long>(bundle.seed));
    return 2;
  }
  if (bundle.options.runtime == StressRuntime::kFree) {
    std::printf(
        "note: the run used real threads (--runtime free): its interleaving does not "
        "replay, its workload does\n");
  }
  StressOptions run_options =
      bundle.options;  // exactly the bundle's; only outputs from the command line
  run_options.trace = options.trace;
  run_options.verbose = options.verbose;
  run_options.trace_out = options.trace_out;
  run_options.trace_format = options.trace_format;
  std::printf("options: %s\n", stress_run_flags(run_options, bundle.seed).c_str());
  std::fflush(stdout);
  stress_abort_install();
  const StressBundleContext no_bundle{command_line, "", "replay"};  // no bundle of a replay
  stress_abort_arm(run_options, bundle.seed, &no_bundle);
  const SeedReport report = stress_run_seed(run_options, bundle.seed);
  if (options.verbose) {
    stress_verbose_print(report);
  }
  if (options.trace) {
    std::fputs(report.trace_text.c_str(), stdout);
  }
  if (!options.trace_out.empty()) {
    const Status written =
        stress_trace_write(options.trace_out, options.trace_format, report.trace_text, run_options,
                           &report.parameters.fake);
    if (!written.ok()) {
      std::fprintf(stderr, "readyport-stress: --trace-out: %s\n", written.message().c_str());
      return 2;
    }
  }
  const std::string program = command_line.empty() ? "readyport-stress" : command_line[0];
  if (!report.status.ok()) {
    stress_failure_print(run_options, report, "", program);
  }
  std::printf("verdict: %s\n", report.status.ok() ? "ok" : report.status.to_string().c_str());
  if (input.value().recorded) {
    return print_record_comparison(bundle, report.status, report.trace_hash);
  }
  // A corpus entry records no failure: it must pass.
  std::printf("trace hash: %s (a corpus entry records none)\n", report.trace_hash.c_str());
  return report.status.ok() ? 0 : 1;
}

}  // namespace readyport
