// FakeOs: the Winsock-shaped socket calls over the socket model of fake_socket.hpp. Every change
// of a socket's state ends in touch(), which evaluates its registration (fake_notify.cpp) and
// wakes the blocking calls parked on it.
#include <algorithm>
#include <cstring>

#include "readyport/assert.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/internal/effect_point.hpp"
#include "readyport/fake/internal/fake_last_error.hpp"
#include "readyport/fake/internal/fake_notify.hpp"

namespace readyport {

namespace {

using fake_internal::FakeSocket;
using fake_internal::SocketKind;
using fake_internal::StreamState;

int fail(std::uint32_t code) {
  fake_internal::last_error_set(code);
  return kSocketError;
}

Socket fail_socket(std::uint32_t code) {
  fake_internal::last_error_set(code);
  return kInvalidSocket;
}

// Common argument checks of the data calls; 0 when fine.
std::uint32_t check_buffer(const void* data, int length) {
  if (length < 0) {
    return kWsaEinval;
  }
  if (data == nullptr && length > 0) {
    return kWsaEfault;
  }
  return 0;
}

// Whether a stream socket can send now; 0 when it can.
std::uint32_t send_checked(const FakeSocket& socket) {
  switch (socket.state) {
    case StreamState::kIdle:
    case StreamState::kListening:
    case StreamState::kRefused:
      return kWsaEnotconn;
    case StreamState::kReset:
      return kWsaEconnreset;
    case StreamState::kConnected:
      return socket.send_shut ? kWsaEshutdown : 0;
  }
  READYPORT_UNREACHABLE();
}

// Whether a stream socket can receive now; 0 when it can.
std::uint32_t recv_checked(const FakeSocket& socket) {
  switch (socket.state) {
    case StreamState::kIdle:
    case StreamState::kListening:
    case StreamState::kRefused:
      return kWsaEnotconn;
    case StreamState::kReset:
      return kWsaEconnreset;  // spec D2: recv gives the detailed error
    case StreamState::kConnected:
      return socket.receive_shut ? kWsaEshutdown : 0;
  }
  READYPORT_UNREACHABLE();
}

}  // namespace

// ---- helpers
// -------------------------------------------------------------------------------------

void FakeOs::wake_all(FakeSocket& socket) {
  // Blocked calls re-check the socket when they run again (FIFO order, deterministic).
  for (Waiter* waiter : socket.waiters) {
    runtime_.wake(*waiter);
  }
  socket.waiters.clear();
}

void FakeOs::touch(FakeSocket& socket) {
  if (socket.registration != nullptr) {
    fake_internal::registration_evaluate(
        *socket.registration,
        fake_internal::socket_conditions(socket, options_.receive_buffer_bytes), options_);
  }
  wake_all(socket);
}

FakeSocket* FakeOs::wait_socket(std::unique_lock<std::mutex>& lock, FakeSocket& socket,
                                const char* call) {
  const Socket value = socket.value;
  const std::uint64_t serial = socket.serial;
  Waiter waiter;
  socket.waiters.push_back(&waiter);
  // No deadline: a blocking socket call waits until its socket changes. With the inline runtime
  // this asserts as a deadlock (use non-blocking sockets there).
  block_begin_locked();  // spec F7: a blocking socket call is a wait
  const ParkEnd end = runtime_.park(lock, waiter, kDeadlineNone, call);
  runtime_.touch(SimObject::kFakeState, 0);  // the call goes on in a new step
  block_end_locked();
  READYPORT_ASSERT(end == ParkEnd::kWoken);
  FakeSocket* again = sockets_->find(value);
  // Closed meanwhile (the value may already name another socket, spec E5).
  if (again == nullptr || again->serial != serial) {
    return nullptr;
  }
  // wake_all removed us together with the wake.
  READYPORT_ASSERT(std::find(again->waiters.begin(), again->waiters.end(), &waiter) ==
                   again->waiters.end());
  return again;
}

void FakeOs::reset_connection(FakeSocket& socket) {
  // Spec D2: an abortive reset gives ERR (and HANGUP); unread data is lost; recv and send fail
  // with WSAECONNRESET from now on.
  READYPORT_ASSERT(socket.kind == SocketKind::kStream && socket.peer == nullptr);
  socket.state = StreamState::kReset;
  socket.stream_bytes.clear();
  socket.pending_error = kWsaEconnreset;
  touch(socket);
}

void FakeOs::disconnect(FakeSocket& socket) {
  FakeSocket* peer = socket.peer;
  if (peer == nullptr) {
    return;  // the peer is gone already
  }
  READYPORT_ASSERT(peer->peer == &socket);
  peer->peer = nullptr;
  socket.peer = nullptr;
  if (socket.linger_abort) {
    // SO_LINGER {on, 0}: abortive close, the peer is reset.
    reset_connection(*peer);
    return;
  }
  // Graceful close: FIN. The peer reads what is buffered, then end of stream (IN|HANGUP).
  peer->peer_fin = true;
  touch(*peer);
}

void FakeOs::close_listener(FakeSocket& listener) {
  // Connections not yet accepted die with their listener: each client is reset. Bounded by the
  // backlog.
  while (!listener.accept_queue.empty()) {
    std::unique_ptr<FakeSocket> pending = std::move(listener.accept_queue.front());
    listener.accept_queue.pop_front();
    FakeSocket* client = pending->peer;
    if (client != nullptr) {
      pending->peer = nullptr;
      client->peer = nullptr;
      reset_connection(*client);
    }
  }
}

// ---- socket, bind, getsockname, listen ----------------------------------------------------------

Socket FakeOs::socket(int af, int type, int protocol) {
  enter("socket");
  std::lock_guard<std::mutex> lock(mutex_);
  if (af != kAfInet) {
    return fail_socket(kWsaEafnosupport);  // IPv4 only
  }
  SocketKind kind = SocketKind::kStream;
  if (type == kSockStream && (protocol == 0 || protocol == kIpprotoTcp)) {
    kind = SocketKind::kStream;
  } else if (type == kSockDgram && (protocol == 0 || protocol == kIpprotoUdp)) {
    kind = SocketKind::kDatagram;
  } else {
    return fail_socket(kWsaEinval);
  }
  FakeSocket* created = nullptr;
  const std::uint32_t error = sockets_->open(kind, &created);
  if (error != 0) {
    return fail_socket(error);
  }
  return created->value;
}

int FakeOs::bind(Socket s, const Ipv4Address& address) {
  enter("bind");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  const std::uint32_t error = sockets_->bind(*socket, address);
  if (error != 0) {
    return fail(error);
  }
  return 0;
}

int FakeOs::getsockname(Socket s, Ipv4Address* address_out) {
  enter("getsockname");
  std::lock_guard<std::mutex> lock(mutex_);
  const FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (address_out == nullptr) {
    return fail(kWsaEfault);
  }
  if (!socket->bound) {
    return fail(kWsaEinval);
  }
  *address_out = socket->local;
  return 0;
}

int FakeOs::listen(Socket s, int backlog) {
  enter("listen");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (socket->kind != SocketKind::kStream) {
    return fail(kWsaEopnotsupp);
  }
  switch (socket->state) {
    case StreamState::kIdle:
    case StreamState::kListening:
      // Listen, or change the backlog of a listening socket.
      break;
    case StreamState::kConnected:
      return fail(kWsaEisconn);
    case StreamState::kRefused:
    case StreamState::kReset:
      return fail(kWsaEinval);
  }
  if (!socket->bound) {
    return fail(kWsaEinval);
  }
  const std::int64_t wanted = std::max<std::int64_t>(backlog, 1);
  socket->backlog =
      static_cast<std::uint32_t>(std::min<std::int64_t>(wanted, options_.backlog_max));
  socket->state = StreamState::kListening;
  touch(*socket);
  return 0;
}

// ---- accept, connect
// -----------------------------------------------------------------------------

Socket FakeOs::accept(Socket s, Ipv4Address* peer_out) {
  enter("accept");
  std::unique_lock<std::mutex> lock(mutex_);
  FakeSocket* listener = sockets_->find(s);
  if (listener == nullptr) {
    return fail_socket(kWsaEnotsock);
  }
  // Each turn takes a pending connection, fails, or waits for the listener to change.
  for (;;) {
    if (listener->kind != SocketKind::kStream || listener->state != StreamState::kListening) {
      return fail_socket(kWsaEinval);
    }
    if (!listener->accept_queue.empty()) {
      FakeSocket* accepted = nullptr;
      const std::uint32_t error = sockets_->adopt(listener->accept_queue.front(), &accepted);
      if (error != 0) {
        return fail_socket(error);  // WSAEMFILE: the connection stays queued
      }
      listener->accept_queue.pop_front();
      // The accepted socket has the listening socket's properties, non-blocking mode included
      // (Microsoft's accept page: "the same properties as socket s").
      accepted->nonblocking = listener->nonblocking;
      if (peer_out != nullptr) {
        *peer_out = accepted->remote;
      }
      touch(*listener);  // spec D6: IN may stop holding
      return accepted->value;
    }
    if (listener->nonblocking) {
      return fail_socket(kWsaEwouldblock);
    }
    listener = wait_socket(lock, *listener, "accept");
    if (listener == nullptr) {
      return fail_socket(kWsaEintr);
    }
  }
}

std::uint32_t FakeOs::connect_stream(FakeSocket& socket, const Ipv4Address& address) {
  // Loopback connects never wait, so blocking and non-blocking share this path.
  switch (socket.state) {
    case StreamState::kIdle:
      break;  // the only state that can connect
    case StreamState::kConnected:
      return kWsaEisconn;
    case StreamState::kListening:
    case StreamState::kRefused:
    case StreamState::kReset:
      return kWsaEinval;
  }
  if (address.host != kLoopbackHost || address.port == 0) {
    return kWsaEaddrnotavail;
  }
  if (!socket.bound) {
    const std::uint32_t error = sockets_->bind(socket, Ipv4Address{kLoopbackHost, 0});
    if (error != 0) {
      return error;
    }
  }
  FakeSocket* listener = sockets_->find_bound(SocketKind::kStream, address);
  if (listener == nullptr || listener->state != StreamState::kListening ||
      listener->accept_queue.size() >= listener->backlog) {
    // Refused: no listener or a full backlog.
    if (!socket.nonblocking) {
      return kWsaEconnrefused;
    }
    // Spec D3: non-blocking, the failure is reported as ERR (no OUT) and through SO_ERROR.
    socket.state = StreamState::kRefused;
    socket.pending_error = kWsaEconnrefused;
    touch(socket);
    return kWsaEwouldblock;
  }
  // Established at once: the listener's side is a pending connection until accept().
  std::unique_ptr<FakeSocket> pending = sockets_->make_pending(SocketKind::kStream);
  pending->state = StreamState::kConnected;
  pending->bound = true;
  pending->local = Ipv4Address{kLoopbackHost, listener->local.port};
  pending->remote = Ipv4Address{kLoopbackHost, socket.local.port};
  pending->peer = &socket;
  socket.state = StreamState::kConnected;
  socket.remote = address;
  socket.peer = pending.get();
  listener->accept_queue.push_back(std::move(pending));
  touch(*listener);  // spec D6: IN
  touch(socket);     // OUT
  // A non-blocking connect reports completion as OUT (os.hpp), after WSAEWOULDBLOCK.
  return socket.nonblocking ? kWsaEwouldblock : 0;
}

int FakeOs::connect(Socket s, const Ipv4Address& address) {
  enter("connect");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (socket->kind != SocketKind::kStream) {
    return fail(kWsaEopnotsupp);  // no UDP connect
  }
  const std::uint32_t error = connect_stream(*socket, address);
  if (error != 0) {
    return fail(error);
  }
  return 0;
}

// ---- send, recv
// ----------------------------------------------------------------------------------

int FakeOs::send_stream(std::unique_lock<std::mutex>& lock, FakeSocket* socket, const void* data,
                        int length) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  int sent = 0;
  // Each turn moves bytes, fails, or waits for the peer to make room (blocking sockets only).
  for (;;) {
    const std::uint32_t error = send_checked(*socket);
    if (error != 0) {
      return sent > 0 ? sent : fail(error);
    }
    if (length == 0) {
      return 0;
    }
    if (socket->peer == nullptr) {
      // The peer closed: the bytes are taken once, then the peer's reset arrives (real TCP).
      reset_connection(*socket);
      return length;
    }
    FakeSocket& peer = *socket->peer;
    const std::size_t space = fake_internal::stream_space(peer, options_.receive_buffer_bytes);
    if (space > 0) {
      const std::size_t moved = std::min(space, static_cast<std::size_t>(length - sent));
      peer.stream_bytes.insert(peer.stream_bytes.end(), bytes + sent, bytes + sent + moved);
      sent += static_cast<int>(moved);
      touch(peer);     // IN
      touch(*socket);  // OUT may stop holding
      if (sent == length || socket->nonblocking) {
        return sent;
      }
      continue;
    }
    if (socket->nonblocking) {
      return sent > 0 ? sent : fail(kWsaEwouldblock);
    }
    socket = wait_socket(lock, *socket, "send");
    if (socket == nullptr) {
      return sent > 0 ? sent : fail(kWsaEintr);
    }
  }
}

int FakeOs::send(Socket s, const void* data, int length, int flags) {
  enter("send");
  std::unique_lock<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (flags != 0) {
    return fail(kWsaEopnotsupp);
  }
  const std::uint32_t invalid = check_buffer(data, length);
  if (invalid != 0) {
    return fail(invalid);
  }
  if (socket->kind != SocketKind::kStream) {
    return fail(kWsaEnotconn);  // UDP: use sendto
  }
  return send_stream(lock, socket, data, length);
}

int FakeOs::recv_stream(std::unique_lock<std::mutex>& lock, FakeSocket* socket, void* data,
                        int length, int flags, Ipv4Address* from_out) {
  // Each turn reads, fails, or waits for data (blocking sockets only).
  for (;;) {
    const std::uint32_t error = recv_checked(*socket);
    if (error != 0) {
      return fail(error);
    }
    if (length == 0) {
      return 0;
    }
    if (!socket->stream_bytes.empty()) {
      const std::size_t moved =
          std::min(socket->stream_bytes.size(), static_cast<std::size_t>(length));
      auto first = socket->stream_bytes.begin();
      std::copy(first, first + static_cast<std::ptrdiff_t>(moved),
                static_cast<unsigned char*>(data));
      if (from_out != nullptr) {
        *from_out = socket->remote;
      }
      if ((flags & fake_internal::kMsgPeek) == 0) {
        socket->stream_bytes.erase(first, first + static_cast<std::ptrdiff_t>(moved));
        touch(*socket);  // IN may stop holding
        if (socket->peer != nullptr) {
          touch(*socket->peer);  // the sender's OUT may hold again
        }
      }
      return static_cast<int>(moved);
    }
    if (socket->peer_fin) {
      return 0;  // end of stream
    }
    if (socket->nonblocking) {
      return fail(kWsaEwouldblock);
    }
    socket = wait_socket(lock, *socket, "recv");
    if (socket == nullptr) {
      return fail(kWsaEintr);
    }
  }
}

int FakeOs::recv(Socket s, void* data, int length, int flags) {
  enter("recv");
  std::unique_lock<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if ((flags & ~fake_internal::kMsgPeek) != 0) {
    return fail(kWsaEopnotsupp);
  }
  const std::uint32_t invalid = check_buffer(data, length);
  if (invalid != 0) {
    return fail(invalid);
  }
  if (socket->kind == SocketKind::kDatagram) {
    return recvfrom_datagram(lock, socket, data, length, flags, nullptr);
  }
  return recv_stream(lock, socket, data, length, flags, nullptr);
}

// ---- datagrams
// -----------------------------------------------------------------------------------

int FakeOs::sendto_datagram(FakeSocket& socket, const void* data, int length,
                            const Ipv4Address& to) {
  if (length > fake_internal::kDatagramBytesMax) {
    return fail(kWsaEmsgsize);
  }
  if (to.host != kLoopbackHost || to.port == 0) {
    return fail(kWsaEaddrnotavail);
  }
  if (!socket.bound) {
    const std::uint32_t error = sockets_->bind(socket, Ipv4Address{kLoopbackHost, 0});
    if (error != 0) {
      return fail(error);
    }
  }
  FakeSocket* destination = sockets_->find_bound(SocketKind::kDatagram, to);
  const auto size = static_cast<std::size_t>(length);
  // UDP: nobody bound there, or a full queue, drops the datagram silently.
  if (destination != nullptr &&
      destination->datagram_bytes + size <= options_.receive_buffer_bytes &&
      destination->datagrams.size() < fake_internal::kDatagramsQueuedMax) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    fake_internal::Datagram datagram;
    datagram.from = Ipv4Address{kLoopbackHost, socket.local.port};
    datagram.bytes.assign(bytes, bytes + size);
    destination->datagrams.push_back(std::move(datagram));
    destination->datagram_bytes += size;
    touch(*destination);  // IN
  }
  return length;
}

int FakeOs::sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) {
  enter("sendto");
  std::unique_lock<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (flags != 0) {
    return fail(kWsaEopnotsupp);
  }
  const std::uint32_t invalid = check_buffer(data, length);
  if (invalid != 0) {
    return fail(invalid);
  }
  // On a connected stream socket sendto ignores the address, as Windows.
  if (socket->kind == SocketKind::kStream) {
    return send_stream(lock, socket, data, length);
  }
  return sendto_datagram(*socket, data, length, to);
}

int FakeOs::recvfrom_datagram(std::unique_lock<std::mutex>& lock, FakeSocket* socket, void* data,
                              int length, int flags, Ipv4Address* from_out) {
  if (!socket->bound) {
    return fail(kWsaEinval);
  }
  // Each turn reads a datagram, or waits for one (blocking sockets only).
  for (;;) {
    if (!socket->datagrams.empty()) {
      fake_internal::Datagram& datagram = socket->datagrams.front();
      const std::size_t size = datagram.bytes.size();
      const std::size_t moved = std::min(size, static_cast<std::size_t>(length));
      if (moved > 0) {
        std::memcpy(data, datagram.bytes.data(), moved);
      }
      if (from_out != nullptr) {
        *from_out = datagram.from;
      }
      if ((flags & fake_internal::kMsgPeek) == 0) {
        READYPORT_ASSERT(socket->datagram_bytes >= size);
        socket->datagram_bytes -= size;
        socket->datagrams.pop_front();
        touch(*socket);  // IN may stop holding
      }
      // A datagram larger than the buffer is truncated and (unless peeked) consumed.
      if (size > moved) {
        return fail(kWsaEmsgsize);
      }
      return static_cast<int>(moved);
    }
    if (socket->nonblocking) {
      return fail(kWsaEwouldblock);
    }
    socket = wait_socket(lock, *socket, "recvfrom");
    if (socket == nullptr) {
      return fail(kWsaEintr);
    }
  }
}

int FakeOs::recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) {
  enter("recvfrom");
  std::unique_lock<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if ((flags & ~fake_internal::kMsgPeek) != 0) {
    return fail(kWsaEopnotsupp);
  }
  const std::uint32_t invalid = check_buffer(data, length);
  if (invalid != 0) {
    return fail(invalid);
  }
  if (socket->kind == SocketKind::kStream) {
    return recv_stream(lock, socket, data, length, flags, from_out);
  }
  return recvfrom_datagram(lock, socket, data, length, flags, from_out);
}

// ---- shutdown, closesocket, options
// --------------------------------------------------------------

int FakeOs::shutdown(Socket s, int how) {
  enter("shutdown");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (how != kSdReceive && how != kSdSend && how != kSdBoth) {
    return fail(kWsaEinval);
  }
  if (socket->kind != SocketKind::kStream) {
    return fail(kWsaEnotconn);
  }
  if (socket->state == StreamState::kReset) {
    return fail(kWsaEconnreset);
  }
  if (socket->state != StreamState::kConnected) {
    return fail(kWsaEnotconn);
  }
  if (how == kSdReceive || how == kSdBoth) {
    socket->receive_shut = true;
  }
  if ((how == kSdSend || how == kSdBoth) && !socket->send_shut) {
    // Graceful FIN: the peer reads what is buffered, then end of stream (IN|HANGUP, spec D2).
    socket->send_shut = true;
    if (socket->peer != nullptr) {
      socket->peer->peer_fin = true;
      touch(*socket->peer);
    }
  }
  touch(*socket);  // OUT stops holding after SD_SEND
  return 0;
}

int FakeOs::closesocket(Socket s) {
  enter("closesocket");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  effect_point(EffectPoint::kCall);
  // Spec E2: deregistered without a REMOVE packet; queued packets follow the options.
  if (socket->registration != nullptr &&
      fake_internal::registration_socket_closed(*socket->registration, options_)) {
    ++removes_dropped_;
  }
  READYPORT_ASSERT(socket->registration == nullptr);
  switch (socket->state) {
    case StreamState::kListening:
      close_listener(*socket);
      break;
    case StreamState::kConnected:
      disconnect(*socket);  // FIN, or a reset with SO_LINGER {on, 0}
      break;
    case StreamState::kIdle:
    case StreamState::kRefused:
    case StreamState::kReset:
      // No peer to tell.
      READYPORT_ASSERT(socket->peer == nullptr);
      break;
  }
  wake_all(*socket);           // blocked calls fail with WSAEINTR
  sockets_->destroy(*socket);  // the value is free now (spec E5)
  return 0;
}

int FakeOs::set_nonblocking(Socket s, bool nonblocking) {
  enter("set_nonblocking");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  socket->nonblocking = nonblocking;
  return 0;
}

int FakeOs::set_linger(Socket s, bool enabled, std::uint16_t timeout_s) {
  enter("set_linger");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  // Only {on, 0} changes anything: closesocket then resets. No lingering time is modelled.
  socket->linger_abort = enabled && timeout_s == 0;
  return 0;
}

int FakeOs::get_socket_error(Socket s, std::uint32_t* error_out) {
  enter("get_socket_error");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeSocket* socket = sockets_->find(s);
  if (socket == nullptr) {
    return fail(kWsaEnotsock);
  }
  if (error_out == nullptr) {
    return fail(kWsaEfault);
  }
  *error_out = socket->pending_error;
  socket->pending_error = 0;
  return 0;
}

}  // namespace readyport
