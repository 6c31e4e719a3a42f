#include "runs/scale_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "readyport/assert.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/status.hpp"

namespace readyport {
namespace {

using ull = unsigned long long;

// Engine slots beyond N: the listener and the liveness clients with their server ends.
constexpr std::uint32_t kScaleTableSpare = 8;
// Fake sockets beyond N: the listener, the liveness clients and their server ends.
constexpr std::uint32_t kScaleSocketsSpare = 16;
// Scheduler steps a connection may take, at most, on average (the seam calls of its connect,
// accept, add, echo, close and on_closed, with the scheduling points of the engine's lock).
constexpr std::uint64_t kScaleStepsPerConnection = 1'000;
// Every client binds an ephemeral port of the fake (its lowest free one): the clients of the
// largest --connections, with the liveness clients, must fit in the fake's range.
constexpr std::uint32_t kFakeEphemeralPorts =
    std::uint32_t{kFakeEphemeralPortLast} - kFakeEphemeralPortFirst + 1;
static_assert(kStressScaleConnectionsMax / 2 <= kFakeEphemeralPorts,
              "--connections past the fake's ephemeral ports");
// Director actions of the chaos phase (closes, notifies, posts racing the echo traffic).
constexpr std::uint32_t kScaleActions = 60;
constexpr std::uint32_t kScaleLivenessClients = 2;
constexpr std::uint32_t kScaleBytesPerClient = 64;

// A failing scale seed: its status, the trace's last lines and the command that runs it again
// (the main job's replay command would draw the main job's workload, not this one).
void print_failure(const StressOptions& options, const SeedReport& report) {
  std::printf("FAIL scale seed %llu: %s\n", static_cast<ull>(report.parameters.seed),
              report.status.to_string().c_str());
  for (const std::string& line : report.trace_tail) {
    std::printf("  | %s\n", line.c_str());
  }
  std::printf(
      "  again: readyport-stress --scale --connections %u --workers %u --runtime %s "
      "--first-seed %llu --seeds 1\n",
      options.scale_connections, options.scale_workers, stress_runtime_name(options.runtime),
      static_cast<ull>(report.parameters.seed));
}

}  // namespace

StressOptions stress_scale_run_options(const StressOptions& options) {
  StressOptions run = options;
  run.faults = StressOptions::Faults::kOff;
  run.fault_plan.clear();
  run.steps_max = std::max<std::uint64_t>(
      options.steps_max, kScaleStepsPerConnection * std::uint64_t{options.scale_connections});
  return run;
}

SeedParameters stress_scale_parameters(const StressOptions& options, std::uint64_t seed) {
  READYPORT_ASSERT(options.scale_connections >= kStressScaleConnectionsMin &&
                   options.scale_connections <= kStressScaleConnectionsMax &&
                   options.scale_connections % 2 == 0);
  READYPORT_ASSERT(options.scale_workers >= 1 && options.scale_workers <= kStressScaleWorkersMax);
  // The main job's draw for this seed gives the swarm's fake, the batch size and the strategy;
  // the workload is replaced by one of the scale's size.
  SeedParameters parameters = stress_parameters(stress_scale_run_options(options), seed);
  const std::uint32_t n = options.scale_connections;
  parameters.fake.sockets_max = n + kScaleSocketsSpare;
  parameters.fake.backlog_max = n / 2;
  parameters.plan = FaultPlan::none();
  static constexpr Mode kModes[] = {Mode::kOneshotLevel, Mode::kPersistentLevel,
                                    Mode::kPersistentEdge};
  Rng rng = SeedStreams(seed).stream(SeedStream::kWorkload);
  ChaosWorkload w;
  // Chaos and liveness clients together make n / 2, so that n connections are opened in all.
  w.clients = n / 2 - kScaleLivenessClients;
  w.clients_concurrent = w.clients;
  w.peers = 0;
  w.liveness_clients = kScaleLivenessClients;
  w.bytes_per_client = kScaleBytesPerClient;
  w.chunk_bytes_max = 16 + static_cast<std::uint32_t>(rng.below(49));
  w.buffer_bytes = 64;
  w.mode = kModes[rng.below(3)];
  w.workers = options.scale_workers;
  w.connections_max = n + kScaleTableSpare;
  w.actions = kScaleActions;
  w.weight_close = 5;
  w.weight_notify = 10;
  w.weight_post = 10;
  w.weight_peer = 0;
  w.weight_client = 0;  // every client is started at once
  w.weight_behind = 0;
  w.handler_close_percent = 0;
  w.handler_close_other_percent = 0;
  w.hold_clients = true;  // every connection open at once at the peak
  w.seed = rng.next();
  parameters.workload = w;
  return parameters;
}

int stress_scale_main(const StressOptions& options) {
  const StressOptions run_options = stress_scale_run_options(options);
  std::printf(
      "readyport-stress --scale: %u connections (%u clients and their server ends), %u "
      "workers, runtime %s, %llu seed(s) from %llu, faults off, at most %llu steps\n",
      options.scale_connections, options.scale_connections / 2, options.scale_workers,
      stress_runtime_name(options.runtime), static_cast<ull>(options.seeds),
      static_cast<ull>(options.first_seed), static_cast<ull>(run_options.steps_max));
  std::fflush(stdout);
  int exit_status = 0;
  for (std::uint64_t k = 0; k < options.seeds; ++k) {
    const std::uint64_t seed = options.first_seed + k;
    const SeedParameters parameters = stress_scale_parameters(options, seed);
    const auto start = std::chrono::steady_clock::now();  // wall time, for the figures only
    SeedReport report = stress_run_parameters(run_options, parameters);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ChaosCounts& c = report.counts;
    // Scale means every client opened: a refused one (a limit too small) fails the seed.
    const std::uint32_t clients =
        parameters.workload.clients + parameters.workload.liveness_clients;
    if (report.status.ok() && (c.clients_started != clients || c.clients_refused != 0)) {
      report.status =
          Status(StatusCode::kInternal, "scale: " + std::to_string(c.clients_started) + " of " +
                                            std::to_string(clients) + " clients started, " +
                                            std::to_string(c.clients_refused) + " refused");
    }
    // The oracle judges every line at scale too: a bound it hit is judgement lost.
    const OracleJudgement& judgement = report.oracle.judgement;
    if (report.status.ok() && judgement.not_judged() != 0) {
      report.status = Status(StatusCode::kInternal,
                             "scale: the oracle did not judge everything (bounds hit: " +
                                 oracle_bounds_text(judgement.bounds_hit) +
                                 "; unjudged: " + oracle_rule_list_text(judgement.unjudged) + ")");
    }
    std::printf("seed %llu: %s (%s)\n", static_cast<ull>(seed),
                report.status.ok() ? "ok" : "FAILED", stress_parameters_line(parameters).c_str());
    std::printf("  connections            %llu (%u clients, %u server ends; %u refused)\n",
                static_cast<ull>(c.clients_started + c.server_accepted), c.clients_started,
                c.server_accepted, c.clients_refused + c.server_refused);
    std::printf("  peak connections open  %u (engine table %u)\n", c.connections_open_peak,
                parameters.workload.connections_max);
    std::printf(
        "  clients echoed in full %u of %u (%llu bytes; %u cut by the director's "
        "closes)\n",
        c.clients_done, clients, static_cast<ull>(c.bytes_received), c.clients_cut);
    std::printf("  notifications          %llu\n", static_cast<ull>(report.engine.notifications));
    std::printf("  port calls             %llu\n", static_cast<ull>(report.engine.port_calls));
    std::printf("  packets                %llu\n", static_cast<ull>(report.engine.packets));
    std::printf("  trace lines judged     %llu (hash %s)\n", static_cast<ull>(report.trace_lines),
                report.trace_hash.c_str());
    std::printf("  oracle bounds hit      %s; ambiguous: %s; unjudged: %s\n",
                oracle_bounds_text(judgement.bounds_hit).c_str(),
                oracle_rule_list_text(judgement.ambiguous).c_str(),
                oracle_rule_list_text(judgement.unjudged).c_str());
    if (options.runtime == StressRuntime::kSim) {
      std::printf("  scheduler steps        %llu (%llu switches)\n",
                  static_cast<ull>(report.sim.steps), static_cast<ull>(report.sim.switches));
    }
    std::printf("  seconds                %.2f (wall)\n", seconds);
    std::fflush(stdout);
    if (!report.status.ok()) {
      stress_tail_fill(run_options, report);
      print_failure(options, report);
      exit_status = 1;
    }
  }
  return exit_status;
}

}  // namespace readyport
