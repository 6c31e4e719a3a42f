// SimScheduler's two mechanisms (threads, fibers): the same seed makes the same decisions, so the
// standard scenario's trace and schedule hashes are identical under both for every seed and
// strategy; per-logical-thread last errors; several schedulers at once on different OS threads.
// Label determinism.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/faulty_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "seed_env.hpp"
#include "sim_scenario.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define READYPORT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define READYPORT_TEST_SANITIZED 1
#endif
#endif
#ifndef READYPORT_TEST_SANITIZED
#define READYPORT_TEST_SANITIZED 0
#endif

namespace readyport {
namespace {

constexpr std::uint64_t kSeeds = 300;

ScenarioRunOptions hash_only(std::uint64_t seed, SimStrategy strategy, SimMechanism mechanism) {
  ScenarioRunOptions options;
  options.seed = seed;
  options.strategy = strategy;
  options.mechanism = mechanism;
  options.trace.keep_full = false;
  options.trace.tail_lines_max = 4;
  return options;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(SimMechanism, NamesParseBack) {
  for (const SimMechanism mechanism : {SimMechanism::kThreads, SimMechanism::kFibers}) {
    SimMechanism parsed = SimMechanism::kThreads;
    ASSERT_TRUE(sim_mechanism_parse(sim_mechanism_name(mechanism), &parsed));
    EXPECT_EQ(parsed, mechanism);
  }
  SimMechanism untouched = SimMechanism::kFibers;
  EXPECT_FALSE(sim_mechanism_parse("fiber", &untouched));
  EXPECT_FALSE(sim_mechanism_parse("", &untouched));
  EXPECT_EQ(untouched, SimMechanism::kFibers);
  EXPECT_STREQ(sim_mechanism_name(SimMechanism::kThreads), "threads");
  EXPECT_STREQ(sim_mechanism_name(SimMechanism::kFibers), "fibers");
  EXPECT_TRUE(sim_mechanism_available(SimMechanism::kThreads));
  EXPECT_TRUE(sim_mechanism_available(sim_mechanism_default()));
}

// Every seed, every strategy: threads and fibers give the same trace (hash, line count, tail) and
// the same interleaving (schedule hash, steps, switches).
TEST(SimMechanism, ThreadsAndFibersGiveIdenticalTracesAndSchedulesForEverySeed) {
  if (!sim_mechanism_available(SimMechanism::kFibers)) {
    GTEST_SKIP() << "no fibers here";
  }
  const test::SeedLoop seeds = test::seed_loop(0, kSeeds);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  std::uint64_t compared = 0;
  for (const SimStrategy strategy :
       {SimStrategy::kRandom, SimStrategy::kPct, SimStrategy::kDelayBounded, SimStrategy::kFair}) {
    double seconds[2] = {0, 0};
    std::uint64_t switches = 0;
    for (const std::uint64_t seed : seeds.seeds()) {
      SCOPED_TRACE(test::seed_replay(seed));
      auto start = std::chrono::steady_clock::now();
      const ScenarioRunResult threads =
          run_standard_scenario(hash_only(seed, strategy, SimMechanism::kThreads));
      seconds[0] += seconds_since(start);
      start = std::chrono::steady_clock::now();
      const ScenarioRunResult fibers =
          run_standard_scenario(hash_only(seed, strategy, SimMechanism::kFibers));
      seconds[1] += seconds_since(start);
      ASSERT_TRUE(threads.status.ok()) << threads.status.to_string();
      ASSERT_TRUE(fibers.status.ok()) << fibers.status.to_string();
      ASSERT_EQ(threads.hash, fibers.hash) << sim_strategy_name(strategy) << " seed " << seed;
      ASSERT_EQ(threads.stats.schedule_hash, fibers.stats.schedule_hash) << "seed " << seed;
      ASSERT_EQ(threads.lines, fibers.lines) << "seed " << seed;
      ASSERT_EQ(threads.tail, fibers.tail) << "seed " << seed;
      ASSERT_EQ(threads.stats.steps, fibers.stats.steps) << "seed " << seed;
      ASSERT_EQ(threads.stats.switches, fibers.stats.switches) << "seed " << seed;
      ASSERT_EQ(threads.parameters, fibers.parameters) << "seed " << seed;
      switches += fibers.stats.switches;
      compared += 1;
    }
    std::printf(
        "%s: %zu seeds, equal trace and schedule hashes; %llu switches; threads %.3f s, "
        "fibers %.3f s\n",
        sim_strategy_name(strategy), seeds.seeds().size(),
        static_cast<unsigned long long>(switches), seconds[0], seconds[1]);
  }
  std::printf("compared %llu runs under both mechanisms\n",
              static_cast<unsigned long long>(compared));
}

// The last error is per logical thread: two threads failing with different codes, switching at
// every call, each read back their own (under fibers they share one OS thread).
void expect_own_last_errors(SimMechanism mechanism) {
  SimOptions options;
  options.strategy = SimStrategy::kRoundRobin;
  options.mechanism = mechanism;
  SimScheduler sim(options);
  FakeOs fake(FakeOptions{}, sim);
  FaultyOs os(fake, FaultPlan::none(), 1, nullptr, nullptr);
  const Port port = fake.create_io_completion_port(0);
  std::uint32_t seen[4] = {0, 0, 0, 0};
  const Status status = sim.run([&] {
    auto handle = os.thread_start("socket-error", [&] {
      EXPECT_NE(os.closesocket(kInvalidSocket), 0);  // WSAENOTSOCK from FakeOs
      seen[0] = os.last_error();
      fake.now_ns();  // a point (not through FaultyOs, which would clear): the other runs
      seen[1] = os.last_error();
    });
    ASSERT_TRUE(handle.ok());
    os.arm_next(FaultSite::kPostFails);  // injected by FaultyOs on this thread only
    EXPECT_FALSE(os.post_queued_completion_status(port, 0, 1, 0));
    seen[2] = os.last_error();
    fake.now_ns();
    seen[3] = os.last_error();
    handle.value()->join();
  });
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(seen[0], kWsaEnotsock) << sim_mechanism_name(mechanism);
  EXPECT_EQ(seen[1], kWsaEnotsock) << sim_mechanism_name(mechanism);
  EXPECT_EQ(seen[2], kErrorNotEnoughMemory) << sim_mechanism_name(mechanism);
  EXPECT_EQ(seen[3], kErrorNotEnoughMemory) << sim_mechanism_name(mechanism);
  EXPECT_GE(sim.stats().switches, 4u);
  fake.close_port(port);
}

TEST(SimMechanism, LastErrorsArePerLogicalThreadUnderThreads) {
  expect_own_last_errors(SimMechanism::kThreads);
}

TEST(SimMechanism, LastErrorsArePerLogicalThreadUnderFibers) {
  if (!sim_mechanism_available(SimMechanism::kFibers)) {
    GTEST_SKIP() << "no fibers here";
  }
  expect_own_last_errors(SimMechanism::kFibers);
}

// Schedulers running at once on different OS threads do not disturb each other: each seed's hash
// is the one a serial run gives.
TEST(SimMechanism, SchedulersOnSeveralOsThreadsAtOnceGiveTheSerialHashes) {
  if (!sim_mechanism_available(SimMechanism::kFibers)) {
    GTEST_SKIP() << "no fibers here";
  }
  constexpr std::uint64_t kWorkers = 3;
  constexpr std::uint64_t kSeedsEach = 20;
  std::vector<std::uint64_t> serial(kWorkers * kSeedsEach);
  for (std::uint64_t seed = 0; seed < serial.size(); ++seed) {
    serial[seed] =
        run_standard_scenario(hash_only(seed, SimStrategy::kRandom, SimMechanism::kFibers)).hash;
  }
  std::vector<std::uint64_t> parallel(serial.size(), 0);
  std::vector<std::thread> workers;
  for (std::uint64_t w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&parallel, w] {
      for (std::uint64_t seed = w; seed < parallel.size(); seed += kWorkers) {
        const ScenarioRunResult result =
            run_standard_scenario(hash_only(seed, SimStrategy::kRandom, SimMechanism::kFibers));
        parallel[seed] = result.status.ok() ? result.hash : 0;
      }
    });
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
  for (std::uint64_t seed = 0; seed < serial.size(); ++seed) {
    EXPECT_NE(parallel[seed], 0u) << "seed " << seed;
    EXPECT_EQ(parallel[seed], serial[seed]) << "seed " << seed;
  }
}

#if !defined(_WIN32)
// Recurses `depth` frames of about 1 KiB each (the volatile buffer and the non-tail call keep
// every frame).
std::uint64_t deep_frames(std::uint64_t depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  if (depth == 0) {
    return 0;
  }
  return deep_frames(depth - 1) + static_cast<std::uint64_t>(pad[0]);
}

// A logical thread that overflows its fiber stack dies at the guard page below it (SIGSEGV, or
// the sanitizer's report of it) instead of writing over memory next to its stack.
void overflow_a_fiber() {
  SimOptions options;
  options.mechanism = SimMechanism::kFibers;
  options.stack_bytes = kSimStackBytesMin;
  SimScheduler sim(options);
  std::uint64_t sum = 0;
  // 64 Ki frames of 1 KiB: a thousand times the stack.
  (void)sim.run([&sum] { sum = deep_frames(64 * 1024); });
  std::fprintf(stderr, "survived: %llu\n", static_cast<unsigned long long>(sum));
}
#endif  // !defined(_WIN32)

TEST(SimMechanismDeathTest, AFiberStackOverflowHitsTheGuardPage) {
#if defined(_WIN32)
  GTEST_SKIP() << "Win32 fibers' stacks are the system's (its own guard page); tested on POSIX";
#else
  if (!sim_mechanism_available(SimMechanism::kFibers)) {
    GTEST_SKIP() << "no fibers here";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#if READYPORT_TEST_SANITIZED
  // The sanitizers catch the fault and report it ("stack-overflow", "SEGV") before dying.
  EXPECT_DEATH(overflow_a_fiber(), "stack-overflow|SEGV");
#else
  EXPECT_EXIT(overflow_a_fiber(), testing::KilledBySignal(SIGSEGV), "");
#endif
#endif
}

}  // namespace
}  // namespace readyport
