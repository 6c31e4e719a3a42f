#include "runs/stress_run.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/engine.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/world.hpp"
#include "runs/seed_world.hpp"

namespace readyport {
namespace {

// Trace lines kept for a failure report when the full text is not kept.
constexpr std::uint32_t kTraceTailLines = 40;

// Draws one value of `choices`.
template <typename T, std::size_t N>
T pick(Rng& rng, const T (&choices)[N]) {
  return choices[rng.below(N)];
}

SimStrategy strategy_for(const StressOptions& options, std::uint64_t seed) {
  switch (options.strategy) {
    case StressStrategy::kRandom:
      return SimStrategy::kRandom;
    case StressStrategy::kPct:
      return SimStrategy::kPct;
    case StressStrategy::kDelayBounded:
      return SimStrategy::kDelayBounded;
    case StressStrategy::kFair:
      return SimStrategy::kFair;
    // Mixed and the portfolio: several strategies over any range of seeds, each replayable from
    // the seed alone.
    case StressStrategy::kMixed:
      return (seed % 2 == 0) ? SimStrategy::kRandom : SimStrategy::kPct;
    case StressStrategy::kPortfolio:
      return sim_strategy_portfolio(seed);
  }
  READYPORT_UNREACHABLE();
}

bool is_edge(Mode mode) { return mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge; }

ChaosWorkload draw_workload(Rng& rng, const FakeOptions& fake) {
  static constexpr std::uint32_t kClients[] = {2, 3, 4, 6, 8, 12};
  static constexpr std::uint32_t kPeers[] = {0, 1, 2, 3, 4};
  static constexpr std::uint32_t kLivenessClients[] = {1, 2, 3};
  static constexpr std::uint32_t kBytes[] = {1, 17, 300, 1024, 4096, 9000};
  static constexpr std::uint32_t kChunks[] = {1, 7, 64, 512};
  static constexpr std::uint32_t kServerBuffers[] = {16, 256, 4096};
  static constexpr std::uint32_t kWorkers[] = {1, 2, 3, 4};
  static constexpr std::uint32_t kActions[] = {20, 40, 80};
  static constexpr std::uint32_t kCloseWeights[] = {5, 12, 25};
  static constexpr std::uint32_t kNotifyWeights[] = {0, 10, 20};
  static constexpr std::uint32_t kPostWeights[] = {0, 8};
  static constexpr std::uint32_t kPeerWeights[] = {15, 25};
  static constexpr std::uint32_t kClientWeights[] = {10, 15};
  static constexpr std::uint32_t kHandlerClose[] = {0, 2, 10};
  static constexpr std::uint32_t kHandlerCloseOther[] = {0, 2, 5};
  // Edge-triggered one-shot is refused by the echo service (spec C6), so it is not drawn.
  static constexpr Mode kModes[] = {Mode::kOneshotLevel, Mode::kOneshotLevel,
                                    Mode::kPersistentLevel, Mode::kPersistentEdge};
  ChaosWorkload w;
  w.clients = pick(rng, kClients);
  w.clients_concurrent = 1 + static_cast<std::uint32_t>(rng.below(std::min(w.clients, 6u)));
  w.peers = pick(rng, kPeers);
  w.liveness_clients = pick(rng, kLivenessClients);
  w.bytes_per_client = pick(rng, kBytes);
  w.chunk_bytes_max = pick(rng, kChunks);
  w.buffer_bytes = pick(rng, kServerBuffers);
  w.mode = pick(rng, kModes);
  w.workers = pick(rng, kWorkers);
  // Small enough that slots (and socket values) are reused within the run, large enough for the
  // listener and every liveness client with its server end; chaos adds beyond it are refused.
  w.connections_max = std::max(2 + w.clients_concurrent, 2 + 2 * w.liveness_clients) +
                      static_cast<std::uint32_t>(rng.below(2 * w.clients_concurrent + w.peers + 2));
  w.actions = pick(rng, kActions);
  w.weight_close = pick(rng, kCloseWeights);
  w.weight_notify = pick(rng, kNotifyWeights);
  w.weight_post = pick(rng, kPostWeights);
  w.weight_peer = w.peers == 0 ? 0 : pick(rng, kPeerWeights);
  w.weight_client = pick(rng, kClientWeights);
  // Behind-the-back closes only where socket values are never reused (chaos_workload.hpp says
  // why); a REMOVE they drop is the engine's to find (engine.hpp, "A lost REMOVE").
  w.weight_behind = fake.socket_reuse ? 0 : 5;
  w.handler_close_percent = pick(rng, kHandlerClose);
  w.handler_close_other_percent = pick(rng, kHandlerCloseOther);
  w.seed = rng.next();
  // A poll() loop beside the workers in half the seeds, from the workload seed's top bit so that
  // no other draw moves.
  w.pollers = static_cast<std::uint32_t>(w.seed >> 63);
  // Faults during stop() in half the seeds, from the next bit, for the same reason.
  w.faults_at_stop = ((w.seed >> 62) & 1) != 0;
  // One or two racers (every public call from threads of their own), from the next bit.
  w.racers = 1 + static_cast<std::uint32_t>((w.seed >> 61) & 1);
  // Traffic flowing into stop() in half the seeds, from the next bit.
  w.traffic_at_stop = ((w.seed >> 60) & 1) != 0;
  // A poller and no worker in half the seeds with a poller, from the next bit: an embedder that
  // drives the engine with poll() alone, so that every moment between two polls has no driver.
  if (w.pollers == 1 && ((w.seed >> 59) & 1) != 0) {
    w.workers = 0;
  }
  // The engine's limits at their edge in a quarter of the seeds each, from the next two bits.
  w.tasks_tight = ((w.seed >> 57) & 3) == 0;
  w.drivers_tight = ((w.seed >> 55) & 3) == 0;
  // A crowd at stop() in a quarter of the seeds with traffic there, from the next two bits.
  w.crowd_at_stop = w.traffic_at_stop && ((w.seed >> 53) & 3) == 0;
  // The director wakes the newest connections before stop() in half the crowds, from the next bit.
  w.crowd_wakes = w.crowd_at_stop && ((w.seed >> 52) & 1) != 0;
  return w;
}

FaultPlan plan_for(const StressOptions& options, std::uint64_t seed, Mode mode) {
  FaultPlan plan;
  switch (options.faults) {
    case StressOptions::Faults::kOff:
      return FaultPlan::none();
    case StressOptions::Faults::kPlan:
      return FaultPlan::parse(options.fault_plan).value();
    case StressOptions::Faults::kDrawn:
      plan = FaultPlan::draw(seed);
      break;
  }
  // A spurious WSAEWOULDBLOCK with data present is no OS's behaviour; a level registration
  // shrugs it off (the condition still holds), an edge one never hears of that data again.
  if (is_edge(mode)) {
    plan = plan.without(FaultSite::kRecvWouldblock);
    plan = plan.without(FaultSite::kSendWouldblock);
  }
  return plan;
}

// `tail_lines`: the trace lines kept for a failure report when the full text is not kept (0: none).
WorldOptions world_options(const StressOptions& options, const SeedParameters& parameters,
                           std::uint32_t tail_lines) {
  WorldOptions world;
  world.backend = options.runtime == StressRuntime::kSim ? WorldOptions::Backend::kSim
                                                         : WorldOptions::Backend::kFree;
  world.sim.seed = parameters.schedule_seed;
  world.sim.strategy = parameters.strategy;
  world.sim.pct_depth = options.pct_depth;
  world.sim.delay_bound = options.pct_depth - 1;  // depth d: d - 1 preemptions, as PCT
  // About the length of a run of this size (PCT spreads its change points over it).
  world.sim.pct_steps_estimate = 4000 + 800ULL * parameters.workload.clients;
  world.sim.steps_max = options.steps_max;
  world.sim.mechanism = options.mechanism;
  world.sim.stalls = options.stalls;
  world.fake = parameters.fake;
  // Real threads do not replay: their whole trace is kept, for a failure to be read and judged
  // offline (written beside its bundle); not at --scale (millions of lines). Its memory is
  // bounded: past --trace-mb-max only its prefix is kept (the run is still judged whole).
  world.trace = TraceOptions{options.trace || !options.trace_out.empty() ||
                                 (options.runtime == StressRuntime::kFree && !options.scale),
                             tail_lines};
  if (options.runtime == StressRuntime::kFree) {
    world.trace.full_bytes_max = std::uint64_t{options.trace_mb_max} << 20;
    // A livelock (threads that keep calling the seam while virtual time stands still) ends at the
    // seed's bound on work, as a simulated seed's does (free_runtime.hpp).
    world.free.steps_max = options.steps_max;
  }
  world.plan = parameters.plan;
  world.seed = parameters.seed;
  world.engine = chaos_engine_options(parameters.workload);
  world.engine.batch_count = parameters.batch_count;
  return world;
}

// One seed's run: its world and the chaos workload. Heap-allocated so that an abandoned run
// (deadlock, step limit) can be kept alive for the threads that still reference it.
struct SeedRun {
  SeedRun(const StressOptions& options, const SeedParameters& parameters, std::uint32_t tail_lines)
      : world(world_options(options, parameters, tail_lines)), workload(parameters.workload) {}

  // The workload's body: on a logical thread of the runtime.
  void run() { result = stress_run_workload(world, workload); }

  World world;
  const ChaosWorkload workload;
  ChaosResult result;
};

// The run each runner's seed is running (for stress_abort_violation); null between seeds.
std::array<std::atomic<SeedRun*>, kStressRunnersMax> g_running_worlds{};
// The calling thread's runner (stress_runner_set).
thread_local std::uint32_t t_runner = 0;

// Publishes `run` as the calling runner's running seed for its lifetime.
class RunningWorld {
 public:
  explicit RunningWorld(SeedRun* run) : slot_(g_running_worlds[t_runner]) {
    SeedRun* expected = nullptr;
    const bool slot_free = slot_.compare_exchange_strong(expected, run);
    // Two threads running seeds at once as the same runner would hide each other's aborts.
    READYPORT_ASSERT(slot_free);
  }
  ~RunningWorld() { slot_.store(nullptr); }
  RunningWorld(const RunningWorld&) = delete;
  RunningWorld& operator=(const RunningWorld&) = delete;

 private:
  std::atomic<SeedRun*>& slot_;
};

// Runs whose threads were abandoned: kept reachable until exit (never destroyed: their threads
// still point into them, and FakeOs asserts that no thread is parked when it is destroyed).
void abandon_run(std::unique_ptr<SeedRun> run) { world_keep_abandoned(std::move(run)); }

// A simulated run keeps no tail unless asked (`tail_lines`): stress_tail_fill re-runs a failure.
void run_simulated(const StressOptions& options, SeedReport& report, std::uint32_t tail_lines) {
  auto run = std::make_unique<SeedRun>(options, report.parameters, tail_lines);
  SeedRun* r = run.get();
  Status run_status;
  {
    RunningWorld running(r);
    run_status = r->world.run([r] { r->run(); });
  }
  report.status = stress_verdict(run_status, r->world, r->result);
  stress_fill_report(options, r->world, r->result, report);
  report.sim = r->world.sim()->stats();
  if (!r->world.completed()) {
    abandon_run(std::move(run));  // parked for good
  }
}

void run_free(const StressOptions& options, SeedReport& report) {
  SeedRun run(options, report.parameters, kTraceTailLines);
  {
    RunningWorld running(&run);
    (void)run.world.run([&run] { run.run(); });
  }
  report.status = stress_verdict(Status(), run.world, run.result);
  stress_fill_report(options, run.world, run.result, report);
}

}  // namespace

SeedParameters stress_parameters(const StressOptions& options, std::uint64_t seed) {
  static constexpr std::uint32_t kBatches[] = {1, 2, 4, 16, 64};
  static constexpr std::uint32_t kReceiveBuffers[] = {64, 512, 4096, 65536};
  SeedParameters parameters;
  parameters.seed = seed;
  parameters.schedule_seed = options.schedule_seed != 0 ? options.schedule_seed : seed;
  parameters.strategy = strategy_for(options, seed);
  Rng rng = SeedStreams(seed).stream(SeedStream::kWorkload);
  parameters.batch_count = pick(rng, kBatches);
  parameters.fake = fake_options_swarm(seed, pick(rng, kReceiveBuffers));
  parameters.workload = draw_workload(rng, parameters.fake);
  // Caps (--shrink): applied after the draw, so the rest of the seed's choices stay the same.
  ChaosWorkload& w = parameters.workload;
  w.actions = std::min(w.actions, options.actions_max);
  w.clients = std::min(w.clients, options.clients_max);
  w.clients_concurrent = std::min(w.clients_concurrent, std::max(w.clients, 1u));
  w.peers = std::min(w.peers, options.peers_max);
  if (w.peers == 0) {
    w.weight_peer = 0;
  }
  parameters.plan = plan_for(options, seed, parameters.workload.mode);
  return parameters;
}

StressStrategy stress_strategy_of(SimStrategy strategy) {
  switch (strategy) {
    case SimStrategy::kRandom:
      return StressStrategy::kRandom;
    case SimStrategy::kPct:
      return StressStrategy::kPct;
    case SimStrategy::kDelayBounded:
      return StressStrategy::kDelayBounded;
    case SimStrategy::kFair:
      return StressStrategy::kFair;
    case SimStrategy::kRoundRobin:
    case SimStrategy::kExplore:
      break;
  }
  READYPORT_UNREACHABLE();
}

std::string stress_parameters_line(const SeedParameters& p) {
  const ChaosWorkload& w = p.workload;
  const char* stop_traffic = !w.traffic_at_stop ? "0"
                             : !w.crowd_at_stop ? "1"
                             : w.crowd_wakes    ? "crowd+wake"
                                                : "crowd";
  const FakeOptions& f = p.fake;
  return "seed=" + std::to_string(p.seed) +
         (p.schedule_seed != p.seed ? " schedule_seed=" + std::to_string(p.schedule_seed) : "") +
         " strategy=" + sim_strategy_name(p.strategy) + " clients=" + std::to_string(w.clients) +
         " concurrent=" + std::to_string(w.clients_concurrent) +
         " peers=" + std::to_string(w.peers) + " liveness=" + std::to_string(w.liveness_clients) +
         " bytes=" + std::to_string(w.bytes_per_client) +
         " chunk_max=" + std::to_string(w.chunk_bytes_max) +
         " server_buffer=" + std::to_string(w.buffer_bytes) + " mode=" + mode_name(w.mode) +
         " workers=" + std::to_string(w.workers) + " pollers=" + std::to_string(w.pollers) +
         " racers=" + std::to_string(w.racers) + " stop_faults=" + (w.faults_at_stop ? "1" : "0") +
         " stop_traffic=" + stop_traffic + " tight=" + (w.tasks_tight ? "tasks" : "") +
         (w.drivers_tight ? "+drivers" : "") + " batch=" + std::to_string(p.batch_count) +
         " table=" + std::to_string(w.connections_max) + " actions=" + std::to_string(w.actions) +
         " weights=" + std::to_string(w.weight_close) + "/" + std::to_string(w.weight_notify) +
         "/" + std::to_string(w.weight_post) + "/" + std::to_string(w.weight_peer) + "/" +
         std::to_string(w.weight_client) + "/" + std::to_string(w.weight_behind) +
         " handler_close=" + std::to_string(w.handler_close_percent) + "/" +
         std::to_string(w.handler_close_other_percent) +
         " receive_buffer=" + std::to_string(f.receive_buffer_bytes) + " fake=[" +
         stress_fake_options_text(f, ' ') + "] faults=" + p.plan.to_string();
}

std::string stress_fake_options_text(const FakeOptions& f, char separator) {
  auto flag = [](bool value) { return value ? "1" : "0"; };
  const std::string s(1, separator);
  return std::string("key_strict=") + flag(f.key_change_strict) + s +
         "drop_on_disable=" + flag(f.queued_dropped_on_disable) + s +
         "remove_separate=" + flag(f.remove_separate_packet) + s +
         "remove_dropped_on_close=" + flag(f.remove_dropped_on_close) + s +
         "disarm=" + (f.oneshot_disarm == OneshotDisarm::kAtQueue ? "queue" : "dequeue") + s +
         "early_wake_ms=" + std::to_string(f.early_wake_ms_max) + s +
         "reuse=" + flag(f.socket_reuse) + s + "concurrency=" +
         (f.concurrency_limited ? std::to_string(f.processors) : std::string("off"));
}

SeedReport stress_run_seed(const StressOptions& options, std::uint64_t seed) {
  return stress_run_parameters(options, stress_parameters(options, seed));
}

SeedReport stress_run_parameters(const StressOptions& options, const SeedParameters& parameters) {
  SeedReport report;
  report.parameters = parameters;
  if (options.runtime == StressRuntime::kSim) {
    run_simulated(options, report, 0);
  } else {
    run_free(options, report);
  }
  return report;
}

void stress_tail_fill(const StressOptions& options, SeedReport& report) {
  if (options.runtime != StressRuntime::kSim || report.status.ok() || !report.trace_tail.empty()) {
    return;
  }
  SeedReport again;
  again.parameters = report.parameters;
  run_simulated(options, again, kTraceTailLines);
  if (again.trace_hash != report.trace_hash || again.trace_lines != report.trace_lines) {
    report.status =
        Status(report.status.code(),
               report.status.message() + "; and the seed is not deterministic: its " +
                   "re-run for the trace tail gave trace hash " + again.trace_hash + " (" +
                   std::to_string(again.trace_lines) + " lines), not " + report.trace_hash + " (" +
                   std::to_string(report.trace_lines) + " lines)",
               report.status.os_error());
  }
  report.trace_tail = std::move(again.trace_tail);
}

void stress_runner_set(std::uint32_t runner) {
  READYPORT_ASSERT(runner < kStressRunnersMax);
  t_runner = runner;
}

std::uint32_t stress_runner_current() { return t_runner; }

std::uint32_t stress_runner_of_thread() {
  for (std::uint32_t runner = 0; runner < kStressRunnersMax; ++runner) {
    const SeedRun* run = g_running_worlds[runner].load();
    // A logical thread of that world's runtime (the runner's own thread is not one).
    if (run != nullptr && run->world.runtime()->thread_current() != 0) {
      return runner;
    }
  }
  return t_runner;
}

std::string stress_abort_violation(std::uint32_t runner) {
  if (runner >= kStressRunnersMax) {
    return "";
  }
  const SeedRun* run = g_running_worlds[runner].load();
  std::string violation;
  if (run == nullptr || !run->world.oracle().try_violation(&violation)) {
    return "";
  }
  return violation;
}

bool stress_abort_trace(std::uint32_t runner, std::string* text_out) {
  if (runner >= kStressRunnersMax) {
    return false;
  }
  const SeedRun* run = g_running_worlds[runner].load();
  return run != nullptr && run->world.trace().try_text(text_out);
}

std::vector<std::string> stress_coverage_rows() {
  // The world's rows, then the workload's own: its listener's add() retries spent.
  std::vector<std::string> rows = World::coverage_names();
  rows.push_back("deep.listener_add_retries_exhausted");
  return rows;
}

std::string stress_replay_command(const StressOptions& options, const SeedReport& report,
                                  std::string_view program) {
  std::string command = std::string(program) + " --seed " + std::to_string(report.parameters.seed) +
                        " --strategy " + sim_strategy_name(report.parameters.strategy) +
                        " --depth " + std::to_string(options.pct_depth) + " --steps-max " +
                        std::to_string(options.steps_max) + " --faults " +
                        report.parameters.plan.to_string();
  constexpr std::uint32_t kNoCap = StressOptions::kNoCap;
  if (options.actions_max != kNoCap) {
    command += " --actions-max " + std::to_string(options.actions_max);
  }
  if (options.clients_max != kNoCap) {
    command += " --clients-max " + std::to_string(options.clients_max);
  }
  if (options.peers_max != kNoCap) {
    command += " --peers-max " + std::to_string(options.peers_max);
  }
  if (options.schedule_seed != 0) {
    command += " --schedule-seed " + std::to_string(options.schedule_seed);
  }
  if (!options.stalls.empty()) {
    command += " --stalls " + sim_stalls_text(options.stalls);
  }
  command += " --verbose --trace";
  if (options.runtime == StressRuntime::kFree) {
    // Real threads do not replay; the same seed's workload under the scheduler is the next step.
    command +=
        "   (this failure ran on real threads: the command replays its workload under the "
        "scheduler, not its interleaving)";
  }
  return command;
}

}  // namespace readyport
