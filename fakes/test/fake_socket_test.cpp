// FakeOs socket model: a smoke set, one behaviour per test (TCP over loopback, UDP, buffers,
// SOCKET values, blocking-call deadlock). The spec's PSN rules are covered by the conformance
// suite (conformance/); fake_psn_test.cpp has a few PSN paths of the fake itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "readyport/fake/fake_os.hpp"

namespace readyport {
namespace {

// A listener and a connected, non-blocking client/server pair.
struct Connection {
  Socket listener = kInvalidSocket;
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
  Ipv4Address address{};
};

Socket tcp_socket(FakeOs& os) {
  Socket s = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  EXPECT_NE(s, kInvalidSocket);
  EXPECT_EQ(os.set_nonblocking(s, true), 0);
  return s;
}

Socket udp_socket(FakeOs& os, Ipv4Address* address_out) {
  Socket s = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
  EXPECT_NE(s, kInvalidSocket);
  EXPECT_EQ(os.set_nonblocking(s, true), 0);
  EXPECT_EQ(os.bind(s, Ipv4Address{kLoopbackHost, 0}), 0);
  EXPECT_EQ(os.getsockname(s, address_out), 0);
  return s;
}

Socket listening_socket(FakeOs& os, Ipv4Address* address_out) {
  Socket listener = tcp_socket(os);
  EXPECT_EQ(os.bind(listener, Ipv4Address{kLoopbackHost, 0}), 0);
  EXPECT_EQ(os.listen(listener, kSomaxconn), 0);
  EXPECT_EQ(os.getsockname(listener, address_out), 0);
  return listener;
}

Connection connect_pair(FakeOs& os) {
  Connection c;
  c.listener = listening_socket(os, &c.address);
  c.client = tcp_socket(os);
  EXPECT_EQ(os.connect(c.client, c.address), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  Ipv4Address peer{};
  c.server = os.accept(c.listener, &peer);
  EXPECT_NE(c.server, kInvalidSocket);
  Ipv4Address client_address{};
  EXPECT_EQ(os.getsockname(c.client, &client_address), 0);
  EXPECT_EQ(peer, client_address);
  EXPECT_EQ(os.set_nonblocking(c.server, true), 0);
  return c;
}

int send_text(FakeOs& os, Socket s, const std::string& text) {
  return os.send(s, text.data(), static_cast<int>(text.size()), 0);
}

std::string recv_text(FakeOs& os, Socket s, int length_max = 256) {
  std::string buffer(static_cast<std::size_t>(length_max), '\0');
  const int got = os.recv(s, buffer.data(), length_max, 0);
  if (got < 0) {
    return "<error " + std::to_string(os.last_error()) + ">";
  }
  buffer.resize(static_cast<std::size_t>(got));
  return buffer;
}

TEST(FakeSocket, BindEphemeralPortsAreLowestFirstAndConflictsFail) {
  FakeOs os;
  Ipv4Address first{};
  Socket a = listening_socket(os, &first);
  EXPECT_EQ(first.host, kLoopbackHost);
  EXPECT_EQ(first.port, 49152);
  Socket b = tcp_socket(os);
  EXPECT_EQ(os.bind(b, first), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEaddrinuse);
  // TCP and UDP ports are separate namespaces.
  Socket u = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
  EXPECT_EQ(os.bind(u, first), 0);
  EXPECT_EQ(os.bind(u, first), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEinval);  // already bound
  EXPECT_EQ(os.bind(b, Ipv4Address{0x0A000001, 0}), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEaddrnotavail);
  EXPECT_EQ(os.closesocket(a), 0);
  EXPECT_EQ(os.bind(b, first), 0);  // the port is free again
}

// A socket of `type` bound to an ephemeral port (port 0): its port, or 0 with the error in
// *error_out when bind fails.
std::uint16_t bind_ephemeral(FakeOs& os, int type, Socket* socket_out,
                             std::uint32_t* error_out = nullptr) {
  *socket_out = os.socket(kAfInet, type, 0);
  EXPECT_NE(*socket_out, kInvalidSocket);
  if (os.bind(*socket_out, Ipv4Address{kLoopbackHost, 0}) != 0) {
    if (error_out != nullptr) {
      *error_out = os.last_error();
    }
    return 0;
  }
  Ipv4Address address{};
  EXPECT_EQ(os.getsockname(*socket_out, &address), 0);
  return address.port;
}

constexpr std::uint32_t kEphemeralPorts =
    std::uint32_t{kFakeEphemeralPortLast} - kFakeEphemeralPortFirst + 1;

// Closed ports are re-used lowest first, across the 64-port words of the fake's port bitmap;
// explicitly bound ports in the range are skipped; TCP and UDP keep separate ranges.
TEST(FakeSocket, BindEphemeralReusesTheLowestFreedPort) {
  FakeOs os;
  std::vector<Socket> tcp(130);
  for (std::size_t i = 0; i < tcp.size(); ++i) {
    EXPECT_EQ(bind_ephemeral(os, kSockStream, &tcp[i]), kFakeEphemeralPortFirst + i);
  }
  // Free the ports at offsets 129, 64 and 3 (the last, a word's first, one in the first word).
  for (std::size_t i : {129u, 64u, 3u}) {
    EXPECT_EQ(os.closesocket(tcp[i]), 0);
  }
  // UDP has its own range: its first port is the range's first.
  Socket udp = kInvalidSocket;
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &udp), kFakeEphemeralPortFirst);
  // An explicit bind takes offset 64 (in the range): the ephemeral pick passes over it.
  Socket explicit_bound = os.socket(kAfInet, kSockStream, 0);
  EXPECT_EQ(os.bind(explicit_bound, Ipv4Address{0, kFakeEphemeralPortFirst + 64}), 0);
  Socket s = kInvalidSocket;
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst + 3);
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst + 129);
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst + 130);
  // Closing the explicit one frees offset 64 for the next pick.
  EXPECT_EQ(os.closesocket(explicit_bound), 0);
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst + 64);
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst + 131);
  os.check_invariants();
}

// Every ephemeral port bound: WSAENOBUFS; ports freed anywhere in the range come back lowest first.
TEST(FakeSocket, BindEphemeralExhaustsTheRangeThenReusesFreedPorts) {
  FakeOptions options;
  options.sockets_max = kEphemeralPorts + 8;
  FakeOs os(options);
  std::vector<Socket> udp(kEphemeralPorts);
  for (std::uint32_t i = 0; i < kEphemeralPorts; ++i) {
    ASSERT_EQ(bind_ephemeral(os, kSockDgram, &udp[i]), kFakeEphemeralPortFirst + i);
  }
  Socket s = kInvalidSocket;
  std::uint32_t error = 0;
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &s, &error), 0);
  EXPECT_EQ(error, kWsaEnobufs);
  EXPECT_EQ(os.closesocket(s), 0);
  // The last port, and ports in the middle of the range, in no particular order.
  for (std::uint32_t offset : {kEphemeralPorts - 1, 10'000u, 777u}) {
    EXPECT_EQ(os.closesocket(udp[offset]), 0);
  }
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &s), kFakeEphemeralPortFirst + 777);
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &s), kFakeEphemeralPortFirst + 10'000);
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &s), kFakeEphemeralPortLast);
  EXPECT_EQ(bind_ephemeral(os, kSockDgram, &s, &error), 0);
  EXPECT_EQ(error, kWsaEnobufs);
  // TCP's range is untouched.
  EXPECT_EQ(bind_ephemeral(os, kSockStream, &s), kFakeEphemeralPortFirst);
  os.check_invariants();
}

// Random binds (ephemeral and explicit) and closes against a model: the ephemeral pick is always
// the lowest port of the range that no open socket holds, and an explicit bind of a held port
// fails with WSAEADDRINUSE.
TEST(FakeSocket, BindEphemeralMatchesALowestFreeModel) {
  FakeOptions options;
  options.sockets_max = 1'000;
  FakeOs os(options);
  std::mt19937 random(20261126);         // fixed: the same walk every run
  std::map<std::uint16_t, Socket> held;  // the model: bound port -> its socket
  // Ports near the range's start, so that binds and closes keep meeting the same words.
  std::uniform_int_distribution<std::uint32_t> offsets(0, 199);
  for (int step = 0; step < 5'000; ++step) {
    const std::uint32_t choice = random() % 8;
    if (choice < 4 && held.size() < 180) {
      std::uint16_t lowest = kFakeEphemeralPortFirst;
      while (held.count(lowest) != 0) {
        ++lowest;
      }
      Socket s = kInvalidSocket;
      ASSERT_EQ(bind_ephemeral(os, kSockStream, &s), lowest) << "step " << step;
      held.emplace(lowest, s);
    } else if (choice < 7 && !held.empty()) {
      auto victim = held.begin();
      std::advance(victim, random() % held.size());
      ASSERT_EQ(os.closesocket(victim->second), 0);
      held.erase(victim);
    } else {
      const auto port = static_cast<std::uint16_t>(kFakeEphemeralPortFirst + offsets(random));
      Socket s = os.socket(kAfInet, kSockStream, 0);
      if (held.count(port) != 0) {
        ASSERT_EQ(os.bind(s, Ipv4Address{kLoopbackHost, port}), kSocketError);
        ASSERT_EQ(os.last_error(), kWsaEaddrinuse);
        ASSERT_EQ(os.closesocket(s), 0);
      } else {
        ASSERT_EQ(os.bind(s, Ipv4Address{kLoopbackHost, port}), 0);
        held.emplace(port, s);
      }
    }
  }
  EXPECT_EQ(os.stats().sockets_open, held.size());
  os.check_invariants();
}

TEST(FakeSocket, TcpConnectAcceptSendRecv) {
  FakeOs os;
  Connection c = connect_pair(os);
  EXPECT_EQ(send_text(os, c.client, "hello"), 5);
  EXPECT_EQ(recv_text(os, c.server), "hello");
  EXPECT_EQ(recv_text(os, c.server), "<error 10035>");  // WSAEWOULDBLOCK
  EXPECT_EQ(send_text(os, c.server, "world"), 5);
  EXPECT_EQ(recv_text(os, c.client, 3), "wor");
  EXPECT_EQ(recv_text(os, c.client), "ld");
  // Nothing more pending on the listener.
  EXPECT_EQ(os.accept(c.listener, nullptr), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  // A second connect on a connected socket.
  EXPECT_EQ(os.connect(c.client, c.address), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEisconn);
}

TEST(FakeSocket, BlockingConnectCompletesAtOnce) {
  FakeOs os;
  Ipv4Address address{};
  Socket listener = listening_socket(os, &address);
  Socket client = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  EXPECT_EQ(os.connect(client, address), 0);
  EXPECT_NE(os.accept(listener, nullptr), kInvalidSocket);
}

TEST(FakeSocket, RefusedConnectWithoutListenerOrBacklog) {
  FakeOptions options;
  options.backlog_max = 1;
  FakeOs os(options);
  // Blocking: the error at once.
  Socket blocking = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  EXPECT_EQ(os.connect(blocking, Ipv4Address{kLoopbackHost, 9}), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEconnrefused);
  // Non-blocking: WSAEWOULDBLOCK, then SO_ERROR (spec D3).
  Socket client = tcp_socket(os);
  EXPECT_EQ(os.connect(client, Ipv4Address{kLoopbackHost, 9}), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  std::uint32_t error = 0;
  EXPECT_EQ(os.get_socket_error(client, &error), 0);
  EXPECT_EQ(error, kWsaEconnrefused);
  EXPECT_EQ(os.get_socket_error(client, &error), 0);
  EXPECT_EQ(error, 0u);  // cleared
  // A full backlog (clamped to backlog_max = 1) refuses the second client.
  Ipv4Address address{};
  listening_socket(os, &address);
  Socket first = tcp_socket(os);
  Socket second = tcp_socket(os);
  EXPECT_EQ(os.connect(first, address), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  EXPECT_EQ(os.connect(second, address), kSocketError);
  EXPECT_EQ(os.get_socket_error(second, &error), 0);
  EXPECT_EQ(error, kWsaEconnrefused);
  EXPECT_EQ(os.get_socket_error(first, &error), 0);
  EXPECT_EQ(error, 0u);
}

TEST(FakeSocket, ListenAgainChangesTheBacklogKeepingQueuedConnections) {
  FakeOs os;
  Ipv4Address address{};
  Socket listener = listening_socket(os, &address);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(os.connect(tcp_socket(os), address), kSocketError);
    EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  }
  EXPECT_EQ(os.listen(listener, 1), 0);
  Socket refused = tcp_socket(os);
  EXPECT_EQ(os.connect(refused, address), kSocketError);
  std::uint32_t error = 0;
  EXPECT_EQ(os.get_socket_error(refused, &error), 0);
  EXPECT_EQ(error, kWsaEconnrefused);  // 3 queued >= the new backlog 1
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(os.accept(listener, nullptr), kInvalidSocket);
  }
  os.check_invariants();
}

TEST(FakeSocket, ShutdownSendIsEndOfStreamAfterTheData) {
  FakeOs os;
  Connection c = connect_pair(os);
  EXPECT_EQ(send_text(os, c.client, "bye"), 3);
  EXPECT_EQ(os.shutdown(c.client, kSdSend), 0);
  EXPECT_EQ(send_text(os, c.client, "more"), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEshutdown);
  EXPECT_EQ(recv_text(os, c.server), "bye");
  EXPECT_EQ(recv_text(os, c.server), "");  // end of stream
  EXPECT_EQ(recv_text(os, c.server), "");
  // The other direction still works (half close).
  EXPECT_EQ(send_text(os, c.server, "ok"), 2);
  EXPECT_EQ(recv_text(os, c.client), "ok");
}

TEST(FakeSocket, CloseIsFinAndLingerZeroIsReset) {
  FakeOs os;
  Connection graceful = connect_pair(os);
  EXPECT_EQ(send_text(os, graceful.client, "x"), 1);
  EXPECT_EQ(os.closesocket(graceful.client), 0);
  EXPECT_EQ(recv_text(os, graceful.server), "x");
  EXPECT_EQ(recv_text(os, graceful.server), "");
  // Sending to a closed peer is taken once, then the connection is reset.
  EXPECT_EQ(send_text(os, graceful.server, "late"), 4);
  EXPECT_EQ(send_text(os, graceful.server, "late"), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEconnreset);

  Connection aborted = connect_pair(os);
  EXPECT_EQ(send_text(os, aborted.client, "lost"), 4);
  EXPECT_EQ(os.set_linger(aborted.server, true, 0), 0);
  EXPECT_EQ(os.closesocket(aborted.server), 0);
  EXPECT_EQ(recv_text(os, aborted.client), "<error 10054>");  // WSAECONNRESET
  std::uint32_t error = 0;
  EXPECT_EQ(os.get_socket_error(aborted.client, &error), 0);
  EXPECT_EQ(error, kWsaEconnreset);
}

TEST(FakeSocket, ClosingAListenerResetsPendingConnections) {
  FakeOs os;
  Ipv4Address address{};
  Socket listener = listening_socket(os, &address);
  Socket client = tcp_socket(os);
  EXPECT_EQ(os.connect(client, address), kSocketError);
  EXPECT_EQ(os.closesocket(listener), 0);
  EXPECT_EQ(recv_text(os, client), "<error 10054>");
}

TEST(FakeSocket, SendStopsAtThePeersReceiveBuffer) {
  FakeOptions options;
  options.receive_buffer_bytes = 16;
  FakeOs os(options);
  Connection c = connect_pair(os);
  const std::string big(40, 'a');
  EXPECT_EQ(send_text(os, c.client, big), 16);
  EXPECT_EQ(send_text(os, c.client, big), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  EXPECT_EQ(recv_text(os, c.server, 10), std::string(10, 'a'));
  EXPECT_EQ(send_text(os, c.client, big), 10);
}

TEST(FakeSocket, RecvPeekLeavesTheData) {
  FakeOs os;
  Connection c = connect_pair(os);
  EXPECT_EQ(send_text(os, c.client, "abc"), 3);
  char buffer[8] = {};
  EXPECT_EQ(os.recv(c.server, buffer, 8, 2 /* MSG_PEEK */), 3);
  EXPECT_EQ(recv_text(os, c.server), "abc");
  EXPECT_EQ(os.recv(c.server, buffer, 8, 1 /* MSG_OOB */), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEopnotsupp);
}

TEST(FakeSocket, UdpDatagramsWithAddressesTruncationAndDrops) {
  FakeOptions options;
  options.receive_buffer_bytes = 8;
  FakeOs os(options);
  Ipv4Address a_address{};
  Ipv4Address b_address{};
  Socket a = udp_socket(os, &a_address);
  Socket b = udp_socket(os, &b_address);
  EXPECT_EQ(os.sendto(a, "1234", 4, 0, b_address), 4);
  EXPECT_EQ(os.sendto(a, "5678", 4, 0, b_address), 4);
  EXPECT_EQ(os.sendto(a, "9", 1, 0, b_address), 1);  // queue full (8 bytes): dropped
  char buffer[8] = {};
  Ipv4Address from{};
  EXPECT_EQ(os.recvfrom(b, buffer, 8, 0, &from), 4);
  EXPECT_EQ(std::string(buffer, 4), "1234");
  EXPECT_EQ(from, a_address);
  EXPECT_EQ(os.recvfrom(b, buffer, 2, 0, &from), kSocketError);  // truncated, consumed
  EXPECT_EQ(os.last_error(), kWsaEmsgsize);
  EXPECT_EQ(std::string(buffer, 2), "56");
  EXPECT_EQ(os.recvfrom(b, buffer, 8, 0, &from), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEwouldblock);
  // Nobody bound there: dropped silently.
  EXPECT_EQ(os.sendto(a, "x", 1, 0, Ipv4Address{kLoopbackHost, 9}), 1);
}

TEST(FakeSocket, SocketValuesAreReusedLowestFirst) {
  FakeOptions options;
  options.sockets_max = 3;
  FakeOs os(options);
  Socket a = os.socket(kAfInet, kSockStream, 0);
  Socket b = os.socket(kAfInet, kSockStream, 0);
  Socket c = os.socket(kAfInet, kSockDgram, 0);
  EXPECT_EQ(a, kFakeSocketFirst);
  EXPECT_EQ(b, kFakeSocketFirst + kFakeSocketValueStep);
  EXPECT_EQ(c, kFakeSocketFirst + 2 * kFakeSocketValueStep);
  EXPECT_EQ(os.socket(kAfInet, kSockStream, 0), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEmfile);
  EXPECT_EQ(os.closesocket(b), 0);
  EXPECT_EQ(os.closesocket(a), 0);
  EXPECT_EQ(os.closesocket(a), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEnotsock);
  EXPECT_EQ(os.socket(kAfInet, kSockStream, 0), a);  // spec E5: lowest free value, at once
  EXPECT_EQ(os.socket(kAfInet, kSockStream, 0), b);
  EXPECT_EQ(os.stats().sockets_open, 3u);
}

TEST(FakeSocket, SocketValuesNeverReusedWhenSwitchedOff) {
  FakeOptions options;
  options.socket_reuse = false;
  FakeOs os(options);
  Socket a = os.socket(kAfInet, kSockStream, 0);
  EXPECT_EQ(os.closesocket(a), 0);
  EXPECT_EQ(os.socket(kAfInet, kSockStream, 0), a + kFakeSocketValueStep);
}

TEST(FakeSocket, BadArgumentsAndValues) {
  FakeOs os;
  EXPECT_EQ(os.socket(23 /* AF_INET6 */, kSockStream, 0), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEafnosupport);
  EXPECT_EQ(os.socket(kAfInet, kSockStream, kIpprotoUdp), kInvalidSocket);
  EXPECT_EQ(os.last_error(), kWsaEinval);
  char byte = 0;
  EXPECT_EQ(os.recv(0x1234, &byte, 1, 0), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEnotsock);
  Socket s = tcp_socket(os);
  EXPECT_EQ(os.recv(s, &byte, 1, 0), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEnotconn);
  EXPECT_EQ(os.listen(s, 5), kSocketError);  // not bound
  EXPECT_EQ(os.last_error(), kWsaEinval);
  EXPECT_EQ(os.shutdown(s, kSdSend), kSocketError);
  EXPECT_EQ(os.last_error(), kWsaEnotconn);
}

TEST(FakeSocket, VirtualTimeOnly) {
  FakeOs os;
  EXPECT_EQ(os.now_ns(), 0u);
  os.sleep_ms(25);
  EXPECT_EQ(os.now_ns(), 25'000'000u);
}

TEST(FakeSocket, InlineRuntimeCannotStartThreads) {
  FakeOs os;
  Result<std::unique_ptr<Thread>> thread = os.thread_start("worker", [] {});
  EXPECT_FALSE(thread.ok());
}

TEST(FakeSocket, MutexTryLockNeverBlocks) {
  FakeOs os;
  std::unique_ptr<Mutex> mutex = os.mutex_create();
  mutex->lock();
  EXPECT_FALSE(mutex->try_lock());
  mutex->unlock();
  EXPECT_TRUE(mutex->try_lock());
  mutex->unlock();
}

// Misuse of the fake's mutex asserts (fake_mutex.hpp), on its fast paths too: an unlock() that
// finds it free, a second unlock(), and destruction while held.
TEST(FakeSocketDeathTest, MutexMisuseAsserts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        FakeOs os;
        std::unique_ptr<Mutex> mutex = os.mutex_create();
        mutex->unlock();
      },
      "assertion failed: word == \\(kHeld");
  EXPECT_DEATH(
      {
        FakeOs os;
        std::unique_ptr<Mutex> mutex = os.mutex_create();
        mutex->lock();
        mutex->unlock();
        mutex->unlock();
      },
      "assertion failed: word == \\(kHeld");
  EXPECT_DEATH(
      {
        FakeOs os;
        std::unique_ptr<Mutex> mutex = os.mutex_create();
        mutex->lock();
        mutex.reset();
      },
      "assertion failed: word_.load");
}

TEST(FakeSocketDeathTest, BlockingRecvWithOneThreadIsADeadlock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        FakeOs os;
        Ipv4Address address{};
        listening_socket(os, &address);
        Socket client = os.socket(kAfInet, kSockStream, 0);
        (void)os.connect(client, address);
        char byte = 0;
        (void)os.recv(client, &byte, 1, 0);
      },
      "deadlock");
}

}  // namespace
}  // namespace readyport
