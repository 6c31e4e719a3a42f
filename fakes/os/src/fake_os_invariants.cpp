// FakeOs: the whole-model invariant check. Each fact asserted here is also asserted where it is
// produced (fake_notify.cpp, fake_port.cpp, fake_socket.cpp); this checks them all at once, after
// any sequence of calls, so a broken transition is caught even where no local assertion looks.
#include <map>

#include "readyport/assert.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/internal/fake_notify.hpp"

namespace readyport {

namespace fake_internal {

void SocketTable::check_invariants() const {
  READYPORT_ASSERT(sockets_.size() <= options_.sockets_max);
  for (const auto& [value, socket] : sockets_) {
    READYPORT_ASSERT(socket->value == value);
    READYPORT_ASSERT(value >= kFakeSocketFirst && value < next_value_);
    READYPORT_ASSERT((value - kFakeSocketFirst) % kFakeSocketValueStep == 0);
    READYPORT_ASSERT(free_values_.count(value) == 0);
  }
  if (!options_.socket_reuse) {
    READYPORT_ASSERT(free_values_.empty());
  }
  for (const auto& [key, socket] : bound_) {
    READYPORT_ASSERT(socket->bound && socket->local.port == (key & 0xFFFF));
    READYPORT_ASSERT(find(socket->value) == socket);  // only open sockets own a port
  }
}

}  // namespace fake_internal

namespace {

using fake_internal::FakeRegistration;
using fake_internal::RegistrationState;

void check_registration(const FakeRegistration& registration, const FakeOptions& options) {
  const RegistrationState state = registration.state;
  READYPORT_ASSERT(registration.id != 0 && registration.port != nullptr);
  READYPORT_ASSERT(fake_internal::registration_attached(state) == (registration.socket != nullptr));
  READYPORT_ASSERT((registration.filter & ~kSockNotifyRegisterEventsAll) == 0);
  const bool removing =
      state == RegistrationState::kRemoving || state == RegistrationState::kDetachedRemoving;
  // A REMOVE packet is queued exactly in the removing states.
  READYPORT_ASSERT(registration.remove_packet.has_value() == removing);
  // A detached registration exists only for the packets it still has queued.
  if (state == RegistrationState::kDetached) {
    READYPORT_ASSERT(registration.event_packet.has_value());
  }
  if (registration.remove_packet.has_value()) {
    READYPORT_ASSERT(((*registration.remove_packet)->bytes_transferred & kSockNotifyEventRemove) !=
                     0);
  }
  const bool merged = registration.event_packet.has_value() &&
                      registration.event_packet == registration.remove_packet;
  if (merged) {
    READYPORT_ASSERT(!options.remove_separate_packet);
  }
  if (registration.event_packet.has_value() && !merged) {
    const std::uint32_t mask = (*registration.event_packet)->bytes_transferred;
    READYPORT_ASSERT(mask != 0 && (mask & kSockNotifyEventRemove) == 0);
  }
  if (registration.socket == nullptr) {
    return;
  }
  READYPORT_ASSERT(registration.socket->registration == &registration);
  const std::uint32_t conditions =
      fake_internal::socket_conditions(*registration.socket, options.receive_buffer_bytes);
  // Every change of the socket was evaluated (EDGE depends on it, spec C5).
  READYPORT_ASSERT(registration.conditions_seen == conditions);
  // Spec C4: an enabled LEVEL registration whose condition holds has its packet queued.
  if (state == RegistrationState::kEnabled && registration.level) {
    const std::uint32_t reportable =
        conditions & ((registration.filter & kSockNotifyRegisterEventsAll) | kSockNotifyEventErr);
    READYPORT_ASSERT(reportable == 0 || registration.event_packet.has_value());
  }
}

}  // namespace

void FakeOs::check_port(const FakePort& port) const {
  // Every packet names a live registration that points back at it; posted packets are counted.
  std::map<std::uint64_t, std::size_t> packets_per_registration;
  std::size_t posted = 0;
  for (auto packet = port.packets().begin(); packet != port.packets().end(); ++packet) {
    if (packet->registration_id == 0) {
      ++posted;
      continue;
    }
    READYPORT_ASSERT(packet->internal == 0);
    READYPORT_ASSERT((packet->bytes_transferred & ~kSockNotifyEventsAll) == 0);
    auto found = port.registrations().find(packet->registration_id);
    READYPORT_ASSERT(found != port.registrations().end());
    const FakeRegistration& registration = *found->second;
    READYPORT_ASSERT(packet->completion_key == registration.key);
    READYPORT_ASSERT(registration.event_packet == packet || registration.remove_packet == packet);
    ++packets_per_registration[packet->registration_id];
  }
  READYPORT_ASSERT(posted == port.posted_count());
  // Spec F1, the hand-off: a thread waits only while it may not take a packet, and a packet
  // queued while one waits is handed to it at once if one more thread may run (F7); so waiting
  // threads and queued packets coexist only at the concurrency limit.
  READYPORT_ASSERT(port.waiting_count() == 0 || port.packets().empty() || !port.may_run());
  READYPORT_ASSERT(port.waiter_count() == port.waiting_count() + port.released_count());
  READYPORT_ASSERT(!port.handoff_running());  // a hand-off ends within the call that queued
  READYPORT_ASSERT(posted <= fake_internal::kPostedPacketsMax);
  for (const auto& [id, registration] : port.registrations()) {
    READYPORT_ASSERT(registration->id == id && registration->port == &port);
    check_registration(*registration, options_);
    // Spec D4: one queued packet per registration; two only with a separate REMOVE packet.
    const bool merged = registration->event_packet.has_value() &&
                        registration->event_packet == registration->remove_packet;
    const std::size_t expected = (registration->event_packet.has_value() ? 1u : 0u) +
                                 (registration->remove_packet.has_value() && !merged ? 1u : 0u);
    auto counted = packets_per_registration.find(id);
    READYPORT_ASSERT((counted == packets_per_registration.end() ? 0u : counted->second) ==
                     expected);
  }
}

void FakeOs::check_socket(const FakeSocket& socket) const {
  using fake_internal::SocketKind;
  using fake_internal::StreamState;
  if (socket.registration != nullptr) {
    READYPORT_ASSERT(socket.registration->socket == &socket);
    READYPORT_ASSERT(ports_.count(socket.registration->port->handle().value) == 1);
  }
  if (socket.kind == SocketKind::kDatagram) {
    READYPORT_ASSERT(socket.state == StreamState::kIdle && socket.peer == nullptr);
    std::size_t bytes = 0;
    for (const fake_internal::Datagram& datagram : socket.datagrams) {
      bytes += datagram.bytes.size();
    }
    READYPORT_ASSERT(bytes == socket.datagram_bytes);
    READYPORT_ASSERT(bytes <= options_.receive_buffer_bytes);
    READYPORT_ASSERT(socket.datagrams.size() <= fake_internal::kDatagramsQueuedMax);
    return;
  }
  READYPORT_ASSERT(socket.stream_bytes.size() <= options_.receive_buffer_bytes);
  if (socket.peer != nullptr) {
    // A connection is symmetric while both ends exist.
    READYPORT_ASSERT(socket.state == StreamState::kConnected);
    READYPORT_ASSERT(socket.peer->peer == &socket);
  }
  if (socket.state == StreamState::kListening) {
    READYPORT_ASSERT(socket.backlog >= 1 && socket.backlog <= options_.backlog_max);
    // A second listen() may lower the backlog below what is queued; backlog_max bounds both.
    READYPORT_ASSERT(socket.accept_queue.size() <= options_.backlog_max);
    for (const auto& pending : socket.accept_queue) {
      READYPORT_ASSERT(pending->value == kInvalidSocket && pending->registration == nullptr);
      check_socket(*pending);
    }
  } else {
    READYPORT_ASSERT(socket.accept_queue.empty());
  }
}

void FakeOs::check_invariants_locked() const {
  sockets_->check_invariants();
  for (const auto& [value, socket] : sockets_->sockets()) {
    check_socket(*socket);
  }
  std::size_t registrations = 0;
  for (const auto& [value, port] : ports_) {
    READYPORT_ASSERT(port->handle().value == value);
    READYPORT_ASSERT(value < next_port_value_ && value % kFakePortValueStep == kFakePortFirst);
    check_port(*port);
    registrations += port->registration_count();
  }
  READYPORT_ASSERT(ports_.size() <= options_.ports_max);
  // Registrations are bounded: one per open socket, plus leftovers of closed ones that still have
  // a packet queued.
  std::size_t packets = 0;
  for (const auto& [value, port] : ports_) {
    packets += port->packet_count();
  }
  READYPORT_ASSERT(registrations <= sockets_->open_count() + packets);
}

void FakeOs::check_invariants() const {
  std::lock_guard<std::mutex> lock(mutex_);
  check_invariants_locked();
}

}  // namespace readyport
