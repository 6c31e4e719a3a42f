// FakeSwitches: both settings of every row of docs/rules.md's "Fake defaults" table, one test per
// setting, on FakeOs directly (the conformance scenarios check the defaults backend-agnostically;
// here the other reading is selected through FakeOptions and checked too). Plus the fake's limits.
//
// Test names: <Row>_<Setting>_<Behaviour>, the row named after its FakeOptions field.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "conformance/scenario_util.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport::conformance {
namespace {

// One readable server end: `pair.client` sent 10 bytes to `pair.server`.
TcpPair readable_pair(Scenario& sc) {
  TcpPair pair = sc.tcp_pair();
  if (sc.ok()) {
    send_bytes(sc.os(), pair.client, 10);
  }
  return pair;
}

// ---- trigger without ONESHOT/PERSISTENT (spec C1): trigger_lenient ------------------------------

TEST(FakeSwitches, TriggerLenient_Default_LevelAloneIsWsaeinval) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = readable_pair(sc);
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerLevel), kWsaEinval)
      << "rule C1 (strict default)";
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerEdge), kWsaEinval)
      << "rule C1 (strict default): EDGE alone too";
  EXPECT_FALSE(os.socket_registered(pair.server)) << "rule C1: nothing was registered";
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty());
}

TEST(FakeSwitches, TriggerLenient_On_LevelAloneIsPersistent) {
  FakeOptions options;
  options.trigger_lenient = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = readable_pair(sc);
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerLevel), 0u)
      << "rule C1 (lenient): LEVEL alone is accepted";
  // PERSISTENT|LEVEL: the packet comes back after each dequeue while the data is unread (C4).
  for (int round = 0; round < 3; ++round) {
    const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs, 1);
    ASSERT_EQ(got.size(), 1u) << "rule C1 (lenient): treated as PERSISTENT, round " << round;
  }
}

TEST(FakeSwitches, TriggerLenient_On_MissingLevelAndEdgeStillFails) {
  FakeOptions options;
  options.trigger_lenient = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = readable_pair(sc);
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kSockNotifyTriggerPersistent),
            kWsaEinval)
      << "rule C1: a missing LEVEL/EDGE fails in both modes";
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn,
                   kSockNotifyTriggerLevel | kSockNotifyTriggerEdge),
            kWsaEinval)
      << "rule C1: a doubled LEVEL/EDGE fails in both modes";
}

// ---- ENABLE with a new key on a live registration (spec B3): key_change_strict ------------------

TEST(FakeSwitches, KeyChangeStrict_Default_OldKeyKept) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  EXPECT_EQ(enable(os, port, pair.server, kKeyB, kFilterOut, kOneshotLevel), 0u)
      << "rule B3 (default): the ENABLE succeeds";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u) << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA) << "rule B3 (default): the old key is kept";
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventOut))
      << "rule B2: the filter and flags were overwritten";
}

TEST(FakeSwitches, KeyChangeStrict_On_NewKeyIsWsaeinvalAndNothingChanges) {
  FakeOptions options;
  options.key_change_strict = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  EXPECT_EQ(enable(os, port, pair.server, kKeyB, kFilterOut, kOneshotLevel), kWsaEinval)
      << "rule B3 (strict): a new key on a live registration fails";
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty())
      << "rule B3 (strict): the filter did not change to OUT";
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u)
      << "rule B3 (strict): the same key is still fine";
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].completion_key, kKeyA);
}

// ---- second port (spec B8): second_port_error ---------------------------------------------------

// Registers `pair.server` with `first` (IN, key A), then tries `second`; returns that result and
// checks that the first registration is unchanged.
std::uint32_t second_port_attempt(FakeOs& os) {
  Scenario sc(os);
  const Port first = sc.port();
  const Port second = sc.port();
  const TcpPair pair = sc.tcp_pair();
  if (!sc.ok()) {
    return 0;
  }
  EXPECT_EQ(enable(os, first, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  const std::uint32_t result = enable(os, second, pair.server, kKeyB, kFilterOut, kOneshotLevel);
  EXPECT_TRUE(dequeue(os, second, kQuietMs).empty()) << "rule B8: nothing on the second port";
  send_bytes(os, pair.client, 10);
  const std::vector<OverlappedEntry> got = dequeue(os, first, kExpectMs);
  EXPECT_EQ(got.size(), 1u) << "rule B8: the first registration is unchanged: "
                            << entries_text(got);
  if (!got.empty()) {
    EXPECT_EQ(got[0].completion_key, kKeyA);
    EXPECT_EQ(got[0].bytes_transferred & kSockNotifyEventOut, 0u);
  }
  return result;
}

TEST(FakeSwitches, SecondPortError_Default_IsWsaeinval) {
  FakeOs os;
  EXPECT_EQ(second_port_attempt(os), kWsaEinval) << "rule B8 (default code)";
}

TEST(FakeSwitches, SecondPortError_Configured_IsThatCode) {
  FakeOptions options;
  options.second_port_error = kWsaEalready;
  FakeOs os(options);
  EXPECT_EQ(second_port_attempt(os), kWsaEalready) << "rule B8 (configured code)";
}

// ---- REMOVE / DISABLE of an unregistered socket (spec B6, B9): unregistered_error,
// not_socket_error

TEST(FakeSwitches, UnregisteredError_Default_RemoveAndDisableAreWsaeinval) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const Socket sock = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(remove_sock(os, port, sock), kWsaEinval) << "rule B6 (default code), REMOVE";
  EXPECT_EQ(disable(os, port, sock), kWsaEinval) << "rule B6 (default code), DISABLE";
  EXPECT_TRUE(dequeue(os, port, kQuietMs).empty());
}

TEST(FakeSwitches, UnregisteredError_Configured_RemoveAndDisableUseThatCode) {
  FakeOptions options;
  options.unregistered_error = kWsaEnotconn;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const Socket sock = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(remove_sock(os, port, sock), kWsaEnotconn) << "rule B6 (configured code), REMOVE";
  EXPECT_EQ(disable(os, port, sock), kWsaEnotconn) << "rule B6 (configured code), DISABLE";
  // Removed already (the REMOVE packet dequeued) counts as unregistered too.
  ASSERT_EQ(enable(os, port, sock, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, sock), 0u);
  ASSERT_EQ(dequeue_all(os, port).size(), 1u);
  EXPECT_EQ(remove_sock(os, port, sock), kWsaEnotconn) << "rule B6: already removed";
}

TEST(FakeSwitches, NotSocketError_Default_IsWsaenotsock) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(enable(os, port, kInvalidSocket, kKeyA, kFilterIn, kOneshotLevel), kWsaEnotsock);
  EXPECT_EQ(remove_sock(os, port, kFakeSocketFirst + 400 * kFakeSocketValueStep), kWsaEnotsock)
      << "rule B9: a value never handed out";
}

TEST(FakeSwitches, NotSocketError_Configured_IsThatCode) {
  FakeOptions options;
  options.not_socket_error = kWsaEinval;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(enable(os, port, kInvalidSocket, kKeyA, kFilterIn, kOneshotLevel), kWsaEinval);
  EXPECT_EQ(disable(os, port, kInvalidSocket), kWsaEinval);
}

// ---- packet queued when DISABLE or closesocket happens (spec B4, E2): queued_dropped_on_disable -

// Queues an IN packet for `pair.server` (key A) on `port` without dequeueing it.
void queue_in_packet(Os& os, Port port, const TcpPair& pair) {
  send_bytes(os, pair.client, 10);
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
}

TEST(FakeSwitches, QueuedDroppedOnDisable_Default_DeliveredAfterDisable) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule B4 (default): still delivered: " << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn));
}

TEST(FakeSwitches, QueuedDroppedOnDisable_On_DroppedAtDisable) {
  FakeOptions options;
  options.queued_dropped_on_disable = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(os.queued_packet_count(port), 1u);
  ASSERT_EQ(disable(os, port, pair.server), 0u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  EXPECT_TRUE(got.empty()) << "rule B4 (drop): dropped: " << entries_text(got);
  EXPECT_TRUE(os.socket_registered(pair.server)) << "rule B4: DISABLE keeps the registration";
}

TEST(FakeSwitches, QueuedDroppedOnDisable_Default_DeliveredAfterClosesocket) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule E2 (default): still delivered: " << entries_text(got);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_EQ(os.stats().registrations_live, 0u) << "the detached registration is gone with it";
}

TEST(FakeSwitches, QueuedDroppedOnDisable_On_DroppedAtClosesocket) {
  FakeOptions options;
  options.queued_dropped_on_disable = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  EXPECT_TRUE(got.empty()) << "rule E2 (drop): dropped: " << entries_text(got);
  EXPECT_EQ(os.stats().registrations_live, 0u);
}

// ---- REMOVE while a packet is queued (spec D4): remove_separate_packet --------------------------

TEST(FakeSwitches, RemoveSeparatePacket_Default_RemoveOredIntoPendingPacket) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  EXPECT_EQ(os.queued_packet_count(port), 1u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "rule D4 (default): one packet: " << entries_text(got);
  EXPECT_TRUE(has(got[0].bytes_transferred, kSockNotifyEventIn | kSockNotifyEventRemove))
      << "rule D4 (default): IN|REMOVE: " << mask_name(got[0].bytes_transferred);
  EXPECT_FALSE(os.socket_registered(pair.server)) << "rule D4: destroyed on delivery";
}

TEST(FakeSwitches, RemoveSeparatePacket_On_QueuesRemoveAfterPendingPacket) {
  FakeOptions options;
  options.remove_separate_packet = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  queue_in_packet(os, port, pair);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  EXPECT_EQ(os.queued_packet_count(port), 2u);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 2u) << "rule D4 (separate): two packets: " << entries_text(got);
  EXPECT_EQ(got[0].bytes_transferred, kSockNotifyEventIn) << "rule D4 (separate): IN first";
  EXPECT_EQ(got[1].bytes_transferred, kSockNotifyEventRemove) << "rule D4 (separate): then REMOVE";
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_EQ(got[1].completion_key, kKeyA);
  EXPECT_FALSE(os.socket_registered(pair.server));
}

// ---- closesocket after REMOVE, before its packet: remove_dropped_on_close -----------------------

TEST(FakeSwitches, RemoveDroppedOnClose_Default_RemoveStillDelivered) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  ASSERT_EQ(got.size(), 1u) << "(default): the REMOVE packet is still delivered: "
                            << entries_text(got);
  EXPECT_EQ(got[0].bytes_transferred, kSockNotifyEventRemove);
  EXPECT_EQ(got[0].completion_key, kKeyA);
  EXPECT_EQ(os.stats().registrations_live, 0u);
}

TEST(FakeSwitches, RemoveDroppedOnClose_On_RemoveDropped) {
  FakeOptions options;
  options.remove_dropped_on_close = true;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn, kOneshotLevel), 0u);
  ASSERT_EQ(remove_sock(os, port, pair.server), 0u);
  ASSERT_EQ(sc.close(pair.server), 0);
  const std::vector<OverlappedEntry> got = dequeue_all(os, port);
  EXPECT_TRUE(got.empty()) << "(drop): closesocket dropped the REMOVE packet: "
                           << entries_text(got);
  EXPECT_EQ(os.stats().registrations_live, 0u);
}

// ---- ONESHOT disarm (spec C2): oneshot_disarm ---------------------------------------------------

// ONESHOT|LEVEL IN|HANGUP: data queues IN, then the peer's FIN arrives while the packet is queued.
OverlappedEntry oneshot_then_hangup(FakeOs& os, std::uint32_t* later_count_out) {
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  *later_count_out = 99;
  if (!sc.ok()) {
    return {};
  }
  EXPECT_EQ(enable(os, port, pair.server, kKeyA, kFilterIn | kFilterHangup, kOneshotLevel), 0u);
  send_bytes(os, pair.client, 10);
  EXPECT_EQ(os.shutdown(pair.client, kSdSend), 0);
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  EXPECT_EQ(got.size(), 1u) << entries_text(got);
  *later_count_out = static_cast<std::uint32_t>(dequeue_all(os, port).size());
  return got.empty() ? OverlappedEntry{} : got[0];
}

TEST(FakeSwitches, OneshotDisarm_AtDequeue_LaterEventsOrIntoQueuedPacket) {
  FakeOs os;
  std::uint32_t later = 0;
  const OverlappedEntry entry = oneshot_then_hangup(os, &later);
  EXPECT_TRUE(has(entry.bytes_transferred, kSockNotifyEventIn | kSockNotifyEventHangup))
      << "rule C2 (default, disarm at dequeue): still armed while queued, HANGUP OR-ed in: "
      << mask_name(entry.bytes_transferred);
  EXPECT_EQ(later, 0u) << "rule C2: disarmed once dequeued";
}

TEST(FakeSwitches, OneshotDisarm_AtQueue_LaterEventsNotReported) {
  FakeOptions options;
  options.oneshot_disarm = OneshotDisarm::kAtQueue;
  FakeOs os(options);
  std::uint32_t later = 0;
  const OverlappedEntry entry = oneshot_then_hangup(os, &later);
  EXPECT_EQ(entry.bytes_transferred, kSockNotifyEventIn)
      << "rule C2 (disarm at queue): disarmed when IN was queued, HANGUP not added: "
      << mask_name(entry.bytes_transferred);
  EXPECT_EQ(later, 0u) << "rule C2: nothing else";
}

// ---- lpOverlapped in socket packets: overlapped_poison ------------------------------------------

TEST(FakeSwitches, OverlappedPoison_Default_SocketPacketsPoisoned) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u);
  ASSERT_TRUE(os.post_queued_completion_status(port, 1, kSentinelKey1, 0x1230));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 2u) << entries_text(got);
  EXPECT_EQ(got[0].overlapped, kOverlappedPoison) << "(default) lpOverlapped poisoned";
  EXPECT_EQ(got[0].internal, 0u) << "(default) Internal 0";
  EXPECT_EQ(got[1].overlapped, 0x1230u) << "rule F2: a posted packet keeps its own value";
}

TEST(FakeSwitches, OverlappedPoison_Off_SocketPacketsZero) {
  FakeOptions options;
  options.overlapped_poison = false;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = sc.tcp_pair();
  ASSERT_TRUE(sc.ok());
  ASSERT_EQ(enable(os, port, pair.server, kKeyA, kFilterOut, kOneshotLevel), 0u);
  ASSERT_TRUE(os.post_queued_completion_status(port, 1, kSentinelKey1, 0x1230));
  const std::vector<OverlappedEntry> got = dequeue(os, port, kExpectMs);
  ASSERT_EQ(got.size(), 2u) << entries_text(got);
  EXPECT_EQ(got[0].overlapped, 0u) << "(none) lpOverlapped 0";
  EXPECT_EQ(got[0].internal, 0u) << "(none) Internal 0";
  EXPECT_EQ(got[1].overlapped, 0x1230u) << "rule F2: a posted packet keeps its own value";
}

// ---- receivedEntryCount on WAIT_TIMEOUT: 0 (no switch) ------------------------------------------

TEST(FakeSwitches, ReceivedOnTimeout_NoSwitch_IsZero) {
  FakeOs os;
  Scenario sc(os);
  const Port port = sc.port();
  ASSERT_TRUE(sc.ok());
  OverlappedEntry entries[4];
  std::uint32_t received = 77;
  ASSERT_EQ(os.process_socket_notifications(port, 0, nullptr, kQuietMs, 4, entries, &received),
            kWaitTimeout);
  EXPECT_EQ(received, 0u) << "rule A2: *receivedEntryCount is 0 on WAIT_TIMEOUT";
  received = 77;
  ASSERT_EQ(os.process_socket_notifications(port, 0, nullptr, 0, 4, entries, &received),
            kWaitTimeout);
  EXPECT_EQ(received, 0u) << "rule A2: also with timeout 0";
}

// ---- timed wait ending early (spec A5): early_wake_ms_max ---------------------------------------

// How long (virtual ns) each of `waits` empty timed waits of `timeout_ms` took, alternating PSN
// and GetQueuedCompletionStatusEx.
std::vector<std::uint64_t> wait_durations(FakeOs& os, int waits, std::uint32_t timeout_ms) {
  std::vector<std::uint64_t> out;
  Scenario sc(os);
  const Port port = sc.port();
  if (!sc.ok()) {
    return out;
  }
  for (int i = 0; i < waits; ++i) {
    const std::uint64_t before_ns = os.now_ns();
    OverlappedEntry entry{};
    std::uint32_t count = 0;
    if (i % 2 == 0) {
      EXPECT_EQ(os.process_socket_notifications(port, 0, nullptr, timeout_ms, 1, &entry, &count),
                kWaitTimeout);
    } else {
      EXPECT_FALSE(os.get_queued_completion_status_ex(port, &entry, 1, &count, timeout_ms, false));
      EXPECT_EQ(os.last_error(), kWaitTimeout);
    }
    out.push_back(os.now_ns() - before_ns);
  }
  return out;
}

TEST(FakeSwitches, EarlyWakeMsMax_Default_WaitsLastExactlyTheTimeout) {
  FakeOs os;
  for (std::uint64_t elapsed_ns : wait_durations(os, 20, 20)) {
    EXPECT_EQ(elapsed_ns, 20'000'000u) << "rule A5 (default N=0): never early, never late";
  }
}

TEST(FakeSwitches, EarlyWakeMsMax_Set_WaitsEndUpToNEarlyReproducibly) {
  FakeOptions options;
  options.early_wake_ms_max = 5;
  options.seed = 0x5EED;
  FakeOs os(options);
  const std::vector<std::uint64_t> durations = wait_durations(os, 40, 20);
  int early = 0;
  for (std::uint64_t elapsed_ns : durations) {
    EXPECT_GE(elapsed_ns, 15'000'000u) << "rule A5: at most N=5 ms early";
    EXPECT_LE(elapsed_ns, 20'000'000u) << "rule A5: never late";
    if (elapsed_ns < 20'000'000u) {
      ++early;
    }
  }
  EXPECT_GT(early, 0) << "rule A5: with N=5, some of 40 waits end early";
  FakeOs again(options);
  EXPECT_EQ(wait_durations(again, 40, 20), durations) << "the same seed, the same early wakes";
}

// ---- SOCKET value reuse (spec E5): socket_reuse -------------------------------------------------

TEST(FakeSwitches, SocketReuse_Default_LowestFreeValueReusedAtOnce) {
  FakeOs os;
  Scenario sc(os);
  const Socket a = sc.tcp_socket();
  const Socket b = sc.tcp_socket();
  const Socket c = sc.tcp_socket();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(a, kFakeSocketFirst);
  EXPECT_EQ(b, a + kFakeSocketValueStep);
  EXPECT_EQ(c, b + kFakeSocketValueStep);
  ASSERT_EQ(sc.close(b), 0);
  ASSERT_EQ(sc.close(a), 0);
  EXPECT_EQ(sc.tcp_socket(), a) << "rule E5 (default): the lowest free value first";
  EXPECT_EQ(sc.tcp_socket(), b) << "rule E5 (default): then the next free one";
}

TEST(FakeSwitches, SocketReuse_Off_ValuesNeverReused) {
  FakeOptions options;
  options.socket_reuse = false;
  FakeOs os(options);
  Scenario sc(os);
  std::vector<Socket> closed;
  for (int i = 0; i < 10; ++i) {
    const Socket sock = sc.tcp_socket();
    ASSERT_TRUE(sc.ok());
    for (Socket old : closed) {
      EXPECT_NE(sock, old) << "rule E5 (never reuse)";
    }
    ASSERT_EQ(sc.close(sock), 0);
    closed.push_back(sock);
  }
}

// ---- limits: everything is bounded --------------------------------------------------------------

TEST(FakeSwitches, BatchMax_ExceededIsWsaeinvalAndChangesNothing) {
  FakeOptions options;
  options.batch_max = 2;
  FakeOs os(options);
  Scenario sc(os);
  const Port port = sc.port();
  const TcpPair pair = readable_pair(sc);
  ASSERT_TRUE(sc.ok());
  std::vector<SockNotifyRegistration> regs{
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel), disable_reg(pair.server),
      enable_reg(pair.server, kKeyA, kFilterIn, kOneshotLevel)};
  EXPECT_EQ(os.process_socket_notifications(port, 3, regs.data(), 0, 0, nullptr, nullptr),
            kWsaEinval)
      << "registrationCount above batch_max";
  EXPECT_FALSE(os.socket_registered(pair.server)) << "rule A3: nothing changed";
  OverlappedEntry entries[3];
  std::uint32_t received = 0;
  ASSERT_TRUE(os.post_queued_completion_status(port, 0, kSentinelKey1, 0));
  EXPECT_EQ(os.process_socket_notifications(port, 0, nullptr, 0, 3, entries, &received), kWsaEinval)
      << "completionCount above batch_max";
  EXPECT_EQ(os.queued_packet_count(port), 1u) << "rule A3: nothing dequeued";
}

TEST(FakeSwitches, SocketsMax_ExceededIsWsaemfile) {
  FakeOptions options;
  options.sockets_max = 3;
  FakeOs os(options);
  Scenario sc(os);
  for (int i = 0; i < 3; ++i) {
    ASSERT_NE(sc.tcp_socket(), kInvalidSocket);
  }
  EXPECT_EQ(os.socket(kAfInet, kSockStream, kIpprotoTcp), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEmfile);
}

}  // namespace
}  // namespace readyport::conformance
