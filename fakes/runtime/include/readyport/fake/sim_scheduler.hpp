// readyport/fake/sim_scheduler.hpp: deterministic multi-threaded simulation.
//
// SimScheduler is a Runtime (runtime.hpp) that runs several logical threads so that exactly one
// runs at a time and control passes only at scheduling points: point(), park(), Thread::join()
// and a thread's end. At each point a seeded strategy picks the next runnable thread. So a run is
// a pure function of the seed (and of the scenario): the same seed replays the same interleaving.
//
//   readyport::SimOptions options;
//   options.seed = 42;                              // the master seed
//   options.strategy = readyport::SimStrategy::kPct;
//   options.trace = &trace;
//   readyport::SimScheduler sim(options);
//   readyport::FakeOs os(readyport::FakeOptions{}, sim);
//   readyport::Status status = sim.run([&] { ... });  // thread 1; trace.hash() names the run
//
// Mechanisms (fibers, threads), strategies, virtual time and threads it did not start:
// docs/simulation.md#how-the-scheduler-works; ends of a run and abandoned threads:
// docs/simulation.md#deadlock-and-step-limit-reports.
//
// Ownership: the caller owns the scheduler; it must outlive the FakeOs that uses it and the Trace
// must outlive run(). Threading: construct, run() (once) and destroy on one thread that the
// scheduler did not start; FakeOs calls the Runtime methods from logical threads. Several
// schedulers may run at once on different OS threads (the only per-OS-thread state is which
// logical thread is running there). Errors: run() returns them as a Status; broken contracts (a
// seam call from thread 0 during run(), a Thread destroyed unjoined) assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/runtime.hpp"
#include "readyport/fake/sim_stall.hpp"
#include "readyport/status.hpp"

namespace readyport {

class Trace;

enum class SimStrategy : std::uint8_t {
  kRandom,
  kPct,
  kRoundRobin,
  kDelayBounded,
  kFair,
  kExplore,  // steered by SimOptions::choices (sim_explorer.hpp); nothing drawn from the seed
};
// "random", "pct", "round_robin", "delay_bounded", "fair".
const char* sim_strategy_name(SimStrategy strategy);
// Parses a name of sim_strategy_name; false for anything else.
bool sim_strategy_parse(std::string_view name, SimStrategy* strategy_out);
// The strategy portfolio: seed % 4 picks random, PCT, delay-bounded or fair, so that any range of
// seeds runs every strategy and each seed replays from itself alone (the main job's and the
// harness's default). A pure function of `seed`.
SimStrategy sim_strategy_portfolio(std::uint64_t seed);

enum class SimMechanism : std::uint8_t {
  kThreads,  // a real thread per logical thread, a condition-variable baton
  kFibers,   // a user-space context per logical thread, all on run()'s thread
};
// "threads", "fibers".
const char* sim_mechanism_name(SimMechanism mechanism);
// Parses a name of sim_mechanism_name; false for anything else.
bool sim_mechanism_parse(std::string_view name, SimMechanism* mechanism_out);
// Whether this build can run `mechanism` (kThreads always; kFibers on POSIX and Windows, not under
// clang-cl's ASan). run() fails with kFailedPrecondition for one that is not.
bool sim_mechanism_available(SimMechanism mechanism);
// kFibers where available (POSIX; Windows except under clang-cl's ASan), else kThreads
// (docs/simulation.md#how-the-scheduler-works).
SimMechanism sim_mechanism_default();

// The smallest fiber stack SimOptions::stack_bytes accepts.
inline constexpr std::size_t kSimStackBytesMin = 64 * 1024;

// kExplore: the objects one step touched (Runtime::touch), as a set of bits: each object sets one
// bit, chosen by a fixed hash of it; SimObject::kAnything sets them all. Two steps are dependent
// when their sets intersect, so a collision only makes two steps dependent that were not (less
// pruning, never a lost schedule). A step that touched nothing commutes with every step.
using SimFootprint = std::uint64_t;
SimFootprint sim_footprint_of(SimObject object, std::uint64_t id);
inline bool sim_dependent(SimFootprint a, SimFootprint b) { return (a & b) != 0; }

// kExplore: one step of a run: what `thread` did from the point it was picked at (or resumed
// from a park) to its next scheduling point, park or end.
struct SimSegment {
  std::uint32_t thread = 0;
  SimFootprint footprint = 0;
};

// kExplore: one decision of a run: a step at which more than one thread could run next, or a
// choice (SimScheduler::choose, e.g. whether a fault fires) between 1 (no) and 2 (yes).
struct SimDecision {
  std::uint32_t self = 0;      // the thread that took the step (or made the choice)
  bool self_runnable = false;  // it could have gone on: running another is a preemption
  bool choice = false;         // a choice, not a step: `runnable` is {1, 2}
  std::uint64_t runnable = 0;  // bit (id - 1) for each thread that could run next
  std::uint32_t chosen = 0;    // the thread that ran next (a choice: 1 or 2)
  // SimChoices::segments' index of the step the chosen thread runs next (a step's decision) or
  // of the step the choice is made in (a choice).
  std::size_t segment = 0;
};

// kExplore: the choices that steer one run (sim_explorer.hpp). At the i-th decision the run picks
// prefix[i]; past the prefix it goes on with the thread that took the step when it can, else with
// the lowest runnable id (no preemption). Every decision is appended to `decisions`. A prefix
// entry that names no runnable thread is not followed (the default choice is made instead) and
// the first such decision's index is kept in `diverged_at`. Every step is appended to `segments`.
struct SimChoices {
  static constexpr std::size_t kFollowed = ~std::size_t{0};
  std::vector<std::uint32_t> prefix;
  std::vector<SimDecision> decisions;
  std::vector<SimSegment> segments;
  std::size_t diverged_at = kFollowed;
  // Set by SimExplorer before the run: the preemptions and the faults (choices answered yes) its
  // prefix makes; past the prefix a run adds none. For reports of a run that ends the process.
  std::uint32_t prefix_preemptions = 0;
  std::uint32_t prefix_faults = 0;
};

struct SimOptions {
  // The master seed. The schedule draws from SeedStreams(seed).stream(SeedStream::kSchedule).
  std::uint64_t seed = 0;
  SimStrategy strategy = SimStrategy::kRandom;
  // PCT depth d >= 1: d - 1 priority change points.
  std::uint32_t pct_depth = 3;
  // PCT's k: change points are drawn uniformly in [1, pct_steps_estimate]. Use about the number
  // of steps a run of the scenario takes (SimStats::steps of one run). kDelayBounded draws its
  // delay steps in the same range.
  std::uint64_t pct_steps_estimate = 1000;
  // kDelayBounded: delays at most (0: plain round robin).
  std::uint32_t delay_bound = 2;
  // kFair: a runnable thread not picked for this many consecutive steps (>= 1) is picked next.
  std::uint64_t fair_window = 64;
  // How logical threads run (docs/simulation.md#how-the-scheduler-works); not part of parameters()
  // nor of the trace.
  SimMechanism mechanism = sim_mechanism_default();
  // kFibers: each logical thread's stack, in bytes (rounded up to pages; >= kSimStackBytesMin),
  // plus a guard page. An overflow faults on the guard page.
  std::size_t stack_bytes = 256 * 1024;
  // Steps at most (every point, park, join and thread end is a step); then the run ends with
  // kResourceExhausted.
  std::uint64_t steps_max = 1'000'000;
  // Logical threads at most, run()'s body included; thread_start fails past it.
  std::uint32_t threads_max = 64;
  // Virtual nanoseconds added at every step (0: time moves only when every thread is parked).
  std::uint64_t tick_ns = 0;
  // Threads kept off the CPU (sim_stall.hpp): at each stall's step, the thread that took it is
  // not picked for the next `steps` steps while another thread can run; with every runnable
  // thread stalled, the strategy picks among them. Any strategy but kExplore (asserted empty
  // there); at most kSimStallsMax, each step once (sim_stalls_parse checks both; asserted).
  std::vector<SimStall> stalls;
  // Where scheduler events go (may be null). Not owned; must outlive run().
  Trace* trace = nullptr;
  // kExplore: the run's choices (required; threads_max at most 64). Not owned; must outlive run().
  SimChoices* choices = nullptr;
};

enum class SimOutcome : std::uint8_t {
  kNotRun,     // run() was not called yet
  kRunning,    // inside run()
  kCompleted,  // every thread returned
  kDeadlock,   // every unfinished thread parked with no deadline
  kStepLimit,  // steps_max reached
  kCut,        // ended at the owner's request (cut(): a checker found what it looked for)
};
const char* sim_outcome_name(SimOutcome outcome);

struct SimStats {
  std::uint64_t steps = 0;            // scheduling points taken by logical threads
  std::uint64_t decisions = 0;        // steps at which more than one thread could run
  std::uint64_t switches = 0;         // steps after which another thread ran
  std::uint64_t parks = 0;            // park() and join() calls that blocked
  std::uint64_t wakes = 0;            // wake() calls that made a parked thread runnable
  std::uint64_t time_jumps = 0;       // times every thread was parked and the clock jumped
  std::uint32_t threads_started = 0;  // logical threads, run()'s body included
  // The longest run of consecutive steps a runnable thread was not picked (any strategy).
  std::uint64_t wait_steps_max = 0;
  std::uint64_t now_ns = 0;  // the virtual clock at the end
  // A hash over the id of the thread that ran after each step, a word per step (xor, then an odd
  // multiplier, from FNV-1a's basis): the interleaving alone, free of the seed and of the calls'
  // arguments (counts distinct interleavings across seeds).
  std::uint64_t schedule_hash = 0xcbf29ce484222325ULL;
};

namespace internal {
struct SimCore;
}  // namespace internal

class SimScheduler final : public Runtime {
 public:
  explicit SimScheduler(SimOptions options);
  // Joins every finished thread; detaches abandoned ones
  // (docs/simulation.md#deadlock-and-step-limit-reports).
  ~SimScheduler() override;
  SimScheduler(const SimScheduler&) = delete;
  SimScheduler& operator=(const SimScheduler&) = delete;

  // Runs `main_body` as logical thread 1 ("main") and returns when every logical thread has
  // finished, or at a deadlock or the step limit (see above). Blocks the calling thread, which
  // must not be a logical thread. Call once.
  Status run(std::function<void()> main_body);

  SimOutcome outcome() const;
  // Ends the run at its next step, like the step limit (outcome kCut; the threads still running are
  // abandoned): for an owner whose checker already found the run's verdict (a violation), so that
  // the rest of a run that may spin to its step limit is not run. Any thread, any time; idempotent;
  // not a scheduling point; never blocks (an atomic flag).
  void cut();
  // Counters so far; final after run() returned.
  SimStats stats() const;
  // The parameters drawn from the seed, one line: "seed=.. strategy=.. depth=.. estimate=..
  // change_points=[..]" (and "stalls=step:steps,.." when there are any). Print it with every
  // failure.
  std::string parameters() const;
  // One line per logical thread: "T<id> '<name>' <state> in <last call>". For reports.
  std::string describe_threads() const;

  // ---- Runtime ----------------------------------------------------------------------------------
  std::uint64_t now_ns() const override;
  void point(const char* call) override;
  // True: a logical thread runs only while it holds the baton, handed over under the core mutex.
  bool serializes_threads() const override { return true; }
  ParkEnd park(std::unique_lock<std::mutex>& lock, Waiter& waiter, std::uint64_t deadline_ns,
               const char* call) override;
  void wake(Waiter& waiter) override;
  // kExplore: adds the object to the running step's footprint (SimSegment). A step that declares
  // nothing touches everything, except a new thread's first step (its code before its first
  // point), which touches nothing; a thread resumed from a park starts a new step, and its call
  // must declare again what it touches.
  void touch(SimObject object, std::uint64_t id) override;
  // From a logical thread only; from any other thread fails with kFailedPrecondition. Fails with
  // kResourceExhausted past threads_max. The new thread is runnable; it runs when picked.
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  std::uint32_t thread_current() const override;
  TraceStamp trace_stamp() const override;

  // kExplore: a yes-or-no choice the explorer branches on (a fault that may fire), recorded as a
  // decision; "no" past the prefix. Its step's footprint becomes SimObject::kAnything (what the
  // other answer would touch is not known). Other strategies: always false. From a logical
  // thread.
  bool choose();

 private:
  std::shared_ptr<internal::SimCore> core_;  // shared with the logical threads
};

}  // namespace readyport
