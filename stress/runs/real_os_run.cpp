// One seed on a real Os. See real_os_run.hpp.
#include "runs/real_os_run.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "readyport/engine.hpp"
#include "readyport/fake/world.hpp"
#include "runs/seed_world.hpp"

#if defined(_WIN32)
#include "readyport/windows_os.hpp"
#endif

namespace readyport {
namespace {

constexpr std::uint32_t kTraceTailLines = 40;
// Real milliseconds: the quiet period of the liveness phase (follow-ups of chaos-phase faults
// land: a retry backoff, a refused re-arm's close), and the most each liveness wait may take.
constexpr std::uint32_t kQuietMs = 500;
constexpr std::uint32_t kLivenessLimitMs = 10'000;
// The least of --seconds-max a seed needs to start: the quiet period and the two liveness waits
// of a run that converges at once take well under this on loopback.
constexpr std::uint32_t kSeedMsMin = 3'000;

}  // namespace

std::vector<FaultSite> stress_real_os_fault_sites() {
  // Every site acts at the seam, above the real OS, in a way a real OS can also act:
  //   psn.call_fails, psn.enable_fails, psn.remove_fails: the call or the element never reaches
  //     Windows, so Windows's state is exactly that of a failed call or element (A3, A8, B6): a
  //     REMOVE not applied leaves a live registration, which closesocket ends as Windows does.
  //   psn.wait_short, psn.dequeue_fewer: the inner call gets timeout 0 / a smaller count; both
  //     are ordinary calls of the real function.
  //   post.fails, port.create_fails, thread.start_fails: nothing is created or queued at all.
  //   recv.wouldblock, send.wouldblock: a stale mask; kept on level modes only (plan_for in
  //     stress_run.cpp already drops them on edge modes: an edge registration would never hear
  //     of the data again, and no OS does that).
  //   recv.connreset, send.connreset, send.nobufs: the real connection stays as it is; the
  //     engine's handler closes it, as it would after a real reset.
  //   accept.emfile, accept.connreset: the real accept is not called, so the connection stays
  //     in the backlog; the listener's registration is level-triggered (chaos_handlers.cpp), so
  //     Windows reports it again at the re-arm.
  //   close.abortive: set_linger(s, true, 0) then closesocket on the real socket: a real reset.
  // None is left out; the list is explicit so that a site added later is not drawn on a real
  // OS before someone decides it fits.
  return {FaultSite::kPsnCallFails,    FaultSite::kPsnEnableFails,   FaultSite::kPsnRemoveFails,
          FaultSite::kPsnWaitShort,    FaultSite::kPsnDequeueFewer,  FaultSite::kPostFails,
          FaultSite::kPortCreateFails, FaultSite::kThreadStartFails, FaultSite::kRecvWouldblock,
          FaultSite::kSendWouldblock,  FaultSite::kRecvConnreset,    FaultSite::kSendConnreset,
          FaultSite::kSendNobufs,      FaultSite::kAcceptEmfile,     FaultSite::kAcceptConnreset,
          FaultSite::kCloseAbortive};
}

Result<SeedParameters> stress_parameters_real(const StressOptions& options, std::uint64_t seed,
                                              const RealOsBudget& budget) {
  SeedParameters parameters = stress_parameters(options, seed);
  ChaosWorkload& w = parameters.workload;
  const std::uint32_t needed = w.liveness_clients + 1;
  if (budget.connections_left < needed || budget.ms_left < kSeedMsMin) {
    return Status(StatusCode::kResourceExhausted,
                  "seed " + std::to_string(seed) + " needs " + std::to_string(needed) +
                      " connections and " + std::to_string(kSeedMsMin) + " ms; " +
                      std::to_string(budget.connections_left) + " and " +
                      std::to_string(budget.ms_left) + " ms are left");
  }
  // Connections: the liveness clients first, then raw peers, then chaos clients.
  std::uint32_t left = budget.connections_left - w.liveness_clients;
  w.peers = std::min(w.peers, left - 1);
  if (w.peers == 0) {
    w.weight_peer = 0;
  }
  left -= w.peers;
  w.clients = std::max(1u, std::min(w.clients, left));
  w.clients_concurrent = std::min(w.clients_concurrent, w.clients);
  // Behind-the-back closes need socket values never reused (real_os_run.hpp).
  w.weight_behind = 0;
  // Real milliseconds, within what is left of the budget.
  w.quiet_ms = kQuietMs;
  w.settle_limit_ms = std::min(kLivenessLimitMs, budget.ms_left / 2);
  w.liveness_limit_ms = std::min(kLivenessLimitMs, budget.ms_left / 2);
  parameters.plan = parameters.plan.restricted_to(stress_real_os_fault_sites());
  return parameters;
}

SeedReport stress_run_seed_real(const StressOptions& options, const SeedParameters& parameters,
                                Os& os) {
  SeedReport report;
  report.parameters = parameters;
  {
    WorldOptions world_options;
    world_options.backend = WorldOptions::Backend::kOs;
    world_options.os = &os;
    // The full text: on a failure it is written out to be judged offline (--check-trace).
    world_options.trace = TraceOptions{true, kTraceTailLines};
    world_options.plan = parameters.plan;
    world_options.seed = parameters.seed;
    world_options.engine = chaos_engine_options(parameters.workload);
    world_options.engine.batch_count = parameters.batch_count;
    World world(world_options);
    ChaosResult result;
    (void)world.run([&] { result = stress_run_workload(world, parameters.workload); });
    report.status = stress_verdict(Status(), world, result);
    stress_fill_report(options, world, result, report);
  }
  return report;
}

Result<std::unique_ptr<Os>> stress_windows_os_create() {
#if defined(_WIN32)
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
  if (!made.ok()) {
    return made.status();
  }
  return std::unique_ptr<Os>(std::move(made).value());
#else
  return Status(StatusCode::kFailedPrecondition,
                "--os windows needs a Windows build (WindowsOs exists only there)");
#endif
}

}  // namespace readyport
