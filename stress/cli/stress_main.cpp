// readyport-stress: the main job. Runs one world per seed (stress_run.hpp: the chaos workload on
// the engine over FaultyOs(RecordingOs(FakeOs)), a fault plan, the swarm over the spec's open
// questions, a chaos and a liveness phase, judged by the OS-side LifetimeOracle). This file picks
// the mode from the command line (stress_options.hpp):
//   the main job        main_job.hpp: the regression corpus, then the seeds; a failure bundle per
//                       failing seed; the summary and figures, --json, --markdown
//   --os windows        main_job.hpp over real_os_run.hpp: the same job on WindowsOs (real
//                       loopback sockets and threads; exit 77 where the call is missing)
//   --replay FILE       replay_main.hpp: a bundle's seed with its options, compared with its record
//   --shrink            below: a failing seed's minimal case (stress_shrink.hpp), as a bundle and
//                       optionally a corpus entry
//   --scale             scale_run.hpp: the engine with 10,000 connections and 8 workers
//   --check-trace FILE  below: the oracle's verdict on a recorded trace
//   --engine-case LINE  properties/engine/engine_replay.hpp: one engine-property case
//   --version, --help
// Exit status: 0 pass, 1 failure, 2 bad command line (or an unreadable input, an unwritable
// output), 77 --os windows where ProcessSocketNotifications is missing (skipped).
// docs/replay.md describes bundles, the corpus and the outputs.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/build_info.hpp"
#include "cli/stress_options.hpp"
#include "engine_replay.hpp"
#include "explore/explore_main.hpp"
#include "files/bundle.hpp"
#include "files/corpus.hpp"
#include "files/file_io.hpp"
#include "files/trace_header.hpp"
#include "jobs/abort_report.hpp"
#include "jobs/failure_report.hpp"
#include "jobs/guided_search.hpp"
#include "jobs/main_job.hpp"
#include "jobs/replay_main.hpp"
#include "jobs/run_summary.hpp"
#include "jobs/stress_shrink.hpp"
#include "readyport/fake/embedder_oracle.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "runs/scale_run.hpp"
#include "runs/stress_run.hpp"

namespace readyport {
namespace {

// A trace file read by --check-trace: at most this large (far above any seed's trace).
constexpr std::uint64_t kCheckTraceBytesMax = 1ULL << 32;

// A harness's trace (world=embedder): the EmbedderOracle's judgement of the embedder's code too,
// printed; returns the earlier of its verdict and the LifetimeOracle's (`lifetime`).
Status check_trace_embedder(const StressOptions& options, std::string_view text,
                            const StressTraceHeader& header, const Status& lifetime) {
  EmbedderOracle embedder(/*exact=*/!stress_trace_header_real_threads(header));
  embedder.observe_text(text.substr(header.length));
  const Status verdict = embedder.finish(/*run_completed=*/!header.cut);
  const EmbedderCounts counts = embedder.counts();
  std::printf(
      "check-trace %s: an embedder's scenario: %llu calls by its code (%llu in callbacks)\n",
      options.check_trace.c_str(), static_cast<unsigned long long>(counts.embedder_calls),
      static_cast<unsigned long long>(counts.callback_calls));
  std::printf("  embedder judgement     %s\n%s\n  %s\n",
              embedder_judgement_headline(counts.judgement).c_str(),
              embedder_rules_text(counts.judgement).c_str(), embedder_blind_spots_text().c_str());
  return embedder_first_violation(verdict, lifetime);
}

// --check-trace FILE: the oracle's verdict on a recorded trace (a run of this driver, or a
// RecordingOs trace from any backend). Exit 0 when it holds, 1 on a violation, 2 when unreadable.
int check_trace(const StressOptions& options) {
  Result<std::string> text = stress_file_read(options.check_trace, kCheckTraceBytesMax);
  if (!text.ok()) {
    std::fprintf(stderr, "readyport-stress: cannot read '%s': %s\n", options.check_trace.c_str(),
                 text.status().message().c_str());
    return 2;
  }
  // How the trace was made: its header decides; --runtime only where it has none.
  Result<StressTraceHeader> header = stress_trace_header_parse(text.value());
  if (!header.ok()) {
    std::fprintf(stderr, "readyport-stress: '%s': %s\n", options.check_trace.c_str(),
                 header.status().message().c_str());
    return 2;
  }
  // The judgement does not depend on how the trace was made (intervals say what may lag); the
  // header only names it. A --runtime that contradicts the header is refused all the same.
  const bool has = header.value().has;
  if (has && options.runtime_given &&
      (options.runtime == StressRuntime::kFree) !=
          stress_trace_header_real_threads(header.value())) {
    std::fprintf(stderr, "readyport-stress: '%s' says runtime=%s; --runtime %s contradicts it\n",
                 options.check_trace.c_str(), stress_runtime_name(header.value().runtime),
                 stress_runtime_name(options.runtime));
    return 2;
  }
  if (has) {
    std::printf("check-trace %s: recorded with runtime=%s os=%s commit=%s canary=%s%s%s\n",
                options.check_trace.c_str(), stress_runtime_name(header.value().runtime),
                stress_os_name(header.value().os), header.value().commit.c_str(),
                header.value().canary.c_str(),
                header.value().fake.empty() ? "" : " fake=", header.value().fake.c_str());
  } else {
    std::printf(
        "check-trace %s: no header line: how it was recorded is not known (the judgement "
        "does not depend on it)\n",
        options.check_trace.c_str());
  }
  LifetimeOracle oracle;
  oracle.observe_text(std::string_view(text.value()).substr(header.value().length));
  // finish() keeps the first violation and still runs the end-of-trace rules, so that the counts
  // below cover the whole trace; a trace cut by an abort has no end to judge (finish_cut).
  if (has && header.value().cut) {
    std::printf(
        "check-trace %s: the run was cut there (end=abort): the end-of-run rules are not "
        "judged\n",
        options.check_trace.c_str());
  }
  const Status verdict = has && header.value().cut ? oracle.finish_cut() : oracle.finish();
  const OracleCounts counts = oracle.counts();
  std::printf(
      "check-trace %s: %llu lines, %llu port calls, %llu packets, %llu handler entries, "
      "%llu connections\n",
      options.check_trace.c_str(), static_cast<unsigned long long>(counts.lines),
      static_cast<unsigned long long>(counts.port_calls),
      static_cast<unsigned long long>(counts.packets),
      static_cast<unsigned long long>(counts.handler_entries),
      static_cast<unsigned long long>(counts.connections));
  stress_judgement_print(counts.judgement);
  const Status first = has && header.value().embedder
                           ? check_trace_embedder(options, text.value(), header.value(), verdict)
                           : verdict;
  std::printf("verdict: %s\n", first.ok() ? "ok" : first.to_string().c_str());
  return first.ok() ? 0 : 1;
}

// The shrunk case as a corpus entry (--corpus-entry FILE), marked with this build's canary.
Status write_corpus_entry(const StressOptions& options, const ShrinkResult& result) {
  const StressBuildInfo build = stress_build_info();
  StressCorpusEntry entry;
  entry.seed = result.minimal.parameters.seed;
  entry.options = result.options;
  entry.expect_canary = build.canary;
  entry.signature = result.signature;
  entry.why = (build.canary.empty() ? std::string("the minimal case of a failure")
                                    : "the minimal case of canary " + build.canary) +
              ": readyport-stress --seed " + std::to_string(entry.seed) + " --shrink at commit " +
              build.commit + " (" + build.compiler + ") kept " + result.signature + " with " +
              std::to_string(result.minimal.trace_lines) + " trace lines, trace hash " +
              result.minimal.trace_hash + " there";
  const Json document = stress_corpus_entry_json(entry);
  return stress_file_write(options.corpus_entry_out, document.dump(2) + "\n",
                           StressWriteMode::kReplace);
}

// --shrink: the failing seed's minimal case, its replay command and its bundle. Exit 0 when
// shrunk, 1 when the seed does not fail, 2 when an output cannot be written.
int shrink(const StressOptions& options, const std::vector<std::string>& command_line) {
  const std::uint64_t seed = options.first_seed;
  std::printf("readyport-stress: shrinking seed %llu\n", static_cast<unsigned long long>(seed));
  stress_abort_install();
  StressBundleContext original_context{command_line,
                                       stress_bundle_path(options.bundle_dir, seed, ""),
                                       "seed range (before --shrink)"};
  stress_abort_arm(options, seed, &original_context);
  const ShrinkResult result = stress_shrink(options, seed, stress_run_seed);
  if (!result.status.ok()) {
    std::printf("%s\n", result.status.to_string().c_str());
    return 1;
  }
  SeedReport a = result.original;
  SeedReport b = result.minimal;
  stress_tail_fill(options, a);
  stress_tail_fill(result.options, b);
  std::printf("failure kept: %s (signature %s)\n", b.status.to_string().c_str(),
              result.signature.c_str());
  std::printf("%-26s %14s %14s\n", "", "original", "shrunk");
  auto row = [](const char* what, std::uint64_t before, std::uint64_t after) {
    std::printf("%-26s %14llu %14llu\n", what, static_cast<unsigned long long>(before),
                static_cast<unsigned long long>(after));
  };
  row("fault sites active", a.parameters.plan.active_count(), b.parameters.plan.active_count());
  row("faults fired", stress_faults_fired(a), stress_faults_fired(b));
  row("scheduler switches", a.sim.switches, b.sim.switches);
  row("PCT depth", a.parameters.strategy == SimStrategy::kPct ? options.pct_depth : 0,
      b.parameters.strategy == SimStrategy::kPct ? result.options.pct_depth : 0);
  row("director actions", a.parameters.workload.actions, b.parameters.workload.actions);
  row("clients", a.parameters.workload.clients, b.parameters.workload.clients);
  row("raw peers", a.parameters.workload.peers, b.parameters.workload.peers);
  row("trace lines", a.trace_lines, b.trace_lines);
  std::printf("runs while shrinking: %u in %u passes; %s\n", result.runs, result.passes,
              result.one_minimal
                  ? "1-minimal: no single fault, site, depth step or workload unit can go"
                  : "the run budget ran out before a pass changed nothing (not proven 1-minimal)");
  std::printf("faults that matter: %s\n",
              b.fired_hits.empty() ? "(more than a plan holds)" : b.fired_hits.c_str());
  std::printf("minimal parameters: %s\n", stress_parameters_line(b.parameters).c_str());
  std::printf("minimal trace hash: %s\n", b.trace_hash.c_str());
  const std::string program = command_line.empty() ? "readyport-stress" : command_line[0];
  std::printf("replay: %s\n", stress_replay_command(result.options, b, program).c_str());
  // The original failure's bundle and the minimal case's, both replayable with --replay.
  const std::string original = stress_bundle_write(options, a, original_context);
  StressBundleContext minimal_context{command_line,
                                      stress_bundle_path(options.bundle_dir, seed, "-shrunk"),
                                      "shrink: the minimal case of seed " + std::to_string(seed)};
  const std::string minimal = stress_bundle_write(result.options, b, minimal_context);
  if (!original.empty()) {
    std::printf("bundle: %s\n", original.c_str());
  }
  if (!minimal.empty()) {
    std::printf("minimal bundle: %s (replay: %s --replay %s)\n", minimal.c_str(), program.c_str(),
                minimal.c_str());
  }
  if (!options.corpus_entry_out.empty()) {
    const Status written = write_corpus_entry(options, result);
    if (!written.ok()) {
      std::fprintf(stderr, "readyport-stress: --corpus-entry: %s\n", written.message().c_str());
      return 2;
    }
    std::printf("corpus entry: %s\n", options.corpus_entry_out.c_str());
  }
  return original.empty() || minimal.empty() ? 2 : 0;
}

}  // namespace
}  // namespace readyport

int main(int argc, char** argv) {
  const std::vector<std::string> command_line(argv, argv + argc);
  readyport::Result<readyport::StressOptions> parsed = readyport::stress_options_parse(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "readyport-stress: %s\n", parsed.status().to_string().c_str());
    return 2;
  }
  const readyport::StressOptions& options = parsed.value();
  if (options.help) {
    std::fputs(readyport::stress_usage().c_str(), stdout);
    return 0;
  }
  if (options.version) {
    std::printf("%s\n", readyport::stress_version_line().c_str());
    return 0;
  }
  if (options.engine_case_given) {
    return readyport::properties::engine_case_replay_main(options.engine_case, std::cout);
  }
  if (!options.check_trace.empty()) {
    return readyport::check_trace(options);
  }
  if (!options.explore.empty()) {
    return readyport::stress_explore_main(options, command_line, std::cout);
  }
  if (!options.replay.empty()) {
    return readyport::stress_replay_main(options, command_line);
  }
  if (options.shrink) {
    return readyport::shrink(options, command_line);
  }
  if (options.scale) {
    return readyport::stress_scale_main(options);
  }
  if (options.guided_runs != 0 || options.guided_seconds != 0) {
    return readyport::stress_guided_main(options, command_line);
  }
  return readyport::stress_main_job(options, command_line);
}
