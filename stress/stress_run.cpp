#include "stress_run.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/trace.hpp"

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
    case StressStrategy::kRandom: return SimStrategy::kRandom;
    case StressStrategy::kPct: return SimStrategy::kPct;
    // Mixed: both strategies over any range of seeds, and replayable from the seed alone.
    case StressStrategy::kMixed: return (seed % 2 == 0) ? SimStrategy::kRandom : SimStrategy::kPct;
  }
  READYPORT_UNREACHABLE();
}

// Everything one run builds. Heap-allocated so that an abandoned run (deadlock, step limit) can
// be kept alive for the threads that still reference it.
struct World {
  explicit World(const StressOptions& options, const SeedParameters& parameters)
      : trace(TraceOptions{options.trace, kTraceTailLines}) {
    SimOptions sim_options;
    sim_options.seed = parameters.seed;
    sim_options.strategy = parameters.strategy;
    sim_options.pct_depth = options.pct_depth;
    // About the length of a run of this size (PCT spreads its change points over it).
    sim_options.pct_steps_estimate = 2000 + 600ULL * parameters.workload.clients;
    sim_options.steps_max = options.steps_max;
    sim_options.trace = &trace;
    sim = std::make_unique<SimScheduler>(sim_options);
    context = std::make_unique<RuntimeTraceContext>(*sim);
  }

  Trace trace;
  std::unique_ptr<SimScheduler> sim;
  std::unique_ptr<RuntimeTraceContext> context;
  std::unique_ptr<FakeOs> fake;
  std::unique_ptr<RecordingOs> os;
  LifetimeOracle oracle;
  std::unique_ptr<Engine> engine;
  EchoResult result;
};

// Runs whose threads were abandoned: kept reachable until exit (never destroyed: their threads
// still point into them, and FakeOs asserts that no thread is parked when it is destroyed).
std::vector<World*>& abandoned_worlds() {
  static std::vector<World*> worlds;
  return worlds;
}

FakeOptions fake_options_for(const SeedParameters& parameters) {
  FakeOptions fake_options;
  fake_options.seed = parameters.seed;
  fake_options.receive_buffer_bytes = parameters.receive_buffer_bytes;
  return fake_options;
}

EngineOptions engine_options_for(const SeedParameters& parameters, EngineObserver* observer) {
  EngineOptions engine_options = echo_engine_options(parameters.workload);
  engine_options.batch_count = parameters.batch_count;
  engine_options.observer = observer;
  return engine_options;
}

// After a run that completed: the fake must hold nothing.
Status check_fake_empty(const FakeOs& fake) {
  const FakeStats stats = fake.stats();
  if (stats.sockets_open == 0 && stats.registrations_live == 0 && stats.packets_queued == 0 &&
      stats.ports_open == 0 && stats.waiters == 0) {
    return Status();
  }
  return Status(StatusCode::kInternal,
                "leak: after stop() the fake still holds sockets=" +
                    std::to_string(stats.sockets_open) +
                    " registrations=" + std::to_string(stats.registrations_live) +
                    " packets=" + std::to_string(stats.packets_queued) +
                    " ports=" + std::to_string(stats.ports_open) +
                    " waiters=" + std::to_string(stats.waiters));
}

// The checks shared by both runtimes, in order of interest.
Status verdict(const Status& run_status, const EchoResult& result, LifetimeOracle& oracle,
               const FakeOs& fake) {
  if (!run_status.ok()) return run_status;
  oracle.finish();
  if (Status status = oracle.status(); !status.ok()) return status;
  if (!result.status.ok()) return result.status;
  if (result.counts.engine.connections_live != 0) {
    return Status(StatusCode::kInternal,
                  "engine reports " + std::to_string(result.counts.engine.connections_live) +
                      " live connections after stop()");
  }
  return check_fake_empty(fake);
}

void run_simulated(const StressOptions& options, SeedReport& report) {
  World* world = new World(options, report.parameters);
  world->fake = std::make_unique<FakeOs>(fake_options_for(report.parameters), *world->sim);
  world->os = std::make_unique<RecordingOs>(*world->fake, world->trace, *world->context);
  world->engine = std::make_unique<Engine>(
      *world->os, engine_options_for(report.parameters, &world->oracle));
  const EchoWorkload workload = report.parameters.workload;
  Status run_status = world->sim->run([world, workload] {
    Status started = world->engine->start();
    if (!started.ok()) {
      world->result.status = started;
      return;
    }
    world->result = run_echo_workload(*world->os, *world->engine, workload);
  });
  report.status = verdict(run_status, world->result, world->oracle, *world->fake);
  report.counts = world->result.counts;
  report.oracle = world->oracle.counts();
  report.sim = world->sim->stats();
  report.trace_hash = world->trace.hash_hex();
  report.trace_lines = world->trace.line_count();
  if (!report.status.ok()) report.trace_tail = world->trace.tail();
  if (options.trace) report.trace_text = world->trace.text();
  if (world->sim->outcome() == SimOutcome::kCompleted) {
    delete world;
  } else {
    abandoned_worlds().push_back(world);  // its threads are parked for good (see World)
  }
}

void run_free(SeedReport& report) {
  FreeRuntime runtime;
  FakeOs fake(fake_options_for(report.parameters), runtime);
  LifetimeOracle oracle;
  EchoResult result;
  {
    Engine engine(fake, engine_options_for(report.parameters, &oracle));
    Status started = engine.start();
    if (started.ok()) {
      result = run_echo_workload(fake, engine, report.parameters.workload);
    } else {
      result.status = started;
    }
  }
  report.status = verdict(Status(), result, oracle, fake);
  report.counts = result.counts;
  report.oracle = oracle.counts();
}

}  // namespace

SeedParameters stress_parameters(const StressOptions& options, std::uint64_t seed) {
  static constexpr std::uint32_t kClients[] = {1, 2, 3, 4, 6, 8, 12};
  static constexpr std::uint32_t kBytes[] = {1, 17, 300, 1024, 4096, 9000, 20000};
  static constexpr std::uint32_t kChunks[] = {1, 7, 64, 512, 2048};
  static constexpr std::uint32_t kServerBuffers[] = {16, 256, 4096};
  static constexpr std::uint32_t kWorkers[] = {1, 2, 3, 4};
  static constexpr std::uint32_t kBatches[] = {1, 2, 4, 16, 64};
  static constexpr std::uint32_t kReceiveBuffers[] = {64, 512, 4096, 65536};
  // Edge-triggered one-shot is refused by the echo server (spec C6), so it is not drawn.
  static constexpr Mode kModes[] = {Mode::kOneshotLevel, Mode::kOneshotLevel,
                                    Mode::kPersistentLevel, Mode::kPersistentEdge};

  SeedParameters parameters;
  parameters.seed = seed;
  parameters.strategy = strategy_for(options, seed);
  Rng rng = SeedStreams(seed).stream(SeedStream::kWorkload);
  EchoWorkload& w = parameters.workload;
  w.clients = pick(rng, kClients);
  w.clients_concurrent = 1 + static_cast<std::uint32_t>(rng.below(w.clients));
  w.bytes_per_client = pick(rng, kBytes);
  w.chunk_bytes_max = pick(rng, kChunks);
  w.buffer_bytes = pick(rng, kServerBuffers);
  w.mode = pick(rng, kModes);
  w.workers = pick(rng, kWorkers);
  w.seed = rng.next();
  parameters.batch_count = pick(rng, kBatches);
  parameters.receive_buffer_bytes = pick(rng, kReceiveBuffers);
  return parameters;
}

std::string stress_parameters_line(const SeedParameters& p) {
  const EchoWorkload& w = p.workload;
  return "seed=" + std::to_string(p.seed) + " strategy=" + sim_strategy_name(p.strategy) +
         " clients=" + std::to_string(w.clients) +
         " concurrent=" + std::to_string(w.clients_concurrent) +
         " bytes=" + std::to_string(w.bytes_per_client) +
         " chunk_max=" + std::to_string(w.chunk_bytes_max) +
         " server_buffer=" + std::to_string(w.buffer_bytes) + " mode=" + mode_name(w.mode) +
         " workers=" + std::to_string(w.workers) + " batch=" + std::to_string(p.batch_count) +
         " receive_buffer=" + std::to_string(p.receive_buffer_bytes);
}

SeedReport stress_run_seed(const StressOptions& options, std::uint64_t seed) {
  SeedReport report;
  report.parameters = stress_parameters(options, seed);
  if (options.runtime == StressRuntime::kSim) {
    run_simulated(options, report);
  } else {
    run_free(report);
  }
  return report;
}

std::string stress_replay_command(const StressOptions& options, const SeedReport& report) {
  std::string command = "bash ci/stress.sh --seed " + std::to_string(report.parameters.seed) +
                        " --strategy " + sim_strategy_name(report.parameters.strategy) +
                        " --depth " + std::to_string(options.pct_depth) +
                        " --steps-max " + std::to_string(options.steps_max) + " --verbose --trace";
  if (options.runtime == StressRuntime::kFree) {
    // Real threads do not replay; the same seed's workload under the scheduler is the next step.
    command += "   (this failure ran on real threads: the command replays its workload under the "
               "scheduler, not its interleaving)";
  }
  return command;
}

}  // namespace readyport
