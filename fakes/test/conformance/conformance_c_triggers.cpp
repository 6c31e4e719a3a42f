// Conformance, rules C1-C6 of docs/rules.md: trigger flags (ONESHOT/PERSISTENT, LEVEL/EDGE).
#include <cstdint>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, C1_EveryValidTriggerCombinationIsAccepted) {
  SCOPED_TRACE("rule C1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // The server end has nothing to read, so none of these ENABLEs queues anything.
  for (std::uint8_t flags : {kOneshotLevel, kOneshotEdge, kPersistentLevel, kPersistentEdge}) {
    EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, flags), 0u)
        << "rule C1: one of LEVEL/EDGE and one of ONESHOT/PERSISTENT is valid: flags 0x" << std::hex
        << unsigned{flags};
  }
}

TEST_P(PsnConformance, C1_LevelAndEdgeTogetherAreRejected) {
  SCOPED_TRACE("rule C1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  const std::uint8_t flags =
      kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel | kSockNotifyTriggerEdge;
  EXPECT_NE(enable(os, port, pair.server, kKeyA, kFilterIn, flags), 0u)
      << "rule C1 (doc header): exactly one of LEVEL/EDGE";
  send_bytes(os, pair.client, 10);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty()) << "rule C1: the rejected ENABLE registered "
                                                      "nothing";
}

TEST_P(PsnConformance, C1_OneshotAndPersistentTogetherAreRejected) {
  SCOPED_TRACE("rule C1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  const std::uint8_t flags =
      kSockNotifyTriggerOneshot | kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel;
  EXPECT_NE(enable(os, port, pair.server, kKeyA, kFilterIn, flags), 0u)
      << "rule C1 (doc header): exactly one of ONESHOT/PERSISTENT";
  send_bytes(os, pair.client, 10);
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty()) << "rule C1: the rejected ENABLE registered "
                                                      "nothing";
}

TEST_P(PsnConformance, C1_MissingLevelAndEdgeIsRejected) {
  SCOPED_TRACE("rule C1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  EXPECT_NE(enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerOneshot), 0u)
      << "rule C1 (doc header): ONESHOT without LEVEL or EDGE is invalid";
}

TEST_P(PsnConformance, C1_LevelAloneIsRejectedInStrictMode) {
  SCOPED_TRACE("rule C1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  const std::uint32_t result =
      enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerLevel);
  // Microsoft's samples pass LEVEL alone; the fake is strict by default (the switch is lenient).
  expect_default_reading(is_fake(), result == kWsaEinval,
                         "rule C1 (fake default, strict): LEVEL without ONESHOT/PERSISTENT is "
                         "WSAEINVAL, got " +
                             error_text(result));
}

TEST_P(PsnConformance, C2_OneShotDisarmsAllDirections) {
  SCOPED_TRACE("rule C2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // IN|OUT on a writable socket with nothing to read: OUT fires.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn | kFilterOut, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> fired = dequeue(os, port, kExpectMs);
  ASSERT_EQ(fired.size(), 1u) << entries_text(fired);
  ASSERT_TRUE(has(fired[0].bytes_transferred, kSockNotifyEventOut));
  ASSERT_FALSE(fired[0].bytes_transferred & kSockNotifyEventIn);
  // Now data arrives: IN holds, but the delivered OUT disarmed the whole registration.
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C2: a delivered OUT also disarms IN: " << entries_text(got);
}

TEST_P(PsnConformance, C2_OneShotReportsOncePerArm) {
  SCOPED_TRACE("rule C2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  // Still readable (nothing was read), but disarmed.
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C2: one packet per arm even while the condition holds: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C2_FiredOneshotIsDisabledNotRemoved) {
  SCOPED_TRACE("rule C2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Port other = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  // Still registered with `port`: another port is refused (B8)...
  EXPECT_NE(enable(os, other, pair.server, kKeyB, kFilterOut, kOneshotLevel), 0u)
      << "rule C2: the fired one-shot still holds its registration (B8 refuses a second port)";
  // ...and there is no REMOVE packet: the registration was disabled, not removed.
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C2: no REMOVE packet for a fired one-shot: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C2_OneShotStaysArmedUntilItsPacketIsDequeued) {
  SCOPED_TRACE("rule C2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn | kFilterHangup, kOneshotLevel), 0u);
  send_bytes(os, pair.client, 10);  // IN: the one-shot's packet is queued
  settle(os);
  ASSERT_EQ(os.shutdown(pair.client, kSdSend), 0);  // HANGUP while that packet is still queued
  settle(os);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule C2/D4: one packet per arm: " << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
  expect_default_reading(is_fake(),
                         has(got[0].bytes_transferred, kSockNotifyEventIn | kSockNotifyEventHangup),
                         "rule C2 (fake default, disarm at dequeue): the one-shot is armed while "
                         "its packet is queued, so HANGUP is OR-ed in: got " +
                             mask_name(got[0].bytes_transferred));
}

TEST_P(PsnConformance, C3_PersistentStaysEnabledAcrossPackets) {
  SCOPED_TRACE("rule C3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  for (int round = 0; round < 3; ++round) {
    send_bytes(os, pair.client, 10);
    const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
    ASSERT_EQ(got.size(), 1u) << "rule C3: round " << round
                              << ": PERSISTENT reports again without re-arming: "
                              << entries_text(got);
    std::uint32_t last = 0;
    EXPECT_EQ(drain(os, pair.server, &last), 10);
    EXPECT_EQ(last, kWsaEwouldblock);
  }
}

TEST_P(PsnConformance, C3_PersistentStopsAtDisable) {
  SCOPED_TRACE("rule C3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  EXPECT_EQ(drain(os, pair.server), 10);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C3: PERSISTENT stays enabled only until DISABLE: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C4_LevelReportsConditionAlreadyHolding) {
  SCOPED_TRACE("rule C4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule C4: LEVEL reports a condition that holds at ENABLE: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
}

TEST_P(PsnConformance, C4_PersistentLevelComesBackAfterEachDequeue) {
  SCOPED_TRACE("rule C4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  for (int round = 0; round < 3; ++round) {
    const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 1);
    ASSERT_EQ(got.size(), 1u) << "rule C4: round " << round
                              << ": PERSISTENT|LEVEL comes back while the data is unread";
    EXPECT_EQ(got[0].completion_key, kKeyA);
  }
}

TEST_P(PsnConformance, C4_PersistentLevelStopsWhenConditionEnds) {
  SCOPED_TRACE("rule C4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs, 1).size(), 1u);
  EXPECT_EQ(drain(os, pair.server), 10);
  // A packet re-queued before the drain may still come out (D5), but then nothing more.
  const std::vector<OverlappedEntry> stale = dequeue_all(os, port);
  EXPECT_LE(stale.size(), 1u) << "rule C4/D4: at most one packet was queued: "
                              << entries_text(stale);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C4: no packet once the condition no longer holds: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C5_EdgeEnableOnReadableSocketReportsNothing) {
  SCOPED_TRACE("rule C5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C5: EDGE on an already readable socket reports nothing: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C5_EdgeReportsTransitionWhileEnabled) {
  SCOPED_TRACE("rule C5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule C5: not-readable to readable while enabled is an edge: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
}

TEST_P(PsnConformance, C5_EdgeMoreDataIntoNonEmptyBufferReportsNothing) {
  SCOPED_TRACE("rule C5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  send_bytes(os, pair.client, 10);  // the buffer still holds the first 10 bytes
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C5: more data into a non-empty buffer is no edge: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C5_EdgeNextEdgeAfterDrainingToWouldBlock) {
  SCOPED_TRACE("rule C5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  std::uint32_t last = 0;
  EXPECT_EQ(drain(os, pair.server, &last), 10);
  ASSERT_EQ(last, kWsaEwouldblock) << "rule C5: read until WSAEWOULDBLOCK";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule C5: after draining, new data is the next edge: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
}

TEST_P(PsnConformance, C5_EdgeWhileDisabledIsNotReported) {
  SCOPED_TRACE("rule C5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  send_bytes(os, pair.client, 10);  // the transition happens while disabled
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C5: only transitions that happen while enabled count: "
                           << entries_text(got);
}

TEST_P(PsnConformance, C6_OneshotLevelRearmCycle) {
  SCOPED_TRACE("rule C6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // The recommended pattern: each packet is handled, then the registration re-armed in the next
  // call that also dequeues. Unread data makes the re-armed LEVEL registration fire again.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  send_bytes(os, pair.client, 20);
  settle(os);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  char buffer[10];
  ASSERT_EQ(os.recv(pair.server, buffer, 10, 0), 10);  // handle half of it
  std::vector<SockNotifyRegistration> rearm{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  const Dequeued again = process(os, port, rearm, kExpectMs);
  EXPECT_EQ(rearm[0].registration_result, 0u);
  ASSERT_EQ(again.entries.size(), 1u) << "rule C6: re-armed ONESHOT|LEVEL fires for the rest";
  EXPECT_EQ(drain(os, pair.server), 10);
  std::vector<SockNotifyRegistration> rearm_empty{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  const Dequeued quiet = process(os, port, rearm_empty, kQuietMs);
  EXPECT_EQ(quiet.rc, kWaitTimeout)
      << "rule C6: nothing left, nothing reported: " << entries_text(quiet.entries);
}

TEST_P(PsnConformance, C6_OneshotEdgeIsAcceptedButFiresOnlyOnTransitions) {
  SCOPED_TRACE("rule C6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // EDGE|ONESHOT is discouraged, not invalid: re-arming it on unread data reports nothing,
  // which is why several threads should use ONESHOT|LEVEL.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotEdge), 0u)
      << "rule C6: EDGE|ONESHOT is accepted";
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(dequeue(os, port, kExpectMs).size(), 1u);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotEdge), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule C6/C5: re-armed EDGE|ONESHOT on unread data stays silent: "
                           << entries_text(got);
}

}  // namespace
}  // namespace readyport::conformance
