// Conformance, rules F1-F6 of docs/rules.md: the completion port under the notifications (queue
// order, batches, posted packets, GetQueuedCompletionStatusEx, closing the port).
//
// The multi-thread halves of F1 (waiters released LIFO), F3 and F6 (a wait abandoned by closing
// the port) are in thread_scenarios.hpp: they need a backend that starts threads, so on FakeOs
// with its inline runtime they skip here and run under SimScheduler instead
// (conformance_fake_threads_test.cpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/concurrency_scenarios.hpp"
#include "conformance/scenario_util.hpp"
#include "conformance/thread_scenarios.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, F1_PacketsComeOutFifo) {
  SCOPED_TRACE("rule F1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  for (std::uintptr_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1 + 0x100 * i, 0));
  }
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 5u) << entries_text(got);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].completion_key, kSentinelKey1 + 0x100 * (i + 1))
        << "rule F1: packets are dequeued in the order they were queued";
  }
}

TEST_P(PsnConformance, F1_SocketPacketsComeOutInQueueOrder) {
  SCOPED_TRACE("rule F1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair first = sc.tcp_pair();
  const TcpPair second = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, first.client, 10);
  send_bytes(os, second.client, 10);
  settle(os);
  // Both readable; the array order decides which packet is queued first (A10, A7).
  std::vector<SockNotifyRegistration> regs{
      enable_reg(second.server, kKeyB, kFilterIn, kOneshotLevel),
      enable_reg(first.server, kKeyA, kFilterIn, kOneshotLevel),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 2u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyB) << "rule F1: FIFO: " << entries_text(got);
  EXPECT_EQ(got[1].completion_key, kKeyA) << "rule F1: FIFO: " << entries_text(got);
}

TEST_P(PsnConformance, F1_OneCallDequeuesAtMostCompletionCount) {
  SCOPED_TRACE("rule F1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  for (std::uintptr_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(os.post_queued_completion_status(port, 0, i, 0));
  }
  const std::vector<OverlappedEntry> a = dequeue(os, port, kExpectMs, 2);
  const std::vector<OverlappedEntry> b = dequeue(os, port, kExpectMs, 2);
  const std::vector<OverlappedEntry> c = dequeue(os, port, kExpectMs, 2);
  ASSERT_EQ(a.size(), 2u) << "rule F1: a batch of up to completionCount";
  ASSERT_EQ(b.size(), 2u) << "rule F1: a batch of up to completionCount";
  ASSERT_EQ(c.size(), 1u) << "rule F1: the rest";
  EXPECT_EQ(a[0].completion_key, 1u);
  EXPECT_EQ(a[1].completion_key, 2u);
  EXPECT_EQ(b[0].completion_key, 3u);
  EXPECT_EQ(b[1].completion_key, 4u);
  EXPECT_EQ(c[0].completion_key, 5u);
}

TEST_P(PsnConformance, F1_MostRecentWaiterGetsOldestPacket) {
  SCOPED_TRACE("rule F1");
  scenario_f1_most_recent_waiter_gets_oldest_packet(os());
}

TEST_P(PsnConformance, F7_ValueOneReleasesNoSecondThreadUntilTheFirstBlocks) {
  SCOPED_TRACE("rule F7");
  scenario_f7_concurrency_one(os(), true);
}

TEST_P(PsnConformance, F7_ValueOneFirstThreadCallingAgainTakesTheNextPacketItself) {
  SCOPED_TRACE("rule F7");
  scenario_f7_concurrency_one(os(), false);
}

TEST_P(PsnConformance, F2_PostedPacketCarriesExactlyItsValues) {
  SCOPED_TRACE("rule F2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 0x1234, kSentinelKey1, 0xABCD0));
  ASSERT_TRUE(os.post_queued_completion_status(port, 0x5678, kSentinelKey2, 0));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes_transferred, 0x1234u) << "rule F2: dwNumberOfBytesTransferred as posted";
  EXPECT_EQ(got[0].completion_key, kSentinelKey1) << "rule F2: lpCompletionKey as posted";
  EXPECT_EQ(got[0].overlapped, 0xABCD0u) << "rule F2: lpOverlapped as posted";
  OverlappedEntry entry{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os.get_queued_completion_status_ex(port, &entry, 1, &removed, kExpectMs, false));
  EXPECT_EQ(entry.bytes_transferred, 0x5678u) << "rule F2: through GQCSEx too";
  EXPECT_EQ(entry.completion_key, kSentinelKey2);
  EXPECT_EQ(entry.overlapped, 0u);
}

TEST_P(PsnConformance, F2_PostedValuesAreNeitherUsedNorChecked) {
  SCOPED_TRACE("rule F2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // A posted packet that looks exactly like the registration's REMOVE packet.
  ASSERT_TRUE(os.post_queued_completion_status(port, kSockNotifyEventRemove, kKeyA, 0));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].bytes_transferred, kSockNotifyEventRemove);
  // The system did not act on it: the registration is still live (only keys tell packets apart).
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> in = dequeue(os, port, kExpectMs);
  ASSERT_EQ(in.size(), 1u) << "rule F2: a posted look-alike does not touch the registration: "
                           << entries_text(in);
  EXPECT_TRUE(has(in[0].bytes_transferred, kSockNotifyEventIn));
  EXPECT_EQ(remove_sock(os, port, pair.server), 0u) << "rule F2: still registered";
}

TEST_P(PsnConformance, F3_GqcsReturnsTrueWithEntries) {
  SCOPED_TRACE("rule F3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t removed = 0;
  EXPECT_TRUE(
      os.get_queued_completion_status_ex(port, entries.data(), 4, &removed, kExpectMs, false))
      << "rule F3: TRUE when packets are queued";
  EXPECT_EQ(removed, 2u) << "rule F3: with the number of entries";
}

TEST_P(PsnConformance, F3_GqcsTimeoutIsFalseWithWaitTimeout) {
  SCOPED_TRACE("rule F3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t removed = 0;
  EXPECT_FALSE(
      os.get_queued_completion_status_ex(port, entries.data(), 4, &removed, kQuietMs, false))
      << "rule F3: FALSE on timeout";
  EXPECT_EQ(os.last_error(), kWaitTimeout)
      << "rule F3: with WAIT_TIMEOUT, got " << error_text(os.last_error());
}

TEST_P(PsnConformance, F3_GqcsWaitAbandonedWhenPortCloses) {
  SCOPED_TRACE("rule F3");
  scenario_f3_gqcs_wait_abandoned(os());
}

TEST_P(PsnConformance, F4_RepostedPacketComesOutAfterLaterRemove) {
  SCOPED_TRACE("rule F4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // A deferred-work packet about kKeyA is dequeued, then reposted after the REMOVE was queued.
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, kKeyA));
  const std::vector<OverlappedEntry> work = dequeue(os, port, kExpectMs, 1);
  ASSERT_EQ(work.size(), 1u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, work[0].overlapped));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 2u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule F4 (guess): REMOVE, queued first, comes first";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
  EXPECT_EQ(got[1].completion_key, kSentinelKey1)
      << "rule F4 (guess): the reposted packet went to the back, after the REMOVE: a handler must "
         "not trust its key once REMOVE was seen";
  EXPECT_EQ(got[1].overlapped, kKeyA);
}

TEST_P(PsnConformance, F5_PortCreatedWithoutAssociation) {
  SCOPED_TRACE("rule F5");
  Os& os = this->os();
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair a = sc.tcp_pair();
  const TcpPair b = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  EXPECT_FALSE(first == second) << "rule F5: each CreateIoCompletionPort is a new port";
  // No CreateIoCompletionPort(socket, port) step: ProcessSocketNotifications associates.
  ASSERT_EQ(enable(os, first, a.server, kKeyA, kFilterOut, kOneshotLevel), 0u);
  ASSERT_EQ(enable(os, second, b.server, kKeyB, kFilterOut, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> on_first = dequeue(os, first, kExpectMs);
  const std::vector<OverlappedEntry> on_second = dequeue(os, second, kExpectMs);
  ASSERT_EQ(on_first.size(), 1u) << entries_text(on_first);
  ASSERT_EQ(on_second.size(), 1u) << entries_text(on_second);
  EXPECT_EQ(on_first[0].completion_key, kKeyA) << "rule F5: packets go to their own port";
  EXPECT_EQ(on_second[0].completion_key, kKeyB) << "rule F5: packets go to their own port";
}

TEST_P(PsnConformance, F6_ClosingPortDropsRegistrationsWithoutRemove) {
  SCOPED_TRACE("rule F6");
  Os& os = this->os();
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, first, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_TRUE(sc.close_port(first));
  // The registration went with the port: the socket may join another one, no REMOVE anywhere.
  EXPECT_EQ(enable(os, second, pair.server, kKeyB, kFilterIn, kOneshotLevel), 0u)
      << "rule F6 (guess): closing the port dropped its registration";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, second, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyB);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventRemove)
      << "rule F6 (guess): no REMOVE packet for the dropped registration";
}

TEST_P(PsnConformance, F6_ClosingPortReleasesWaiters) {
  SCOPED_TRACE("rule F6");
  scenario_f6_closing_port_releases_waiters(os());
}

}  // namespace
}  // namespace readyport::conformance
