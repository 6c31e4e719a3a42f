// readyport/fake/internal/fake_socket.hpp: FakeOs internals. The socket model: one FakeSocket per
// open socket (TCP over loopback or UDP), the table that hands out SOCKET values and ports, and the
// readiness conditions a socket's state implies (IN, OUT, HANGUP, ERR).
//
// Not a public API: FakeOs (fake_os.hpp) is.
// Ownership: the SocketTable owns open sockets; a listening socket owns its pending connections
// (not yet accepted, no SOCKET value). Pointers between sockets (peer) and to registrations are
// cleared by whoever destroys the target.
// Threading: none of its own; everything runs under the FakeOs state mutex.
// Errors: methods that can fail return a Winsock code (0 = success); misuse asserts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/runtime.hpp"
#include "readyport/os.hpp"

namespace readyport::fake_internal {

struct FakeRegistration;

inline constexpr std::uint16_t kEphemeralPortFirst = kFakeEphemeralPortFirst;
inline constexpr std::uint16_t kEphemeralPortLast = kFakeEphemeralPortLast;
// The largest UDP payload over IPv4.
inline constexpr int kDatagramBytesMax = 65507;
// recv/recvfrom flag MSG_PEEK: the only flag the fake supports.
inline constexpr int kMsgPeek = 2;
// Datagrams one UDP socket queues at most (besides the byte bound, receive_buffer_bytes), so that
// empty datagrams are bounded too.
inline constexpr std::size_t kDatagramsQueuedMax = 1024;

enum class SocketKind : std::uint8_t { kStream, kDatagram };

// A stream socket's state machine:
//   kIdle --listen--> kListening
//   kIdle --connect to a listener--> kConnected;  kIdle --refused (non-blocking)--> kRefused
//   (pending connection) --accept--> kConnected (it was kConnected while pending)
//   kConnected --peer closed with linger {on, 0}, or send after the peer closed--> kReset
// A datagram socket stays kIdle.
enum class StreamState : std::uint8_t {
  kIdle,       // created, maybe bound; neither listening nor connected
  kListening,  // listen() was called
  kConnected,  // connected to a peer (which may since have shut down or closed)
  kRefused,    // a non-blocking connect failed: ERR, SO_ERROR WSAECONNREFUSED (spec D3)
  kReset,      // the connection was aborted: ERR and HANGUP, recv/send WSAECONNRESET (spec D2)
};

struct Datagram {
  Ipv4Address from;
  std::vector<unsigned char> bytes;
};

struct FakeSocket {
  Socket value = kInvalidSocket;  // kInvalidSocket while a pending connection is not accepted
  std::uint64_t serial = 0;       // identity, never reused (SOCKET values are, spec E5)
  SocketKind kind = SocketKind::kStream;
  StreamState state = StreamState::kIdle;
  bool nonblocking = false;   // sockets start blocking, as on Windows
  bool linger_abort = false;  // SO_LINGER {on, 0}: closesocket resets the connection
  bool bound = false;         // local holds the bound address
  Ipv4Address local{};
  Ipv4Address remote{};             // the peer's address while connected
  std::uint32_t pending_error = 0;  // SO_ERROR, cleared by get_socket_error

  // Listening: connections established but not yet accepted, oldest first (spec D6).
  std::uint32_t backlog = 0;
  std::deque<std::unique_ptr<FakeSocket>> accept_queue;

  // Connected stream. peer is null once the peer socket was closed.
  FakeSocket* peer = nullptr;
  bool peer_fin = false;      // the peer shut down sending or closed: EOF after the buffer
  bool send_shut = false;     // shutdown(SD_SEND) or SD_BOTH on this socket
  bool receive_shut = false;  // shutdown(SD_RECEIVE) or SD_BOTH on this socket
  std::deque<unsigned char> stream_bytes;  // the receive buffer

  // Datagram: the receive queue, bounded by receive_buffer_bytes.
  std::deque<Datagram> datagrams;
  std::size_t datagram_bytes = 0;

  // Notifications: the registration (one port at most, spec B8), and blocked calls (FIFO).
  FakeRegistration* registration = nullptr;
  std::vector<Waiter*> waiters;
};

// The conditions that hold for a socket now, as kSockNotifyEvent* bits (never REMOVE):
// IN: data, end of stream, a pending connection (spec D6) or a queued datagram;
// OUT: a connected stream whose peer can take bytes and whose sending side is open, or UDP;
// HANGUP: the stream's peer shut down or the connection was reset (never UDP, spec D2);
// ERR: a failed connect (spec D3) or a reset.
std::uint32_t socket_conditions(const FakeSocket& socket, std::uint32_t receive_buffer_bytes);

// Free bytes in a stream socket's receive buffer.
std::size_t stream_space(const FakeSocket& socket, std::uint32_t receive_buffer_bytes);

// The bound ports of one socket kind inside the ephemeral range, as a two-level bitmap: a bit per
// port, and a summary bit per word of ports saying that word is full. free_lowest() reads the
// summary (4 words) and one word of ports, whatever the number of sockets: bind()'s lowest free
// port without a search of the bound ports below it. About 4 KiB for both kinds, no allocation.
// Ownership: a plain value (no pointers), inside the SocketTable; lifetime: the table's.
// Threading: none of its own (the FakeOs state mutex). Errors: none; a port outside the range,
// inserting a bound port or erasing a free one asserts.
class EphemeralPortBitmap {
 public:
  static constexpr std::uint32_t kPortCount =
      std::uint32_t{kEphemeralPortLast} - kEphemeralPortFirst + 1;

  // Whether the port is in the ephemeral range (the ports this bitmap tracks).
  static bool in_range(std::uint16_t port) {
    return std::uint32_t{port} - kEphemeralPortFirst < kPortCount;  // below the range wraps
  }
  bool contains(std::uint16_t port) const;
  void insert(std::uint16_t port);
  void erase(std::uint16_t port);
  // The lowest port of the range that is not bound, or 0 when every one is.
  std::uint16_t free_lowest() const;

 private:
  static constexpr std::uint32_t kWordBits = 64;
  static constexpr std::uint32_t kWordCount = kPortCount / kWordBits;
  static constexpr std::uint32_t kSummaryCount = kWordCount / kWordBits;
  static_assert(kPortCount % (kWordBits * kWordBits) == 0,
                "the ephemeral range fills whole summary words");

  std::array<std::uint64_t, kWordCount> bound_words_{};    // bit set: that port is bound
  std::array<std::uint64_t, kSummaryCount> full_words_{};  // bit set: that word is all bound
};

class SocketTable {
 public:
  explicit SocketTable(const FakeOptions& options);
  SocketTable(const SocketTable&) = delete;
  SocketTable& operator=(const SocketTable&) = delete;

  // The open socket with this value, or null (spec B9: WSAENOTSOCK for the caller).
  FakeSocket* find(Socket value);
  const FakeSocket* find(Socket value) const;
  // Opens a socket with the lowest free value (or a never-used one, per options.socket_reuse).
  // Returns 0 and the socket, or WSAEMFILE past options.sockets_max.
  std::uint32_t open(SocketKind kind, FakeSocket** socket_out);
  // A pending connection: a socket with no value yet, owned by the caller until adopted.
  std::unique_ptr<FakeSocket> make_pending(SocketKind kind);
  // accept(): gives a pending connection a value. Returns 0, or WSAEMFILE (nothing changed).
  std::uint32_t adopt(std::unique_ptr<FakeSocket>& pending, FakeSocket** socket_out);
  // Destroys an open socket and frees its value and port. The caller has already detached its
  // peer, registration, waiters and pending connections.
  void destroy(FakeSocket& socket);

  // bind(): host 0 or loopback; port 0 picks the lowest free ephemeral port. Returns 0,
  // WSAEINVAL (already bound), WSAEADDRNOTAVAIL, WSAEADDRINUSE or WSAENOBUFS (no free port).
  std::uint32_t bind(FakeSocket& socket, const Ipv4Address& address);
  // The socket bound to this destination (loopback or host 0, same kind), or null.
  FakeSocket* find_bound(SocketKind kind, const Ipv4Address& destination);

  std::size_t open_count() const { return sockets_.size(); }
  // Blocking calls parked on open sockets.
  std::size_t blocked_count() const;
  // Every open socket in value order (deterministic).
  std::vector<FakeSocket*> sockets_in_order();
  // The same, read-only: for invariant checks.
  const std::map<Socket, std::unique_ptr<FakeSocket>>& sockets() const { return sockets_; }
  // Checks the table's own invariants (values, bound ports); asserts.
  void check_invariants() const;

 private:
  static std::uint32_t port_key(SocketKind kind, std::uint16_t port);
  EphemeralPortBitmap& ephemeral_ports(SocketKind kind);

  const FakeOptions& options_;
  std::map<Socket, std::unique_ptr<FakeSocket>> sockets_;
  std::set<Socket> free_values_;  // closed values below next_value_ (reuse on)
  Socket next_value_ = kFakeSocketFirst;
  std::map<std::uint32_t, FakeSocket*> bound_;  // (kind, port) -> the socket bound to it
  // The ephemeral-range keys of bound_, by kind (index SocketKind): bind()'s lowest free port.
  std::array<EphemeralPortBitmap, 2> ephemeral_bound_{};
  std::uint64_t next_serial_ = 1;
};

}  // namespace readyport::fake_internal
