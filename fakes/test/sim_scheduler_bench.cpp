// readyport-sim-bench: what scheduling costs. Scheduled seam calls per second on FakeOs under
// SimScheduler, with one thread (no switches), and with four threads switching at every call
// (round robin) or as the strategies choose, each under both mechanisms side by side (/threads:
// a real thread per logical thread and a condition-variable baton; /fibers: user-space contexts
// on one OS thread); the inline and free-running runtimes as baselines; and whole runs of the
// standard scenario per second under both mechanisms. The target: >= 1,000,000 calls/s for
// BM_SimRoundRobinSwitchEveryCall/fibers on one core.
//
// Each benchmark iteration is one SimScheduler::run of kCalls seam calls (so thread start-up is
// included, amortised over the calls); items_per_second is seam calls per second.
#include <benchmark/benchmark.h>

#include <ctime>
#include <memory>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/inline_runtime.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "sim_scenario.hpp"

namespace readyport {
namespace {

constexpr int kCalls = 20'000;

// Each thread makes its share of kCalls: post a packet and dequeue it (two seam calls).
void post_and_dequeue(Os& os, Port port, int calls) {
  OverlappedEntry entry;
  std::uint32_t removed = 0;
  for (int i = 0; i < calls; i += 2) {
    os.post_queued_completion_status(port, 0, 1, 0);
    os.get_queued_completion_status_ex(port, &entry, 1, &removed, 0, false);
  }
}

void run_threads(Os& os, Port port, int threads) {
  std::vector<std::unique_ptr<Thread>> started;
  for (int t = 1; t < threads; ++t) {
    started.push_back(os.thread_start("worker", [&os, port, threads] {
                          post_and_dequeue(os, port, kCalls / threads);
                        }).value());
  }
  post_and_dequeue(os, port, kCalls / threads);
  for (auto& thread : started) {
    thread->join();
  }
}

// The process's CPU seconds so far (every thread's; std::clock is process CPU time on POSIX).
double process_cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// calls_per_cpu_s: calls per second of the whole process's CPU time, the fair "one core" figure
// on a loaded machine (items_per_second is per wall second: other processes' load lowers it;
// the thread mechanism's CPU is mostly on its worker threads, counted here too).
void set_cpu_rate(benchmark::State& state, double cpu_seconds, std::int64_t items) {
  state.counters["calls_per_cpu_s"] =
      cpu_seconds <= 0 ? 0.0 : static_cast<double>(items) / cpu_seconds;
}

void BM_Sim(benchmark::State& state, SimStrategy strategy, SimMechanism mechanism) {
  const int threads = static_cast<int>(state.range(0));
  std::uint64_t seed = 0;
  std::uint64_t switches = 0;
  std::uint64_t steps = 0;
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    SimOptions options;
    options.seed = seed++;
    options.strategy = strategy;
    options.pct_steps_estimate = kCalls;
    options.mechanism = mechanism;
    SimScheduler sim(options);
    FakeOs os(FakeOptions{}, sim);
    const Port port = os.create_io_completion_port(0);
    const Status status = sim.run([&] { run_threads(os, port, threads); });
    if (!status.ok()) {
      state.SkipWithError(status.to_string().c_str());
    }
    os.close_port(port);
    switches += sim.stats().switches;
    steps += sim.stats().steps;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kCalls);
  set_cpu_rate(state, process_cpu_seconds() - cpu_start,
               static_cast<std::int64_t>(state.iterations()) * kCalls);
  state.counters["switch_ratio"] =
      steps == 0 ? 0.0 : static_cast<double>(switches) / static_cast<double>(steps);
}

void BM_SimOneThread(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kRandom, mechanism);
}
void BM_SimRoundRobinSwitchEveryCall(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kRoundRobin, mechanism);
}
void BM_SimRandom(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kRandom, mechanism);
}
void BM_SimPct(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kPct, mechanism);
}
void BM_SimDelayBounded(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kDelayBounded, mechanism);
}
void BM_SimFair(benchmark::State& state, SimMechanism mechanism) {
  BM_Sim(state, SimStrategy::kFair, mechanism);
}

// Each benchmark under both mechanisms, one after the other, so that their figures sit side by
// side in one run.
#define READYPORT_SIM_BENCH(function, count)                   \
  BENCHMARK_CAPTURE(function, threads, SimMechanism::kThreads) \
      ->Arg(count)                                             \
      ->Unit(benchmark::kMillisecond)                          \
      ->UseRealTime();                                         \
  BENCHMARK_CAPTURE(function, fibers, SimMechanism::kFibers)   \
      ->Arg(count)                                             \
      ->Unit(benchmark::kMillisecond)                          \
      ->UseRealTime()

READYPORT_SIM_BENCH(BM_SimOneThread, 1);
READYPORT_SIM_BENCH(BM_SimRoundRobinSwitchEveryCall, 4);
READYPORT_SIM_BENCH(BM_SimRandom, 4);
READYPORT_SIM_BENCH(BM_SimPct, 4);
READYPORT_SIM_BENCH(BM_SimDelayBounded, 4);
READYPORT_SIM_BENCH(BM_SimFair, 4);

// Baseline: the same calls on one thread with the inline runtime (no scheduler at all).
void BM_InlineBaseline(benchmark::State& state) {
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    InlineRuntime runtime;
    FakeOs os(FakeOptions{}, runtime);
    const Port port = os.create_io_completion_port(0);
    post_and_dequeue(os, port, kCalls);
    os.close_port(port);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kCalls);
  set_cpu_rate(state, process_cpu_seconds() - cpu_start,
               static_cast<std::int64_t>(state.iterations()) * kCalls);
}
BENCHMARK(BM_InlineBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: four real threads, unscheduled (FreeRuntime).
void BM_FreeFourThreads(benchmark::State& state) {
  for (auto _ : state) {
    FreeRuntime runtime;
    FakeOs os(FakeOptions{}, runtime);
    const Port port = os.create_io_completion_port(0);
    std::vector<std::unique_ptr<Thread>> started;
    for (int t = 0; t < 4; ++t) {
      started.push_back(os.thread_start("worker", [&os, port] {
                            post_and_dequeue(os, port, kCalls / 4);
                          }).value());
    }
    for (auto& thread : started) {
      thread->join();
    }
    os.close_port(port);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kCalls);
}
BENCHMARK(BM_FreeFourThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

// Whole seeded runs of the standard scenario (5 threads, ~110 steps, traced): runs per second.
void BM_StandardScenarioRun(benchmark::State& state, SimMechanism mechanism) {
  ScenarioRunOptions options;
  options.mechanism = mechanism;
  options.trace.keep_full = false;
  options.trace.tail_lines_max = 0;
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    const ScenarioRunResult result = run_standard_scenario(options);
    if (!result.status.ok()) {
      state.SkipWithError(result.status.to_string().c_str());
    }
    benchmark::DoNotOptimize(result.hash);
    options.seed += 1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  set_cpu_rate(state, process_cpu_seconds() - cpu_start,
               static_cast<std::int64_t>(state.iterations()));  // here: runs per CPU second
}
BENCHMARK_CAPTURE(BM_StandardScenarioRun, threads, SimMechanism::kThreads)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_StandardScenarioRun, fibers, SimMechanism::kFibers)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace readyport

BENCHMARK_MAIN();
