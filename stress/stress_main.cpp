// readyport-stress: the main job. Runs the echo workload on the engine over FakeOs for many
// seeds (stress_run.hpp), prints a progress line and a summary, and for each failing seed the one
// command that replays it. Exit status: 0 when every seed passed, 1 on any failure, 2 on bad
// arguments. See stress_options.hpp for the command line.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "stress_options.hpp"
#include "stress_run.hpp"

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
  std::uint64_t connections = 0;  // client connections plus server connections accepted
  std::uint64_t notifications = 0;
  std::uint64_t port_calls = 0;
  std::uint64_t bytes_echoed = 0;
  std::uint64_t stale_packets = 0;
  std::uint64_t dropped_packets = 0;
  std::uint64_t steps = 0;
  std::uint64_t switches = 0;
};

void add(Totals& totals, const SeedReport& report) {
  totals.seeds++;
  if (!report.status.ok()) totals.failures++;
  totals.connections += report.counts.clients_started + report.counts.server.accepted;
  totals.notifications += report.counts.engine.notifications;
  totals.port_calls += report.counts.engine.port_calls;
  totals.bytes_echoed += report.counts.server.bytes_echoed;
  totals.stale_packets += report.oracle.stale_packets;
  totals.dropped_packets += report.oracle.dropped_packets;
  totals.steps += report.sim.steps;
  totals.switches += report.sim.switches;
}

void print_failure(const StressOptions& options, const SeedReport& report) {
  std::printf("FAIL seed %llu: %s\n", static_cast<unsigned long long>(report.parameters.seed),
              report.status.to_string().c_str());
  std::printf("  parameters: %s\n", stress_parameters_line(report.parameters).c_str());
  if (!report.trace_tail.empty()) {
    std::printf("  last %zu of %llu trace lines:\n", report.trace_tail.size(),
                static_cast<unsigned long long>(report.trace_lines));
    for (const std::string& line : report.trace_tail) std::printf("    %s", line.c_str());
  }
  std::printf("  replay: %s\n", stress_replay_command(options, report).c_str());
}

void print_verbose(const SeedReport& report) {
  std::printf("seed %llu %s: %s | clients %u/%u bytes %llu notifications %llu port_calls %llu "
              "steps %llu trace %s (%llu lines)\n",
              static_cast<unsigned long long>(report.parameters.seed),
              report.status.ok() ? "ok" : "FAIL",
              stress_parameters_line(report.parameters).c_str(), report.counts.clients_done,
              report.parameters.workload.clients,
              static_cast<unsigned long long>(report.counts.server.bytes_echoed),
              static_cast<unsigned long long>(report.counts.engine.notifications),
              static_cast<unsigned long long>(report.counts.engine.port_calls),
              static_cast<unsigned long long>(report.sim.steps), report.trace_hash.c_str(),
              static_cast<unsigned long long>(report.trace_lines));
}

void print_summary(const StressOptions& options, const Totals& totals, double wall_s) {
  const double per_notification =
      totals.notifications == 0 ? 0.0
                                : static_cast<double>(totals.port_calls) /
                                      static_cast<double>(totals.notifications);
  std::printf("\nreadyport-stress summary (runtime %s, strategy %s, depth %u, shard %u/%u)\n",
              stress_runtime_name(options.runtime), stress_strategy_name(options.strategy),
              options.pct_depth, options.shard_index + 1, options.shard_count);
  std::printf("  seeds run              %llu\n", static_cast<unsigned long long>(totals.seeds));
  std::printf("  connections            %llu\n", static_cast<unsigned long long>(totals.connections));
  std::printf("  notifications          %llu\n", static_cast<unsigned long long>(totals.notifications));
  std::printf("  port calls             %llu\n", static_cast<unsigned long long>(totals.port_calls));
  std::printf("  port calls/notification %.3f\n", per_notification);
  std::printf("  bytes echoed           %llu\n", static_cast<unsigned long long>(totals.bytes_echoed));
  std::printf("  stale/dropped packets  %llu/%llu\n",
              static_cast<unsigned long long>(totals.stale_packets),
              static_cast<unsigned long long>(totals.dropped_packets));
  if (options.runtime == StressRuntime::kSim) {
    std::printf("  scheduler steps        %llu (%llu switches)\n",
                static_cast<unsigned long long>(totals.steps),
                static_cast<unsigned long long>(totals.switches));
  }
  std::printf("  failures               %llu\n", static_cast<unsigned long long>(totals.failures));
  std::printf("  wall time              %.1f s\n", wall_s);
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
  const std::size_t progress_every = seeds.size() >= 10 ? seeds.size() / 10 : 1;
  std::signal(SIGABRT, on_abort);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    set_abort_note(options, seeds[i]);
    const SeedReport report = stress_run_seed(options, seeds[i]);
    add(totals, report);
    if (options.verbose) print_verbose(report);
    if (!report.trace_text.empty()) std::fputs(report.trace_text.c_str(), stdout);
    if (!report.status.ok() && totals.failures <= kFailuresReportedMax) print_failure(options, report);
    if ((i + 1) % progress_every == 0 || i + 1 == seeds.size()) {
      std::printf("progress: %zu/%zu seeds, %llu failures, %llu notifications\n", i + 1,
                  seeds.size(), static_cast<unsigned long long>(totals.failures),
                  static_cast<unsigned long long>(totals.notifications));
    }
    std::fflush(stdout);
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
  print_summary(options, totals, wall.count());
  if (totals.failures > kFailuresReportedMax) {
    std::printf("  (%llu failures beyond the first %zu were not printed)\n",
                static_cast<unsigned long long>(totals.failures - kFailuresReportedMax),
                kFailuresReportedMax);
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
  return readyport::run(options.value());
}
