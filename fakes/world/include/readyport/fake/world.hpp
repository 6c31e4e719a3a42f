// readyport/fake/world.hpp: World, one seed's world: the engine on the decorator stack
// Engine -> FaultyOs -> RecordingOs -> backend, the trace with the LifetimeOracle as its sink, the
// engine's TraceObserver, and the end-of-run checks that judge the run from what the OS side saw.
// Every test world is built here: the main job's (simulated, real threads, a real Os), the engine
// property's, and the core tests that judge a run.
//
//   WorldOptions options;                 // the fake under SimScheduler, no faults
//   options.sim.seed = 7;
//   World world(options);
//   Status run = world.run([&] { ... world.engine().start() ... world.engine().stop() ... });
//   Status verdict = world.oracle().finish();   // then engine_verdict(), leak_verdict()
//
// Backends: the fake (FakeOs on a SimScheduler or a FreeRuntime the world owns), or a real Os
// (borrowed; a SocketLedgerOs over it keeps what the run opened, and threads are the OS's own).
// Ownership: owns everything it builds; borrows WorldOptions::os. A world whose simulated run did
// not complete must not be destroyed (its parked threads point into it): keep it alive. Threading:
// construct and destroy on a thread that is not one of the runtime's; the accessors from any
// thread. Errors: the verdicts return a Status naming what broke; misuse is asserted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/boundary_recorder.hpp"
#include "readyport/fake/embedder_oracle.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/faulty_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/socket_ledger_os.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/fake/trace_observer.hpp"

namespace readyport {

struct WorldOptions {
  enum class Backend : std::uint8_t {
    kSim,   // FakeOs under a SimScheduler (replayable from the seed)
    kFree,  // FakeOs on real threads (FreeRuntime)
    kOs,    // a real Os (`os`), on its own threads
  };
  Backend backend = Backend::kSim;
  SimOptions sim;  // kSim; its `trace` is set to the world's trace (see scheduler_lines)
  // kSim: the scheduler writes its own sched.* lines (picks, parks, starts) to the trace. The
  // oracle reads none of them; an exploration, which builds a world per schedule, leaves them out
  // (a fifth of a small world's time) and names its schedules by their choices instead.
  bool scheduler_lines = true;
  FreeOptions free;  // kFree; without a hang_detail, the world's (what the fake and oracle hold)
  FakeOptions fake;  // kSim, kFree
  Os* os = nullptr;  // kOs: borrowed, must outlive the world
  TraceOptions trace;
  FaultPlan plan = FaultPlan::none();
  std::uint64_t seed = 0;  // FaultyOs draws from SeedStreams(seed)'s fault stream
  EngineOptions engine;    // the world sets its observer
  // kSim with SimStrategy::kExplore: every hit of the plan's active sites is a choice the
  // explorer branches on (FaultyOs::set_chooser, SimScheduler::choose) instead of a draw.
  bool explore_faults = false;
  // Called once with the oracle's first violation, from the thread that wrote the line, under the
  // trace's mutex (it must not record): a caller keeps it even if the run then aborts.
  std::function<void(const Status&)> on_violation;
  // An embedder's world (the harness's, readyport/fake/harness.hpp): engines built on os() report
  // their crossings with the embedder's code to a BoundaryRecorder (boundary_recorder.hpp), and an
  // EmbedderOracle (embedder_oracle.hpp) judges that code beside the LifetimeOracle. The world
  // then builds no engine of its own (the embedder's code builds its own on os()).
  bool embedder = false;
};

class World {
 public:
  explicit World(WorldOptions options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Engine& engine() {  // not in an embedder's world
    READYPORT_ASSERT(engine_ != nullptr);
    return *engine_;
  }
  FaultyOs& os() { return *faulty_; }               // the top of the stack: what the engine calls
  RecordingOs& recording() { return *recording_; }  // below the faults: set-up that must not fail
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  LifetimeOracle& oracle() { return oracle_; }
  const LifetimeOracle& oracle() const { return oracle_; }
  // An embedder's world only (WorldOptions::embedder); null otherwise.
  EmbedderOracle* embedder_oracle() { return embedder_oracle_.get(); }
  const EmbedderOracle* embedder_oracle() const { return embedder_oracle_.get(); }
  BoundaryRecorder* boundary() { return boundary_.get(); }
  const TraceContext& context() const { return *context_; }
  FakeOs* fake() { return fake_.get(); }                       // null on a real Os
  SimScheduler* sim() { return sim_.get(); }                   // kSim only
  FreeRuntime* free_runtime() { return free_runtime_.get(); }  // kFree only
  const Runtime* runtime() const;                              // null on a real Os
  WorldOptions::Backend backend() const { return backend_; }

  // Writes one event of the caller's own (the workload's, trace_lines.hpp) to the trace.
  void record(TraceEvent&& event) { trace_.record(*context_, event); }
  void record(TraceEvent& event) { trace_.record(*context_, event); }
  // The same for a line given as text (a rare one: a property's own).
  void record_text(std::string_view line) { trace_.record(*context_, line); }
  // Runs `body` as the runtime's first thread (on a real Os: on the calling thread) and returns
  // the runtime's status (SimScheduler::run's; ok otherwise).
  Status run(const std::function<void()>& body);
  // The simulated run ended by itself (not a deadlock or a step limit); always true otherwise.
  bool completed() const;

  // ---- The end of a run, after stop(): each judges what the OS side saw. ----
  // The whole verdict, in order of interest: the oracles' first violation (in an embedder's world
  // the earlier of the two oracles'), the run itself (`run_status`: a step limit, a deadlock, a
  // hang; in an embedder's world a run cut inside a callback is rule U9 first), the oracles'
  // end-of-trace judgements, the workload's own checks (`workload`), engine_verdict(`stats`) and
  // leak_verdict().
  Status verdict(const Status& run_status, const Status& workload, const EngineStats& stats);
  // The engine's own counts against the backend's: no connection live, and as many REMOVEs found
  // lost as the fake dropped (on a real Os no one can count the drops: not judged).
  Status engine_verdict(const EngineStats& stats) const;
  // The backend holds nothing the run opened: the fake's sockets, ports, registrations, packets
  // and waiters, or the ledger's sockets and ports on a real Os.
  Status leak_verdict() const;
  // The oracle's rows (fault.* excluded), then per fault site `fault.<site>` (fired) and
  // `outage.<site>` (started), then the `deep.*` rows of coverage_names().
  std::vector<std::pair<std::string, std::uint64_t>> coverage() const;
  static std::vector<std::string> coverage_names();
  // The (slot state, event, engine context) tuples the engine reported (slot_tuples.hpp).
  const SlotTuples& tuples() const { return tuples_; }

 private:
  // The trace's sink: the oracle, and on_violation once.
  class CheckingSink final : public TraceSink {
   public:
    CheckingSink(LifetimeOracle& oracle, std::function<void(const Status&)> hook)
        : oracle_(oracle), hook_(std::move(hook)) {}
    // An embedder's world: its oracle reads each event first (at one line, its rule is named).
    void set_embedder(EmbedderOracle* embedder) { embedder_ = embedder; }
    void on_trace_line(std::string_view line) override;
    void on_trace_event(const TraceEvent& event) override;

   private:
    void report_once();  // calls the hook with the oracle's first violation, once

    LifetimeOracle& oracle_;
    EmbedderOracle* embedder_ = nullptr;
    const std::function<void(const Status&)> hook_;
    bool reported_ = false;  // under the trace's mutex
  };
  // The real Os's time, for the plan's time outages (CountingTraceContext lines carry none).
  class OsClock final : public TraceContext {
   public:
    explicit OsClock(Os& os) : os_(os) {}
    std::uint64_t trace_time_ns() const override { return os_.now_ns(); }
    std::uint32_t trace_thread() const override { return 0; }

   private:
    Os& os_;
  };

  std::string hang_detail();
  // The earlier of the two oracles' first violations (ok when neither found one).
  Status first_violation() const;

  const WorldOptions::Backend backend_;
  LifetimeOracle oracle_;  // first: the trace's sink outlives every recorder
  CheckingSink sink_;
  Trace trace_;
  std::unique_ptr<SimScheduler> sim_;
  std::unique_ptr<FreeRuntime> free_runtime_;
  std::unique_ptr<TraceContext> context_;
  std::unique_ptr<OsClock> clock_;
  std::unique_ptr<FakeOs> fake_;
  std::unique_ptr<SocketLedgerOs> ledger_;
  std::unique_ptr<RecordingOs> recording_;
  std::unique_ptr<FaultyOs> faulty_;
  SlotTuples tuples_;  // before observer_, which counts into it
  std::unique_ptr<TraceObserver> observer_;
  std::unique_ptr<BoundaryRecorder> boundary_;       // an embedder's world
  std::unique_ptr<EmbedderOracle> embedder_oracle_;  // an embedder's world
  std::unique_ptr<Engine> engine_;                   // not in an embedder's world
};

// Keeps `run` reachable until the process exits, never destroyed: a world whose simulated run did
// not complete (a deadlock, the step limit, a cut), with whatever its parked threads point into
// (the scenario or workload beside it). Memory: each kept run stays; a caller bounds how many runs
// it abandons. Threading: any thread (one internal mutex).
void world_keep_abandoned(std::shared_ptr<void> run);

}  // namespace readyport
