// windows_os_test.cpp: WindowsOs against the real system.
//
// What runs where:
// - Everything except the suite WindowsOsRealPsn runs under Wine (the mingw cross build, this
//   machine) and on Windows runners: the factory's failure path (spec G1, G2, G3), the completion
//   port (post, GetQueuedCompletionStatusEx, close), non-blocking loopback TCP and UDP, the Mutex,
//   Thread and clock.
// - WindowsOsRealPsn needs ProcessSocketNotifications (Windows 10 build 20348 or later); where the
//   lookup fails (Wine 8, older Windows) each test skips with the factory's message.
// Timeouts stay short: this is real time. Every socket a test opens it closes.

#include "readyport/windows_os.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {
namespace {

constexpr std::uint32_t kShortWaitMs = 20;
constexpr std::uint32_t kLongWaitMs = 2000;

// A WindowsOs that works on any Windows and under Wine (process_socket_notifications may be
// missing). Fails the calling test when Winsock cannot start.
std::unique_ptr<WindowsOs> make_os_without_psn_requirement() {
  WindowsOsOptions options;
  options.require_process_socket_notifications = false;
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create(options);
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  return made.ok() ? std::move(made).value() : nullptr;
}

// Retries a non-blocking call until it stops answering WSAEWOULDBLOCK or the deadline passes.
template <typename Call>
auto retry_while_would_block(Os& os, Call call) {
  const std::uint64_t deadline_ns = os.now_ns() + std::uint64_t{kLongWaitMs} * 1'000'000;
  for (;;) {
    auto result = call();
    if (!(result == static_cast<decltype(result)>(kSocketError) &&
          os.last_error() == kWsaEwouldblock) ||
        os.now_ns() > deadline_ns) {
      return result;
    }
    os.sleep_ms(1);
  }
}

// ---- Spec G: platform ------------------------------------------------------------------------

TEST(WindowsOs, G2_MissingProcessSocketNotificationsFailsWithClearStatus) {
  SCOPED_TRACE("rule G2");
  WindowsOsOptions options;
  options.psn_export_name = "ReadyportNoSuchExportForG2";  // missing on every Windows
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create(options);
  ASSERT_FALSE(made.ok());
  const Status status = made.status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.to_string();
  EXPECT_EQ(status.os_error(), kErrorProcNotFound) << status.to_string();
  for (const char* needed : {"ReadyportNoSuchExportForG2", "build 20348", "Windows Server 2022",
                             "Windows 11", "ProcessSocketNotifications"}) {
    EXPECT_NE(status.message().find(needed), std::string::npos)
        << "the message must name '" << needed << "': " << status.message();
  }
}

TEST(WindowsOs, G2_DefaultFactoryFindsTheRealCallOrFailsClearly) {
  SCOPED_TRACE("rule G2");
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
  if (made.ok()) {
    EXPECT_TRUE(made.value()->has_process_socket_notifications());
    return;
  }
  EXPECT_EQ(made.status().code(), StatusCode::kUnavailable) << made.status().to_string();
  EXPECT_NE(made.status().message().find("build 20348"), std::string::npos)
      << made.status().message();
}

TEST(WindowsOs, G2_WithoutTheFunctionTheCallFailsAndChangesNothing) {
  SCOPED_TRACE("rule G2 (and A3: a failed call changes nothing)");
  WindowsOsOptions options;
  options.require_process_socket_notifications = false;
  options.psn_export_name = "ReadyportNoSuchExportForG2";
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create(options);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  WindowsOs& os = *made.value();
  EXPECT_FALSE(os.has_process_socket_notifications());
  const Port port = os.create_io_completion_port(0);
  ASSERT_NE(port, kInvalidPort) << os.last_error();
  SockNotifyRegistration registration{kInvalidSocket,
                                      7,
                                      kSockNotifyRegisterEventIn,
                                      kSockNotifyOpEnable,
                                      kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                                      0xABCDu};
  OverlappedEntry entry{};
  std::uint32_t received = 99;
  EXPECT_EQ(os.process_socket_notifications(port, 1, &registration, 0, 1, &entry, &received),
            kErrorProcNotFound);
  EXPECT_EQ(registration.registration_result, 0xABCDu);
  EXPECT_EQ(received, 99u);
  EXPECT_TRUE(os.close_port(port));
}

TEST(WindowsOs, G1_ProcessSocketNotificationsPresentFromBuild20348) {
  SCOPED_TRACE("rule G1");
  if (WindowsOs::running_under_wine()) {
    GTEST_SKIP() << "Wine reports a Windows build that says nothing about which functions it "
                    "implements (Wine 8 lacks ProcessSocketNotifications); G1 is checked on the "
                    "Windows runners";
  }
  const std::uint32_t build = WindowsOs::windows_build_number();
  ASSERT_NE(build, 0u) << "RtlGetVersion failed";
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
  EXPECT_EQ(made.ok(), build >= kProcessSocketNotificationsMinBuild)
      << "build " << build << ": " << made.status().to_string();
}

TEST(WindowsOs, G3_MirroredTypesHaveThisArchitecturesLayout) {
  SCOPED_TRACE("rule G3");
  // Also checked at compile time in windows_os.cpp; this prints what was built.
  const std::size_t pointer_size = sizeof(void*);
  EXPECT_EQ(sizeof(SockNotifyRegistration), pointer_size == 8 ? 24u : 16u);
  EXPECT_EQ(sizeof(OverlappedEntry), pointer_size == 8 ? 32u : 16u);
  std::printf("pointer size %zu, SDK declares socket state notifications: %s\n", pointer_size,
              WindowsOs::abi_checked_against_sdk() ? "yes (checked against it)" : "no");
#if defined(_MSC_VER)
  // The Windows SDKs on the runners (10.0.20348 and later) declare them: the static_asserts
  // against the SDK must have been compiled, not skipped.
  EXPECT_TRUE(WindowsOs::abi_checked_against_sdk());
#endif
}

// ---- The completion port (spec F) -------------------------------------------------------------

class WindowsOsPort : public ::testing::Test {
 protected:
  void SetUp() override {
    os_ = make_os_without_psn_requirement();
    ASSERT_NE(os_, nullptr);
    port_ = os_->create_io_completion_port(0);
    ASSERT_NE(port_, kInvalidPort) << "CreateIoCompletionPort: " << os_->last_error();
  }
  void TearDown() override {
    if (os_ != nullptr && port_ != kInvalidPort) {
      EXPECT_TRUE(os_->close_port(port_));
    }
  }

  std::unique_ptr<WindowsOs> os_;
  Port port_ = kInvalidPort;
};

TEST_F(WindowsOsPort, F2_PostedPacketComesBackWithItsThreeValues) {
  ASSERT_TRUE(os_->post_queued_completion_status(port_, 7, 0x4242, 0x1000));
  OverlappedEntry entries[4]{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os_->get_queued_completion_status_ex(port_, entries, 4, &removed, 0, false))
      << os_->last_error();
  ASSERT_EQ(removed, 1u);
  EXPECT_EQ(entries[0].completion_key, 0x4242u);
  EXPECT_EQ(entries[0].overlapped, 0x1000u);
  EXPECT_EQ(entries[0].bytes_transferred, 7u);
}

TEST_F(WindowsOsPort, F1_PacketsComeOutFifoInOneBatch) {
  for (std::uintptr_t key = 1; key <= 3; ++key) {
    ASSERT_TRUE(os_->post_queued_completion_status(port_, 0, key, 0));
  }
  OverlappedEntry entries[8]{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os_->get_queued_completion_status_ex(port_, entries, 8, &removed, 0, false));
  ASSERT_EQ(removed, 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(entries[i].completion_key, i + 1u);
  }
}

TEST_F(WindowsOsPort, F1_BatchIsBoundedByCount) {
  for (std::uintptr_t key = 1; key <= 3; ++key) {
    ASSERT_TRUE(os_->post_queued_completion_status(port_, 0, key, 0));
  }
  OverlappedEntry entries[2]{};
  std::uint32_t removed = 0;
  ASSERT_TRUE(os_->get_queued_completion_status_ex(port_, entries, 2, &removed, 0, false));
  EXPECT_EQ(removed, 2u);
  ASSERT_TRUE(os_->get_queued_completion_status_ex(port_, entries, 2, &removed, 0, false));
  ASSERT_EQ(removed, 1u);
  EXPECT_EQ(entries[0].completion_key, 3u);
}

TEST_F(WindowsOsPort, F3_EmptyPortTimesOutWithWaitTimeout) {
  OverlappedEntry entry{};
  std::uint32_t removed = 99;
  const std::uint64_t start_ns = os_->now_ns();
  EXPECT_FALSE(
      os_->get_queued_completion_status_ex(port_, &entry, 1, &removed, kShortWaitMs, false));
  EXPECT_EQ(os_->last_error(), kWaitTimeout);
  EXPECT_EQ(removed, 0u);
  // Real waits may end a little early (spec A5): allow a timer tick.
  EXPECT_GE(os_->now_ns() - start_ns, std::uint64_t{kShortWaitMs / 2} * 1'000'000);
  EXPECT_FALSE(os_->get_queued_completion_status_ex(port_, &entry, 1, &removed, 0, false));
  EXPECT_EQ(os_->last_error(), kWaitTimeout);
}

TEST_F(WindowsOsPort, AlertableWaitIsRejected) {
  OverlappedEntry entry{};
  std::uint32_t removed = 0;
  EXPECT_FALSE(os_->get_queued_completion_status_ex(port_, &entry, 1, &removed, 0, true));
  EXPECT_EQ(os_->last_error(), kErrorInvalidParameter);
}

TEST_F(WindowsOsPort, F1_PostWakesAWaitingThread) {
  std::atomic<bool> dequeued{false};
  std::uintptr_t key_seen = 0;
  Result<std::unique_ptr<Thread>> waiter = os_->thread_start("waiter", [&] {
    OverlappedEntry entry{};
    std::uint32_t removed = 0;
    if (os_->get_queued_completion_status_ex(port_, &entry, 1, &removed, kLongWaitMs, false)) {
      key_seen = entry.completion_key;
      dequeued.store(true);
    }
  });
  ASSERT_TRUE(waiter.ok()) << waiter.status().to_string();
  os_->sleep_ms(kShortWaitMs);
  ASSERT_TRUE(os_->post_queued_completion_status(port_, 0, 0x77, 0));
  waiter.value()->join();
  EXPECT_TRUE(dequeued.load());
  EXPECT_EQ(key_seen, 0x77u);
}

TEST_F(WindowsOsPort, F3_ClosingThePortReleasesAWaiterWithAbandonedWait) {
  if (WindowsOs::running_under_wine()) {
    GTEST_SKIP() << "Wine 8 does not release a GetQueuedCompletionStatusEx waiter when the port "
                    "is closed (it waits out its timeout); checked on the Windows runners";
  }
  std::atomic<bool> returned{false};
  bool dequeued = true;
  std::uint32_t error = 0;
  const Port port = port_;
  Result<std::unique_ptr<Thread>> waiter = os_->thread_start("waiter", [&] {
    OverlappedEntry entry{};
    std::uint32_t removed = 0;
    dequeued = os_->get_queued_completion_status_ex(port, &entry, 1, &removed, kLongWaitMs, false);
    error = os_->last_error();
    returned.store(true);
  });
  ASSERT_TRUE(waiter.ok()) << waiter.status().to_string();
  os_->sleep_ms(50);  // let the waiter block
  EXPECT_FALSE(returned.load());
  EXPECT_TRUE(os_->close_port(port_));
  port_ = kInvalidPort;
  waiter.value()->join();
  EXPECT_FALSE(dequeued);
  EXPECT_EQ(error, kErrorAbandonedWait0) << os_error_name(error);
}

TEST_F(WindowsOsPort, ClosingAnInvalidPortFails) {
  EXPECT_FALSE(os_->close_port(kInvalidPort));
  EXPECT_EQ(os_->last_error(), kErrorInvalidHandle);
}

// ---- Sockets on loopback ------------------------------------------------------------------------

class WindowsOsSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    os_ = make_os_without_psn_requirement();
    ASSERT_NE(os_, nullptr);
  }
  void TearDown() override {
    for (Socket s : opened_) {
      EXPECT_EQ(os_->closesocket(s), 0) << os_->last_error();
    }
  }

  Socket open(int type) {
    const Socket s = os_->socket(kAfInet, type, type == kSockStream ? kIpprotoTcp : kIpprotoUdp);
    EXPECT_NE(s, kInvalidSocket) << os_->last_error();
    if (s != kInvalidSocket) {
      opened_.push_back(s);
    }
    return s;
  }
  void forget(Socket s) { std::erase(opened_, s); }

  // A listening TCP socket on 127.0.0.1 with an ephemeral port; its address in *address_out.
  Socket listen_on_loopback(Ipv4Address* address_out) {
    const Socket listener = open(kSockStream);
    EXPECT_EQ(os_->bind(listener, Ipv4Address{kLoopbackHost, 0}), 0) << os_->last_error();
    EXPECT_EQ(os_->listen(listener, 16), 0) << os_->last_error();
    EXPECT_EQ(os_->getsockname(listener, address_out), 0) << os_->last_error();
    return listener;
  }

  std::unique_ptr<WindowsOs> os_;
  std::vector<Socket> opened_;
};

TEST_F(WindowsOsSocket, BindToEphemeralPortReportsLoopbackAddress) {
  Ipv4Address address;
  listen_on_loopback(&address);
  EXPECT_EQ(address.host, kLoopbackHost);  // host byte order
  EXPECT_NE(address.port, 0);
}

TEST_F(WindowsOsSocket, NonBlockingConnectAcceptSendRecvAndGracefulShutdown) {
  Ipv4Address address;
  const Socket listener = listen_on_loopback(&address);
  ASSERT_EQ(os_->set_nonblocking(listener, true), 0);
  const Socket client = open(kSockStream);
  ASSERT_EQ(os_->set_nonblocking(client, true), 0);

  const int connected = os_->connect(client, address);
  if (connected == kSocketError) {
    EXPECT_EQ(os_->last_error(), kWsaEwouldblock);
  }

  Ipv4Address peer;
  const Socket server = retry_while_would_block(*os_, [&] { return os_->accept(listener, &peer); });
  ASSERT_NE(server, kInvalidSocket) << os_->last_error();
  opened_.push_back(server);
  EXPECT_EQ(peer.host, kLoopbackHost);
  ASSERT_EQ(os_->set_nonblocking(server, true), 0);

  // The connect has completed once the server accepted it; no error is pending.
  std::uint32_t pending_error = 99;
  ASSERT_EQ(os_->get_socket_error(client, &pending_error), 0);
  EXPECT_EQ(pending_error, 0u);

  const char message[] = "ready";
  const int sent = retry_while_would_block(
      *os_, [&] { return os_->send(client, message, static_cast<int>(sizeof(message)), 0); });
  ASSERT_EQ(sent, static_cast<int>(sizeof(message))) << os_->last_error();
  char buffer[16]{};
  const int received = retry_while_would_block(
      *os_, [&] { return os_->recv(server, buffer, static_cast<int>(sizeof(buffer)), 0); });
  ASSERT_EQ(received, static_cast<int>(sizeof(message))) << os_->last_error();
  EXPECT_STREQ(buffer, "ready");

  // Graceful shutdown: the peer reads the end of the stream.
  ASSERT_EQ(os_->shutdown(client, kSdSend), 0) << os_->last_error();
  const int end = retry_while_would_block(
      *os_, [&] { return os_->recv(server, buffer, static_cast<int>(sizeof(buffer)), 0); });
  EXPECT_EQ(end, 0) << os_->last_error();
}

TEST_F(WindowsOsSocket, NonBlockingCallsWithNothingToDoWouldBlock) {
  Ipv4Address address;
  const Socket listener = listen_on_loopback(&address);
  ASSERT_EQ(os_->set_nonblocking(listener, true), 0);
  EXPECT_EQ(os_->accept(listener, nullptr), kInvalidSocket);
  EXPECT_EQ(os_->last_error(), kWsaEwouldblock);

  const Socket client = open(kSockStream);
  ASSERT_EQ(os_->connect(client, address), 0) << os_->last_error();  // blocking connect
  ASSERT_EQ(os_->set_nonblocking(client, true), 0);
  char byte = 0;
  EXPECT_EQ(os_->recv(client, &byte, 1, 0), kSocketError);
  EXPECT_EQ(os_->last_error(), kWsaEwouldblock);
}

TEST_F(WindowsOsSocket, AbortiveCloseResetsThePeer) {
  SCOPED_TRACE("rule D2: an abortive reset gives ERR; recv returns the detailed error");
  if (WindowsOs::running_under_wine()) {
    GTEST_SKIP() << "Wine 8 closes gracefully despite SO_LINGER {1, 0} (the peer reads end of "
                    "stream, not WSAECONNRESET); checked on the Windows runners";
  }
  Ipv4Address address;
  const Socket listener = listen_on_loopback(&address);
  const Socket client = open(kSockStream);
  ASSERT_EQ(os_->connect(client, address), 0) << os_->last_error();
  const Socket server = os_->accept(listener, nullptr);
  ASSERT_NE(server, kInvalidSocket) << os_->last_error();
  opened_.push_back(server);
  ASSERT_EQ(os_->set_linger(client, true, 0), 0) << os_->last_error();
  ASSERT_EQ(os_->closesocket(client), 0);
  forget(client);
  ASSERT_EQ(os_->set_nonblocking(server, true), 0);
  char byte = 0;
  const int received =
      retry_while_would_block(*os_, [&] { return os_->recv(server, &byte, 1, 0); });
  EXPECT_EQ(received, kSocketError);
  EXPECT_EQ(os_->last_error(), kWsaEconnreset) << os_error_name(os_->last_error());
}

TEST_F(WindowsOsSocket, ConnectToAClosedPortIsRefused) {
  // Learn a free port, then close its socket so nothing listens there.
  const Socket probe = open(kSockStream);
  ASSERT_EQ(os_->bind(probe, Ipv4Address{kLoopbackHost, 0}), 0);
  Ipv4Address address;
  ASSERT_EQ(os_->getsockname(probe, &address), 0);
  ASSERT_EQ(os_->closesocket(probe), 0);
  forget(probe);
  const Socket client = open(kSockStream);
  EXPECT_EQ(os_->connect(client, address), kSocketError);  // Windows retries for about 2 s
  EXPECT_EQ(os_->last_error(), kWsaEconnrefused) << os_error_name(os_->last_error());
}

TEST_F(WindowsOsSocket, UdpSendtoRecvfromOnLoopback) {
  const Socket receiver = open(kSockDgram);
  ASSERT_EQ(os_->bind(receiver, Ipv4Address{kLoopbackHost, 0}), 0) << os_->last_error();
  Ipv4Address receiver_address;
  ASSERT_EQ(os_->getsockname(receiver, &receiver_address), 0);
  const Socket sender = open(kSockDgram);
  ASSERT_EQ(os_->bind(sender, Ipv4Address{kLoopbackHost, 0}), 0);
  Ipv4Address sender_address;
  ASSERT_EQ(os_->getsockname(sender, &sender_address), 0);

  const char datagram[] = "dgram";
  ASSERT_EQ(os_->sendto(sender, datagram, static_cast<int>(sizeof(datagram)), 0, receiver_address),
            static_cast<int>(sizeof(datagram)))
      << os_->last_error();
  ASSERT_EQ(os_->set_nonblocking(receiver, true), 0);
  char buffer[16]{};
  Ipv4Address from;
  const int received = retry_while_would_block(*os_, [&] {
    return os_->recvfrom(receiver, buffer, static_cast<int>(sizeof(buffer)), 0, &from);
  });
  ASSERT_EQ(received, static_cast<int>(sizeof(datagram))) << os_->last_error();
  EXPECT_STREQ(buffer, "dgram");
  EXPECT_EQ(from, sender_address);
}

TEST_F(WindowsOsSocket, CallsOnANonSocketFailWithNotsock) {
  EXPECT_EQ(os_->closesocket(kInvalidSocket), kSocketError);
  EXPECT_EQ(os_->last_error(), kWsaEnotsock);
  Ipv4Address address;
  EXPECT_EQ(os_->getsockname(kInvalidSocket, &address), kSocketError);
  EXPECT_EQ(os_->last_error(), kWsaEnotsock);
}

TEST_F(WindowsOsSocket, LastErrorIsPerThread) {
  // Each thread fails a different call, and each reads its own code afterwards.
  std::atomic<int> stage{0};
  std::uint32_t other_thread_error = 0;
  Result<std::unique_ptr<Thread>> other = os_->thread_start("other", [&] {
    (void)os_->closesocket(kInvalidSocket);  // WSAENOTSOCK on this thread
    stage.store(1);
    while (stage.load() != 2) {
      os_->sleep_ms(1);
    }
    other_thread_error = os_->last_error();
  });
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  while (stage.load() != 1) {
    os_->sleep_ms(1);
  }
  OverlappedEntry entry{};
  std::uint32_t removed = 0;
  EXPECT_FALSE(os_->get_queued_completion_status_ex(kInvalidPort, &entry, 1, &removed, 0, true));
  const std::uint32_t this_thread_error = os_->last_error();  // kErrorInvalidParameter
  stage.store(2);
  other.value()->join();
  EXPECT_EQ(this_thread_error, kErrorInvalidParameter);
  EXPECT_EQ(other_thread_error, kWsaEnotsock);
}

// ---- Threads, locks, time ----------------------------------------------------------------------

TEST(WindowsOsSync, MutexExcludesAcrossThreads) {
  std::unique_ptr<WindowsOs> os = make_os_without_psn_requirement();
  ASSERT_NE(os, nullptr);
  std::unique_ptr<Mutex> mutex = os->mutex_create();
  constexpr int kIncrements = 20000;
  long counter = 0;  // deliberately not atomic: the mutex must protect it
  auto body = [&] {
    for (int i = 0; i < kIncrements; ++i) {
      mutex->lock();
      counter = counter + 1;
      mutex->unlock();
    }
  };
  Result<std::unique_ptr<Thread>> a = os->thread_start("a", body);
  Result<std::unique_ptr<Thread>> b = os->thread_start("b", body);
  ASSERT_TRUE(a.ok() && b.ok());
  a.value()->join();
  b.value()->join();
  EXPECT_EQ(counter, 2L * kIncrements);
}

TEST(WindowsOsSync, TryLockFailsWhileAnotherThreadHoldsTheMutex) {
  std::unique_ptr<WindowsOs> os = make_os_without_psn_requirement();
  ASSERT_NE(os, nullptr);
  std::unique_ptr<Mutex> mutex = os->mutex_create();
  ASSERT_TRUE(mutex->try_lock());
  bool other_got_it = true;
  Result<std::unique_ptr<Thread>> other =
      os->thread_start("other", [&] { other_got_it = mutex->try_lock(); });
  ASSERT_TRUE(other.ok());
  other.value()->join();
  EXPECT_FALSE(other_got_it);
  mutex->unlock();
  EXPECT_TRUE(mutex->try_lock());
  mutex->unlock();
}

TEST(WindowsOsSync, ThreadRunsItsBodyBeforeJoinReturns) {
  std::unique_ptr<WindowsOs> os = make_os_without_psn_requirement();
  ASSERT_NE(os, nullptr);
  std::atomic<bool> ran{false};
  Result<std::unique_ptr<Thread>> thread = os->thread_start("body", [&] { ran.store(true); });
  ASSERT_TRUE(thread.ok()) << thread.status().to_string();
  thread.value()->join();
  EXPECT_TRUE(ran.load());
}

TEST(WindowsOsSync, ClockIsMonotonicAndSleepAdvancesIt) {
  std::unique_ptr<WindowsOs> os = make_os_without_psn_requirement();
  ASSERT_NE(os, nullptr);
  std::uint64_t previous_ns = os->now_ns();
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t now_ns = os->now_ns();
    ASSERT_GE(now_ns, previous_ns);
    previous_ns = now_ns;
  }
  const std::uint64_t before_ns = os->now_ns();
  os->sleep_ms(kShortWaitMs);
  const std::uint64_t slept_ns = os->now_ns() - before_ns;
  EXPECT_GE(slept_ns, std::uint64_t{kShortWaitMs / 2} * 1'000'000);
  EXPECT_LT(slept_ns, std::uint64_t{kLongWaitMs} * 1'000'000);
}

// ---- The real ProcessSocketNotifications (Windows 10 build 20348 and later) ---------------

// A connected loopback pair and a port, with the real call. Skips where the call is missing.
class WindowsOsRealPsn : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
    if (!made.ok()) {
      GTEST_SKIP() << "needs the real ProcessSocketNotifications (runs on Windows runners): "
                   << made.status().to_string();
    }
    os_ = std::move(made).value();
    port_ = os_->create_io_completion_port(0);
    ASSERT_NE(port_, kInvalidPort);
    listener_ = os_->socket(kAfInet, kSockStream, kIpprotoTcp);
    ASSERT_NE(listener_, kInvalidSocket);
    ASSERT_EQ(os_->bind(listener_, Ipv4Address{kLoopbackHost, 0}), 0);
    ASSERT_EQ(os_->listen(listener_, 4), 0);
    Ipv4Address address;
    ASSERT_EQ(os_->getsockname(listener_, &address), 0);
    client_ = os_->socket(kAfInet, kSockStream, kIpprotoTcp);
    ASSERT_NE(client_, kInvalidSocket);
    ASSERT_EQ(os_->connect(client_, address), 0) << os_->last_error();
    server_ = os_->accept(listener_, nullptr);
    ASSERT_NE(server_, kInvalidSocket) << os_->last_error();
  }
  void TearDown() override {
    if (os_ == nullptr) {
      return;
    }
    for (Socket s : {server_, client_, listener_}) {
      if (s != kInvalidSocket) {
        EXPECT_EQ(os_->closesocket(s), 0);
      }
    }
    if (port_ != kInvalidPort) {
      EXPECT_TRUE(os_->close_port(port_));
    }
  }

  std::unique_ptr<WindowsOs> os_;
  Port port_ = kInvalidPort;
  Socket listener_ = kInvalidSocket;
  Socket client_ = kInvalidSocket;
  Socket server_ = kInvalidSocket;
};

TEST_F(WindowsOsRealPsn, A1_ReadableSocketDeliversInWithItsKey) {
  SCOPED_TRACE("rules A1, B2, C4, and the layout (key in lpCompletionKey, mask in bytes)");
  SockNotifyRegistration registration{server_,
                                      0x1234,
                                      kSockNotifyRegisterEventIn,
                                      kSockNotifyOpEnable,
                                      kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                                      99};
  const char byte = 'x';
  ASSERT_EQ(os_->send(client_, &byte, 1, 0), 1);
  OverlappedEntry entries[4]{};
  std::uint32_t received = 0;
  const std::uint32_t result = os_->process_socket_notifications(
      port_, 1, &registration, kLongWaitMs, 4, entries, &received);
  ASSERT_EQ(result, kErrorSuccess) << os_error_name(result) << " (" << result << ")";
  EXPECT_EQ(registration.registration_result, 0u);
  ASSERT_GE(received, 1u);
  EXPECT_EQ(entries[0].completion_key, 0x1234u);
  EXPECT_NE(entries[0].bytes_transferred & kSockNotifyEventIn, 0u) << entries[0].bytes_transferred;
}

TEST_F(WindowsOsRealPsn, B5_RemoveQueuesOneRemovePacketAndNothingAfterIt) {
  SCOPED_TRACE("rules B5, E3, A2");
  SockNotifyRegistration registration{server_,
                                      0x5678,
                                      kSockNotifyRegisterEventIn,
                                      kSockNotifyOpEnable,
                                      kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel,
                                      99};
  ASSERT_EQ(os_->process_socket_notifications(port_, 1, &registration, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  ASSERT_EQ(registration.registration_result, 0u);
  registration.operation = kSockNotifyOpRemove;
  OverlappedEntry entries[4]{};
  std::uint32_t received = 0;
  ASSERT_EQ(os_->process_socket_notifications(port_, 1, &registration, kLongWaitMs, 4, entries,
                                              &received),
            kErrorSuccess);
  EXPECT_EQ(registration.registration_result, 0u);
  ASSERT_EQ(received, 1u);
  EXPECT_EQ(entries[0].completion_key, 0x5678u);
  EXPECT_NE(entries[0].bytes_transferred & kSockNotifyEventRemove, 0u)
      << entries[0].bytes_transferred;
  // Nothing follows the REMOVE packet (spec E3); the timeout is WAIT_TIMEOUT (spec A2).
  const std::uint32_t after =
      os_->process_socket_notifications(port_, 0, nullptr, kShortWaitMs, 4, entries, &received);
  EXPECT_EQ(after, kWaitTimeout) << os_error_name(after) << " (" << after << ")";
}

}  // namespace
}  // namespace readyport
