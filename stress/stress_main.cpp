// readyport-stress: the main job. Runs one world per seed (stress_run.hpp: the chaos workload on
// the engine over FaultyOs(RecordingOs(FakeOs)), a fault plan, the swarm over the spec's open
// questions, a chaos and a liveness phase, judged by the OS-side LifetimeOracle), prints a
// progress line, a summary with the coverage table and faults fired per site, and for each
// failing seed its parameters, trace tail and the one command that replays it. Exit status: 0
// when every seed passed (and, with --require-coverage, every coverage row is non-zero), 1
// otherwise, 2 on bad arguments. See stress_options.hpp for the command line.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "readyport/fake/lifetime_oracle.hpp"
#include "stress_options.hpp"
#include "stress_run.hpp"
#include "stress_shrink.hpp"

#ifdef _WIN32
#include <io.h>
#define READYPORT_WRITE_STDERR(text, size) _write(2, text, static_cast<unsigned>(size))
#else
#include <unistd.h>
#define READYPORT_WRITE_STDERR(text, size) ::write(2, text, size)
#endif

namespace readyport {
namespace {

// Failures reported in full; the rest are counted.
constexpr std::size_t kFailuresReportedMax = 20;

// A broken engine invariant asserts and aborts the process (assertions are never turned into
// errors). So that such a run still names its seed, the replay command of the seed in progress is
// kept here and written by a SIGABRT handler (write(2) only: async-signal-safe).
char g_abort_note[1024] = {0};

extern "C" void on_abort(int signal_number) {
  (void)signal_number;
  const std::size_t size = std::strlen(g_abort_note);
  if (size != 0) (void)READYPORT_WRITE_STDERR(g_abort_note, size);
  // What the oracle had found before the engine's own assertion fired, if anything. Not
  // async-signal-safe (it builds a string), but the process is aborting anyway, and the oracle is
  // read only if no thread is inside it.
  const std::string violation = stress_abort_violation();
  if (!violation.empty()) {
    const std::string line = "  the oracle had found: " + violation + "\n";
    (void)READYPORT_WRITE_STDERR(line.data(), line.size());
  }
}

void set_abort_note(const StressOptions& options, std::uint64_t seed) {
  SeedReport report;
  report.parameters = stress_parameters(options, seed);
  std::snprintf(g_abort_note, sizeof(g_abort_note),
                "\nreadyport-stress: aborted during seed %llu (%s)\n  replay: %s\n",
                static_cast<unsigned long long>(seed),
                stress_parameters_line(report.parameters).c_str(),
                stress_replay_command(options, report).c_str());
}

struct Totals {
  std::uint64_t seeds = 0;
  std::uint64_t failures = 0;
  std::uint64_t connections = 0;  // client and server connections added
  std::uint64_t notifications = 0;
  std::uint64_t port_calls = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t trace_lines = 0;
  std::uint64_t stale_packets = 0;
  std::uint64_t dropped_packets = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t steps = 0;
  std::uint64_t switches = 0;
  NamedCounts coverage;  // stress_coverage_rows() order, summed over seeds
  std::vector<std::uint64_t> failing_seeds;
};

void add(Totals& totals, const SeedReport& report) {
  totals.seeds++;
  if (!report.status.ok()) {
    totals.failures++;
    totals.failing_seeds.push_back(report.parameters.seed);
  }
  totals.connections += report.counts.clients_started + report.counts.server_accepted;
  totals.notifications += report.engine.notifications;
  totals.port_calls += report.engine.port_calls;
  totals.bytes_received += report.counts.bytes_received;
  totals.trace_lines += report.trace_lines;
  totals.stale_packets += report.engine.stale_dropped;
  totals.dropped_packets += report.engine.closing_dropped + report.engine.unwanted_dropped;
  totals.quarantined += report.engine.quarantined;
  totals.steps += report.sim.steps;
  totals.switches += report.sim.switches;
  for (const auto& [name, count] : report.coverage) {
    for (auto& row : totals.coverage) {
      if (row.first == name) row.second += count;
    }
  }
}

void print_failure(const StressOptions& options, const SeedReport& report) {
  std::printf("FAIL seed %llu: %s\n", static_cast<unsigned long long>(report.parameters.seed),
              report.status.to_string().c_str());
  std::printf("  parameters: %s\n", stress_parameters_line(report.parameters).c_str());
  std::printf("  trace hash: %s (%llu lines)\n", report.trace_hash.c_str(),
              static_cast<unsigned long long>(report.trace_lines));
  if (!report.trace_tail.empty()) {
    std::printf("  last %zu of %llu trace lines:\n", report.trace_tail.size(),
                static_cast<unsigned long long>(report.trace_lines));
    for (const std::string& line : report.trace_tail) std::printf("    %s", line.c_str());
  }
  std::printf("  replay: %s\n", stress_replay_command(options, report).c_str());
}

void print_verbose(const SeedReport& report) {
  std::printf("seed %llu %s: %s | clients done %u cut %u refused %u, server %u, notifications "
              "%llu port_calls %llu quarantined %llu steps %llu trace %s (%llu lines)\n",
              static_cast<unsigned long long>(report.parameters.seed),
              report.status.ok() ? "ok" : "FAIL",
              stress_parameters_line(report.parameters).c_str(), report.counts.clients_done,
              report.counts.clients_cut, report.counts.clients_refused,
              report.counts.server_accepted,
              static_cast<unsigned long long>(report.engine.notifications),
              static_cast<unsigned long long>(report.engine.port_calls),
              static_cast<unsigned long long>(report.engine.quarantined),
              static_cast<unsigned long long>(report.sim.steps), report.trace_hash.c_str(),
              static_cast<unsigned long long>(report.trace_lines));
}

// The coverage table; returns the number of zero rows.
std::size_t print_coverage(const Totals& totals) {
  std::size_t zero = 0;
  std::printf("\ncoverage (summed over seeds; every row must be non-zero in the default run)\n");
  for (const auto& [name, count] : totals.coverage) {
    std::printf("  %-34s %12llu%s\n", name.c_str(), static_cast<unsigned long long>(count),
                count == 0 ? "   <-- never reached" : "");
    if (count == 0) ++zero;
  }
  return zero;
}

void print_summary(const StressOptions& options, const Totals& totals, double wall_s) {
  const double per_notification =
      totals.notifications == 0 ? 0.0
                                : static_cast<double>(totals.port_calls) /
                                      static_cast<double>(totals.notifications);
  std::printf("\nreadyport-stress summary (runtime %s, strategy %s, depth %u, shard %u/%u, "
              "faults %s)\n",
              stress_runtime_name(options.runtime), stress_strategy_name(options.strategy),
              options.pct_depth, options.shard_index + 1, options.shard_count,
              options.faults == StressOptions::Faults::kDrawn  ? "drawn per seed"
              : options.faults == StressOptions::Faults::kOff ? "off"
                                                               : options.fault_plan.c_str());
  std::printf("  seeds run              %llu\n", static_cast<unsigned long long>(totals.seeds));
  std::printf("  connections            %llu\n", static_cast<unsigned long long>(totals.connections));
  std::printf("  notifications          %llu\n", static_cast<unsigned long long>(totals.notifications));
  std::printf("  port calls             %llu\n", static_cast<unsigned long long>(totals.port_calls));
  std::printf("  port calls/notification %.3f\n", per_notification);
  std::printf("  bytes echoed back      %llu\n", static_cast<unsigned long long>(totals.bytes_received));
  std::printf("  stale/dropped packets  %llu/%llu\n",
              static_cast<unsigned long long>(totals.stale_packets),
              static_cast<unsigned long long>(totals.dropped_packets));
  std::printf("  quarantined slots      %llu\n", static_cast<unsigned long long>(totals.quarantined));
  std::printf("  trace lines judged     %llu\n", static_cast<unsigned long long>(totals.trace_lines));
  if (options.runtime == StressRuntime::kSim) {
    std::printf("  scheduler steps        %llu (%llu switches)\n",
                static_cast<unsigned long long>(totals.steps),
                static_cast<unsigned long long>(totals.switches));
  }
  std::printf("  failures               %llu\n", static_cast<unsigned long long>(totals.failures));
  if (!totals.failing_seeds.empty()) {
    std::printf("  failing seeds         ");
    for (std::uint64_t seed : totals.failing_seeds)
      std::printf(" %llu", static_cast<unsigned long long>(seed));
    std::printf("\n");
  }
  std::printf("  wall time              %.1f s\n", wall_s);
}

// --check-trace FILE: the oracle's verdict on a recorded trace (a run of this driver, or a
// RecordingOs trace from any backend). Exit 0 when it holds, 1 on a violation, 2 when unreadable.
int check_trace(const StressOptions& options) {
  std::ifstream file(options.check_trace, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "readyport-stress: cannot read '%s'\n", options.check_trace.c_str());
    return 2;
  }
  std::ostringstream text;
  text << file.rdbuf();
  LifetimeOracle oracle(OracleOptions{options.runtime == StressRuntime::kFree});
  oracle.observe_text(text.str());
  Status verdict = oracle.status();
  if (verdict.ok()) verdict = oracle.finish();
  const OracleCounts counts = oracle.counts();
  std::printf("check-trace %s: %llu lines, %llu port calls, %llu packets, %llu handler entries, "
              "%llu connections\n",
              options.check_trace.c_str(), static_cast<unsigned long long>(counts.lines),
              static_cast<unsigned long long>(counts.port_calls),
              static_cast<unsigned long long>(counts.packets),
              static_cast<unsigned long long>(counts.handler_entries),
              static_cast<unsigned long long>(counts.connections));
  std::printf("verdict: %s\n", verdict.ok() ? "ok" : verdict.to_string().c_str());
  return verdict.ok() ? 0 : 1;
}

// --shrink: the failing seed's minimal case and its replay command. Exit 0 when shrunk, 1 when
// the seed does not fail.
int shrink(const StressOptions& options) {
  const std::uint64_t seed = options.first_seed;
  std::printf("readyport-stress: shrinking seed %llu\n", static_cast<unsigned long long>(seed));
  std::signal(SIGABRT, on_abort);
  set_abort_note(options, seed);
  const ShrinkResult result = stress_shrink(options, seed, stress_run_seed);
  if (!result.status.ok()) {
    std::printf("%s\n", result.status.to_string().c_str());
    return 1;
  }
  const SeedReport& a = result.original;
  const SeedReport& b = result.minimal;
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
  std::printf("runs while shrinking: %u\n", result.runs);
  std::printf("minimal parameters: %s\n", stress_parameters_line(b.parameters).c_str());
  std::printf("minimal trace hash: %s\n", b.trace_hash.c_str());
  std::printf("replay: %s\n", stress_replay_command(result.options, b).c_str());
  return 0;
}

int run(const StressOptions& options) {
  // The seeds of this shard: first_seed + k for k in [0, seeds) with k % count == index.
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t k = options.shard_index; k < options.seeds; k += options.shard_count) {
    seeds.push_back(options.first_seed + k);
  }
  std::printf("readyport-stress: %zu seeds from %llu (shard %u/%u), runtime %s, strategy %s\n",
              seeds.size(), static_cast<unsigned long long>(options.first_seed),
              options.shard_index + 1, options.shard_count, stress_runtime_name(options.runtime),
              stress_strategy_name(options.strategy));
  std::fflush(stdout);

  // Wall time only for the summary line: nothing in a run reads it.
  const auto wall_start = std::chrono::steady_clock::now();
  Totals totals;
  for (const std::string& row : stress_coverage_rows()) totals.coverage.emplace_back(row, 0);
  const std::size_t progress_every = seeds.size() >= 10 ? seeds.size() / 10 : 1;
  std::signal(SIGABRT, on_abort);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    set_abort_note(options, seeds[i]);
    const SeedReport report = stress_run_seed(options, seeds[i]);
    add(totals, report);
    if (options.verbose) print_verbose(report);
    if (options.trace) std::fputs(report.trace_text.c_str(), stdout);
    if (!options.trace_out.empty()) {
      std::ofstream out(options.trace_out, std::ios::binary | std::ios::trunc);
      out << report.trace_text;
      if (!out) {
        std::fprintf(stderr, "readyport-stress: cannot write '%s'\n", options.trace_out.c_str());
        return 2;
      }
    }
    if (!report.status.ok() && totals.failures <= kFailuresReportedMax) print_failure(options, report);
    if ((i + 1) % progress_every == 0 || i + 1 == seeds.size()) {
      std::printf("progress: %zu/%zu seeds, %llu failures, %llu notifications\n", i + 1,
                  seeds.size(), static_cast<unsigned long long>(totals.failures),
                  static_cast<unsigned long long>(totals.notifications));
    }
    std::fflush(stdout);
    if (!report.status.ok() && options.stop_on_failure) {
      const std::chrono::duration<double> to_failure = std::chrono::steady_clock::now() - wall_start;
      std::printf("first failure: seed %llu after %zu seeds and %.1f s\n",
                  static_cast<unsigned long long>(seeds[i]), i + 1, to_failure.count());
      break;
    }
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
  print_summary(options, totals, wall.count());
  if (totals.failures > kFailuresReportedMax) {
    std::printf("  (%llu failures beyond the first %zu were not printed)\n",
                static_cast<unsigned long long>(totals.failures - kFailuresReportedMax),
                kFailuresReportedMax);
  }
  const std::size_t zero_rows = print_coverage(totals);
  if (options.require_coverage && zero_rows != 0) {
    std::printf("coverage: %zu row(s) never reached (--require-coverage)\n", zero_rows);
    return 1;
  }
  return totals.failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace readyport

int main(int argc, char** argv) {
  readyport::Result<readyport::StressOptions> options =
      readyport::stress_options_parse(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "readyport-stress: %s\n", options.status().to_string().c_str());
    return 2;
  }
  if (options.value().help) {
    std::fputs(readyport::stress_usage(), stdout);
    return 0;
  }
  if (!options.value().check_trace.empty()) return readyport::check_trace(options.value());
  if (options.value().shrink) return readyport::shrink(options.value());
  return readyport::run(options.value());
}
