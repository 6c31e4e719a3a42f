// One seed of the harness: its case, its World, the scenario's phases on the world's first thread,
// and the verdict. See harness.hpp.
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "readyport/fake/harness.hpp"
#include "readyport/fake/trace_lines.hpp"
#include "readyport/fake/world.hpp"
#if defined(_WIN32)
#include "readyport/windows_os.hpp"
#endif

namespace readyport {
namespace {

// The receive buffers a seed draws from: small ones make sends short and WSAEWOULDBLOCK real.
constexpr std::uint32_t kReceiveBuffers[] = {64 * 1024, 64 * 1024, 4096, 512};
// The last lines a kept trace also keeps, for a failure whose text was cut at trace_mb_max.
constexpr std::uint32_t kHarnessTailLines = 40;

// What the scenario's phases returned, and the faults that fired in each.
struct Phases {
  Status start;
  Status chaos;
  Status liveness;
  Status stop;
  bool started = false;
  std::uint64_t start_faults = 0;
  std::uint64_t chaos_faults = 0;
};

std::uint64_t faults_fired(const FaultyOs& os) {
  std::uint64_t fired = 0;
  for (const std::uint64_t count : os.counts().fired) {
    fired += count;
  }
  return fired;
}

class Context final : public ScenarioContext {
 public:
  Context(World& world, std::uint64_t seed)
      : world_(world), seed_(seed), rng_(SeedStreams(seed).stream(SeedStream::kWorkload)) {}

  Os& os() override { return world_.os(); }
  std::uint64_t seed() const override { return seed_; }
  HarnessPhase phase() const override { return phase_; }
  bool faults_on() const override { return faults_on_; }
  Rng& rng() override { return rng_; }
  std::uint64_t faults_fired() const override { return readyport::faults_fired(world_.os()); }
  void note(std::string_view text) override { world_.record_text("user " + std::string(text)); }

  // Enters `phase`: the fault switch and the trace's phase line.
  void enter(HarnessPhase phase, bool faults_on) {
    phase_ = phase;
    faults_on_ = faults_on;
    world_.os().set_enabled(faults_on);
    static constexpr std::string_view kLines[] = {"start", "chaos", "liveness", "stop"};
    static_assert(std::size(kLines) == 4);
    world_.record(phase_line(kLines[static_cast<int>(phase)], faults_on));
  }

 private:
  World& world_;
  const std::uint64_t seed_;
  Rng rng_;
  HarnessPhase phase_ = HarnessPhase::kStart;
  bool faults_on_ = true;
};

// The scenario's life, on the world's first logical thread.
void run_scenario(World& world, Context& ctx, const HarnessCase& run_case,
                  const ScenarioFactory& make, std::uint32_t settle_ms, Phases& phases) {
  std::unique_ptr<Scenario> scenario = make();
  ctx.enter(HarnessPhase::kStart, run_case.faults_at_start);
  std::uint64_t before = ctx.faults_fired();
  phases.start = scenario->start(ctx);
  phases.start_faults = ctx.faults_fired() - before;
  if (phases.start.ok()) {
    phases.started = true;
    ctx.enter(HarnessPhase::kChaos, true);
    before = ctx.faults_fired();
    phases.chaos = scenario->drive(ctx);
    phases.chaos_faults = ctx.faults_fired() - before;
    ctx.enter(HarnessPhase::kLiveness, false);
    world.os().sleep_ms(settle_ms);
    phases.liveness = scenario->drive(ctx);
    world.os().sleep_ms(settle_ms);  // idle, as a server is between clients: its timers run
    ctx.enter(HarnessPhase::kStop, run_case.faults_at_stop);
    phases.stop = scenario->stop(ctx);
    world.os().set_enabled(false);
    world.record(phase_line("end"));  // the server stopped: none of its threads may run now
  }
  world.os().set_enabled(false);
  scenario.reset();  // its destructors run in the world, on the Os
  if (!phases.started) {
    world.record(phase_line("end"));
  }
}

// The scenario's own verdict: what its phases returned, with the outcomes faults excuse.
Status scenario_verdict(const Phases& phases, HarnessSeed& seed) {
  if (!phases.start.ok()) {
    if (phases.start_faults > 0) {
      seed.start_failed_under_faults = true;  // expected; the end checks still judge the seed
      return Status();
    }
    return Status(phases.start.code(),
                  "the scenario's start failed with no fault fired: " + phases.start.to_string());
  }
  if (!phases.chaos.ok()) {
    if (phases.chaos_faults == 0 || phases.chaos.code() == StatusCode::kInternal) {
      return Status(phases.chaos.code(),
                    "the scenario's chaos phase failed: " + phases.chaos.to_string());
    }
    seed.chaos_failed_under_faults = true;
  }
  if (!phases.liveness.ok()) {
    return Status(phases.liveness.code(), "the scenario's liveness phase (no faults) failed: " +
                                              phases.liveness.to_string());
  }
  if (!phases.stop.ok()) {
    return Status(phases.stop.code(), "the scenario's stop failed: " + phases.stop.to_string());
  }
  return Status();
}

WorldOptions world_options(const HarnessOptions& options, const HarnessCase& run_case,
                           bool keep_text, Os* real_os) {
  WorldOptions world;
  world.embedder = true;
  switch (options.runtime) {
    case HarnessRuntime::kSim:
      world.backend = WorldOptions::Backend::kSim;
      break;
    case HarnessRuntime::kFree:
      world.backend = WorldOptions::Backend::kFree;
      break;
    case HarnessRuntime::kWindows:
      world.backend = WorldOptions::Backend::kOs;
      world.os = real_os;
      break;
  }
  world.sim.seed = run_case.seed;
  world.sim.strategy = run_case.strategy;
  world.sim.pct_depth = run_case.depth;
  world.sim.delay_bound = run_case.depth - 1;
  world.sim.pct_steps_estimate = 4000;
  world.sim.steps_max = options.steps_max;
  world.free.steps_max = options.steps_max;  // real threads: a livelock past it (free_runtime.hpp)
  Rng rng = SeedStreams(run_case.seed).stream(SeedStream::kHarness);
  (void)rng.chance(1, 2);  // faults_at_stop (harness_case_of)
  (void)rng.chance(1, 4);  // faults_at_start
  world.fake = fake_options_swarm(run_case.seed, kReceiveBuffers[rng.below(4)]);
  // Real threads do not replay: their whole trace is kept for a failure to be read. Kept within
  // trace_mb_max, with the last lines for a text cut there.
  const bool keep = keep_text || options.runtime != HarnessRuntime::kSim;
  world.trace = TraceOptions{keep, keep ? kHarnessTailLines : 0};
  world.trace.full_bytes_max = std::uint64_t{options.trace_mb_max} << 20;
  world.plan = run_case.plan;
  world.seed = run_case.seed;
  return world;
}

// A seed's world and what it borrows; heap-allocated so that a run that did not complete (its
// logical threads parked, pointing into it) can be kept alive.
struct SeedRun {
  std::unique_ptr<Os> real_os;  // kWindows: the world borrows it
  std::unique_ptr<World> world;
};

}  // namespace

bool harness_runtime_available(HarnessRuntime runtime, std::string* why_out) {
  if (runtime != HarnessRuntime::kWindows) {
    return true;
  }
#if defined(_WIN32)
  Result<std::unique_ptr<WindowsOs>> os = WindowsOs::create();
  if (os.ok()) {
    return true;
  }
  if (why_out != nullptr) {
    *why_out = os.status().to_string();
  }
  return false;
#else
  if (why_out != nullptr) {
    *why_out = "the real API (WindowsOs) exists on Windows only";
  }
  return false;
#endif
}

HarnessCase harness_case_of(const HarnessOptions& options, std::uint64_t seed) {
  HarnessCase run_case;
  run_case.seed = seed;
  run_case.strategy = options.portfolio ? sim_strategy_portfolio(seed) : options.strategy;
  run_case.depth = options.depth;
  switch (options.faults) {
    case HarnessOptions::Faults::kNone:
      break;
    case HarnessOptions::Faults::kPlan:
      run_case.plan = options.plan;
      break;
    case HarnessOptions::Faults::kDrawn: {
      std::vector<FaultSite> sites;
      for (const FaultSite site : harness_fault_sites()) {
        bool off = false;
        for (const FaultSite excluded : options.sites_off) {
          off = off || excluded == site;
        }
        if (!off) {
          sites.push_back(site);
        }
      }
      run_case.plan = FaultPlan::draw(seed).restricted_to(sites);
      break;
    }
  }
  Rng rng = SeedStreams(seed).stream(SeedStream::kHarness);
  run_case.faults_at_stop = rng.chance(1, 2);
  run_case.faults_at_start = rng.chance(1, 4);
  return run_case;
}

HarnessSeed harness_run_case(const HarnessOptions& options, const HarnessCase& run_case,
                             const ScenarioFactory& make, std::string* trace_text_out) {
  const auto began = std::chrono::steady_clock::now();  // the report's seconds only
  HarnessSeed seed;
  seed.run_case = run_case;
  auto run = std::make_unique<SeedRun>();
  if (options.runtime == HarnessRuntime::kWindows) {
#if defined(_WIN32)
    Result<std::unique_ptr<WindowsOs>> os = WindowsOs::create();
    if (!os.ok()) {
      seed.status = os.status();
      return seed;
    }
    run->real_os = std::move(os.value());
#else
    seed.status = Status(StatusCode::kUnavailable,
                         "READYPORT_TEST_RUNTIME=windows: WindowsOs exists on Windows only");
    return seed;
#endif
  }
  WorldOptions world_options_made =
      world_options(options, run_case, trace_text_out != nullptr, run->real_os.get());
  // The first violation is the verdict: the rest of the run (which may spin to its step limit)
  // is not run. The hook only sets a flag (it runs under the trace's mutex).
  SimScheduler* sim = nullptr;
  world_options_made.on_violation = [&sim](const Status&) {
    if (sim != nullptr) {
      sim->cut();
    }
  };
  run->world = std::make_unique<World>(std::move(world_options_made));
  World& world = *run->world;
  sim = world.sim();
  BoundaryRecorder* boundary = world.boundary();
  world.os().set_stale_veto([boundary](Socket s) { return boundary->edge_registered(s); });
  Context ctx(world, run_case.seed);
  Phases phases;
  const Status run_status =
      world.run([&] { run_scenario(world, ctx, run_case, make, options.settle_ms, phases); });
  EngineStats stopped;
  for (const EngineStats& stats : boundary->stopped()) {
    stopped.connections_live += stats.connections_live;
    stopped.removes_lost += stats.removes_lost;
  }
  const Status scenario = scenario_verdict(phases, seed);
  seed.status = world.verdict(run_status, scenario, stopped);
  seed.trace_hash = world.trace().hash_hex();
  seed.trace_lines = world.trace().line_count();
  if (world.os().fired_hits_complete()) {
    seed.fired_hits = FaultPlan::of_hits(world.os().fired_hits()).to_string();
  }
  seed.faults_fired = faults_fired(world.os());
  seed.steps = world.sim() != nullptr ? world.sim()->stats().steps : 0;
  seed.lifetime = world.oracle().counts().judgement;
  seed.embedder = world.embedder_oracle()->counts().judgement;
  if (trace_text_out != nullptr) {
    *trace_text_out = world.trace().take_text();
    seed.trace_cut = world.trace().full_cut();
    if (seed.trace_cut) {
      seed.trace_tail = world.trace().tail();
    }
  }
  if (!world.completed()) {
    world_keep_abandoned(std::move(run));  // its parked threads point into it (world.hpp)
  }
  seed.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return seed;
}

}  // namespace readyport
