// Conformance, rules E1-E6 of docs/rules.md: teardown and lifetime (the REMOVE packet as the only
// safe point to free, closesocket without REMOVE, socket value reuse, fresh registrations).
#include <cstdint>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, E1_NothingCarriesTheKeyAfterItsRemovePacket) {
  SCOPED_TRACE("rule E1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterAll, kPersistentLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> before = dequeue_all(os, port);
  ASSERT_FALSE(before.empty());
  ASSERT_TRUE(has(before.back().bytes_transferred, kSockNotifyEventRemove)) << entries_text(before);
  // The REMOVE packet was dequeued: the registration's data may be freed. Whatever happens to the
  // socket now (traffic, shutdown, close, a new socket perhaps with the same value), the key
  // never comes back.
  send_bytes(os, pair.client, 10);
  EXPECT_EQ(os.shutdown(pair.client, kSdSend), 0);
  ASSERT_EQ(sc.close(pair.server), 0);
  const TcpPair next = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, next.server, kKeyB, kFilterAll, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> after = dequeue_all(os, port);
  EXPECT_TRUE(with_key(after, kKeyA).empty())
      << "rule E1: no packet for a key after its REMOVE packet: " << entries_text(after);
}

TEST_P(PsnConformance, E2_ClosesocketQueuesNoRemovePacket) {
  SCOPED_TRACE("rule E2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentLevel), 0u);
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule E2: closesocket deregisters without a REMOVE packet: "
                           << entries_text(got);
}

TEST_P(PsnConformance, E2_PacketQueuedBeforeClosesocketMayStillArrive) {
  SCOPED_TRACE("rule E2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);  // IN queued
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_LE(got.size(), 1u) << "rule E2: at most the packet queued before closesocket: "
                            << entries_text(got);
  for (const OverlappedEntry& entry : got) {
    EXPECT_EQ(entry.completion_key, kKeyA);
    EXPECT_FALSE(entry.bytes_transferred & kSockNotifyEventRemove)
        << "rule E2: closesocket never produces REMOVE";
  }
  expect_default_reading(is_fake(), got.size() == 1,
                         "rule E2 (fake default): a packet queued before closesocket is still "
                         "delivered after it");
}

TEST_P(PsnConformance, E2_RemovePacketStillArrivesAfterClosesocket) {
  SCOPED_TRACE("rule E2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  // The engine's order is REMOVE, its packet, closesocket; here the socket is closed in between.
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_LE(got.size(), 1u) << "rule E2/B7: at most the one REMOVE packet: " << entries_text(got);
  for (const OverlappedEntry& entry : got) {
    EXPECT_EQ(entry.completion_key, kKeyA);
    EXPECT_TRUE(has(entry.bytes_transferred, kSockNotifyEventRemove)) << entries_text(got);
  }
  expect_default_reading(is_fake(), got.size() == 1,
                         "rule E2 (fake default): closesocket after REMOVE, before its packet, "
                         "still delivers the REMOVE packet");
}

TEST_P(PsnConformance, E2_ClosedSocketIsDeregistered) {
  SCOPED_TRACE("rule E2");
  Os& os = this->os();
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, first, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const Socket closed = pair.server;
  ASSERT_EQ(sc.close(closed), 0);
  // A new socket (on the fake: the same value, E5) registers with another port: the closed
  // socket's registration is gone, or B8 would refuse.
  const Socket fresh = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(enable(os, second, fresh, kKeyB, kFilterOut, kOneshotLevel), 0u)
      << "rule E2: closesocket deregistered the old socket (value reused: "
      << (fresh == closed ? "yes" : "no") << ")";
  EXPECT_TRUE(dequeue(os, first, kQuietMs).empty()) << "rule E2: no REMOVE on the first port";
}

TEST_P(PsnConformance, E3_RemovePacketIsTheLastForItsKey) {
  SCOPED_TRACE("rule E3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // PERSISTENT|LEVEL OUT on a writable socket: a packet for the key is always queued.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kPersistentLevel), 0u);
  ASSERT_EQ(dequeue(os, port, kExpectMs, 1).size(), 1u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_FALSE(got.empty());
  for (std::size_t i = 0; i + 1 < got.size(); ++i) {
    EXPECT_FALSE(got[i].bytes_transferred & kSockNotifyEventRemove)
        << "rule E3: only the last packet carries REMOVE: " << entries_text(got);
  }
  EXPECT_TRUE(has(got.back().bytes_transferred, kSockNotifyEventRemove))
      << "rule E3: until the REMOVE packet the key may arrive; REMOVE is last: "
      << entries_text(got);
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> after = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(after.empty()) << "rule E3: nothing after REMOVE: " << entries_text(after);
}

TEST_P(PsnConformance, E3_KeyStillArrivesBetweenRemoveAndItsPacket) {
  SCOPED_TRACE("rule E3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u);  // OUT queued
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  bool saw_out = false;
  for (const OverlappedEntry& entry : got) {
    if (entry.completion_key == kKeyA && (entry.bytes_transferred & kSockNotifyEventOut)) {
      saw_out = true;
    }
  }
  EXPECT_TRUE(saw_out) << "rule E3: the OUT queued before REMOVE still arrives (alone or OR-ed "
                          "with REMOVE), so the key must stay valid until the REMOVE packet: "
                       << entries_text(got);
}

TEST_P(PsnConformance, E4_FailedRemoveProvesNothingAboutQueuedPackets) {
  SCOPED_TRACE("rule E4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);  // IN queued
  const Socket closed = pair.server;
  ASSERT_EQ(sc.close(closed), 0);
  EXPECT_NE(remove_sock(os, port, closed), 0u) << "rule E4/B6: REMOVE after closesocket fails";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  for (const OverlappedEntry& entry : got) {
    EXPECT_FALSE(entry.bytes_transferred & kSockNotifyEventRemove)
        << "rule E4: the failed REMOVE queued no REMOVE packet";
  }
  expect_default_reading(is_fake(), with_key(got, kKeyA).size() == 1,
                         "rule E4 (fake default, E2 row): the packet queued before closesocket "
                         "arrives although REMOVE failed");
}

TEST_P(PsnConformance, E5_SocketValueIsReusedAfterClose) {
  SCOPED_TRACE("rule E5");
  Os& os = this->os();
  Scenario sc(os);
  const Socket first = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(sc.close(first), 0);
  const Socket second = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  expect_default_reading(is_fake(), second == first,
                         "rule E5 (fake default): a closed socket's value is reused at once");
}

TEST_P(PsnConformance, E5_StalePacketCanReachNewSocketWithSameValue) {
  SCOPED_TRACE("rule E5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  // A careless engine keys by the socket value.
  const std::uintptr_t key = pair.server;
  ASSERT_EQ(enable(os, port, pair.server, key, kFilterIn, kOneshotLevel), 0u);  // IN queued
  const Socket closed = pair.server;
  ASSERT_EQ(sc.close(closed), 0);
  // Open a few sockets: where values are reused, one of them gets the closed value (on the fake
  // the lowest free value comes first, which may be the pair's closed listener).
  bool reused = false;
  for (int i = 0; i < 4 && !reused; ++i) {
    const Socket fresh = sc.tcp_socket();
    ASSERT_TRUE(sc.ok());
    reused = fresh == closed;
  }
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_LE(got.size(), 1u) << entries_text(got);
  expect_default_reading(is_fake(), reused && got.size() == 1 && got[0].completion_key == closed,
                         "rule E5 (fake defaults): the stale packet keyed by the old value "
                         "arrives while a new socket has that value, got " +
                             entries_text(got) + (reused ? "" : ", value not reused"));
}

TEST_P(PsnConformance, E6_EnableAfterRemovePacketStartsFreshRegistration) {
  SCOPED_TRACE("rule E6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  ASSERT_EQ(dequeue_all(os, port).size(), 1u);
  // Fresh: any key, filter and trigger flags.
  ASSERT_EQ(enable(os, port, pair.server, kKeyC, kFilterOut, kOneshotLevel), 0u)
      << "rule E6: ENABLE after the REMOVE packet creates a new registration";
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyC) << "rule E6: the fresh registration has the new key";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventOut))
      << "rule E6: and the new filter: " << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, E6_EachRegistrationGetsItsOwnRemovePacket) {
  SCOPED_TRACE("rule E6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  for (std::uintptr_t key : {kKeyA, kKeyA, kKeyB}) {
    ASSERT_EQ(enable(os, port, pair.server, key, kFilterIn, kOneshotLevel), 0u);
    ASSERT_EQ(remove_sock(os, port, pair.server), 0u)
        << "rule E6: the fresh registration can be removed again";
    const std::vector<OverlappedEntry> got = dequeue_all(os, port);
    ASSERT_EQ(got.size(), 1u) << entries_text(got);
    EXPECT_EQ(got[0].completion_key, key);
    EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove))
        << "rule E6: one REMOVE packet per registration";
  }
}

}  // namespace
}  // namespace readyport::conformance
