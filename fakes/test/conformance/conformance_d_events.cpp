// Conformance, rules D1-D6 of docs/rules.md: which events a packet carries (ERR, REMOVE, HANGUP,
// failed connects, OR-ed masks, stale masks, listeners).
#include <cstdint>
#include <vector>

#include "conformance/backend.hpp"
#include "conformance/scenario_util.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, D1_RemoveIsReportedWhateverTheFilter) {
  SCOPED_TRACE("rule D1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventRemove))
      << "rule D1: REMOVE is reported although the filter asked only for IN: "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, D1_ErrIsReportedWhateverTheFilter) {
  SCOPED_TRACE("rule D1");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  // The filter has IN only (there is no filter bit for ERR); the peer resets the connection.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kPersistentEdge), 0u);
  ASSERT_EQ(sc.reset(pair.client), 0);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(got[0].bytes_transferred & kSockNotifyEventErr)
      << "rule D1/D2: an abortive reset reports ERR although the filter has no ERR bit: "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, D2_GracefulPeerShutdownGivesHangup) {
  SCOPED_TRACE("rule D2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterHangup, kOneshotLevel), 0u);
  ASSERT_EQ(os.shutdown(pair.client, kSdSend), 0);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(got[0].bytes_transferred & kSockNotifyEventHangup)
      << "rule D2: a graceful shutdown by the peer is HANGUP: "
      << mask_name(got[0].bytes_transferred);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventErr)
      << "rule D2: a graceful shutdown is not an error";
}

TEST_P(PsnConformance, D2_HangupWithUnreadDataAlsoReportsIn) {
  SCOPED_TRACE("rule D2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(os.shutdown(pair.client, kSdSend), 0);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn | kFilterHangup, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventHangup | kSockNotifyEventIn))
      << "rule D2: HANGUP with IN while data remains: " << mask_name(got[0].bytes_transferred);
  std::uint32_t last = 1;
  EXPECT_EQ(drain(os, pair.server, &last), 10) << "rule D2: the data is still readable";
  EXPECT_EQ(last, 0u) << "rule D2: then recv reports end of stream (0)";
}

TEST_P(PsnConformance, D2_AbortiveResetGivesErrAndRecvSaysWhy) {
  SCOPED_TRACE("rule D2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterAll, kPersistentEdge), 0u);
  ASSERT_EQ(sc.reset(pair.client), 0);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(got[0].bytes_transferred & kSockNotifyEventErr)
      << "rule D2: an abortive reset is ERR: " << mask_name(got[0].bytes_transferred);
  char buffer[16];
  EXPECT_EQ(os.recv(pair.server, buffer, 16, 0), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEconnreset)
      << "rule D2: recv returns the detailed error, got " << error_text(os.last_error());
}

TEST_P(PsnConformance, D2_DatagramSocketNeverSeesHangup) {
  SCOPED_TRACE("rule D2");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  Ipv4Address from_address;
  Ipv4Address to_address;
  const Socket from = sc.udp_socket(&from_address);
  const Socket to = sc.udp_socket(&to_address);
  ASSERT_TRUE(sc.ok());
  const char datagram[4] = {'p', 's', 'n', '!'};
  ASSERT_EQ(os.sendto(from, datagram, 4, 0, to_address), 4);
  settle(os);
  // LEVEL: whatever holds is reported, so a HANGUP condition could not hide behind an edge.
  ASSERT_EQ(enable(os, port, to, kKeyA, kFilterIn | kFilterHangup, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventHangup)
      << "rule D2: datagram sockets never see HANGUP: " << mask_name(got[0].bytes_transferred);
  // Closing the sender is no hangup either.
  ASSERT_EQ(sc.close(from), 0);
  char buffer[8];
  Ipv4Address source;
  EXPECT_EQ(os.recvfrom(to, buffer, 8, 0, &source), 4);
  ASSERT_EQ(enable(os, port, to, kKeyA, kFilterIn | kFilterHangup, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> after = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(after.empty()) << "rule D2: " << entries_text(after);
}

TEST_P(PsnConformance, D3_FailedConnectReportsErrWithoutOut) {
  SCOPED_TRACE("rule D3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  // A bound socket that does not listen: connecting to its port is refused.
  const Socket bound = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(os.bind(bound, Ipv4Address{kLoopbackHost, 0}), 0);
  Ipv4Address refused;
  ASSERT_EQ(os.getsockname(bound, &refused), 0);
  const Socket client = sc.connect_start(refused);
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, client, kKeyA, kFilterAll, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kConnectFailMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(got[0].bytes_transferred & kSockNotifyEventErr)
      << "rule D3: a failed non-blocking connect reports ERR: "
      << mask_name(got[0].bytes_transferred);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventOut)
      << "rule D3: ...without OUT: " << mask_name(got[0].bytes_transferred);
  std::uint32_t error = 0;
  EXPECT_EQ(os.get_socket_error(client, &error), 0);
  EXPECT_EQ(error, kWsaEconnrefused) << "rule D3: SO_ERROR says why: " << error_text(error);
}

TEST_P(PsnConformance, D3_SuccessfulConnectReportsOut) {
  SCOPED_TRACE("rule D3");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Listener listener = sc.listener();
  ASSERT_TRUE(sc.ok());
  const Socket client = sc.connect_start(listener.address);
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, client, kKeyA, kFilterAll, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventOut))
      << "rule D3 (contrast): a completed connect reports OUT: "
      << mask_name(got[0].bytes_transferred);
  EXPECT_FALSE(got[0].bytes_transferred & kSockNotifyEventErr);
}

TEST_P(PsnConformance, D4_EventsOrIntoTheQueuedPacket) {
  SCOPED_TRACE("rule D4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn | kFilterHangup, kPersistentEdge), 0u);
  send_bytes(os, pair.client, 10);  // IN: a packet is queued
  settle(os);
  ASSERT_EQ(os.shutdown(pair.client, kSdSend), 0);  // HANGUP while it is still queued
  settle(os);
  const std::vector<OverlappedEntry> got = with_key(dequeue(os, port, kExpectMs), kKeyA);
  ASSERT_EQ(got.size(), 1u) << "rule D4: at most one queued packet per registration: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn | kSockNotifyEventHangup))
      << "rule D4: the later event was OR-ed into the queued packet: "
      << mask_name(got[0].bytes_transferred);
}

TEST_P(PsnConformance, D4_RepeatedEventsQueueOnePacket) {
  SCOPED_TRACE("rule D4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  for (int i = 0; i < 3; ++i) {
    send_bytes(os, pair.client, 10);
    settle(os);
  }
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  EXPECT_EQ(got.size(), 1u) << "rule D4: one queued packet however many events: "
                            << entries_text(got);
}

TEST_P(PsnConformance, D4_RemoveCanArriveOredWithOtherEvents) {
  SCOPED_TRACE("rule D4");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  // ENABLE queues IN; REMOVE follows before that packet is dequeued.
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_FALSE(got.empty());
  int removes = 0;
  bool saw_in = false;
  for (const OverlappedEntry& entry : got) {
    EXPECT_EQ(entry.completion_key, kKeyA);
    if (entry.bytes_transferred & kSockNotifyEventRemove) {
      ++removes;
    }
    if (entry.bytes_transferred & kSockNotifyEventIn) {
      saw_in = true;
    }
  }
  EXPECT_EQ(removes, 1) << "rule D4/B5: one REMOVE: " << entries_text(got);
  EXPECT_TRUE(has(got.back().bytes_transferred, kSockNotifyEventRemove))
      << "rule D4/E3: REMOVE comes last: " << entries_text(got);
  EXPECT_TRUE(saw_in) << "rule D4/B4: the queued IN is delivered: " << entries_text(got);
  expect_default_reading(
      is_fake(),
      got.size() == 1 && has(got[0].bytes_transferred, kSockNotifyEventIn | kSockNotifyEventRemove),
      "rule D4 (fake default): REMOVE is OR-ed into the queued packet "
      "(one entry IN|REMOVE), got " +
          entries_text(got));
}

TEST_P(PsnConformance, D5_StaleInLeadsToWouldBlock) {
  SCOPED_TRACE("rule D5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  send_bytes(os, pair.client, 10);
  settle(os);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);  // IN queued
  EXPECT_EQ(drain(os, pair.server), 10);  // "another thread" reads everything first
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule D5 (guess): a queued packet is not taken back when its "
                               "condition stops holding: "
                            << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
  char buffer[16];
  EXPECT_EQ(os.recv(pair.server, buffer, 16, 0), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock)
      << "rule D5: recv after a stale IN answers WSAEWOULDBLOCK, got "
      << error_text(os.last_error());
}

TEST_P(PsnConformance, D5_StaleListenerInLeadsToWouldBlock) {
  SCOPED_TRACE("rule D5");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Listener listener = sc.listener();
  ASSERT_TRUE(sc.ok());
  const Socket client = sc.connect_start(listener.address);
  ASSERT_NE(client, kInvalidSocket);
  ASSERT_EQ(enable(os, port, listener.sock, kKeyA, kFilterIn, kOneshotLevel), 0u);
  // Someone accepts the connection before the IN packet is handled.
  const Socket accepted = sc.accept(listener.sock);
  ASSERT_TRUE(sc.ok());
  ASSERT_NE(accepted, kInvalidSocket);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << "rule D5 (guess): the queued IN is still delivered: "
                            << entries_text(got);
  EXPECT_EQ(os.accept(listener.sock, nullptr), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock)
      << "rule D5: accept after a stale IN answers WSAEWOULDBLOCK, got "
      << error_text(os.last_error());
}

TEST_P(PsnConformance, D6_ListenerInMeansAConnectionCanBeAccepted) {
  SCOPED_TRACE("rule D6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Listener listener = sc.listener();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, listener.sock, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const Socket client = sc.connect_start(listener.address);
  ASSERT_NE(client, kInvalidSocket);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn))
      << "rule D6: a pending connection is IN on the listener: "
      << mask_name(got[0].bytes_transferred);
  const Socket accepted = os.accept(listener.sock, nullptr);
  EXPECT_NE(accepted, kInvalidSocket)
      << "rule D6: after IN, accept succeeds; error " << error_text(os.last_error());
  if (accepted != kInvalidSocket) {
    EXPECT_EQ(os.closesocket(accepted), 0);
  }
}

TEST_P(PsnConformance, D6_IdleListenerReportsNothing) {
  SCOPED_TRACE("rule D6");
  Os& os = this->os();
  Scenario sc(os);
  const Port port = sc.port();
  const Listener listener = sc.listener();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, listener.sock, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kQuietMs);
  EXPECT_TRUE(got.empty()) << "rule D6: no pending connection, no IN: " << entries_text(got);
}

}  // namespace
}  // namespace readyport::conformance
