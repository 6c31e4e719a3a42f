// conformance/handoff_scenarios.hpp: rule F1's hand-off, seen from several threads: the packet a
// released waiter gets is decided when it is released, not when it runs.
//
// Windows: "Threads that block their execution on an I/O completion port are released in
// last-in-first-out (LIFO) order, and the next completion packet is pulled from the I/O completion
// port's FIFO queue for that thread. This means that, when a completion packet is released to a
// thread, the system releases the last (most recent) thread associated with that port, passing it
// the completion information for the oldest I/O completion." (I/O Completion Ports). So packets
// posted back to back go one to each waiter, most recent waiter first, and a thread that polls
// after a post cannot take the packet already passed to a released waiter. Socket packets share
// the queue (spec A6), so the same holds for them.
//
// What each backend is held to:
// - The fake (under SimScheduler, every seed and strategy): the exact assignment. Its scheduler
//   makes "waiter N is blocked" certain (virtual time moves only when every thread is parked) and
//   the hand-off makes the outcome independent of which released thread runs first.
// - Windows: only what holds whatever the timing: every packet is delivered exactly once, each
//   waiter gets at least one, entries of one batch come out in queue order (F1 FIFO: a released
//   thread's packet is older than anything still queued). The LIFO assignment is guaranteed by
//   the OS only for threads already blocked in the port when the packet is queued (and within the
//   port's concurrency value, which only delays a release), and real time cannot prove that a
//   started thread reached its wait; F1_MostRecentWaiterGetsOldestPacket (thread_scenarios.hpp)
//   checks the LIFO order there with settle pauses between posts.
//
// Each scenario is a function of `Os&` (and whether the backend is the fake) so that it runs as a
// PsnConformance TEST_P on every backend (conformance_f_handoff.cpp; it skips where the backend
// starts no threads) and on FakeOs under SimScheduler (conformance_fake_threads_test.cpp).
// Every started thread is joined before the function returns, whatever failed.
// Threading: call from one thread (the test's, or SimScheduler's logical thread 1).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conformance/scenario_util.hpp"
#include "conformance/thread_scenarios.hpp"
#include "readyport/os.hpp"

namespace readyport::conformance {

// Waiters (and packets) a hand-off scenario uses at most.
inline constexpr std::size_t kHandoffWaitersMax = 3;
// Entries one batch waiter asks for.
inline constexpr std::uint32_t kHandoffBatchCount = 2;

// What one waiting thread got, with a batch.
struct BatchOutcome {
  std::uint32_t rc = 0xFFFF'FFFF;  // PSN's return, or for GQCSEx: 0 on TRUE, last_error on FALSE
  std::vector<OverlappedEntry> entries;  // the received entries
};

// Which call a batch waiter waits in.
enum class WaitCall : std::uint8_t { kPsn, kGqcsEx };

// Starts a thread that waits once (kWaiterTimeoutMs) for up to `count` entries on `port` with
// `call`. Returns null (and `why_out`) when the backend starts no threads.
inline std::unique_ptr<Thread> start_batch_waiter(Os& os, Port port, WaitCall call,
                                                  std::uint32_t count, BatchOutcome* outcome,
                                                  std::string* why_out) {
  Result<std::unique_ptr<Thread>> started =
      os.thread_start("batch-waiter", [&os, port, call, count, outcome] {
        std::vector<OverlappedEntry> entries(count);
        std::uint32_t received = 0;
        if (call == WaitCall::kPsn) {
          outcome->rc = os.process_socket_notifications(port, 0, nullptr, kWaiterTimeoutMs, count,
                                                        entries.data(), &received);
        } else {
          const bool dequeued = os.get_queued_completion_status_ex(
              port, entries.data(), count, &received, kWaiterTimeoutMs, false);
          outcome->rc = dequeued ? kErrorSuccess : os.last_error();
        }
        entries.resize(std::min(received, count));
        outcome->entries = std::move(entries);
      });
  if (!started.ok()) {
    *why_out = started.status().to_string();
    return nullptr;
  }
  return std::move(started).value();
}

// The message for a backend that starts no threads.
inline std::string handoff_skip_text(const std::string& why) {
  return "rule F1: the hand-off to released waiters needs a backend that starts threads (" + why +
         "); on the fake these scenarios run under SimScheduler (FakeThreadedConformance)";
}

// Counts how often each of `keys` was received over `outcomes` and `rest`, and fails for a key
// received twice or never, or for a key that is none of them.
inline void expect_each_exactly_once(const std::vector<std::uintptr_t>& keys,
                                     const std::vector<std::vector<OverlappedEntry>>& received) {
  std::vector<int> seen(keys.size(), 0);
  for (const std::vector<OverlappedEntry>& entries : received) {
    for (const OverlappedEntry& entry : entries) {
      auto found = std::find(keys.begin(), keys.end(), entry.completion_key);
      if (found == keys.end()) {
        ADD_FAILURE() << "rule F2: a packet nobody posted: " << entries_text({entry});
        continue;
      }
      ++seen[static_cast<std::size_t>(found - keys.begin())];
    }
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(seen[i], 1) << "rule A9/F1: posted packet " << i + 1
                          << " must come out exactly once (never lost, never handed twice)";
  }
}

// Keys of the i-th posted packet of a hand-off scenario (i from 0).
inline std::uintptr_t handoff_key(std::size_t i) { return kSentinelKey1 + 0x100 * (i + 1); }

// Rule F1 (a): three threads block one after the other; three packets are posted back to back,
// with no pause: the last thread to block gets the first packet, the first to block the last.
inline void scenario_f1_back_to_back_packets_go_lifo(Os& os, bool is_fake) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome outcomes[kHandoffWaitersMax];  // [0] blocks first, [2] last
  std::unique_ptr<Thread> threads[kHandoffWaitersMax];
  std::string why;
  std::size_t started = 0;
  for (; started < kHandoffWaitersMax; ++started) {
    threads[started] = start_psn_waiter(os, port, &outcomes[started], &why);
    if (threads[started] == nullptr) {
      break;
    }
    os.sleep_ms(kWaiterSettleMs);  // it blocks before the next one starts
  }
  if (started < kHandoffWaitersMax) {
    // Release whatever started, then skip.
    for (std::size_t i = 0; i < started; ++i) {
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, handoff_key(i), 0));
    }
    for (std::size_t i = 0; i < started; ++i) {
      threads[i]->join();
    }
    if (started == 0) {
      GTEST_SKIP() << handoff_skip_text(why);
    }
    FAIL() << "a backend started " << started << " threads, then failed: " << why;
  }
  for (std::size_t i = 0; i < kHandoffWaitersMax; ++i) {
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, handoff_key(i), 0));
  }
  for (std::unique_ptr<Thread>& thread : threads) {
    thread->join();
  }
  std::vector<std::vector<OverlappedEntry>> received;
  for (const WaitOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.rc, kErrorSuccess)
        << "rule F1: every waiter is released with a packet, got " << error_text(outcome.rc);
    EXPECT_EQ(outcome.received, 1u);
    received.push_back(outcome.received == 1 ? std::vector<OverlappedEntry>{outcome.entry}
                                             : std::vector<OverlappedEntry>{});
  }
  expect_each_exactly_once({handoff_key(0), handoff_key(1), handoff_key(2)}, received);
  if (!is_fake) {
    return;  // Windows: see the header (LIFO only for threads proven blocked)
  }
  for (std::size_t i = 0; i < kHandoffWaitersMax; ++i) {
    EXPECT_EQ(outcomes[kHandoffWaitersMax - 1 - i].entry.completion_key, handoff_key(i))
        << "rule F1: the waiter that blocked " << kHandoffWaitersMax - i << " of "
        << kHandoffWaitersMax << " must get packet " << i + 1
        << ": the most recent waiter is released first with the oldest packet, whichever "
           "released thread runs first";
  }
}

// Rule F1 (b): one thread blocks; a packet is posted and at once another thread polls (timeout
// 0) before the released waiter has run: the poller gets WAIT_TIMEOUT, the waiter the packet.
inline void scenario_f1_poll_after_post_does_not_steal(Os& os, bool is_fake) {
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  WaitOutcome waiter;
  std::string why;
  std::unique_ptr<Thread> thread = start_psn_waiter(os, port, &waiter, &why);
  if (thread == nullptr) {
    GTEST_SKIP() << handoff_skip_text(why);
  }
  os.sleep_ms(kWaiterSettleMs);
  EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  // No pause: on the fake the released waiter may or may not have run by now (the scheduler
  // decides, per seed); the hand-off must make no difference.
  OverlappedEntry polled{};
  std::uint32_t polled_count = 0xFFFF'FFFF;
  const std::uint32_t poll_rc =
      os.process_socket_notifications(port, 0, nullptr, 0, 1, &polled, &polled_count);
  if (poll_rc == kErrorSuccess && polled_count >= 1 && !is_fake) {
    // Windows: the poller won (the waiter had not blocked yet); release the waiter.
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  }
  thread->join();
  EXPECT_EQ(waiter.rc, kErrorSuccess) << error_text(waiter.rc);
  EXPECT_EQ(waiter.received, 1u);
  if (is_fake) {
    EXPECT_EQ(poll_rc, kWaitTimeout)
        << "rule F1: the packet was handed to the released waiter; a later poll finds nothing, "
           "got "
        << error_text(poll_rc);
    EXPECT_EQ(polled_count, 0u) << "rule A2: WAIT_TIMEOUT dequeues nothing";
    EXPECT_EQ(waiter.entry.completion_key, kSentinelKey1)
        << "rule F1: the released waiter keeps the packet passed to it";
    return;
  }
  // Windows: exactly one of the two got the packet.
  const bool poller_got = poll_rc == kErrorSuccess && polled_count == 1;
  if (!poller_got) {
    EXPECT_EQ(poll_rc, kWaitTimeout) << error_text(poll_rc);
    EXPECT_EQ(waiter.entry.completion_key, kSentinelKey1) << "rule F1";
  } else {
    EXPECT_EQ(polled.completion_key, kSentinelKey1);
    EXPECT_EQ(waiter.entry.completion_key, kSentinelKey2) << "rule A9: no packet handed twice";
  }
}

// Rule F1 (c): more packets than waiters, and batches: a PSN waiter and a GQCSEx waiter (batch
// kHandoffBatchCount each) block; five packets are posted back to back. The most recent waiter is
// handed packet 1, the other packet 2; the rest stay queued, in order, for whoever takes them
// next (a released thread fills the rest of its batch when it runs, then a final drain).
inline void scenario_f1_more_packets_than_waiters(Os& os, bool is_fake) {
  constexpr std::size_t kPackets = 5;
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  BatchOutcome early;  // GetQueuedCompletionStatusEx, blocks first
  BatchOutcome late;   // ProcessSocketNotifications, blocks second
  std::string why;
  std::unique_ptr<Thread> early_thread =
      start_batch_waiter(os, port, WaitCall::kGqcsEx, kHandoffBatchCount, &early, &why);
  if (early_thread == nullptr) {
    GTEST_SKIP() << handoff_skip_text(why);
  }
  os.sleep_ms(kWaiterSettleMs);
  std::unique_ptr<Thread> late_thread =
      start_batch_waiter(os, port, WaitCall::kPsn, kHandoffBatchCount, &late, &why);
  EXPECT_NE(late_thread, nullptr) << why;
  os.sleep_ms(kWaiterSettleMs);
  std::vector<std::uintptr_t> keys;
  for (std::size_t i = 0; i < kPackets; ++i) {
    keys.push_back(handoff_key(i));
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, keys.back(), 0));
  }
  early_thread->join();
  if (late_thread != nullptr) {
    late_thread->join();
  }
  const std::vector<OverlappedEntry> rest = dequeue_all(os, port);
  EXPECT_EQ(early.rc, kErrorSuccess) << error_text(early.rc);
  EXPECT_EQ(late.rc, kErrorSuccess) << error_text(late.rc);
  EXPECT_GE(early.entries.size(), 1u);
  EXPECT_GE(late.entries.size(), 1u);
  expect_each_exactly_once(keys, {early.entries, late.entries, rest});
  // Rule F1 FIFO, on every backend: a batch, and the drain, come out in queue order.
  const std::vector<const std::vector<OverlappedEntry>*> batches{&early.entries, &late.entries,
                                                                 &rest};
  for (const std::vector<OverlappedEntry>* entries : batches) {
    for (std::size_t i = 1; i < entries->size(); ++i) {
      EXPECT_LT((*entries)[i - 1].completion_key, (*entries)[i].completion_key)
          << "rule F1: entries of one dequeue in queue order: " << entries_text(*entries);
    }
  }
  if (!is_fake) {
    return;  // Windows: see the header
  }
  ASSERT_FALSE(late.entries.empty());
  ASSERT_FALSE(early.entries.empty());
  EXPECT_EQ(late.entries[0].completion_key, keys[0])
      << "rule F1: the most recent waiter is handed the oldest packet: "
      << entries_text(late.entries);
  EXPECT_EQ(early.entries[0].completion_key, keys[1])
      << "rule F1: the next waiter the next packet: " << entries_text(early.entries);
}

// Rule F1 (d), with a socket packet: a registration's packet queued while a thread waits is
// handed to it like a posted one, even when the thread that queued it (by an ENABLE, spec A7)
// dequeues in the same call: that call finds nothing.
inline void scenario_f1_socket_packet_handed_to_waiter(Os& os, bool is_fake) {
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  WaitOutcome waiter;
  std::string why;
  std::unique_ptr<Thread> thread = start_psn_waiter(os, port, &waiter, &why);
  if (thread == nullptr) {
    GTEST_SKIP() << handoff_skip_text(why);
  }
  os.sleep_ms(kWaiterSettleMs);
  // OUT holds on a fresh connection: the ENABLE queues a packet at once (spec C4, A7).
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterOut, kOneshotLevel)};
  const Dequeued own = process(os, port, regs, 0, 1);
  EXPECT_EQ(regs[0].registration_result, 0u) << error_text(regs[0].registration_result);
  if (own.rc == kErrorSuccess && !is_fake) {
    // Windows: the caller's own dequeue won (the waiter had not blocked yet); release the waiter.
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  }
  thread->join();
  EXPECT_EQ(waiter.rc, kErrorSuccess) << error_text(waiter.rc);
  EXPECT_EQ(waiter.received, 1u);
  std::vector<std::vector<OverlappedEntry>> received{own.entries};
  if (waiter.received == 1 && waiter.entry.completion_key == kKeyA) {
    received.push_back({waiter.entry});
    EXPECT_TRUE(has(waiter.entry.bytes_transferred, kSockNotifyEventOut))
        << mask_name(waiter.entry.bytes_transferred);
  }
  if (is_fake) {
    EXPECT_EQ(own.rc, kWaitTimeout)
        << "rule F1: the packet this call's ENABLE queued went to the thread already waiting";
    EXPECT_EQ(waiter.entry.completion_key, kKeyA) << "rule F1: handed to the waiter";
  }
  // Exactly once over both, on every backend (the one-shot disarmed when it was dequeued, C2).
  std::size_t count = 0;
  for (const std::vector<OverlappedEntry>& entries : received) {
    count += with_key(entries, kKeyA).size();
  }
  EXPECT_EQ(count, 1u) << "rule D4/A9: one packet for the registration, delivered once";
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty()) << "rule C2: the one-shot fired once";
}

}  // namespace readyport::conformance
