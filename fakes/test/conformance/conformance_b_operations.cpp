// Conformance, rules B1-B9 of docs/rules.md: the operations NONE, ENABLE, DISABLE and REMOVE, the
// completion key, one port per socket, and what counts as a socket.
#include <cstdint>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, B1_OpNoneLeavesRegistrationUnchanged) {
  SCOPED_TRACE("rule B1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // An OP_NONE element with other key, filter and flags: no change (its result is not judged).
  SockNotifyRegistration none{pair.server,       kKeyB,           kFilterOut,
                              kSockNotifyOpNone, kPersistentEdge, 0};
  std::vector<SockNotifyRegistration> regs{none};
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty())
      << "rule B1: OP_NONE did not enable OUT on the writable socket";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule B1: the IN registration is untouched: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule B1: key unchanged";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
}

TEST_P(PsnConformance, B1_OpNoneDoesNotRegister) {
  SCOPED_TRACE("rule B1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  SockNotifyRegistration none{pair.server,      kKeyA, kFilterAll, kSockNotifyOpNone,
                              kPersistentLevel, 0};
  std::vector<SockNotifyRegistration> regs{none};
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B1: OP_NONE creates no registration: " << entries_text(got);
  EXPECT_EQ(enable(os, port, pair.server, kKeyB, kFilterIn, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> after = dequeue(os, port, kExpectMs);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].completion_key, kKeyB)
      << "rule B1/B2: the first real ENABLE created the registration and chose its key";
}

TEST_P(PsnConformance, B1_OpNoneElementOnlyDequeues) {
  SCOPED_TRACE("rule B1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Socket sock = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(os.post_queued_completion_status(port, 3, kSentinelKey1, 0));
  std::vector<SockNotifyRegistration> regs{
      SockNotifyRegistration{sock, 0, 0, kSockNotifyOpNone, 0, 0}};
  const Dequeued got = process(os, port, regs, kExpectMs);
  EXPECT_EQ(got.rc, kErrorSuccess) << "rule B1: an OP_NONE element only dequeues";
  ASSERT_EQ(got.entries.size(), 1u);
  EXPECT_EQ(got.entries[0].completion_key, kSentinelKey1);
}

TEST_P(PsnConformance, B2_EnableCreatesRegistrationWithItsKey) {
  SCOPED_TRACE("rule B2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u)
      << "rule B2: ENABLE on an unregistered socket creates a registration";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule B2: the key given at creation";
}

TEST_P(PsnConformance, B2_EnableOverwritesFilter) {
  SCOPED_TRACE("rule B2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // IN on a socket with nothing to read: silent.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_TRUE(dequeue(os, port, kQuietMs).empty());
  // The second ENABLE asks for OUT instead; the socket is writable.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u)
      << "rule B2: ENABLE on a registered socket succeeds";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule B2: the new filter is in force: " << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventOut))
      << "rule B2: " << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, B2_EnableOverwritesTriggerFlags) {
  SCOPED_TRACE("rule B2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  // Persistent level: reports after every dequeue while readable.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs, 1).size(), 1u);
  // Now one-shot: the packet re-queued by the persistent registration (or the new ENABLE's own)
  // is the last one.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs, 1).size(), 1u);
  const std::vector<OverlappedEntry> after = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(after.empty()) << "rule B2: the ENABLE replaced PERSISTENT by ONESHOT: "
                             << entries_text(after);
}

TEST_P(PsnConformance, B2_EnableRearmsFiredOneshot) {
  SCOPED_TRACE("rule B2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  ASSERT_TRUE(dequeue(os, port, kQuietMs).empty()) << "rule C2: disarmed after its packet";
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u)
      << "rule B2: re-arming a fired one-shot is an ENABLE";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule B2: the re-armed registration reports the unread data";
  EXPECT_EQ(got[0].completion_key, kKeyA);
}

TEST_P(PsnConformance, B3_EnableWithNewKeyKeepsOldKey) {
  SCOPED_TRACE("rule B3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::uint32_t result = enable(os, port, pair.server, kKeyB, kFilterIn, kOneshotLevel);
  expect_default_reading(is_fake(), result == 0,
                         "rule B3 (fake default): ENABLE with a new key on a live registration "
                         "succeeds");
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA)
      << "rule B3: the completion key is taken at creation; a later ENABLE does not change it";
}

TEST_P(PsnConformance, B3_RemoveThenEnableChangesKey) {
  SCOPED_TRACE("rule B3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> removed = dequeue(os, port, kExpectMs);
  ASSERT_EQ(removed.size(), 1u);
  ASSERT_TRUE(has(removed[0].bytes_transferred, kSockNotifyEventRemove));
  ASSERT_EQ(enable(os, port, pair.server, kKeyB, kFilterIn, kOneshotLevel), 0u);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyB)
      << "rule B3: REMOVE, its packet, ENABLE: the new registration has the new key";
}

TEST_P(PsnConformance, B4_DisableStopsNewNotifications) {
  SCOPED_TRACE("rule B4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u) << "rule B4: DISABLE of a registration succeeds";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B4: a disabled registration reports nothing: "
                           << entries_text(got);
}

TEST_P(PsnConformance, B4_DisableQueuesNothing) {
  SCOPED_TRACE("rule B4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B4: DISABLE itself queues no packet: " << entries_text(got);
}

TEST_P(PsnConformance, B4_DisableKeepsTheRegistration) {
  SCOPED_TRACE("rule B4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  // Still registered (with its key): re-enabling reports with the original key...
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule B4: DISABLE kept the registration";
  // ...and REMOVE finds a registration to remove.
  EXPECT_EQ(remove_sock(os, port, pair.server), 0u) << "rule B4/B5: the registration still exists";
}

TEST_P(PsnConformance, B4_PacketQueuedBeforeDisableMayStillArrive) {
  SCOPED_TRACE("rule B4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  // The ENABLE queues an IN packet (level, readable); DISABLE follows before it is dequeued.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_LE(got.size(), 1u) << "rule B4: at most the one packet queued before DISABLE: "
                            << entries_text(got);
  if (!got.empty()) {
    EXPECT_EQ(got[0].completion_key, kKeyA);
    EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
  }
  expect_default_reading(is_fake(), got.size() == 1,
                         "rule B4 (fake default): a packet queued before DISABLE is still "
                         "delivered");
}

TEST_P(PsnConformance, B5_RemoveQueuesExactlyOneRemovePacket) {
  SCOPED_TRACE("rule B5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u) << "rule B5: REMOVE of an enabled registration";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule B5: exactly one REMOVE packet: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA)
      << "rule B5: the REMOVE packet has the registration's key";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove))
      << "rule B5: mask has 0x80: " << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, B5_RemoveWorksOnDisabledRegistration) {
  SCOPED_TRACE("rule B5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u) << "rule B5: REMOVE of a disabled registration";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
}

TEST_P(PsnConformance, B5_RemoveOfFiredOneshotWorks) {
  SCOPED_TRACE("rule B5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);  // OUT fired, registration disarmed (C2)
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u)
      << "rule B5/C2: a fired one-shot is disabled, not removed: REMOVE succeeds";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
}

TEST_P(PsnConformance, B5_RemoveIgnoresKeyFilterAndTrigger) {
  SCOPED_TRACE("rule B5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // Garbage in every field REMOVE does not use: an invalid filter and trigger, another key.
  SockNotifyRegistration reg{pair.server, kKeyB, 0xFFFF, kSockNotifyOpRemove, 0xFF, 0xFFFF'FFFF};
  EXPECT_EQ(apply_one(os, port, reg), 0u) << "rule B5: REMOVE ignores key, filter and trigger";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule B5: the REMOVE packet has the registration's "
                                             "key, not the REMOVE element's";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
}

TEST_P(PsnConformance, B5_NothingFollowsTheRemovePacket) {
  SCOPED_TRACE("rule B5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterAll, kPersistentEdge), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_FALSE(got.empty());
  ASSERT_TRUE(has(got.back().bytes_transferred, kSockNotifyEventRemove)) << entries_text(got);
  // Every kind of event after the REMOVE packet: data, peer shutdown.
  send_bytes(os, pair.client, 10);
  EXPECT_EQ(os.shutdown(pair.client, kSdSend), 0);
  const std::vector<OverlappedEntry> after = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(after.empty()) << "rule B5: nothing follows the REMOVE packet for its key: "
                             << entries_text(after);
}

TEST_P(PsnConformance, B6_RemoveOfNeverRegisteredSocketFails) {
  SCOPED_TRACE("rule B6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  const std::uint32_t result = remove_sock(os, port, pair.server);
  EXPECT_NE(result, 0u) << "rule B6: REMOVE of a socket that was never registered fails";
  expect_default_reading(
      is_fake(), result == kWsaEinval,
      "rule B6 (fake default): the code is WSAEINVAL, got " + error_text(result));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B6: a failed REMOVE queues nothing: " << entries_text(got);
}

TEST_P(PsnConformance, B6_RemoveAfterRemoveCompletedFails) {
  SCOPED_TRACE("rule B6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  ASSERT_EQ(dequeue_all(os, port).size(), 1u);  // the REMOVE packet
  EXPECT_NE(remove_sock(os, port, pair.server), 0u)
      << "rule B6: REMOVE of an already removed socket fails";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B6: and queues nothing: " << entries_text(got);
}

TEST_P(PsnConformance, B6_RemoveAfterClosesocketFails) {
  SCOPED_TRACE("rule B6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const Socket closed = pair.server;
  ASSERT_EQ(sc.close(closed), 0);
  EXPECT_NE(remove_sock(os, port, closed), 0u)
      << "rule B6: closesocket deregistered the socket, so REMOVE fails";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B6/E2: no REMOVE packet at all: " << entries_text(got);
}

TEST_P(PsnConformance, B6_DisableOfUnregisteredSocketFails) {
  SCOPED_TRACE("rule B6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  const std::uint32_t result = disable(os, port, pair.server);
  expect_default_reading(is_fake(), result == kWsaEinval,
                         "rule B6 (fake default): DISABLE of an unregistered socket fails with "
                         "WSAEINVAL, got " +
                             error_text(result));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule B6: queues nothing: " << entries_text(got);
}

TEST_P(PsnConformance, B7_SecondRemoveBeforeRemovePacketFails) {
  SCOPED_TRACE("rule B7");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  EXPECT_NE(remove_sock(os, port, pair.server), 0u)
      << "rule B7 (guess): a second REMOVE before the first REMOVE packet is dequeued fails";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule B7 (guess): never two REMOVE packets for one registration: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove));
}

TEST_P(PsnConformance, B7_TwoRemovesInOneCallGiveOnePacket) {
  SCOPED_TRACE("rule B7");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  std::vector<SockNotifyRegistration> regs{remove_reg(pair.server), remove_reg(pair.server)};
  ASSERT_EQ(apply(os, port, regs), kErrorSuccess);
  EXPECT_EQ(regs[0].registration_result, 0u);
  EXPECT_NE(regs[1].registration_result, 0u)
      << "rule B7 (guess): the second REMOVE of one array fails";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  EXPECT_EQ(got.size(), 1u) << "rule B7 (guess): one REMOVE packet: " << entries_text(got);
}

TEST_P(PsnConformance, B8_SecondPortFailsAndLeavesFirstUnchanged) {
  SCOPED_TRACE("rule B8");
  Os& os = this->os();
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, first, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::uint32_t result = enable(os, second, pair.server, kKeyB, kFilterOut, kPersistentLevel);
  EXPECT_NE(result, 0u) << "rule B8: a socket registered with one port cannot join a second";
  expect_default_reading(
      is_fake(), result == kWsaEinval,
      "rule B8 (fake default): the code is WSAEINVAL, got " + error_text(result));
  EXPECT_TRUE(dequeue(os, second, kQuietMs).empty())
      << "rule B8: the second port got nothing (its OUT|PERSISTENT was not applied)";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, first, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule B8: the first registration is unchanged: "
                            << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventOut)
      << "rule B8: the failed ENABLE did not change the first registration's filter";
}

TEST_P(PsnConformance, B8_SecondPortAllowedAfterRemovePacket) {
  SCOPED_TRACE("rule B8");
  Os& os = this->os();
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, first, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, first, pair.server), 0u);
  ASSERT_EQ(dequeue_all(os, first).size(), 1u);
  EXPECT_EQ(enable(os, second, pair.server, kKeyB, kFilterIn, kOneshotLevel), 0u)
      << "rule B8/E6: after its REMOVE packet the socket may register with another port";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, second, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyB);
}

TEST_P(PsnConformance, B9_ValueThatIsNotASocketFails) {
  SCOPED_TRACE("rule B9");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  const std::uint32_t result = enable(os, port, kInvalidSocket, kKeyA, kFilterIn, kOneshotLevel);
  EXPECT_NE(result, 0u) << "rule B9: INVALID_SOCKET is not a socket";
  expect_default_reading(
      is_fake(), result == kWsaEnotsock,
      "rule B9 (fake default): the code is WSAENOTSOCK, got " + error_text(result));
}

TEST_P(PsnConformance, B9_ClosedSocketValueFails) {
  SCOPED_TRACE("rule B9");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Socket sock = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(sc.close(sock), 0);
  // Nothing was opened since, so the value is not a socket (even where values are reused, E5).
  const std::uint32_t result = enable(os, port, sock, kKeyA, kFilterIn, kOneshotLevel);
  EXPECT_NE(result, 0u) << "rule B9: a closed socket's value is not a socket";
  expect_default_reading(
      is_fake(), result == kWsaEnotsock,
      "rule B9 (fake default): the code is WSAENOTSOCK, got " + error_text(result));
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty());
}

}  // namespace
}  // namespace readyport::conformance
