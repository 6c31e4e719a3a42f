// FakeOs: a few ProcessSocketNotifications and completion-port paths of the fake itself (packet
// layout, virtual timeouts, the one-shot re-arm cycle, REMOVE, close_port, inspection). The rule
// by rule conformance suite is in conformance/.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "readyport/fake/fake_os.hpp"

namespace readyport {
namespace {

constexpr std::uint8_t kOneshotLevel = kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;
constexpr std::uint8_t kPersistentLevel = kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel;
constexpr std::uint8_t kPersistentEdge = kSockNotifyTriggerPersistent | kSockNotifyTriggerEdge;

class FakePsn : public ::testing::Test {
 protected:
  explicit FakePsn(FakeOptions options = {}) : os_(options) {
    port_ = os_.create_io_completion_port(0);
    EXPECT_FALSE(port_ == kInvalidPort);
    Ipv4Address a{};
    a_ = udp(&a);
    b_ = udp(&b_address_);
    (void)a;
  }

  void TearDown() override { os_.check_invariants(); }

  Socket udp(Ipv4Address* address_out) {
    Socket s = os_.socket(kAfInet, kSockDgram, kIpprotoUdp);
    EXPECT_EQ(os_.set_nonblocking(s, true), 0);
    EXPECT_EQ(os_.bind(s, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(os_.getsockname(s, address_out), 0);
    return s;
  }

  // One element, no dequeue; returns its registration_result.
  std::uint32_t apply(Socket s, std::uintptr_t key, std::uint16_t filter, std::uint8_t operation,
                      std::uint8_t trigger) {
    SockNotifyRegistration reg{s, key, filter, operation, trigger, 0xFFFF};
    EXPECT_EQ(os_.process_socket_notifications(port_, 1, &reg, 0, 0, nullptr, nullptr),
              kErrorSuccess);
    return reg.registration_result;
  }

  // Dequeues up to 4 entries with a zero timeout.
  std::uint32_t poll(std::array<OverlappedEntry, 4>* entries_out, std::uint32_t timeout_ms = 0) {
    std::uint32_t received = 99;
    const std::uint32_t code = os_.process_socket_notifications(port_, 0, nullptr, timeout_ms, 4,
                                                                entries_out->data(), &received);
    if (code == kWaitTimeout) {
      EXPECT_EQ(received, 0u);  // spec A2
      return 0;
    }
    EXPECT_EQ(code, kErrorSuccess);
    return received;
  }

  void datagram_to_b() { EXPECT_EQ(os_.sendto(a_, "d", 1, 0, b_address_), 1); }
  void drain_b() {
    char byte = 0;
    EXPECT_EQ(os_.recv(b_, &byte, 1, 0), 1);
  }

  FakeOs os_;
  Port port_{};
  Socket a_ = kInvalidSocket;
  Socket b_ = kInvalidSocket;
  Ipv4Address b_address_{};
};

TEST_F(FakePsn, SocketPacketLayout) {
  EXPECT_EQ(apply(b_, 42, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  datagram_to_b();
  std::array<OverlappedEntry, 4> entries{};
  ASSERT_EQ(poll(&entries), 1u);
  EXPECT_EQ(entries[0].completion_key, 42u);
  EXPECT_EQ(entries[0].bytes_transferred, kSockNotifyEventIn);
  EXPECT_EQ(entries[0].overlapped, kOverlappedPoison);
  EXPECT_EQ(entries[0].internal, 0u);
}

TEST_F(FakePsn, TimeoutIsVirtualAndLeavesNothing) {
  std::array<OverlappedEntry, 4> entries{};
  const std::uint64_t start_ns = os_.now_ns();
  EXPECT_EQ(poll(&entries, 50), 0u);
  EXPECT_EQ(os_.now_ns() - start_ns, 50'000'000u);
  EXPECT_EQ(poll(&entries, 0), 0u);
  EXPECT_EQ(os_.now_ns() - start_ns, 50'000'000u);  // timeout 0 returns at once
}

TEST_F(FakePsn, OneshotLevelDisarmsThenReArmReportsAgain) {
  EXPECT_EQ(apply(b_, 7, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  datagram_to_b();
  datagram_to_b();  // D4: OR-ed into the queued packet, still one packet
  EXPECT_EQ(os_.queued_packet_count(port_), 1u);
  std::array<OverlappedEntry, 4> entries{};
  EXPECT_EQ(poll(&entries), 1u);
  EXPECT_EQ(poll(&entries), 0u);  // C2: disarmed
  datagram_to_b();
  EXPECT_EQ(poll(&entries), 0u);
  // Re-arm (B2) while still readable: LEVEL reports at once, in the same call (A7).
  SockNotifyRegistration rearm{
      b_, 7, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel, 0};
  std::uint32_t received = 0;
  EXPECT_EQ(os_.process_socket_notifications(port_, 1, &rearm, 0, 4, entries.data(), &received),
            kErrorSuccess);
  EXPECT_EQ(rearm.registration_result, 0u);
  EXPECT_EQ(received, 1u);
  EXPECT_EQ(entries[0].completion_key, 7u);
}

TEST_F(FakePsn, PersistentLevelComesBackOncePerCallWhileReadable) {
  EXPECT_EQ(apply(b_, 9, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kPersistentLevel), 0u);
  datagram_to_b();
  std::array<OverlappedEntry, 4> entries{};
  EXPECT_EQ(poll(&entries), 1u);
  EXPECT_EQ(poll(&entries), 1u);  // C4: still readable
  drain_b();
  EXPECT_EQ(poll(&entries), 1u);  // queued before the drain: stale (D5)
  EXPECT_EQ(poll(&entries), 0u);
}

TEST_F(FakePsn, EdgeReportsRisesOnly) {
  datagram_to_b();
  EXPECT_EQ(apply(b_, 3, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kPersistentEdge), 0u);
  std::array<OverlappedEntry, 4> entries{};
  EXPECT_EQ(poll(&entries), 0u);  // C5: already readable at ENABLE
  datagram_to_b();
  EXPECT_EQ(poll(&entries), 0u);  // C5: more data into a non-empty queue
  drain_b();
  drain_b();
  datagram_to_b();
  EXPECT_EQ(poll(&entries), 1u);
  EXPECT_EQ(entries[0].bytes_transferred, kSockNotifyEventIn);
}

TEST_F(FakePsn, RemoveIsOnePacketThenAFreshRegistration) {
  EXPECT_EQ(apply(b_, 5, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  EXPECT_EQ(apply(b_, 0, 0, kSockNotifyOpRemove, 0), 0u);
  EXPECT_EQ(apply(b_, 0, 0, kSockNotifyOpRemove, 0), kWsaEinval);  // B7
  EXPECT_EQ(apply(b_, 5, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel),
            kWsaEinval);  // nothing may follow REMOVE for this key
  std::array<OverlappedEntry, 4> entries{};
  ASSERT_EQ(poll(&entries), 1u);
  EXPECT_EQ(entries[0].completion_key, 5u);
  EXPECT_EQ(entries[0].bytes_transferred, kSockNotifyEventRemove);
  EXPECT_FALSE(os_.socket_registered(b_));
  EXPECT_EQ(apply(b_, 0, 0, kSockNotifyOpRemove, 0), kWsaEinval);  // B6
  EXPECT_EQ(apply(b_, 6, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  datagram_to_b();
  ASSERT_EQ(poll(&entries), 1u);
  EXPECT_EQ(entries[0].completion_key, 6u);  // E6: any key
}

TEST_F(FakePsn, InvalidCallsChangeNothing) {
  SockNotifyRegistration reg{b_, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel,
                             77};
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t received = 0;
  // A4: completion_count 0 with a count pointer.
  EXPECT_EQ(os_.process_socket_notifications(port_, 1, &reg, 0, 0, nullptr, &received), kWsaEinval);
  EXPECT_EQ(reg.registration_result, 77u);
  EXPECT_FALSE(os_.socket_registered(b_));
  EXPECT_EQ(os_.process_socket_notifications(port_, 0, &reg, 0, 1, entries.data(), &received),
            kWsaEinval);
  EXPECT_EQ(os_.process_socket_notifications(Port{12345}, 1, &reg, 0, 1, entries.data(), &received),
            kErrorInvalidHandle);
  EXPECT_FALSE(os_.socket_registered(b_));
  // C1 strict: LEVEL alone fails in registration_result, the call itself works.
  EXPECT_EQ(apply(b_, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kSockNotifyTriggerLevel),
            kWsaEinval);
  EXPECT_EQ(apply(0x4242, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel),
            kWsaEnotsock);  // B9
}

TEST_F(FakePsn, PostedPacketsShareTheFifoWithGqcs) {
  EXPECT_TRUE(os_.post_queued_completion_status(port_, 11, 100, 0x1000));
  EXPECT_EQ(apply(b_, 8, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  datagram_to_b();
  EXPECT_TRUE(os_.post_queued_completion_status(port_, 12, 101, 0));
  std::array<OverlappedEntry, 4> entries{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os_.get_queued_completion_status_ex(port_, entries.data(), 4, &removed, 0, false));
  ASSERT_EQ(removed, 3u);
  EXPECT_EQ(entries[0].completion_key, 100u);
  EXPECT_EQ(entries[0].bytes_transferred, 11u);
  EXPECT_EQ(entries[0].overlapped, 0x1000u);
  EXPECT_EQ(entries[1].completion_key, 8u);
  EXPECT_EQ(entries[2].completion_key, 101u);
  // The one-shot rule applies to GQCS too (C2).
  datagram_to_b();
  EXPECT_FALSE(os_.get_queued_completion_status_ex(port_, entries.data(), 4, &removed, 10, false));
  EXPECT_EQ(os_.last_error(), kWaitTimeout);
  EXPECT_FALSE(os_.get_queued_completion_status_ex(port_, entries.data(), 4, &removed, 0, true));
  EXPECT_EQ(os_.last_error(), kErrorInvalidParameter);
}

TEST_F(FakePsn, ClosePortDropsEverythingAndInvalidatesTheHandle) {
  EXPECT_EQ(apply(b_, 8, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kPersistentLevel), 0u);
  datagram_to_b();
  EXPECT_TRUE(os_.post_queued_completion_status(port_, 0, 1, 0));
  EXPECT_EQ(os_.stats().registrations_live, 1u);
  EXPECT_EQ(os_.stats().packets_queued, 2u);
  EXPECT_TRUE(os_.close_port(port_));
  EXPECT_EQ(os_.stats().registrations_live, 0u);
  EXPECT_EQ(os_.stats().packets_queued, 0u);
  EXPECT_FALSE(os_.socket_registered(b_));
  EXPECT_FALSE(os_.close_port(port_));
  EXPECT_EQ(os_.last_error(), kErrorInvalidHandle);
  EXPECT_FALSE(os_.post_queued_completion_status(port_, 0, 1, 0));
  // The socket can join another port (F6: nothing of the first registration remains).
  Port second = os_.create_io_completion_port(0);
  EXPECT_FALSE(second == port_);  // handles are never reused
  SockNotifyRegistration reg{b_, 1, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel,
                             0};
  EXPECT_EQ(os_.process_socket_notifications(second, 1, &reg, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  EXPECT_EQ(reg.registration_result, 0u);
}

TEST_F(FakePsn, CloseSocketDeregistersWithoutRemove) {
  EXPECT_EQ(apply(b_, 8, kSockNotifyRegisterEventIn, kSockNotifyOpEnable, kOneshotLevel), 0u);
  datagram_to_b();
  EXPECT_EQ(os_.closesocket(b_), 0);
  std::array<OverlappedEntry, 4> entries{};
  ASSERT_EQ(poll(&entries), 1u);  // E2: the queued packet is still delivered
  EXPECT_EQ(entries[0].bytes_transferred, kSockNotifyEventIn);
  EXPECT_EQ(poll(&entries), 0u);  // and no REMOVE
  EXPECT_EQ(os_.stats().registrations_live, 0u);
}

class FakePsnEarlyWake : public FakePsn {
 protected:
  static FakeOptions early() {
    FakeOptions options;
    options.early_wake_ms_max = 5;
    options.seed = 1234;
    return options;
  }
  FakePsnEarlyWake() : FakePsn(early()) {}
};

TEST_F(FakePsnEarlyWake, TimedWaitsEndAtMostNEarlyAndReproducibly) {
  std::array<OverlappedEntry, 4> entries{};
  std::uint64_t waited_ns[8] = {};
  for (std::uint64_t& waited : waited_ns) {
    const std::uint64_t start_ns = os_.now_ns();
    EXPECT_EQ(poll(&entries, 20), 0u);
    waited = os_.now_ns() - start_ns;
    EXPECT_GE(waited, 15'000'000u);
    EXPECT_LE(waited, 20'000'000u);
  }
  // Same seed, same waits.
  FakeOs again(early());
  Port port = again.create_io_completion_port(0);
  for (const std::uint64_t waited : waited_ns) {
    std::uint32_t received = 0;
    const std::uint64_t start_ns = again.now_ns();
    EXPECT_EQ(
        again.process_socket_notifications(port, 0, nullptr, 20, 4, entries.data(), &received),
        kWaitTimeout);
    EXPECT_EQ(again.now_ns() - start_ns, waited);
  }
}

}  // namespace
}  // namespace readyport
