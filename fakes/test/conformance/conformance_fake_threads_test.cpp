// FakeThreadedConformance: the multi-thread conformance scenarios (thread_scenarios.hpp: rules
// A9, F1 LIFO waiters, F3 and F6 abandoned waits; handoff_scenarios.hpp: F1's hand-off to
// released waiters) on FakeOs under SimScheduler.
//
// The PsnConformance instantiation for the fake uses the inline runtime, which starts no threads,
// so there these scenarios skip. Here the same functions run as SimScheduler's logical thread 1,
// once per seed and strategy: the fake must pass them under every interleaving tried, and each
// run replays from its seed (printed with any failure).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "conformance/concurrency_scenarios.hpp"
#include "conformance/handoff_scenarios.hpp"
#include "conformance/thread_scenarios.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport::conformance {
namespace {

constexpr std::uint64_t kSeedsPerStrategy = 16;

// Runs `scenario` on a fresh FakeOs (`fake_options`, default options unless given) under
// SimScheduler for every seed of 1..kSeedsPerStrategy with the random and the PCT strategy.
void run_under_sim(const std::function<void(Os&)>& scenario,
                   const FakeOptions& fake_options = FakeOptions{}) {
  for (SimStrategy strategy : {SimStrategy::kRandom, SimStrategy::kPct}) {
    for (std::uint64_t seed = 1; seed <= kSeedsPerStrategy; ++seed) {
      SimOptions options;
      options.seed = seed;
      options.strategy = strategy;
      options.steps_max = 100'000;
      SimScheduler sim(options);
      Status status;
      {
        FakeOs os(fake_options, sim);  // destroyed before the scheduler it runs on
        status = sim.run([&scenario, &os] { scenario(os); });
      }
      ASSERT_TRUE(status.ok()) << sim.parameters() << ": " << status.to_string() << "\n"
                               << sim.describe_threads();
      ASSERT_FALSE(::testing::Test::HasFailure()) << "failed with " << sim.parameters();
      ASSERT_FALSE(::testing::Test::IsSkipped())
          << "a backend with threads must not skip: " << sim.parameters();
    }
  }
}

TEST(FakeThreadedConformance, A9_SeveralThreadsDequeueFromOnePort) {
  SCOPED_TRACE("rule A9");
  run_under_sim(scenario_a9_several_threads_dequeue);
}

TEST(FakeThreadedConformance, F1_MostRecentWaiterGetsOldestPacket) {
  SCOPED_TRACE("rule F1");
  run_under_sim(scenario_f1_most_recent_waiter_gets_oldest_packet);
}

// The hand-off scenarios, held to the fake's exact assignment (is_fake = true): under every seed
// the released waiters may run in any order, before or after the next post or poll.
TEST(FakeThreadedConformance, F1_BackToBackPacketsReachWaitersLifo) {
  SCOPED_TRACE("rule F1");
  run_under_sim([](Os& os) { scenario_f1_back_to_back_packets_go_lifo(os, true); });
}

TEST(FakeThreadedConformance, F1_PollAfterPostDoesNotStealHandedPacket) {
  SCOPED_TRACE("rule F1");
  run_under_sim([](Os& os) { scenario_f1_poll_after_post_does_not_steal(os, true); });
}

TEST(FakeThreadedConformance, F1_MorePacketsThanWaiters) {
  SCOPED_TRACE("rule F1");
  run_under_sim([](Os& os) { scenario_f1_more_packets_than_waiters(os, true); });
}

TEST(FakeThreadedConformance, F1_SocketPacketHandedToWaiter) {
  SCOPED_TRACE("rule F1");
  run_under_sim([](Os& os) { scenario_f1_socket_packet_handed_to_waiter(os, true); });
}

// Fake only, spec F6 for a waiter released with a packet that has not run yet when the port is
// closed: it is still inside its call, so it ends with ERROR_ABANDONED_WAIT_0 and its packet is
// lost with the port (the fake's reading, the harder case for the engine); a waiter that ran
// before the close returns its packet. The fake's invariants hold throughout. Counts the
// outcomes in `abandoned_out` / `returned_out`.
void scenario_close_while_waiter_holds_handoff(Os& os, int* abandoned_out, int* returned_out) {
  auto& fake = dynamic_cast<FakeOs&>(os);
  const Port port = os.create_io_completion_port(0);
  ASSERT_NE(port, kInvalidPort);
  WaitOutcome outcome;
  std::string why;
  std::unique_ptr<Thread> thread = start_psn_waiter(os, port, &outcome, &why);
  ASSERT_NE(thread, nullptr) << why;
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  fake.check_invariants();
  EXPECT_EQ(fake.queued_packet_count(port), 0u) << "rule F1: handed on, not queued";
  EXPECT_TRUE(os.close_port(port));
  fake.check_invariants();
  thread->join();
  if (outcome.rc == kErrorSuccess) {
    ++*returned_out;
    EXPECT_EQ(outcome.received, 1u);
    EXPECT_EQ(outcome.entry.completion_key, kSentinelKey1);
  } else {
    ++*abandoned_out;
    EXPECT_EQ(outcome.rc, kErrorAbandonedWait0)
        << "rule F6: a released waiter that had not run: " << error_text(outcome.rc);
    EXPECT_EQ(outcome.received, 0u) << "rule A2/F6: nothing dequeued";
  }
  const FakeStats stats = fake.stats();
  EXPECT_EQ(stats.waiters, 0u);
  EXPECT_EQ(stats.ports_open, 0u);
}

TEST(FakeThreadedConformance, F6_ClosingPortAbandonsReleasedWaiter) {
  SCOPED_TRACE("rule F6");
  int abandoned = 0;
  int returned = 0;
  run_under_sim([&abandoned, &returned](Os& os) {
    scenario_close_while_waiter_holds_handoff(os, &abandoned, &returned);
  });
  std::printf("released waiter at close_port: %d abandoned, %d returned its packet\n", abandoned,
              returned);
  EXPECT_EQ(abandoned + returned, static_cast<int>(2 * kSeedsPerStrategy));
  // The case this test exists for must have happened under some seed (the scheduler may run the
  // released waiter between the post and the close, or not).
  EXPECT_GT(abandoned, 0) << "no seed closed the port before the released waiter ran";
}

// Rule F7 with FakeOptions::concurrency_limited; without it the fake ignores the value, and the
// second waiter is released while the first runs (which the last test pins).
FakeOptions concurrency_limited() {
  FakeOptions options;
  options.concurrency_limited = true;
  return options;
}

TEST(FakeThreadedConformance, F7_ValueOneReleasesNoSecondThreadUntilTheFirstBlocks) {
  SCOPED_TRACE("rule F7");
  run_under_sim([](Os& os) { scenario_f7_concurrency_one(os, true); }, concurrency_limited());
}

TEST(FakeThreadedConformance, F7_ValueOneFirstThreadCallingAgainTakesTheNextPacketItself) {
  SCOPED_TRACE("rule F7");
  run_under_sim([](Os& os) { scenario_f7_concurrency_one(os, false); }, concurrency_limited());
}

TEST(FakeThreadedConformance, F7_WithoutTheSwitchTheValueLimitsNothing) {
  SimOptions options;
  options.seed = 1;
  options.steps_max = 100'000;
  SimScheduler sim(options);
  bool second_released_while_first_ran = false;
  Status status;
  {
    FakeOs os(FakeOptions{}, sim);
    status = sim.run([&os, &second_released_while_first_ran] {
      const Port port = os.create_io_completion_port(1);
      WaitOutcome first;
      WaitOutcome second;
      std::string why;
      std::unique_ptr<Thread> second_thread = start_psn_waiter(os, port, &second, &why);
      os.sleep_ms(kWaiterSettleMs);
      std::unique_ptr<Thread> first_thread = start_psn_waiter(os, port, &first, &why);
      os.sleep_ms(kWaiterSettleMs);
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
      // Both released at once, the first thread still inside its call: no limit.
      second_released_while_first_ran = os.stats().packets_queued == 0;
      first_thread->join();
      second_thread->join();
      EXPECT_TRUE(os.close_port(port));
    });
  }
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_TRUE(second_released_while_first_ran);
}

TEST(FakeThreadedConformance, F3_GqcsWaitAbandonedWhenPortCloses) {
  SCOPED_TRACE("rule F3");
  run_under_sim(scenario_f3_gqcs_wait_abandoned);
}

TEST(FakeThreadedConformance, F6_ClosingPortReleasesWaiters) {
  SCOPED_TRACE("rule F6");
  run_under_sim(scenario_f6_closing_port_releases_waiters);
}

}  // namespace
}  // namespace readyport::conformance
