// readyport/fake/harness.hpp: your server under the suite. A Scenario builds your server (the
// engine, your handlers, your listener, your threads) on the Os it is given and drives clients
// through the same seam; the harness runs it once per seed as a World (readyport/fake/world.hpp):
// the fake OS under the seeded scheduler, a strategy from the portfolio, the fake's readings of the
// spec's open questions and a fault plan drawn from the seed (a swarm over the fault sites an
// application meets), a chaos phase with faults, a liveness phase without, then your stop. Every
// run is judged by the LifetimeOracle (the engine's promise), the EmbedderOracle (your side of the
// contract: rules U1-U9, docs/contract.md), your scenario's own checks and the end checks (nothing
// left open in the fake). A failure prints its seed, its rule, the trace lines around it, the one
// command that replays it, a bundle, and the case shrunk to the faults and schedule that matter.
//
//   class EchoScenario final : public readyport::Scenario {
//    public:
//     readyport::Status start(readyport::ScenarioContext& ctx) override {
//       server_ = std::make_unique<MyEchoServer>(ctx.os());     // your code, on the given Os
//       return server_->start(/*workers=*/2);
//     }
//     readyport::Status drive(readyport::ScenarioContext& ctx) override {
//       return readyport::echo_clients(ctx, server_->address(), {});  // echo_clients.hpp
//     }
//     readyport::Status stop(readyport::ScenarioContext&) override { return server_->stop(); }
//    private:
//     std::unique_ptr<MyEchoServer> server_;
//   };
//   readyport::HarnessResult result = readyport::harness_run<EchoScenario>(options);
//   // or, with GoogleTest: READYPORT_HARNESS_TEST(EchoServer, Echoes, EchoScenario)
//   //                      (readyport/fake/harness_gtest.hpp)
//
// One seed, in order (each a phase line in the trace): the scenario object is made; `start`
// (faults on in a quarter of the seeds); `drive` with faults on (chaos); faults off, `settle_ms`
// of virtual time, and `drive` again (liveness: its clients must all succeed within bounded
// virtual time); idle for `settle_ms` (a server's timers run between clients); `stop` (faults on
// in half the seeds); `phase end` (from here no thread but the scenario's may run: rule U4); the
// scenario object destroyed (so a scenario whose start failed cleans up there). All of it runs on
// the world's first logical thread; your threads start through os().thread_start and are
// scheduled by the seed.
//
// What a phase may return: start failing while a fault fired in it is an expected outcome (the
// seed then checks that nothing was left open); a chaos `drive` failing while a fault fired in it
// is expected too, unless its Status is kInternal (return kInternal for what must never happen,
// such as a wrong byte: echo_clients does); the liveness `drive` and `stop` must succeed.
//
// The options, from arguments or from the environment (harness_options_from_env(): the one place
// they are read), each also a field of HarnessOptions:
//   READYPORT_TEST_SEED=N          the first seed (default 1)
//   READYPORT_TEST_SEEDS=N         how many seeds (default 200)
//   READYPORT_TEST_STRATEGY=S      portfolio (default), random, pct, delay_bounded, fair
//   READYPORT_TEST_DEPTH=N         PCT depth / delay bound + 1 (default 3)
//   READYPORT_TEST_FAULTS=P        drawn (default: the swarm), none, or a plan (docs/faults.md:
//                                  `send.wouldblock@10,accept.emfile#2`) used for every seed
//   READYPORT_TEST_FAULTS_OFF=a,b  sites never drawn (e.g. port.create_fails)
//   READYPORT_TEST_RUNTIME=R       sim (default: replayable), free (real threads: TSan), windows
//                                  (the real API, on Windows: WindowsOs; see docs/windows.md)
//   READYPORT_TEST_DETERMINISM=1   run every seed twice and compare the traces line by line
//   READYPORT_TEST_SHRINK=0        do not shrink a failure (default: shrink the first)
//   READYPORT_TEST_BUNDLES=DIR     where failure bundles go (default readyport-failures)
//   READYPORT_TEST_STEPS_MAX=N     scheduler steps (simulated) or seam calls (real threads: past
//                                  it, a livelock report) per seed at most (default 2,000,000)
//   READYPORT_TEST_TRACE_MB_MAX=N  MiB of a seed's trace text kept at most (default 64): past it
//                                  only its first part and last lines are kept, no trace file
//   READYPORT_TEST_EXPECT_HASH=H   the replayed seed must give this trace hash (a replay command
//                                  sets it)
//   READYPORT_TEST_TRACE=FILE      write each seed's whole trace to FILE (with its header line;
//                                  the last seed's stays): to read a run that passes
//
// Ownership: the harness owns each seed's world and scenario object; the scenario owns what it
// builds. Threading: harness_run from a thread no runtime started; a scenario's methods run on
// the world's first logical thread. Errors: bad options are a Status (harness_options_from_env);
// a failing seed is the result's, never an exception. A simulated run that ends in a deadlock or
// at its step limit leaves its logical threads parked: that world is kept, unreachable, until
// the process exits (its memory is bounded by the steps). A seed's memory is bounded whatever
// the code under test does: its steps by steps_max, its kept trace text by trace_mb_max.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/embedder_oracle.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

enum class HarnessPhase : std::uint8_t { kStart, kChaos, kLiveness, kStop };
// "start", "chaos", "liveness", "stop".
const char* harness_phase_name(HarnessPhase phase);

// What a scenario sees of its seed's world.
class ScenarioContext {
 public:
  virtual ~ScenarioContext() = default;
  // The world's Os: faults over the recording over the fake (or the real Os). Build everything on
  // it: engines built on it report to the harness (engine_boundary.hpp).
  virtual Os& os() = 0;
  virtual std::uint64_t seed() const = 0;
  virtual HarnessPhase phase() const = 0;
  virtual bool faults_on() const = 0;
  // The scenario's own draws: seeded from the seed, one stream for the scenario alone.
  virtual Rng& rng() = 0;
  // Faults fired so far in this seed.
  virtual std::uint64_t faults_fired() const = 0;
  // Writes `user <text>` to the trace (what the scenario is doing, for whoever reads a failure).
  // `text` is copied. Not a scheduling point.
  virtual void note(std::string_view text) = 0;
};

// Your server and its clients for one seed. Made fresh for each seed (state never leaks between
// seeds); destroyed inside the world, so destructors may use the Os (join threads, close sockets).
class Scenario {
 public:
  virtual ~Scenario() = default;
  // Builds and starts the server on ctx.os(): the engine, its workers, the listener. Faults on.
  virtual Status start(ScenarioContext& ctx) = 0;
  // The clients: called in the chaos phase (faults on), then in the liveness phase (faults off,
  // where every client must succeed). ctx.phase() says which.
  virtual Status drive(ScenarioContext& ctx) = 0;
  // Stops the server: stop() its engine, join every thread it started, close its listener. When
  // it returns, none of its code may run again (rule U4).
  virtual Status stop(ScenarioContext& ctx) = 0;
};

using ScenarioFactory = std::function<std::unique_ptr<Scenario>()>;

enum class HarnessRuntime : std::uint8_t {
  kSim,      // the fake under SimScheduler: every seed replays exactly
  kFree,     // the fake on real threads (FreeRuntime): for ThreadSanitizer; does not replay
  kWindows,  // the real API (WindowsOs): Windows only; does not replay
};
// "sim", "free", "windows".
const char* harness_runtime_name(HarnessRuntime runtime);
// Whether `runtime` can run here: kWindows needs Windows with ProcessSocketNotifications (build
// 20348 or later; not Wine); the others always. `why_out` (may be null) says why not.
bool harness_runtime_available(HarnessRuntime runtime, std::string* why_out = nullptr);

struct HarnessOptions {
  std::uint64_t first_seed = 1;
  std::uint32_t seeds = 200;
  bool portfolio = true;  // the strategy by seed (sim_strategy_portfolio); else `strategy`
  SimStrategy strategy = SimStrategy::kRandom;
  std::uint32_t depth = 3;  // PCT depth; the delay bound is depth - 1
  std::uint64_t steps_max = 2'000'000;
  // The trace text a seed keeps (to show and bundle a failure, to compare in the determinism
  // mode), in MiB: past it only its first part and its last lines are kept (the run is still
  // judged whole, its hash still covers every line), and no trace file is written.
  std::uint32_t trace_mb_max = 64;
  // Virtual time the world is given, faults off, before the liveness phase's drive (what the
  // faults left settles first: a connection the engine closes after a refused re-arm, its REMOVE
  // riding a driver's next port call, up to EngineOptions::wait_timeout_ms later), and again
  // after it, before stop (idle, as a server is between clients: its timers and reapers run).
  // 1.5 times EngineOptions' default wait_timeout_ms.
  std::uint32_t settle_ms = 1500;
  // The fault plan: drawn per seed (the swarm over harness_fault_sites(), minus `sites_off`),
  // none, or `plan` for every seed.
  enum class Faults : std::uint8_t { kDrawn, kNone, kPlan };
  Faults faults = Faults::kDrawn;
  FaultPlan plan;
  std::vector<FaultSite> sites_off;
  HarnessRuntime runtime = HarnessRuntime::kSim;
  bool determinism = false;  // run each seed twice; a different trace is a failure
  bool shrink = true;        // shrink the first failure (simulated runs only)
  // The shrinker's budget in scheduler steps over all its runs (a failure at the step limit costs
  // steps_max a run): past it, it stops and says the case is not proven 1-minimal.
  std::uint64_t shrink_steps_max = 50'000'000;
  bool stop_on_failure = true;
  std::string bundle_dir = "readyport-failures";
  std::string expect_hash;  // the replayed seed's expected trace hash ("" none)
  std::string trace_out;    // a file each seed's trace is written to ("" none)
  // For the replay command: the test binary and the GoogleTest filter that runs this scenario
  // (set by READYPORT_HARNESS_TEST). Empty binary: this process's executable.
  std::string binary;
  std::string test_name;
};

// The options from the environment (see the top), over `defaults`. kInvalidArgument naming the
// variable and its value when one is not understood.
Result<HarnessOptions> harness_options_from_env(HarnessOptions defaults = {});
// The fault sites an application's code meets, drawn by default: the port call failing as a whole
// (psn.call_fails), an ENABLE refused (add() fails), posts (notify() and post() fail), the port and
// threads not created (start fails), every socket fault (stale WSAEWOULDBLOCK, resets, no buffers,
// accept failures, abortive closes). Not drawn: the engine's internal REMOVE refusal, short waits
// and short dequeues (the main job's business; a plan may still name them).
std::vector<FaultSite> harness_fault_sites();

// One seed's case: what the seed drew, or what a replay or the shrinker pinned.
struct HarnessCase {
  std::uint64_t seed = 0;
  SimStrategy strategy = SimStrategy::kRandom;
  std::uint32_t depth = 3;
  FaultPlan plan;
  bool faults_at_start = false;  // a quarter of the seeds: the start's error paths
  bool faults_at_stop = false;   // half of the seeds
};

// The outcome of one seed.
struct HarnessSeed {
  HarnessCase run_case;
  Status status;          // ok, or the first thing that went wrong (a rule: "U2 at line 41: ...")
  std::string signature;  // the rule ("U2", "O7") or the status's first words
  std::string trace_hash;
  std::uint64_t trace_lines = 0;
  std::string fired_hits;  // the faults that fired, as a plan of pinned hits ("" too many)
  std::uint64_t faults_fired = 0;
  std::uint64_t steps = 0;  // the scheduler's steps (0 on real threads)
  // When the text was asked for (and for a reported failure): it passed trace_mb_max (the text
  // is its first part); and then the run's last lines, oldest first.
  bool trace_cut = false;
  std::vector<std::string> trace_tail;
  bool start_failed_under_faults = false;
  bool chaos_failed_under_faults = false;
  OracleJudgement lifetime;
  EmbedderJudgement embedder;
  double seconds = 0;
};

struct HarnessResult {
  std::uint32_t seeds_run = 0;
  std::uint32_t passed = 0;
  std::uint32_t failed = 0;
  std::uint32_t start_failed_under_faults = 0;  // passing seeds whose start failed under faults
  std::uint32_t chaos_failed_under_faults = 0;
  OracleJudgement lifetime;  // summed over the seeds
  EmbedderJudgement embedder;
  std::vector<HarnessSeed> failures;  // at most one unless !stop_on_failure
  std::string shrunk_replay;          // the shrunk case's replay command ("" none)
  std::string replay;                 // the first failure's replay command
  std::string bundle;                 // the first failure's bundle path
  std::string report;                 // everything the run printed
  double seconds = 0;
  bool ok() const { return failed == 0 && seeds_run > 0; }
};

// Runs the seeds (see the top); the report is also written to stdout as it goes.
HarnessResult harness_run(const HarnessOptions& options, const ScenarioFactory& make);
template <typename ScenarioType>
HarnessResult harness_run(const HarnessOptions& options) {
  return harness_run(options, [] { return std::make_unique<ScenarioType>(); });
}

// One seed's run with the case given (no report, no bundle): for the shrinker, benchmarks and
// tests of the harness. `trace_text_out`, when not null, receives the whole trace.
HarnessSeed harness_run_case(const HarnessOptions& options, const HarnessCase& run_case,
                             const ScenarioFactory& make, std::string* trace_text_out = nullptr);
// The case seed `seed` draws under `options`.
HarnessCase harness_case_of(const HarnessOptions& options, std::uint64_t seed);

}  // namespace readyport
