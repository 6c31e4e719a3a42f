// The harness's run over its seeds: each seed judged, the first failure reported (the trace lines
// around it, its replay command, its bundle, its shrunk case), determinism and replay checks, and
// the summary. See harness.hpp.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness_report.hpp"
#include "last_words.hpp"
#include "readyport/fake/harness.hpp"

namespace readyport {
namespace {

using harness_internal::Shrunk;

// Appends to the report and prints at once (a long run shows its progress).
class Printer {
 public:
  explicit Printer(std::string& report) : report_(report) {}
  void line(const std::string& text) {
    report_ += text + "\n";
    std::fputs((text + "\n").c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  std::string& report_;
};

std::string faults_text(const HarnessOptions& options) {
  switch (options.faults) {
    case HarnessOptions::Faults::kNone:
      return "none";
    case HarnessOptions::Faults::kPlan:
      return options.plan.to_string();
    case HarnessOptions::Faults::kDrawn:
      break;
  }
  std::string off;
  for (const FaultSite site : options.sites_off) {
    off += (off.empty() ? "" : ",") + std::string(fault_site_name(site));
  }
  return "drawn per seed over the application's sites" + (off.empty() ? "" : " but " + off);
}

// A failing seed's trace text as kept: whole, or cut at trace_mb_max (its first part, and the
// run's last lines apart).
struct KeptTrace {
  std::string text;
  bool cut = false;
  std::vector<std::string> tail;
};

// Runs the seed's case a second time with its text kept (the simulation is deterministic: the
// same run), or uses the text the run kept (real threads).
KeptTrace trace_of(const HarnessOptions& options, const HarnessSeed& seed,
                   const ScenarioFactory& make, std::string kept) {
  if (!kept.empty() || options.runtime != HarnessRuntime::kSim) {
    return KeptTrace{std::move(kept), seed.trace_cut, seed.trace_tail};
  }
  KeptTrace trace;
  const HarnessSeed again = harness_run_case(options, seed.run_case, make, &trace.text);
  trace.cut = again.trace_cut;
  trace.tail = again.trace_tail;
  return trace;
}

// The lines around the violation: from the text, or from the last lines when the text was cut
// before the violation's line; `around_out` says which.
std::vector<std::string> window_of(const KeptTrace& trace, std::uint64_t at, bool* around_out) {
  std::vector<std::string> window = harness_internal::trace_window(trace.text, at);
  bool marked = false;  // the violation's line is in the text (trace_window marks it)
  for (const std::string& line : window) {
    marked = marked || line.rfind(">> ", 0) == 0;
  }
  *around_out = at != 0 && (!trace.cut || marked);
  if (!trace.cut || marked) {
    return window;
  }
  window.clear();
  for (const std::string& line : trace.tail) {
    window.push_back("   " + line.substr(0, line.empty() ? 0 : line.size() - 1));
  }
  return window;
}

// Shrinks a simulated failure to the faults and schedule that matter (case_shrinker.hpp).
Shrunk shrink_failure(const HarnessOptions& options, const HarnessSeed& failing,
                      const ScenarioFactory& make) {
  Shrunk shrunk;
  if (!options.shrink || options.runtime != HarnessRuntime::kSim) {
    return shrunk;
  }
  shrunk.minimal = failing.run_case;
  shrunk.minimal_seed = failing;
  ShrinkCase start;
  start.plan = failing.run_case.plan;
  start.strategy = failing.run_case.strategy;
  start.depth = failing.run_case.depth;
  std::uint64_t steps = failing.steps;
  const ShrinkRunner runner = [&](const ShrinkCase& candidate) {
    HarnessCase run_case = failing.run_case;
    run_case.plan = candidate.plan;
    run_case.strategy = candidate.strategy;
    run_case.depth = candidate.depth;
    HarnessSeed seed = harness_run_case(options, run_case, make);
    ShrinkRun outcome;
    outcome.same_failure = !seed.status.ok() && failure_signature(seed.status) == failing.signature;
    outcome.fired_hits = seed.fired_hits;
    steps += seed.steps;
    outcome.budget_spent = steps >= options.shrink_steps_max;
    if (outcome.same_failure) {
      shrunk.minimal = run_case;  // the shrinker keeps exactly these candidates
      shrunk.minimal_seed = std::move(seed);
    }
    return outcome;
  };
  shrunk.outcome = shrink_case(start, failing.fired_hits, runner);
  shrunk.done = true;
  return shrunk;
}

void print_shrunk(Printer& out, const HarnessOptions& options, const HarnessSeed& failing,
                  const Shrunk& shrunk) {
  if (!shrunk.done) {
    return;
  }
  const auto row = [&out](const char* what, const std::string& original, const std::string& now) {
    char text[160];
    std::snprintf(text, sizeof text, "    %-24s %16s %16s", what, original.c_str(), now.c_str());
    out.line(text);
  };
  out.line("  shrunk to the case that matters:     original           shrunk");
  row("fault sites active", std::to_string(failing.run_case.plan.active_count()),
      std::to_string(shrunk.minimal.plan.active_count()));
  row("faults fired", std::to_string(failing.faults_fired),
      std::to_string(shrunk.minimal_seed.faults_fired));
  row("schedule",
      std::string(sim_strategy_name(failing.run_case.strategy)) + "/" +
          std::to_string(failing.run_case.depth),
      std::string(sim_strategy_name(shrunk.minimal.strategy)) + "/" +
          std::to_string(shrunk.minimal.depth));
  row("trace lines", std::to_string(failing.trace_lines),
      std::to_string(shrunk.minimal_seed.trace_lines));
  out.line("    runs while shrinking: " + std::to_string(shrunk.outcome.runs) + " in " +
           std::to_string(shrunk.outcome.passes) + " passes; " +
           (shrunk.outcome.one_minimal ? "1-minimal: no single fault, site or depth step can go"
            : shrunk.outcome.budget_spent
                ? "its budget of scheduler steps ran out before it was 1-minimal"
                : "the run budget ran out before it was 1-minimal"));
  out.line("    faults that matter: " + (shrunk.minimal.plan.active_count() == 0
                                             ? std::string("none")
                                             : shrunk.minimal.plan.to_string()));
  out.line(
      "    replay the shrunk case: " +
      harness_internal::replay_command(options, shrunk.minimal, shrunk.minimal_seed.trace_hash));
}

// Everything a failing seed prints, and its bundle. Returns the replay command.
void report_failure(Printer& out, const HarnessOptions& options, HarnessSeed& seed,
                    const ScenarioFactory& make, std::string kept_text, HarnessResult& result) {
  out.line("FAIL seed " + std::to_string(seed.run_case.seed) + ": " + seed.status.to_string());
  out.line("  rule: " + seed.signature);
  out.line("  case: " + harness_internal::case_text(seed.run_case));
  out.line("  trace hash: " + seed.trace_hash + " (" + std::to_string(seed.trace_lines) +
           " lines)");
  const KeptTrace trace = trace_of(options, seed, make, std::move(kept_text));
  seed.trace_cut = trace.cut;
  const std::uint64_t at = harness_internal::violation_line(seed.status);
  bool around = false;
  const std::vector<std::string> window = window_of(trace, at, &around);
  if (trace.cut) {
    out.line("  the trace's text passed " + std::to_string(options.trace_mb_max) +
             " MiB (READYPORT_TEST_TRACE_MB_MAX): only its first part and its last lines were "
             "kept, and no .trace file is written (a part would be judged as a whole run)");
  }
  out.line(around ? "  the trace around line " + std::to_string(at) + ":"
                  : "  the trace's last lines:");
  for (const std::string& line : window) {
    out.line("  " + line);
  }
  result.replay = harness_internal::replay_command(options, seed.run_case, seed.trace_hash);
  out.line("  replay: " + result.replay);
  if (options.runtime != HarnessRuntime::kSim) {
    out.line(
        "  (real threads do not replay: the command runs the same seed under the simulator;"
        " the whole recorded trace is in the bundle's .trace file)");
  }
  const Shrunk shrunk = shrink_failure(options, seed, make);
  print_shrunk(out, options, seed, shrunk);
  if (shrunk.done) {
    result.shrunk_replay =
        harness_internal::replay_command(options, shrunk.minimal, shrunk.minimal_seed.trace_hash);
  }
  Result<std::string> bundle = harness_internal::write_bundle(
      options, seed, trace.cut ? std::optional<std::string_view>() : trace.text, window, shrunk);
  result.bundle = bundle.ok() ? bundle.value() : "";
  out.line(bundle.ok() ? "  bundle: " + bundle.value() +
                             (trace.cut ? std::string(" (no .trace: its text was cut)")
                                        : " (its .trace beside it: readyport-stress "
                                          "--check-trace judges it)")
                       : "  bundle not written: " + bundle.status().to_string());
}

// The determinism mode: the seed again; any difference in its trace is a failure naming the first
// line that differs.
void check_determinism(const HarnessOptions& options, HarnessSeed& seed, const std::string& first,
                       const ScenarioFactory& make) {
  std::string second;
  const HarnessSeed again = harness_run_case(options, seed.run_case, make, &second);
  std::string line_a;
  std::string line_b;
  const std::uint64_t at = harness_internal::first_difference(first, second, &line_a, &line_b);
  if (at == 0 && again.trace_hash == seed.trace_hash) {
    return;
  }
  const std::string where =
      at != 0 ? "line " + std::to_string(at) + ":\n    first run:  " + line_a +
                    "\n    second run: " + line_b
              : "a line past the text kept (" + std::to_string(options.trace_mb_max) +
                    " MiB, READYPORT_TEST_TRACE_MB_MAX): the hashes differ";
  seed.status =
      Status(StatusCode::kInternal,
             "not deterministic: the same seed ran twice and its traces differ first at " + where +
                 "\n  (does the code read the wall clock, draw from an unseeded rng, "
                 "or depend on an unordered container's order?)");
}

void print_summary(Printer& out, const HarnessResult& result) {
  char text[256];
  std::snprintf(text, sizeof text,
                "harness: %u seeds, %u passed, %u failed (start failed under faults: %u, chaos "
                "failed under faults: %u), %.2f s, %.0f seeds per second",
                result.seeds_run, result.passed, result.failed, result.start_failed_under_faults,
                result.chaos_failed_under_faults, result.seconds,
                result.seconds > 0 ? result.seeds_run / result.seconds : 0.0);
  out.line(text);
  const bool yours = !result.failures.empty() && result.failures.front().signature[0] == 'U';
  out.line("  lifetime oracle (the engine's promise): " +
           oracle_rule_list_text(result.lifetime.violated) + " violated" +
           (yours ? " (after your code broke its side of the contract: consequences of it)" : "") +
           "; not judged " + std::to_string(result.lifetime.not_judged()));
  out.line("  embedder oracle (your code): " + embedder_judgement_headline(result.embedder));
  out.line(embedder_rules_text(result.embedder));
  out.line("  " + embedder_blind_spots_text());
}

}  // namespace

HarnessResult harness_run(const HarnessOptions& options, const ScenarioFactory& make) {
  HarnessResult result;
  Printer out(result.report);
  const auto began = std::chrono::steady_clock::now();
  out.line("harness: " + (options.test_name.empty() ? std::string("scenario") : options.test_name) +
           ", seeds " + std::to_string(options.first_seed) + ".." +
           std::to_string(options.first_seed + options.seeds - 1) + ", strategy " +
           (options.portfolio ? "portfolio" : sim_strategy_name(options.strategy)) + ", faults " +
           faults_text(options) + ", runtime " + harness_runtime_name(options.runtime) +
           (options.determinism ? ", every seed twice" : ""));
  for (std::uint64_t i = 0; i < options.seeds; ++i) {
    const HarnessCase run_case = harness_case_of(options, options.first_seed + i);
    const bool keep = options.determinism || options.runtime != HarnessRuntime::kSim ||
                      !options.trace_out.empty();
    harness_internal::last_words_arm(
        "harness: the process died in seed " + std::to_string(run_case.seed) + " (" +
        harness_internal::case_text(run_case) +
        "); replay: " + harness_internal::replay_command(options, run_case, ""));
    std::string text;
    HarnessSeed seed = harness_run_case(options, run_case, make, keep ? &text : nullptr);
    if (options.determinism && seed.status.ok()) {
      check_determinism(options, seed, text, make);
    }
    if (!options.trace_out.empty()) {
      const Status written =
          seed.trace_cut
              ? Status(StatusCode::kResourceExhausted,
                       "seed " + std::to_string(run_case.seed) + "'s text passed " +
                           std::to_string(options.trace_mb_max) +
                           " MiB (READYPORT_TEST_TRACE_MB_MAX); a part would read as a whole run")
              : harness_internal::write_trace_file(options, options.trace_out, text);
      if (!written.ok()) {
        out.line("trace not written: " + written.to_string());
      }
    }
    ++result.seeds_run;
    result.lifetime.add(seed.lifetime);
    result.embedder.add(seed.embedder);
    if (!options.expect_hash.empty()) {
      const bool same = seed.trace_hash == options.expect_hash;
      out.line("replay: trace hash " + seed.trace_hash + " (expected " + options.expect_hash +
               (same ? "): reproduced exactly" : "): DIFFERS"));
      if (!same && seed.status.ok()) {
        seed.status = Status(StatusCode::kInternal, "the replay's trace hash differs");
      }
    }
    if (seed.status.ok()) {
      ++result.passed;
      result.start_failed_under_faults += seed.start_failed_under_faults ? 1 : 0;
      result.chaos_failed_under_faults += seed.chaos_failed_under_faults ? 1 : 0;
      continue;
    }
    ++result.failed;
    seed.signature = failure_signature(seed.status);
    if (result.failures.empty()) {
      report_failure(out, options, seed, make, std::move(text), result);
    } else {
      out.line("FAIL seed " + std::to_string(seed.run_case.seed) + ": " + seed.status.to_string());
    }
    result.failures.push_back(std::move(seed));
    if (options.stop_on_failure) {
      break;
    }
  }
  harness_internal::last_words_disarm();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  print_summary(out, result);
  return result;
}

}  // namespace readyport
