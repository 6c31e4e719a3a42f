// SimScheduler against the Runtime contract alone (ParkHarness stands in for FakeOs): one thread
// at a time, ids, joins, virtual deadlines, deadlock and step-limit reports, strategies, replay.
#include "readyport/fake/sim_scheduler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "readyport/fake/trace.hpp"
#include "seed_env.hpp"
#include "sim_harness.hpp"

namespace readyport {
namespace {

using test::ParkHarness;

constexpr std::uint64_t kMs = 1'000'000;

std::unique_ptr<Thread> start(Runtime& runtime, std::string_view name, std::function<void()> body) {
  Result<std::unique_ptr<Thread>> thread = runtime.thread_start(name, std::move(body));
  READYPORT_ASSERT(thread.ok());
  return std::move(thread).value();
}

// The mechanism of the test running now (every test runs under both; gtest runs one at a time).
SimMechanism g_mechanism = SimMechanism::kThreads;

class SimSchedulerTest : public ::testing::TestWithParam<SimMechanism> {
 protected:
  void SetUp() override { g_mechanism = GetParam(); }
};

SimOptions options_for(std::uint64_t seed, SimStrategy strategy, Trace* trace = nullptr) {
  SimOptions options;
  options.seed = seed;
  options.strategy = strategy;
  options.trace = trace;
  options.mechanism = g_mechanism;
  return options;
}

TEST_P(SimSchedulerTest, MainBodyIsThreadOneAndChildrenNumberInStartOrder) {
  SimScheduler sim(options_for(1, SimStrategy::kRandom));
  EXPECT_EQ(sim.thread_current(), 0u);
  std::vector<std::uint32_t> seen(4, 99);
  const Status status = sim.run([&] {
    seen[0] = sim.thread_current();
    auto a = start(sim, "a", [&] { seen[1] = sim.thread_current(); });
    auto b = start(sim, "b", [&] { seen[2] = sim.thread_current(); });
    a->join();
    b->join();
    seen[3] = sim.thread_current();
  });
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{1, 2, 3, 1}));
  EXPECT_EQ(sim.outcome(), SimOutcome::kCompleted);
  EXPECT_EQ(sim.stats().threads_started, 3u);
  EXPECT_EQ(sim.thread_current(), 0u);
}

TEST_P(SimSchedulerTest, ExactlyOneThreadRunsBetweenPoints) {
  for (const SimStrategy strategy :
       {SimStrategy::kRandom, SimStrategy::kPct, SimStrategy::kRoundRobin}) {
    SimScheduler sim(options_for(7, strategy));
    ParkHarness harness(sim);
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    auto body = [&] {
      for (int i = 0; i < 50; ++i) {
        if (inside.fetch_add(1) != 0) {
          overlaps.fetch_add(1);
        }
        inside.fetch_sub(1);
        harness.point();
      }
    };
    ASSERT_TRUE(sim.run([&] {
                     auto a = start(sim, "a", body);
                     auto b = start(sim, "b", body);
                     auto c = start(sim, "c", body);
                     body();
                     a->join();
                     b->join();
                     c->join();
                   })
                    .ok());
    EXPECT_EQ(overlaps.load(), 0) << sim_strategy_name(strategy);
    // PCT switches only when a thread ends or at its change points; the others switch often.
    EXPECT_GT(sim.stats().switches, strategy == SimStrategy::kPct ? 2u : 10u)
        << sim_strategy_name(strategy);
  }
}

TEST_P(SimSchedulerTest, RoundRobinSwitchesAtEveryPoint) {
  SimScheduler sim(options_for(0, SimStrategy::kRoundRobin));
  ParkHarness harness(sim);
  std::vector<std::uint32_t> order;
  auto body = [&] {
    for (int i = 0; i < 3; ++i) {
      order.push_back(sim.thread_current());
      harness.point();
    }
  };
  ASSERT_TRUE(sim.run([&] {
                   auto a = start(sim, "a", body);
                   auto b = start(sim, "b", body);
                   a->join();
                   b->join();
                 })
                  .ok());
  EXPECT_EQ(order, (std::vector<std::uint32_t>{2, 3, 2, 3, 2, 3}));
}

TEST_P(SimSchedulerTest, JoinParksUntilTheTargetFinished) {
  SimScheduler sim(options_for(3, SimStrategy::kRandom));
  ParkHarness harness(sim);
  bool child_done = false;
  bool seen_done_after_join = false;
  ASSERT_TRUE(sim.run([&] {
                   auto child = start(sim, "child", [&] {
                     for (int i = 0; i < 20; ++i) {
                       harness.point();
                     }
                     child_done = true;
                   });
                   child->join();
                   seen_done_after_join = child_done;
                 })
                  .ok());
  EXPECT_TRUE(seen_done_after_join);
}

TEST_P(SimSchedulerTest, TimedWaitEndsAtItsVirtualDeadlineExactly) {
  SimScheduler sim(options_for(11, SimStrategy::kRandom));
  ParkHarness harness(sim);
  ParkHarness::Event never;
  ParkHarness::Event later;
  std::uint64_t a_end_ns = 0;
  std::uint64_t b_end_ns = 0;
  ParkEnd a_end = ParkEnd::kWoken;
  ParkEnd b_end = ParkEnd::kDeadline;
  ASSERT_TRUE(sim.run([&] {
                   auto a = start(sim, "a", [&] {
                     a_end = harness.wait(never, sim.now_ns() + 10 * kMs);
                     a_end_ns = sim.now_ns();
                   });
                   auto b = start(sim, "b", [&] {
                     b_end = harness.wait(later, sim.now_ns() + 50 * kMs);
                     b_end_ns = sim.now_ns();
                   });
                   harness.sleep(20 * kMs);  // wakes at exactly 20 ms, after a timed out
                   harness.set(later);
                   a->join();
                   b->join();
                 })
                  .ok());
  EXPECT_EQ(a_end, ParkEnd::kDeadline);
  EXPECT_EQ(a_end_ns, 10 * kMs);
  EXPECT_EQ(b_end, ParkEnd::kWoken);
  EXPECT_EQ(b_end_ns, 20 * kMs);
  EXPECT_EQ(sim.stats().now_ns, 20 * kMs);
  EXPECT_EQ(sim.stats().time_jumps, 2u);
}

TEST_P(SimSchedulerTest, WakeBeforeParkReturnsWokenAtOnce) {
  SimScheduler sim(options_for(5, SimStrategy::kRandom));
  ParkHarness harness(sim);
  ParkHarness::Event event;
  ParkEnd end = ParkEnd::kDeadline;
  ASSERT_TRUE(sim.run([&] {
                   harness.set(event);
                   end = harness.wait(event, kDeadlineNone);
                 })
                  .ok());
  EXPECT_EQ(end, ParkEnd::kWoken);
  EXPECT_EQ(sim.stats().parks, 0u);
}

TEST_P(SimSchedulerTest, DeadlockOfTwoLocksTakenInOppositeOrderIsReported) {
  // Round robin makes both threads take their first lock before either takes its second.
  SimScheduler sim(options_for(0, SimStrategy::kRoundRobin));
  ParkHarness harness(sim);
  ParkHarness::Lock first;
  ParkHarness::Lock second;
  const Status status = sim.run([&] {
    auto a = start(sim, "lock-ab", [&] {
      harness.lock(first, "lock(first)");
      harness.lock(second, "lock(second)");
      harness.unlock(second);
      harness.unlock(first);
    });
    auto b = start(sim, "lock-ba", [&] {
      harness.lock(second, "lock(second)");
      harness.lock(first, "lock(first)");
      harness.unlock(first);
      harness.unlock(second);
    });
    a->join();
    b->join();
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(sim.outcome(), SimOutcome::kDeadlock);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  const std::string& message = status.message();
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("T1 'main' parked in Thread::join (joins T2)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("T2 'lock-ab' parked in lock(second) (no deadline)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("T3 'lock-ba' parked in lock(first) (no deadline)"), std::string::npos)
      << message;
  // The scheduler (and the abandoned threads' state) is destroyed safely at scope end.
}

TEST_P(SimSchedulerTest, StepLimitEndsASpinningRun) {
  SimOptions options = options_for(9, SimStrategy::kRandom);
  options.steps_max = 500;
  SimScheduler sim(options);
  ParkHarness harness(sim);
  std::atomic<bool> stop{false};
  const Status status = sim.run([&] {
    auto spinner = start(sim, "spinner", [&] {
      while (!stop.load()) {
        harness.point("spin");
      }
    });
    spinner->join();
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(sim.outcome(), SimOutcome::kStepLimit);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("'spinner'"), std::string::npos) << status.message();
  EXPECT_EQ(sim.stats().steps, 501u);
}

TEST_P(SimSchedulerTest, TickMovesTheClockForThreadsThatNeverPark) {
  // A thread spins on the clock while another waits 50 us: with tick_ns the spinner's steps move
  // time, so the waiter's deadline comes although the spinner never parks.
  SimOptions options = options_for(6, SimStrategy::kRandom);
  options.tick_ns = 1000;
  options.steps_max = 10'000;
  SimScheduler sim(options);
  ParkHarness harness(sim);
  ParkHarness::Event never;
  bool waiter_done = false;
  std::uint64_t waiter_end_ns = 0;
  ASSERT_TRUE(sim.run([&] {
                   auto waiter = start(sim, "waiter", [&] {
                     EXPECT_EQ(harness.wait(never, 50'000), ParkEnd::kDeadline);
                     waiter_end_ns = sim.now_ns();
                     waiter_done = true;
                   });
                   while (!waiter_done) {
                     harness.point("spin");
                   }
                   waiter->join();
                 })
                  .ok());
  EXPECT_GE(waiter_end_ns, 50'000u);
  EXPECT_LT(waiter_end_ns, 60'000u);
  EXPECT_EQ(sim.stats().time_jumps, 0u);
}

TEST_P(SimSchedulerTest, ThreadStartOutsideRunAndPastTheLimitFails) {
  SimOptions options = options_for(2, SimStrategy::kRandom);
  options.threads_max = 2;
  SimScheduler sim(options);
  const Result<std::unique_ptr<Thread>> outside = sim.thread_start("x", [] {});
  EXPECT_EQ(outside.status().code(), StatusCode::kFailedPrecondition);
  Status third;
  ASSERT_TRUE(sim.run([&] {
                   auto second = start(sim, "second", [] {});
                   third = sim.thread_start("third", [] {}).status();
                   second->join();
                 })
                  .ok());
  EXPECT_EQ(third.code(), StatusCode::kResourceExhausted);
}

TEST_P(SimSchedulerTest, ThreadZeroOutsideRunBehavesInline) {
  SimScheduler sim(options_for(4, SimStrategy::kRandom));
  ParkHarness harness(sim);
  ParkHarness::Event event;
  EXPECT_EQ(harness.wait(event, 3 * kMs), ParkEnd::kDeadline);
  EXPECT_EQ(sim.now_ns(), 3 * kMs);
  ASSERT_TRUE(sim.run([&] { EXPECT_EQ(sim.now_ns(), 3 * kMs); }).ok());
}

// A scenario with choices everywhere: three workers wait on events, a fourth sets them.
std::uint64_t harness_trace_hash(std::uint64_t seed, SimStrategy strategy, std::string* text_out) {
  Trace trace;
  SimScheduler sim(options_for(seed, strategy, &trace));
  ParkHarness harness(sim);
  ParkHarness::Event events[3];
  ParkHarness::Lock lock;
  int counter = 0;
  const Status status = sim.run([&] {
    std::vector<std::unique_ptr<Thread>> threads;
    for (int w = 0; w < 3; ++w) {
      threads.push_back(start(sim, "waiter", [&, w] {
        for (int i = 0; i < 3; ++i) {
          harness.lock(lock);
          counter += 1;
          trace.record(sim.now_ns(), sim.thread_current(), "counter=" + std::to_string(counter));
          harness.unlock(lock);
        }
        harness.wait(events[w], sim.now_ns() + (static_cast<std::uint64_t>(w) + 1) * kMs);
      }));
    }
    threads.push_back(start(sim, "setter", [&] {
      for (auto& event : events) {
        harness.point();
        harness.set(event);
      }
    }));
    for (auto& thread : threads) {
      thread->join();
    }
  });
  READYPORT_ASSERT(status.ok());
  if (text_out != nullptr) {
    *text_out = trace.text();
  }
  return trace.hash();
}

TEST_P(SimSchedulerTest, SameSeedSameTraceDifferentSeedsDifferentTraces) {
  const test::SeedLoop seeds = test::seed_loop(0, 50);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const SimStrategy strategy : {SimStrategy::kRandom, SimStrategy::kPct}) {
    std::set<std::uint64_t> hashes;
    for (const std::uint64_t seed : seeds.seeds()) {
      SCOPED_TRACE(test::seed_replay(seed));
      std::string first;
      std::string second;
      const std::uint64_t hash = harness_trace_hash(seed, strategy, &first);
      EXPECT_EQ(harness_trace_hash(seed, strategy, &second), hash);
      ASSERT_EQ(first, second) << "seed " << seed;
      hashes.insert(hash);
    }
    if (seeds.whole_loop()) {
      EXPECT_GE(hashes.size(), 25u) << sim_strategy_name(strategy);
    } else {
      seeds.note_skipped("at least 25 distinct traces from 50 seeds");
    }
  }
}

TEST_P(SimSchedulerTest, PctParametersComeFromTheSeed) {
  SimOptions options = options_for(1234, SimStrategy::kPct);
  options.pct_depth = 4;
  options.pct_steps_estimate = 100;
  SimScheduler a(options);
  SimScheduler b(options);
  EXPECT_EQ(a.parameters(), b.parameters());
  EXPECT_NE(a.parameters().find("depth=4 estimate=100 change_points=["), std::string::npos)
      << a.parameters();
  options.seed = 1235;
  SimScheduler c(options);
  EXPECT_NE(a.parameters(), c.parameters());
}

// ---- PCT against random on a planted ordering bug of depth 2
// -------------------------------------
//
// Thread A reads a flag, then acts on what it read two steps later; thread B does a long job
// (kJobSteps points) and then checks. The bug shows only when all of B's job runs between A's
// read and A's act: two ordering constraints (depth 2). Random scheduling must keep A off the CPU
// for kJobSteps consecutive choices (about 2^-kJobSteps); PCT needs one change point on the right
// step (about 1/(2k)).
constexpr int kJobSteps = 20;

struct PlantedRun {
  bool hit = false;
  std::uint64_t steps = 0;
};

PlantedRun run_planted(std::uint64_t seed, SimStrategy strategy, std::uint64_t estimate) {
  SimOptions options = options_for(seed, strategy);
  options.pct_depth = 2;
  options.pct_steps_estimate = estimate;
  SimScheduler sim(options);
  ParkHarness harness(sim);
  bool a_read = false;
  bool a_acted = false;
  bool hit = false;
  const Status status = sim.run([&] {
    auto a = start(sim, "a", [&] {
      harness.point("a.read");
      a_read = true;
      harness.point("a.act");
      a_acted = true;
    });
    auto b = start(sim, "b", [&] {
      for (int i = 0; i < kJobSteps; ++i) {
        harness.point("b.job");
      }
      hit = a_read && !a_acted;
    });
    a->join();
    b->join();
  });
  READYPORT_ASSERT(status.ok());
  return {hit, sim.stats().steps};
}

TEST_P(SimSchedulerTest, PctFindsADepthTwoBugThatRandomRarelyFinds) {
  const std::uint64_t estimate = run_planted(0, SimStrategy::kRoundRobin, 1).steps;
  constexpr std::uint64_t kSeeds = 2000;
  const test::SeedLoop seeds = test::seed_loop(0, kSeeds);  // or READYPORT_SEED's
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  std::uint64_t pct_hits = 0;
  std::uint64_t random_hits = 0;
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    pct_hits += run_planted(seed, SimStrategy::kPct, estimate).hit ? 1 : 0;
    random_hits += run_planted(seed, SimStrategy::kRandom, estimate).hit ? 1 : 0;
  }
  std::printf("planted depth-2 bug over %llu seeds (k=%llu): pct %llu hits, random %llu hits\n",
              static_cast<unsigned long long>(seeds.seeds().size()),
              static_cast<unsigned long long>(estimate), static_cast<unsigned long long>(pct_hits),
              static_cast<unsigned long long>(random_hits));
  RecordProperty("seeds", static_cast<int>(seeds.seeds().size()));
  RecordProperty("pct_hits", static_cast<int>(pct_hits));
  RecordProperty("random_hits", static_cast<int>(random_hits));
  if (!seeds.whole_loop()) {
    seeds.note_skipped("PCT hits the planted bug more often than random, over 2000 seeds");
    return;
  }
  EXPECT_GT(pct_hits, random_hits);
  EXPECT_GE(pct_hits, kSeeds / (4 * estimate));  // the PCT bound is 1/(n k) with n = 3
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, SimSchedulerTest,
                         ::testing::Values(SimMechanism::kThreads, SimMechanism::kFibers),
                         [](const ::testing::TestParamInfo<SimMechanism>& param) {
                           return std::string(sim_mechanism_name(param.param));
                         });

}  // namespace
}  // namespace readyport
