// conformance/thread_scenarios.hpp: the conformance scenarios that need several threads.
//
// Rules A9 (several threads on one port), F1 (waiting threads released LIFO), F3 and F6 (a wait
// ended by closing the port) can only be observed with threads started through the Os. Each
// scenario is a function of `Os&` so that it runs in two places:
// - as a PsnConformance TEST_P (conformance_a_call.cpp, conformance_f_port.cpp) on every backend;
//   a backend that starts no threads (FakeOs with its inline runtime) makes it GTEST_SKIP;
// - on FakeOs under SimScheduler (conformance_fake_threads_test.cpp), inside SimScheduler::run,
//   for many seeds, so the fake passes the very same scenario code, deterministically.
//
// Ordering between threads uses os.sleep_ms(kWaiterSettleMs): on Windows real time lets a
// started thread reach its wait; under SimScheduler virtual time moves only when every thread is
// parked, so the started thread is certainly waiting when the sleep ends.
// Every started thread is joined before the function returns, whatever failed.
// Threading: call from one thread (the test's, or SimScheduler's logical thread 1).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "conformance/scenario_util.hpp"
#include "readyport/os.hpp"

namespace readyport::conformance {

// Time given to a started thread to reach its wait.
inline constexpr std::uint32_t kWaiterSettleMs = 50;
// A waiter's own bound: long, it is released by a packet or by closing the port.
inline constexpr std::uint32_t kWaiterTimeoutMs = 5000;

// What one waiting thread got.
struct WaitOutcome {
  std::uint32_t rc = 0xFFFF'FFFF;  // PSN's return, or for GQCSEx: 0 on TRUE, last_error on FALSE
  std::uint32_t received = 0;
  OverlappedEntry entry{};
};

// Starts a thread that waits once in ProcessSocketNotifications (count 1) on `port` and records
// the outcome. Returns null (and `why_out`) when the backend starts no threads.
inline std::unique_ptr<Thread> start_psn_waiter(Os& os, Port port, WaitOutcome* outcome,
                                                std::string* why_out) {
  Result<std::unique_ptr<Thread>> started = os.thread_start("psn-waiter", [&os, port, outcome] {
    outcome->rc = os.process_socket_notifications(port, 0, nullptr, kWaiterTimeoutMs, 1,
                                                  &outcome->entry, &outcome->received);
  });
  if (!started.ok()) {
    *why_out = started.status().to_string();
    return nullptr;
  }
  return std::move(started).value();
}

// Rule A9: two threads wait in ProcessSocketNotifications on one port at the same time; two
// posted packets serve both, one each.
inline void scenario_a9_several_threads_dequeue(Os& os) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome outcomes[2];
  std::unique_ptr<Thread> threads[2];
  std::string why;
  threads[0] = start_psn_waiter(os, port, &outcomes[0], &why);
  if (threads[0] != nullptr) {
    threads[1] = start_psn_waiter(os, port, &outcomes[1], &why);
  }
  if (threads[1] == nullptr) {
    if (threads[0] != nullptr) {
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey3, 0));
      threads[0]->join();
    }
    GTEST_SKIP() << "rule A9: this backend starts no threads (" << why
                 << "); single-thread sharing is A9_PsnAndGqcsShareOnePortQueue; on the fake this "
                    "scenario runs under SimScheduler (FakeThreadedConformance)";
  }
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  for (std::unique_ptr<Thread>& thread : threads) {
    thread->join();
  }
  EXPECT_EQ(outcomes[0].rc, kErrorSuccess) << "rule A9: each concurrent caller is served";
  EXPECT_EQ(outcomes[1].rc, kErrorSuccess) << "rule A9: each concurrent caller is served";
  EXPECT_EQ(outcomes[0].received, 1u);
  EXPECT_EQ(outcomes[1].received, 1u);
  EXPECT_NE(outcomes[0].entry.completion_key, outcomes[1].entry.completion_key)
      << "rule A9: no packet is handed to two callers";
}

// Rule F1: of two waiting threads, the one that started waiting last gets the first packet.
inline void scenario_f1_most_recent_waiter_gets_oldest_packet(Os& os) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome early;  // waits first
  WaitOutcome late;   // waits second: LIFO hands it the first packet
  std::string why;
  std::unique_ptr<Thread> early_thread = start_psn_waiter(os, port, &early, &why);
  if (early_thread == nullptr) {
    GTEST_SKIP() << "rule F1: LIFO release of waiting threads needs a backend that starts "
                    "threads ("
                 << why
                 << "); FIFO order is F1_PacketsComeOutFifo; on the fake this scenario runs "
                    "under SimScheduler (FakeThreadedConformance)";
  }
  os.sleep_ms(kWaiterSettleMs);
  std::unique_ptr<Thread> late_thread = start_psn_waiter(os, port, &late, &why);
  EXPECT_NE(late_thread, nullptr) << why;
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  early_thread->join();
  if (late_thread != nullptr) {
    late_thread->join();
  }
  EXPECT_EQ(late.rc, kErrorSuccess);
  EXPECT_EQ(early.rc, kErrorSuccess);
  EXPECT_EQ(late.entry.completion_key, kSentinelKey1)
      << "rule F1: the most recent waiter gets the oldest packet (waiters are released LIFO)";
  EXPECT_EQ(early.entry.completion_key, kSentinelKey2);
}

// Rule F3: a GetQueuedCompletionStatusEx waiter on a port that is closed returns FALSE with
// ERROR_ABANDONED_WAIT_0.
inline void scenario_f3_gqcs_wait_abandoned(Os& os) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome outcome;
  Result<std::unique_ptr<Thread>> started = os.thread_start("gqcs-waiter", [&os, port, &outcome] {
    const bool dequeued = os.get_queued_completion_status_ex(
        port, &outcome.entry, 1, &outcome.received, kWaiterTimeoutMs, false);
    outcome.rc = dequeued ? 0 : os.last_error();
  });
  if (!started.ok()) {
    GTEST_SKIP() << "rule F3: a wait ended by closing the port needs a backend that starts "
                    "threads ("
                 << started.status().to_string()
                 << "); on the fake this scenario runs under SimScheduler";
  }
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(sc.close_port(port));
  started.value()->join();
  EXPECT_EQ(outcome.rc, kErrorAbandonedWait0)
      << "rule F3: FALSE with ERROR_ABANDONED_WAIT_0 when the port is closed during the wait, got "
      << error_text(outcome.rc);
}

// Rule F6: closing the port releases a ProcessSocketNotifications waiter with
// ERROR_ABANDONED_WAIT_0.
inline void scenario_f6_closing_port_releases_waiters(Os& os) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome outcome;
  std::string why;
  std::unique_ptr<Thread> thread = start_psn_waiter(os, port, &outcome, &why);
  if (thread == nullptr) {
    GTEST_SKIP() << "rule F6: releasing a waiter by closing the port needs a backend that starts "
                    "threads ("
                 << why << "); on the fake this scenario runs under SimScheduler";
  }
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(sc.close_port(port));
  thread->join();
  EXPECT_EQ(outcome.rc, kErrorAbandonedWait0)
      << "rule F6 (guess): a ProcessSocketNotifications waiter gets ERROR_ABANDONED_WAIT_0, got "
      << error_text(outcome.rc);
}

}  // namespace readyport::conformance
