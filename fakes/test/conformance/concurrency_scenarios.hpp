// conformance/concurrency_scenarios.hpp: rule F7, the port's concurrency value, seen from threads.
//
// Windows: "When a completion packet is queued to an I/O completion port, the system first checks
// how many threads associated with that port are running. If the number of threads running is
// less than the concurrency value, one of the waiting threads (the most recent one) is allowed to
// process the completion packet. When a running thread completes its processing, it typically
// calls GetQueuedCompletionStatus again, at which point it either returns with the next completion
// packet or waits if the queue is empty." And: "The system also allows a thread waiting in
// GetQueuedCompletionStatus to process a completion packet if another running thread associated
// with the same I/O completion port enters a wait state for other reasons" (I/O Completion Ports).
//
// Both scenarios create a port with the value 1, start a thread B that waits, then a thread A
// that waits (the most recent waiter), and post two packets: A is released with the first and B
// is not released with the second while A runs without blocking. Then A either blocks (a sleep:
// B is released with the second packet) or calls the port again (A returns with the second packet
// itself, and B is released only when A's thread has ended and a third packet comes). A runs
// only once both packets are posted.
//
// Each scenario is a function of `Os&` so that it runs as a PsnConformance TEST_P on every backend
// (it skips where the backend starts no threads) and on FakeOs with FakeOptions::
// concurrency_limited under SimScheduler (conformance_fake_threads_test.cpp). "Runs without
// blocking" is a loop of Os::now_ns() calls: at least kRunMs of the clock on Windows; under
// SimScheduler, whose clock stands still while a thread runs, kRunPoints scheduling points, at
// each of which a released B could run. Every started thread is joined before the function
// returns, whatever failed. Threading: call from one thread.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "conformance/scenario_util.hpp"
#include "conformance/thread_scenarios.hpp"
#include "readyport/os.hpp"

namespace readyport::conformance {

inline constexpr std::uint32_t kRunMs = 50;
inline constexpr std::uint32_t kRunPoints = 200;

// Runs on the calling thread without blocking: kRunPoints calls of os.now_ns(), then, if the
// clock moved meanwhile (a real one), on until kRunMs have passed.
inline void run_without_blocking(Os& os) {
  const std::uint64_t start = os.now_ns();
  std::uint64_t now = start;
  for (std::uint32_t i = 0; i < kRunPoints; ++i) {
    now = os.now_ns();
  }
  if (now == start) {
    return;  // a clock that stands still while a thread runs: simulation
  }
  while (now - start < std::uint64_t{kRunMs} * 1'000'000) {
    now = os.now_ns();
  }
}

// Runs on the calling thread without blocking until `flag` is set; false when it was not within
// kWaiterTimeoutMs of a real clock or 100,000 points of one that stands still.
inline bool run_until(Os& os, const std::atomic<bool>& flag) {
  const std::uint64_t start = os.now_ns();
  for (std::uint32_t points = 0; !flag.load(); ++points) {
    const std::uint64_t now = os.now_ns();
    if (now == start ? points >= 100'000 : now - start >= kWaiterTimeoutMs * 1'000'000ull) {
      return false;
    }
  }
  return true;
}

// What the threads of one F7 scenario saw.
struct ConcurrencyOutcome {
  WaitOutcome first;        // A's first wait
  WaitOutcome first_again;  // A's second call (the "calls again" variant)
  WaitOutcome second;       // B's wait
  std::atomic<bool> second_returned{false};
  std::atomic<bool> both_posted{false};  // set by the test's thread after its two posts
  bool saw_both_posted = false;
  bool second_returned_while_first_ran = true;
  bool second_returned_after_first_blocked = false;
};

// Rule F7 with the value 1. `first_blocks`: A sleeps after running; else it calls the port again.
inline void scenario_f7_concurrency_one(Os& os, bool first_blocks) {
  Scenario sc(os);
  const Port port = sc.port(1);
  ASSERT_TRUE(sc.ok());
  ConcurrencyOutcome out;
  Result<std::unique_ptr<Thread>> second = os.thread_start("f7-second", [&os, port, &out] {
    out.second.rc = os.process_socket_notifications(port, 0, nullptr, kWaiterTimeoutMs, 1,
                                                    &out.second.entry, &out.second.received);
    out.second_returned.store(true);
  });
  if (!second.ok()) {
    GTEST_SKIP() << "rule F7: the concurrency value needs a backend that starts threads ("
                 << second.status().to_string()
                 << "); on the fake it runs under SimScheduler (FakeThreadedConformance)";
  }
  os.sleep_ms(kWaiterSettleMs);
  Result<std::unique_ptr<Thread>> first =
      os.thread_start("f7-first", [&os, port, &out, first_blocks] {
        out.first.rc = os.process_socket_notifications(port, 0, nullptr, kWaiterTimeoutMs, 1,
                                                       &out.first.entry, &out.first.received);
        out.saw_both_posted = run_until(os, out.both_posted);
        run_without_blocking(os);
        out.second_returned_while_first_ran = out.second_returned.load();
        if (first_blocks) {
          os.sleep_ms(kWaiterSettleMs);
          out.second_returned_after_first_blocked = out.second_returned.load();
          return;
        }
        out.first_again.rc = os.process_socket_notifications(
            port, 0, nullptr, 0, 1, &out.first_again.entry, &out.first_again.received);
        run_without_blocking(os);
        out.second_returned_after_first_blocked = out.second_returned.load();
      });
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  out.both_posted.store(true);
  first.value()->join();
  // A's thread has ended: it no longer runs for the port, so B may take the next packet.
  if (!first_blocks) {
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey3, 0));
  }
  second.value()->join();

  EXPECT_EQ(out.first.rc, kErrorSuccess);
  EXPECT_TRUE(out.saw_both_posted) << "the test's thread did not post in time";
  EXPECT_EQ(out.first.entry.completion_key, kSentinelKey1)
      << "rule F1: the most recent waiter is released with the first packet";
  EXPECT_FALSE(out.second_returned_while_first_ran)
      << "rule F7: with the value 1, no second thread is released while the first runs";
  EXPECT_EQ(out.second.rc, kErrorSuccess);
  if (first_blocks) {
    EXPECT_TRUE(out.second_returned_after_first_blocked)
        << "rule F7: a thread that blocks lets a waiting one run";
    EXPECT_EQ(out.second.entry.completion_key, kSentinelKey2);
  } else {
    EXPECT_EQ(out.first_again.rc, kErrorSuccess);
    EXPECT_EQ(out.first_again.entry.completion_key, kSentinelKey2)
        << "rule F7: a running thread that calls the port again returns with the next packet";
    EXPECT_FALSE(out.second_returned_after_first_blocked)
        << "rule F7: it runs again at once, so the waiting thread is still not released";
    EXPECT_EQ(out.second.entry.completion_key, kSentinelKey3);
  }
}

}  // namespace readyport::conformance
