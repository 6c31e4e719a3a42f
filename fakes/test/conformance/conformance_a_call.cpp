// Conformance, rules A1-A10 of docs/rules.md: the ProcessSocketNotifications call itself (return
// values, what a failed call leaves behind, argument rules, timeouts, ordering of the elements).
#include <cstdint>
#include <memory>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"
#include "conformance/thread_scenarios.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, A1_SuccessReportsHowManyEntriesWereDequeued) {
  SCOPED_TRACE("rule A1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  for (std::uintptr_t key : {kSentinelKey1, kSentinelKey2, kSentinelKey3}) {
    ASSERT_TRUE(os.post_queued_completion_status(port, 0, key, 0));
  }
  std::vector<OverlappedEntry> entries(8);
  std::uint32_t received = 0xFFFF'FFFF;
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, nullptr, 0, 8, entries.data(), &received);
  EXPECT_EQ(rc, kErrorSuccess) << "rule A1: queued packets make the call succeed, got "
                               << error_text(rc);
  EXPECT_EQ(received, 3u) << "rule A1: *receivedEntryCount says how many entries were dequeued";
}

TEST_P(PsnConformance, A1_SocketPacketCarriesKeyAndEventMask) {
  SCOPED_TRACE("rule A1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule A1: one readable socket, one entry: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA)
      << "rule A1 (layout): lpCompletionKey carries the registration's key";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn))
      << "rule A1 (layout): dwNumberOfBytesTransferred carries the event mask, got "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, A2_TimeoutWhenNothingArrives) {
  SCOPED_TRACE("rule A2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t received = 77;
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, nullptr, kQuietMs, 4, entries.data(), &received);
  EXPECT_EQ(rc, kWaitTimeout) << "rule A2: an empty port times out with WAIT_TIMEOUT (258), got "
                              << error_text(rc);
  expect_default_reading(is_fake(), received == 0,
                         "rule A2 (fake default): *receivedEntryCount is 0 on WAIT_TIMEOUT");
}

TEST_P(PsnConformance, A2_TimeoutStillAppliesRegistrations) {
  SCOPED_TRACE("rule A2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // The server end has nothing to read: the ENABLE is applied, then the wait times out.
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  const Dequeued first = process(os, port, regs, kQuietMs);
  ASSERT_EQ(first.rc, kWaitTimeout) << "rule A2: nothing to report yet";
  EXPECT_EQ(regs[0].registration_result, 0u)
      << "rule A2: the registrations of a timed-out call were processed; result "
      << error_text(regs[0].registration_result);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(with_key(got, kKeyA).size(), 1u)
      << "rule A2: the registration made by the timed-out call is live: " << entries_text(got);
}

TEST_P(PsnConformance, A2_TimeoutWritesEveryRegistrationResult) {
  SCOPED_TRACE("rule A2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel),
      remove_reg(pair.client),  // never registered: fails (B6)
  };
  const Dequeued result = process(os, port, regs, kQuietMs);
  ASSERT_EQ(result.rc, kWaitTimeout);
  EXPECT_EQ(regs[0].registration_result, 0u) << "rule A2: read every registrationResult";
  EXPECT_NE(regs[1].registration_result, 0u) << "rule A2/B6: the failed element says so";
  EXPECT_NE(regs[1].registration_result, 0xFFFF'FFFFu)
      << "rule A2: the failed element's registrationResult was written";
}

TEST_P(PsnConformance, A3_FailedCallAppliesNoRegistration) {
  SCOPED_TRACE("rule A3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // The same REMOVE sent through an invalid port handle: the whole call fails.
  std::vector<SockNotifyRegistration> regs{remove_reg(pair.server)};
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t received = 0;
  const std::uint32_t rc = os.process_socket_notifications(kInvalidPort, 1, regs.data(), 0, 4,
                                                           entries.data(), &received);
  EXPECT_NE(rc, kErrorSuccess) << "rule A3: a call on an invalid port fails";
  EXPECT_NE(rc, kWaitTimeout) << "rule A3: a failed call is not a timeout";
  // The registration made before the failed call is still live and still enabled.
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule A3: the live registration still reports: "
                            << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventRemove)
      << "rule A3: the failed call's REMOVE was not applied: "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, A3_FailedCallDequeuesNothing) {
  SCOPED_TRACE("rule A3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 1, kSentinelKey1, 0));
  // registrationCount 0 with a non-null registrationInfos violates A4 (guess: WSAEINVAL).
  SockNotifyRegistration unused = remove_reg(kInvalidSocket);
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t received = 0;
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, &unused, 0, 4, entries.data(), &received);
  ASSERT_NE(rc, kErrorSuccess) << "rule A3/A4 (guess): a malformed call fails";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule A3: the failed call dequeued nothing; the packet is still "
                               "queued: "
                            << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kSentinelKey1);
}

TEST_P(PsnConformance, A3_RetryAfterFailedCallApplies) {
  SCOPED_TRACE("rule A3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  const std::uint32_t failed =
      os.process_socket_notifications(kInvalidPort, 1, regs.data(), 0, 0, nullptr, nullptr);
  ASSERT_NE(failed, kErrorSuccess);
  // Retrying the very same array is legitimate and applies it.
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  EXPECT_EQ(regs[0].registration_result, 0u) << "rule A3: the retried ENABLE is applied";
  send_bytes(os, pair.client, 10);
  EXPECT_EQ(with_key(dequeue(os, port, kExpectMs), kKeyA).size(), 1u)
      << "rule A3: the retried registration reports";
}

TEST_P(PsnConformance, A4_RegistrationsOnlyCallReturnsSuccess) {
  SCOPED_TRACE("rule A4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  SockNotifyRegistration reg = enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel);
  const std::uint32_t rc = os.process_socket_notifications(port, 1, &reg, 0, 0, nullptr, nullptr);
  EXPECT_EQ(rc, kErrorSuccess) << "rule A4: completionCount 0 with NULL pointers and timeout 0 "
                                  "returns ERROR_SUCCESS, got "
                               << error_text(rc);
  EXPECT_EQ(reg.registration_result, 0u) << "rule A4: the registration is processed";
  // Nothing was dequeued: the posted packet is still first in line.
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].completion_key, kSentinelKey1)
      << "rule A4: a registrations-only call dequeues nothing";
}

TEST_P(PsnConformance, A4_RegistrationCountZeroNeedsNullInfos) {
  SCOPED_TRACE("rule A4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  SockNotifyRegistration unused = remove_reg(kInvalidSocket);
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, &unused, 0, 0, nullptr, nullptr);
  EXPECT_EQ(rc, kWsaEinval) << "rule A4 (guess): registrationCount 0 with registrationInfos "
                               "not NULL is WSAEINVAL, got "
                            << error_text(rc);
}

TEST_P(PsnConformance, A4_CompletionCountZeroNeedsNullEntries) {
  SCOPED_TRACE("rule A4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  SockNotifyRegistration reg = enable_reg(pair.server, kKeyA, kFilterIn, kPersistentLevel);
  OverlappedEntry entry{};
  const std::uint32_t rc = os.process_socket_notifications(port, 1, &reg, 0, 0, &entry, nullptr);
  EXPECT_EQ(rc, kWsaEinval) << "rule A4 (guess): completionCount 0 with completionPortEntries "
                               "not NULL is WSAEINVAL, got "
                            << error_text(rc);
  // Nothing changed: the ENABLE was not applied, so data reports nothing.
  send_bytes(os, pair.client, 10);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty())
      << "rule A4/A3 (guess): the rejected call applied no registration";
}

TEST_P(PsnConformance, A4_CompletionCountZeroNeedsNullReceived) {
  SCOPED_TRACE("rule A4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  SockNotifyRegistration reg = enable_reg(pair.server, kKeyA, kFilterIn, kPersistentLevel);
  std::uint32_t received = 0;
  const std::uint32_t rc = os.process_socket_notifications(port, 1, &reg, 0, 0, nullptr, &received);
  EXPECT_EQ(rc, kWsaEinval) << "rule A4 (guess): completionCount 0 with receivedEntryCount not "
                               "NULL is WSAEINVAL, got "
                            << error_text(rc);
  send_bytes(os, pair.client, 10);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty())
      << "rule A4/A3 (guess): the rejected call applied no registration";
}

TEST_P(PsnConformance, A4_CompletionCountZeroNeedsZeroTimeout) {
  SCOPED_TRACE("rule A4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  SockNotifyRegistration reg = enable_reg(pair.server, kKeyA, kFilterIn, kPersistentLevel);
  const std::uint32_t rc =
      os.process_socket_notifications(port, 1, &reg, kQuietMs, 0, nullptr, nullptr);
  EXPECT_EQ(rc, kWsaEinval) << "rule A4 (guess): completionCount 0 with a non-zero timeout is "
                               "WSAEINVAL, got "
                            << error_text(rc);
  send_bytes(os, pair.client, 10);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty())
      << "rule A4/A3 (guess): the rejected call applied no registration";
}

TEST_P(PsnConformance, A5_ZeroTimeoutReturnsAtOnce) {
  SCOPED_TRACE("rule A5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  const std::uint64_t before_ns = os.now_ns();
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t received = 0;
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, nullptr, 0, 4, entries.data(), &received);
  const std::uint64_t elapsed_ns = os.now_ns() - before_ns;
  EXPECT_EQ(rc, kWaitTimeout) << "rule A5/A2: timeout 0 on an empty port is WAIT_TIMEOUT";
  if (is_fake()) {
    EXPECT_EQ(elapsed_ns, 0u) << "rule A5: timeout 0 does not wait (virtual clock unchanged)";
  } else {
    EXPECT_LT(elapsed_ns, std::uint64_t{kExpectMs} * 1'000'000)
        << "rule A5: timeout 0 returns at once";
  }
}

TEST_P(PsnConformance, A5_TimedWaitEndsNearItsDeadline) {
  SCOPED_TRACE("rule A5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  const std::uint64_t before_ns = os.now_ns();
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  const std::uint64_t elapsed_ns = os.now_ns() - before_ns;
  EXPECT_TRUE(got.empty());
  EXPECT_GT(elapsed_ns, 0u) << "rule A5: a timed wait on an empty port waits";
  expect_default_reading(is_fake(), elapsed_ns >= std::uint64_t{kQuietMs} * 1'000'000,
                         "rule A5 (fake default N=0): a timed wait does not end before its "
                         "deadline");
}

TEST_P(PsnConformance, A5_InfiniteTimeoutReturnsQueuedPacket) {
  SCOPED_TRACE("rule A5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 5, kSentinelKey1, 0));
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t received = 0;
  const std::uint32_t rc =
      os.process_socket_notifications(port, 0, nullptr, kInfinite, 4, entries.data(), &received);
  EXPECT_EQ(rc, kErrorSuccess) << "rule A5: INFINITE returns when a packet is there";
  ASSERT_EQ(received, 1u);
  EXPECT_EQ(entries[0].completion_key, kSentinelKey1);
}

TEST_P(PsnConformance, A6_PostedAndSocketPacketsComeOutMixed) {
  SCOPED_TRACE("rule A6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 8);
  ASSERT_EQ(got.size(), 3u) << "rule A6: one call returns posted and socket packets together: "
                            << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kSentinelKey1) << "rule A6/F1: queue order";
  EXPECT_EQ(got[1].completion_key, kKeyA) << "rule A6/F1: queue order";
  EXPECT_EQ(got[2].completion_key, kSentinelKey2) << "rule A6/F1: queue order";
}

TEST_P(PsnConformance, A6_GqcsReturnsSocketPackets) {
  SCOPED_TRACE("rule A6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  std::vector<OverlappedEntry> entries(4);
  std::uint32_t removed = 0;
  ASSERT_TRUE(
      os.get_queued_completion_status_ex(port, entries.data(), 4, &removed, kExpectMs, false))
      << "rule A6: GetQueuedCompletionStatusEx dequeues socket packets too; error "
      << error_text(os.last_error());
  ASSERT_EQ(removed, 1u);
  EXPECT_EQ(entries[0].completion_key, kKeyA);
  EXPECT_TRUE(has(entries[0].bytes_transferred, kSockNotifyEventIn))
      << "rule A6: the same entry as ProcessSocketNotifications would return, got "
      << mask_name(entries[0].bytes_transferred);
}

TEST_P(PsnConformance, A7_EnablePacketComesBackInTheSameCall) {
  SCOPED_TRACE("rule A7");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  const Dequeued result = process(os, port, regs, 0);
  EXPECT_EQ(regs[0].registration_result, 0u);
  ASSERT_EQ(result.rc, kErrorSuccess)
      << "rule A7 (guess, seen): registrations are applied before the dequeue, so the ENABLE's "
         "packet comes back in the same call (timeout 0)";
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].completion_key, kKeyA);
}

TEST_P(PsnConformance, A7_RemovePacketComesBackInTheSameCall) {
  SCOPED_TRACE("rule A7");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  std::vector<SockNotifyRegistration> regs{remove_reg(pair.server)};
  const Dequeued result = process(os, port, regs, 0);
  EXPECT_EQ(regs[0].registration_result, 0u);
  ASSERT_EQ(result.rc, kErrorSuccess)
      << "rule A7 (guess, seen): the REMOVE packet of this call's REMOVE comes back in it";
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].completion_key, kKeyA);
  EXPECT_TRUE(has(result.entries[0].bytes_transferred, kSockNotifyEventRemove))
      << "rule A7: got " << mask_name(result.entries[0].bytes_transferred);
}

TEST_P(PsnConformance, A8_ElementsSucceedOrFailOnTheirOwn) {
  SCOPED_TRACE("rule A8");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair first = sc.tcp_pair();
  const TcpPair second = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(first.server, kKeyA, kFilterIn, kOneshotLevel),
      enable_reg(kInvalidSocket, kKeyC, kFilterIn, kOneshotLevel),
      enable_reg(second.server, kKeyB, kFilterIn, kOneshotLevel),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess)
      << "rule A8: one failing element does not fail the call";
  EXPECT_EQ(regs[0].registration_result, 0u) << "rule A8: element 0 applied";
  EXPECT_NE(regs[1].registration_result, 0u) << "rule A8: element 1 (not a socket) failed";
  EXPECT_NE(regs[1].registration_result, 0xFFFF'FFFFu) << "rule A8: element 1's result written";
  EXPECT_EQ(regs[2].registration_result, 0u) << "rule A8: element 2 applied despite element 1";
  send_bytes(os, first.client, 10);
  send_bytes(os, second.client, 10);
  settle(os);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 8);
  EXPECT_EQ(with_key(got, kKeyA).size(), 1u) << "rule A8: " << entries_text(got);
  EXPECT_EQ(with_key(got, kKeyB).size(), 1u) << "rule A8: " << entries_text(got);
  EXPECT_TRUE(with_key(got, kKeyC).empty()) << "rule A8: the failed element registered nothing";
}

TEST_P(PsnConformance, A8_AppliedElementResultIsZero) {
  SCOPED_TRACE("rule A8");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel),
      disable_reg(pair.server),
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel),
      remove_reg(pair.server),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  for (std::size_t i = 0; i < regs.size(); ++i) {
    EXPECT_EQ(regs[i].registration_result, 0u)
        << "rule A8: element " << i << " was applied, so its registrationResult is 0 (written "
        << "over the 0xFFFFFFFF it carried in)";
  }
}

TEST_P(PsnConformance, A9_PsnAndGqcsShareOnePortQueue) {
  SCOPED_TRACE("rule A9");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey2, 0));
  OverlappedEntry entry{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os.get_queued_completion_status_ex(port, &entry, 1, &removed, 0, false));
  EXPECT_EQ(entry.completion_key, kSentinelKey1) << "rule A9: both calls serve one queue";
  const std::vector<OverlappedEntry> got = dequeue(os, port, 0);
  ASSERT_EQ(got.size(), 1u) << "rule A9: PSN takes what GQCSEx left: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kSentinelKey2);
}

TEST_P(PsnConformance, A9_SeveralThreadsDequeueFromOnePort) {
  SCOPED_TRACE("rule A9");
  scenario_a9_several_threads_dequeue(os());
}

TEST_P(PsnConformance, A10_LaterElementForSameSocketOverrides) {
  SCOPED_TRACE("rule A10");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // Nothing to read yet: the ENABLE queues nothing, the DISABLE after it wins.
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kPersistentLevel),
      disable_reg(pair.server),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  EXPECT_EQ(regs[0].registration_result, 0u);
  EXPECT_EQ(regs[1].registration_result, 0u);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule A10 (guess): ENABLE then DISABLE in one array leaves the "
                              "registration disabled: "
                           << entries_text(got);
}

TEST_P(PsnConformance, A10_LastEnableInArraySetsTheFilter) {
  SCOPED_TRACE("rule A10");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel),
      enable_reg(pair.server, kKeyA, kFilterOut, kOneshotLevel),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  // The socket is writable (OUT queued by the second ENABLE); now also make it readable.
  send_bytes(os, pair.client, 10);
  settle(os);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventOut))
      << "rule A10 (guess): the later ENABLE (OUT) is in force: "
      << mask_name(got[0].bytes_transferred);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventIn)
      << "rule A10 (guess): the earlier ENABLE's IN filter was overridden, not merged: "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, A10_ElementsApplyInArrayOrder) {
  SCOPED_TRACE("rule A10");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // REMOVE before the socket is registered fails; the ENABLE after it succeeds.
  std::vector<SockNotifyRegistration> regs{
      remove_reg(pair.server),
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel),
      remove_reg(pair.server),
  };
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  EXPECT_NE(regs[0].registration_result, 0u)
      << "rule A10 (guess): element 0 ran first, on an unregistered socket (B6)";
  EXPECT_EQ(regs[1].registration_result, 0u) << "rule A10 (guess): element 1 registered it";
  EXPECT_EQ(regs[2].registration_result, 0u) << "rule A10 (guess): element 2 removed it";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule A10: exactly the REMOVE packet: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
}

}  // namespace
}  // namespace readyport::conformance
