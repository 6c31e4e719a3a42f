#include "readyport/fake/internal/fake_socket.hpp"

#include <bit>

#include "readyport/assert.hpp"

namespace readyport::fake_internal {

std::size_t stream_space(const FakeSocket& socket, std::uint32_t receive_buffer_bytes) {
  READYPORT_ASSERT(socket.stream_bytes.size() <= receive_buffer_bytes);
  return receive_buffer_bytes - socket.stream_bytes.size();
}

namespace {

std::uint32_t connected_conditions(const FakeSocket& socket, std::uint32_t receive_buffer_bytes) {
  std::uint32_t conditions = 0;
  // IN while data remains, and at the end of stream (recv then returns 0).
  if (!socket.stream_bytes.empty() || socket.peer_fin) {
    conditions |= kSockNotifyEventIn;
  }
  // HANGUP: the peer shut down its sending side or closed (spec D2).
  if (socket.peer_fin) {
    conditions |= kSockNotifyEventHangup;
  }
  // OUT: our sending side is open and the peer can take a byte. A closed peer takes bytes too
  // (send succeeds once, then the reset arrives), as real TCP.
  if (!socket.send_shut &&
      (socket.peer == nullptr || stream_space(*socket.peer, receive_buffer_bytes) > 0)) {
    conditions |= kSockNotifyEventOut;
  }
  return conditions;
}

}  // namespace

std::uint32_t socket_conditions(const FakeSocket& socket, std::uint32_t receive_buffer_bytes) {
  if (socket.kind == SocketKind::kDatagram) {
    // UDP: always writable, readable while a datagram is queued, never HANGUP (spec D2).
    READYPORT_ASSERT(socket.state == StreamState::kIdle);
    return kSockNotifyEventOut | (socket.datagrams.empty() ? 0u : kSockNotifyEventIn);
  }
  switch (socket.state) {
    case StreamState::kIdle:
      // Neither connected nor listening: nothing can happen.
      return 0;
    case StreamState::kListening:
      // Spec D6: IN means a connection can be accepted.
      return socket.accept_queue.empty() ? 0u : kSockNotifyEventIn;
    case StreamState::kConnected:
      return connected_conditions(socket, receive_buffer_bytes);
    case StreamState::kRefused:
      // Spec D3: a failed connect reports ERR without OUT.
      return kSockNotifyEventErr;
    case StreamState::kReset:
      // Spec D2: an abortive reset gives ERR; the connection is also hung up.
      return kSockNotifyEventErr | kSockNotifyEventHangup;
  }
  READYPORT_UNREACHABLE();
}

bool EphemeralPortBitmap::contains(std::uint16_t port) const {
  READYPORT_ASSERT(in_range(port));
  const std::uint32_t offset = std::uint32_t{port} - kEphemeralPortFirst;
  return ((bound_words_[offset / kWordBits] >> (offset % kWordBits)) & 1) != 0;
}

void EphemeralPortBitmap::insert(std::uint16_t port) {
  READYPORT_ASSERT(!contains(port));
  const std::uint32_t offset = std::uint32_t{port} - kEphemeralPortFirst;
  const std::uint32_t word = offset / kWordBits;
  bound_words_[word] |= std::uint64_t{1} << (offset % kWordBits);
  if (bound_words_[word] == ~std::uint64_t{0}) {
    full_words_[word / kWordBits] |= std::uint64_t{1} << (word % kWordBits);
  }
}

void EphemeralPortBitmap::erase(std::uint16_t port) {
  READYPORT_ASSERT(contains(port));
  const std::uint32_t offset = std::uint32_t{port} - kEphemeralPortFirst;
  const std::uint32_t word = offset / kWordBits;
  bound_words_[word] &= ~(std::uint64_t{1} << (offset % kWordBits));
  full_words_[word / kWordBits] &= ~(std::uint64_t{1} << (word % kWordBits));
}

std::uint16_t EphemeralPortBitmap::free_lowest() const {
  for (std::uint32_t summary = 0; summary < kSummaryCount; ++summary) {
    const std::uint64_t not_full = ~full_words_[summary];
    if (not_full == 0) {
      continue;
    }
    // The first word with a free port, then its first free port: ports in ascending order.
    const std::uint32_t word = summary * kWordBits + std::countr_zero(not_full);
    READYPORT_ASSERT(bound_words_[word] != ~std::uint64_t{0});
    const std::uint32_t bit = std::countr_zero(~bound_words_[word]);
    const std::uint32_t port = kEphemeralPortFirst + word * kWordBits + bit;
    READYPORT_ASSERT(port <= kEphemeralPortLast);
    return static_cast<std::uint16_t>(port);
  }
  return 0;
}

SocketTable::SocketTable(const FakeOptions& options) : options_(options) {
  READYPORT_ASSERT(options.sockets_max > 0);
}

FakeSocket* SocketTable::find(Socket value) {
  auto found = sockets_.find(value);
  return found == sockets_.end() ? nullptr : found->second.get();
}

const FakeSocket* SocketTable::find(Socket value) const {
  auto found = sockets_.find(value);
  return found == sockets_.end() ? nullptr : found->second.get();
}

std::size_t SocketTable::blocked_count() const {
  std::size_t count = 0;
  for (const auto& entry : sockets_) {
    count += entry.second->waiters.size();
  }
  return count;
}

std::uint32_t SocketTable::open(SocketKind kind, FakeSocket** socket_out) {
  std::unique_ptr<FakeSocket> socket = make_pending(kind);
  return adopt(socket, socket_out);
}

std::unique_ptr<FakeSocket> SocketTable::make_pending(SocketKind kind) {
  auto socket = std::make_unique<FakeSocket>();
  socket->kind = kind;
  socket->serial = next_serial_++;
  return socket;
}

std::uint32_t SocketTable::adopt(std::unique_ptr<FakeSocket>& pending, FakeSocket** socket_out) {
  READYPORT_ASSERT(pending != nullptr && pending->value == kInvalidSocket);
  if (sockets_.size() >= options_.sockets_max) {
    return kWsaEmfile;
  }
  Socket value = next_value_;
  if (!free_values_.empty()) {
    // Spec E5: the lowest free value, reused at once.
    value = *free_values_.begin();
    free_values_.erase(free_values_.begin());
  } else {
    next_value_ += kFakeSocketValueStep;
  }
  READYPORT_ASSERT(sockets_.find(value) == sockets_.end());
  pending->value = value;
  FakeSocket* socket = pending.get();
  sockets_.emplace(value, std::move(pending));
  *socket_out = socket;
  return 0;
}

void SocketTable::destroy(FakeSocket& socket) {
  READYPORT_ASSERT(socket.registration == nullptr);
  READYPORT_ASSERT(socket.waiters.empty());
  READYPORT_ASSERT(socket.accept_queue.empty());
  READYPORT_ASSERT(socket.peer == nullptr);
  if (socket.bound) {
    auto found = bound_.find(port_key(socket.kind, socket.local.port));
    // Accepted sockets share their listener's port without owning it.
    if (found != bound_.end() && found->second == &socket) {
      bound_.erase(found);
      if (EphemeralPortBitmap::in_range(socket.local.port)) {
        ephemeral_ports(socket.kind).erase(socket.local.port);
      }
    }
  }
  const Socket value = socket.value;
  READYPORT_ASSERT(value >= kFakeSocketFirst && value < next_value_);
  if (options_.socket_reuse) {
    free_values_.insert(value);
  }
  const std::size_t erased = sockets_.erase(value);  // destroys `socket`
  READYPORT_ASSERT(erased == 1);
}

std::uint32_t SocketTable::port_key(SocketKind kind, std::uint16_t port) {
  return (static_cast<std::uint32_t>(kind) << 16) | port;
}

EphemeralPortBitmap& SocketTable::ephemeral_ports(SocketKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  READYPORT_ASSERT(index < ephemeral_bound_.size());
  return ephemeral_bound_[index];
}

std::uint32_t SocketTable::bind(FakeSocket& socket, const Ipv4Address& address) {
  if (socket.bound) {
    return kWsaEinval;
  }
  // Only the loopback interface exists (and INADDR_ANY, which means it).
  if (address.host != 0 && address.host != kLoopbackHost) {
    return kWsaEaddrnotavail;
  }
  EphemeralPortBitmap& ephemeral = ephemeral_ports(socket.kind);
  std::uint16_t port = address.port;
  if (port == 0) {
    // The lowest free ephemeral port: deterministic. The bitmap mirrors bound_ in the range.
    port = ephemeral.free_lowest();
    if (port == 0) {
      return kWsaEnobufs;
    }
  } else if (bound_.count(port_key(socket.kind, port)) != 0) {
    return kWsaEaddrinuse;
  }
  const bool inserted = bound_.emplace(port_key(socket.kind, port), &socket).second;
  READYPORT_ASSERT(inserted);  // an ephemeral pick too: the bitmap agrees with bound_
  if (EphemeralPortBitmap::in_range(port)) {
    ephemeral.insert(port);
  }
  socket.bound = true;
  socket.local = Ipv4Address{address.host, port};
  return 0;
}

FakeSocket* SocketTable::find_bound(SocketKind kind, const Ipv4Address& destination) {
  if (destination.host != kLoopbackHost || destination.port == 0) {
    return nullptr;
  }
  auto found = bound_.find(port_key(kind, destination.port));
  return found == bound_.end() ? nullptr : found->second;
}

std::vector<FakeSocket*> SocketTable::sockets_in_order() {
  std::vector<FakeSocket*> result;
  result.reserve(sockets_.size());
  for (auto& entry : sockets_) {
    result.push_back(entry.second.get());
  }
  return result;
}

}  // namespace readyport::fake_internal
