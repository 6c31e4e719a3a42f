// PsnModel: docs/rules.md rule by rule over a plain vector per port. Each branch cites the rule it
// follows; where the spec leaves a question open the FakeOptions switch named in the spec's "Fake
// defaults" table decides.
#include "psn_model.hpp"

#include "readyport/assert.hpp"

namespace readyport::properties {

namespace {

constexpr std::uint8_t kTriggerKnown = kSockNotifyTriggerOneshot | kSockNotifyTriggerPersistent |
                                       kSockNotifyTriggerLevel | kSockNotifyTriggerEdge;

// The event bits a registration may report: its filter plus ERR, whatever the filter (spec D1).
std::uint32_t reportable(std::uint16_t filter) {
  return (static_cast<std::uint32_t>(filter) & kSockNotifyRegisterEventsAll) | kSockNotifyEventErr;
}

}  // namespace

PsnModel::PsnModel(const FakeOptions& options, int sockets_count, int ports_count)
    : options_(options),
      sockets_(static_cast<std::size_t>(sockets_count)),
      ports_(static_cast<std::size_t>(ports_count)) {
  READYPORT_ASSERT(sockets_count > 0 && ports_count > 0);
  READYPORT_ASSERT(options.receive_buffer_bytes > 0);
  for (ModelSocket& socket : sockets_) {
    socket.incarnation = next_incarnation_++;
  }
}

// ---- ports ----------------------------------------------------------------------------------

bool PsnModel::port_open(int port) const {
  READYPORT_ASSERT(port >= 0 && port < ports_count());
  return ports_[static_cast<std::size_t>(port)].open;
}

PsnModel::ModelPort& PsnModel::open_port(int port) {
  READYPORT_ASSERT(port_open(port));
  return ports_[static_cast<std::size_t>(port)];
}

void PsnModel::port_create(int port) {
  READYPORT_ASSERT(!port_open(port));
  ModelPort& created = ports_[static_cast<std::size_t>(port)];
  created.open = true;
  READYPORT_ASSERT(created.packets.empty());
}

bool PsnModel::port_close(int port) {
  if (!port_open(port)) {
    return false;  // ERROR_INVALID_HANDLE
  }
  // Spec F6: the port's registrations are dropped without REMOVE packets, with every packet.
  std::vector<std::uint32_t> dropped;
  for (const auto& [id, registration] : registrations_) {
    if (registration.port == port) {
      dropped.push_back(id);
    }
  }
  if (!dropped.empty()) {
    ++coverage_.port_closes_registered;
  }
  for (const std::uint32_t id : dropped) {
    Registration& registration = registrations_.at(id);
    if (registration.socket != kModelNotSocket) {
      sockets_[static_cast<std::size_t>(registration.socket)].registration = 0;
    }
    registrations_.erase(id);
  }
  ModelPort& closed = ports_[static_cast<std::size_t>(port)];
  closed.packets.clear();  // posted packets go with the port
  closed.open = false;
  return true;
}

bool PsnModel::post(int port, std::uint32_t bytes_transferred, std::uintptr_t completion_key,
                    std::uintptr_t overlapped) {
  if (!port_open(port)) {
    return false;
  }
  // Spec F2: the three values, unchecked, at the back of the FIFO (F1, F4).
  open_port(port).packets.push_back(Packet{0, completion_key, overlapped, bytes_transferred});
  return true;
}

std::size_t PsnModel::queued_count(int port) const {
  return port_open(port) ? ports_[static_cast<std::size_t>(port)].packets.size() : 0;
}

std::uint32_t PsnModel::process(int port, const std::vector<ModelElement>& elements,
                                std::uint32_t completion_count,
                                std::vector<std::uint32_t>* results_out,
                                std::vector<OverlappedEntry>* entries_out) {
  results_out->clear();
  entries_out->clear();
  // Spec A3: a call that fails as a whole changes nothing.
  if (!port_open(port)) {
    return kErrorInvalidHandle;
  }
  // Spec A7, A8, A10: each element on its own, in array order, before the dequeue.
  for (const ModelElement& element : elements) {
    const std::uint32_t result = apply(port, element);
    results_out->push_back(result);
    if (result == 0) {
      coverage_.ops_applied |= 1u << element.operation;
    } else {
      ++coverage_.elements_failed;
    }
  }
  if (completion_count == 0) {
    return kErrorSuccess;  // spec A4: registrations only
  }
  return dequeue_into(port, completion_count, entries_out);
}

std::uint32_t PsnModel::dequeue(int port, std::uint32_t count,
                                std::vector<OverlappedEntry>* entries_out) {
  entries_out->clear();
  if (!port_open(port)) {
    return kErrorInvalidHandle;
  }
  // Spec A6, F3: the same packets and the same consequences as through PSN.
  return dequeue_into(port, count, entries_out);
}

// ---- elements (spec B, C1) -------------------------------------------------------------------

std::uint32_t PsnModel::apply(int port, const ModelElement& element) {
  switch (element.operation) {
    case kSockNotifyOpNone:
      return 0;  // spec B1
    case kSockNotifyOpEnable:
      return apply_enable(port, element);
    case kSockNotifyOpDisable: {
      Registration* registration = nullptr;
      const std::uint32_t error = find_for_change(port, element, &registration);
      if (error != 0) {
        return error;
      }
      // Spec B4: kept, queues nothing; a queued packet is still delivered unless the switch
      // queued_dropped_on_disable drops it.
      registration->state = RegistrationState::kDisabled;
      registration->disarmed = false;
      if (options_.queued_dropped_on_disable && find_event(*registration) >= 0) {
        drop_event_packet(*registration);
      }
      return 0;
    }
    case kSockNotifyOpRemove: {
      Registration* registration = nullptr;
      const std::uint32_t error = find_for_change(port, element, &registration);
      if (error != 0) {
        return error;
      }
      queue_remove(*registration);  // spec B5: key, filter and flags of the element ignored
      return 0;
    }
    default:
      return kWsaEinval;  // operation is one value, not a mask
  }
}

std::uint32_t PsnModel::apply_enable(int port, const ModelElement& element) {
  if (element.socket == kModelNotSocket) {
    return options_.not_socket_error;  // spec B9
  }
  if ((element.event_filter & ~kSockNotifyRegisterEventsAll) != 0) {
    return kWsaEinval;
  }
  // Spec C1: exactly one of LEVEL/EDGE; exactly one of ONESHOT/PERSISTENT, where the lenient
  // reading (trigger_lenient) takes neither as PERSISTENT.
  const std::uint8_t flags = element.trigger_flags;
  if ((flags & ~kTriggerKnown) != 0) {
    return kWsaEinval;
  }
  const bool level = (flags & kSockNotifyTriggerLevel) != 0;
  if (level == ((flags & kSockNotifyTriggerEdge) != 0)) {
    return kWsaEinval;
  }
  const bool oneshot = (flags & kSockNotifyTriggerOneshot) != 0;
  const bool persistent = (flags & kSockNotifyTriggerPersistent) != 0;
  if (oneshot && persistent) {
    return kWsaEinval;
  }
  if (!oneshot && !persistent && !options_.trigger_lenient) {
    return kWsaEinval;
  }

  ModelSocket& socket = open_socket(element.socket);
  const std::uint32_t now = conditions(element.socket);
  Registration* registration = nullptr;
  if (socket.registration == 0) {
    // Spec B2, E6: a new registration bound to this port; the key is taken now. What holds
    // already counts as seen: EDGE reports none of it (C5), LEVEL reports it below (C4).
    Registration created;
    created.id = next_registration_id_++;
    created.socket = element.socket;
    created.port = port;
    created.key = element.completion_key;
    created.seen = now;
    registration = &registrations_.emplace(created.id, created).first->second;
    socket.registration = created.id;
  } else {
    registration = &registrations_.at(socket.registration);
    // Spec B8: one port only; the first registration is unchanged.
    if (registration->port != port) {
      return options_.second_port_error;
    }
    // Spec B5, E6: after REMOVE nothing follows for the key until its packet was dequeued; a
    // new registration starts only then.
    if (registration->state == RegistrationState::kRemoving) {
      return kWsaEinval;
    }
    // Spec B3: a different key keeps the old key (default) or fails (key_change_strict).
    if (registration->key != element.completion_key && options_.key_change_strict) {
      return kWsaEinval;
    }
  }
  // Spec B2: filter and trigger flags are overwritten; this is also the one-shot re-arm (C2).
  registration->filter = element.event_filter;
  registration->level = level;
  registration->oneshot = oneshot;
  registration->state = RegistrationState::kEnabled;
  registration->disarmed = false;
  coverage_.modes_enabled |= 1u << ((level ? 0 : 2) + (oneshot ? 0 : 1));
  evaluate(*registration, now);
  return 0;
}

std::uint32_t PsnModel::find_for_change(int port, const ModelElement& element, Registration** out) {
  if (element.socket == kModelNotSocket) {
    return options_.not_socket_error;  // spec B9
  }
  const ModelSocket& socket = open_socket(element.socket);
  if (socket.registration == 0) {
    return options_.unregistered_error;  // spec B6
  }
  Registration& registration = registrations_.at(socket.registration);
  if (registration.port != port) {
    return options_.second_port_error;  // spec B8
  }
  // Spec B6, B7: after an accepted REMOVE the socket counts as not registered; never two
  // REMOVE packets for one registration.
  if (registration.state == RegistrationState::kRemoving) {
    return options_.unregistered_error;
  }
  *out = &registration;
  return 0;
}

// ---- conditions and packets (spec C2-C5, D1, D4)
// -------------------------------------------------

void PsnModel::evaluate(Registration& registration, std::uint32_t now) {
  READYPORT_ASSERT(registration.socket != kModelNotSocket);
  const std::uint32_t wanted = now & reportable(registration.filter);
  switch (registration.state) {
    case RegistrationState::kEnabled: {
      // Spec C4 LEVEL: whatever holds. Spec C5 EDGE: only what rose since the last look.
      const std::uint32_t report = registration.level ? wanted : (wanted & ~registration.seen);
      registration.seen = now;
      if (report != 0) {
        post_event(registration, report);
      }
      return;
    }
    case RegistrationState::kDisabled:
      // Spec B4, C2: queues nothing. Still watching, so that a re-enabled EDGE registration
      // reports only rises after the ENABLE (C5).
      if (registration.disarmed && (wanted & ~registration.seen) != 0) {
        ++coverage_.disarmed_rises;
      }
      registration.seen = now;
      return;
    case RegistrationState::kRemoving:
      registration.seen = now;  // spec B5: nothing follows REMOVE
      return;
    case RegistrationState::kClosedRemoving:
    case RegistrationState::kClosed:
      READYPORT_UNREACHABLE();  // a closed socket changes no more
  }
}

void PsnModel::evaluate_socket(int s) {
  const ModelSocket& socket = sockets_[static_cast<std::size_t>(s)];
  if (socket.registration == 0) {
    return;
  }
  evaluate(registrations_.at(socket.registration), conditions(s));
}

PsnModel::Packet PsnModel::socket_packet(const Registration& registration,
                                         std::uint32_t bits) const {
  // Spec "Constants and layout": the key, the mask in bytes_transferred; lpOverlapped poisoned
  // or 0 (switch overlapped_poison).
  return Packet{registration.id, registration.key,
                options_.overlapped_poison ? kOverlappedPoison : std::uintptr_t{0}, bits};
}

void PsnModel::post_event(Registration& registration, std::uint32_t bits) {
  READYPORT_ASSERT(registration.state == RegistrationState::kEnabled);
  const std::ptrdiff_t queued = find_event(registration);
  if (queued >= 0) {
    // Spec D4: at most one queued packet per registration; new events are OR-ed into it.
    ports_[static_cast<std::size_t>(registration.port)]
        .packets[static_cast<std::size_t>(queued)]
        .bits |= bits;
    ++coverage_.or_merges;
  } else {
    open_port(registration.port).packets.push_back(socket_packet(registration, bits));
  }
  // Spec C2, switch oneshot_disarm: the at-queue reading disarms the whole registration now.
  if (registration.oneshot && options_.oneshot_disarm == OneshotDisarm::kAtQueue) {
    registration.state = RegistrationState::kDisabled;
    registration.disarmed = true;
    ++coverage_.oneshot_disarms;
  }
}

void PsnModel::queue_remove(Registration& registration) {
  READYPORT_ASSERT(find_remove(registration) < 0);
  const std::ptrdiff_t queued = find_event(registration);
  if (queued >= 0 && !options_.remove_separate_packet) {
    // Spec D4 (default): REMOVE arrives OR-ed into the packet already queued.
    ports_[static_cast<std::size_t>(registration.port)]
        .packets[static_cast<std::size_t>(queued)]
        .bits |= kSockNotifyEventRemove;
  } else {
    // Spec B5: exactly one REMOVE packet with the registration's key (after any queued packet
    // when remove_separate_packet).
    open_port(registration.port)
        .packets.push_back(socket_packet(registration, kSockNotifyEventRemove));
  }
  registration.state = RegistrationState::kRemoving;
}

void PsnModel::drop_event_packet(Registration& registration) {
  const std::ptrdiff_t queued = find_event(registration);
  READYPORT_ASSERT(queued >= 0);
  erase_packet(registration.port, queued);
}

std::ptrdiff_t PsnModel::find_event(const Registration& registration) const {
  const std::vector<Packet>& packets = ports_[static_cast<std::size_t>(registration.port)].packets;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    // An event packet always carries an event bit; a separate REMOVE packet carries none.
    if (packets[i].registration == registration.id &&
        (packets[i].bits & ~kSockNotifyEventRemove) != 0) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

std::ptrdiff_t PsnModel::find_remove(const Registration& registration) const {
  const std::vector<Packet>& packets = ports_[static_cast<std::size_t>(registration.port)].packets;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (packets[i].registration == registration.id &&
        (packets[i].bits & kSockNotifyEventRemove) != 0) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

void PsnModel::erase_packet(int port, std::ptrdiff_t index) {
  std::vector<Packet>& packets = open_port(port).packets;
  READYPORT_ASSERT(index >= 0 && static_cast<std::size_t>(index) < packets.size());
  packets.erase(packets.begin() + index);
}

void PsnModel::destroy(Registration& registration) {
  READYPORT_ASSERT(find_event(registration) < 0 && find_remove(registration) < 0);
  if (registration.socket != kModelNotSocket) {
    sockets_[static_cast<std::size_t>(registration.socket)].registration = 0;
  }
  registrations_.erase(registration.id);
}

std::uint32_t PsnModel::dequeue_into(int port, std::uint32_t count,
                                     std::vector<OverlappedEntry>* out) {
  READYPORT_ASSERT(count > 0);
  std::vector<Packet>& packets = open_port(port).packets;
  // Spec A2, A5: timeout 0 and nothing queued.
  if (packets.empty()) {
    return kWaitTimeout;
  }
  std::vector<std::uint32_t> reevaluate;
  // Spec F1: a batch of up to `count` entries, oldest first.
  while (out->size() < count && !packets.empty()) {
    const Packet packet = packets.front();
    packets.erase(packets.begin());
    out->push_back(OverlappedEntry{packet.key, packet.overlapped, 0, packet.bits});
    if (packet.registration == 0) {
      ++coverage_.posted_delivered;  // spec F2: nothing else to do
      continue;
    }
    Registration& registration = registrations_.at(packet.registration);
    if ((packet.bits & kSockNotifyEventRemove) != 0) {
      // Spec B5, E1, E3: the REMOVE packet is the last for its key; the registration ends and
      // the socket may be registered again (E6).
      if ((packet.bits & ~kSockNotifyEventRemove) != 0) {
        ++coverage_.remove_merged;
      } else {
        ++coverage_.remove_separate;
      }
      destroy(registration);
      continue;
    }
    switch (registration.state) {
      case RegistrationState::kEnabled:
        if (registration.oneshot && options_.oneshot_disarm == OneshotDisarm::kAtDequeue) {
          // Spec C2: a one-shot disarms the whole registration (every direction) on dequeue.
          registration.state = RegistrationState::kDisabled;
          registration.disarmed = true;
          ++coverage_.oneshot_disarms;
        } else if (registration.level) {
          // Spec C4: LEVEL comes back while the condition holds. The fake queues it after the
          // batch, so one call never returns a key twice (a reading the spec leaves open).
          reevaluate.push_back(registration.id);
        }
        break;
      case RegistrationState::kDisabled:
      case RegistrationState::kRemoving:
      case RegistrationState::kClosedRemoving:
        // Nothing more; a separate REMOVE packet, if any, is still behind this one.
        break;
      case RegistrationState::kClosed:
        // Spec E2: the last packet of a closed socket; nothing can name it any more.
        ++coverage_.detached_delivered;
        destroy(registration);
        break;
    }
  }
  for (const std::uint32_t id : reevaluate) {
    auto found = registrations_.find(id);
    if (found == registrations_.end() || found->second.socket == kModelNotSocket) {
      continue;
    }
    evaluate(found->second, conditions(found->second.socket));
  }
  return kErrorSuccess;  // spec A1
}

// ---- sockets ------------------------------------------------------------------------------------

const ModelSocket& PsnModel::socket(int s) const {
  READYPORT_ASSERT(s >= 0 && s < sockets_count());
  return sockets_[static_cast<std::size_t>(s)];
}

ModelSocket& PsnModel::open_socket(int s) {
  READYPORT_ASSERT(socket(s).open);
  return sockets_[static_cast<std::size_t>(s)];
}

bool PsnModel::socket_registered(int s) const {
  const ModelSocket& model_socket = socket(s);
  return model_socket.open && model_socket.registration != 0;
}

std::uint32_t PsnModel::conditions(int s) const {
  const ModelSocket& state = socket(s);
  READYPORT_ASSERT(state.open);
  // Spec D2: an abortive reset is ERR, and the connection is hung up; nothing is readable or
  // writable any more (recv and send fail with WSAECONNRESET).
  if (state.reset) {
    return kSockNotifyEventErr | kSockNotifyEventHangup;
  }
  std::uint32_t bits = 0;
  // IN: bytes to read, or the end of stream (recv returns 0 at once: the fake's reading of D2,
  // which says "with IN while data remains" and leaves the drained end of stream open).
  if (state.unread_bytes > 0 || state.peer_fin) {
    bits |= kSockNotifyEventIn;
  }
  // Spec D2: a graceful shutdown by the peer is HANGUP.
  if (state.peer_fin) {
    bits |= kSockNotifyEventHangup;
  }
  // OUT: our sending side is open and the peer can take a byte (a closed peer takes them).
  if (!state.send_shut &&
      (!state.peer_open || state.peer_unread_bytes < options_.receive_buffer_bytes)) {
    bits |= kSockNotifyEventOut;
  }
  return bits;
}

bool PsnModel::can_send(int s) const {
  const ModelSocket& state = socket(s);
  return state.open && !state.reset && !state.send_shut && state.peer_open;
}

void PsnModel::socket_close(int s) {
  ModelSocket& closing = open_socket(s);
  if (closing.registration != 0) {
    Registration& registration = registrations_.at(closing.registration);
    if (registration.state == RegistrationState::kRemoving) {
      close_removing(registration);
    } else {
      close_registered(registration);
    }
  }
  closing.open = false;
  closing.registration = 0;
}

void PsnModel::close_registered(Registration& registration) {
  const bool queued = find_event(registration) >= 0;
  if (queued) {
    ++coverage_.close_queued;
  } else {
    ++coverage_.close_plain;
  }
#ifdef READYPORT_PROPERTY_PLANT_CLOSE_REMOVE
  // PLANTED WRONG RULE (contradicts spec E2): closesocket queues a REMOVE packet.
  queue_remove(registration);
  close_removing(registration);
  return;
#endif
  // Spec E2: deregistered without a REMOVE packet; a queued packet is still delivered unless
  // the switch queued_dropped_on_disable drops it.
  registration.socket = kModelNotSocket;
  if (queued && options_.queued_dropped_on_disable) {
    drop_event_packet(registration);
  }
  if (find_event(registration) >= 0) {
    registration.state = RegistrationState::kClosed;
  } else {
    destroy(registration);
  }
}

void PsnModel::close_removing(Registration& registration) {
  ++coverage_.close_removing;
  registration.socket = kModelNotSocket;
  const std::ptrdiff_t remove = find_remove(registration);
  READYPORT_ASSERT(remove >= 0);
  std::vector<Packet>& packets = open_port(registration.port).packets;
  const bool merged =
      (packets[static_cast<std::size_t>(remove)].bits & ~kSockNotifyEventRemove) != 0;
  if (!options_.remove_dropped_on_close) {
    // Spec table "closesocket after REMOVE, before its packet" (default): the REMOVE packet is
    // still delivered. A separate event packet ahead of it follows E2 (queued_dropped_on_disable).
    if (!merged && find_event(registration) >= 0 && options_.queued_dropped_on_disable) {
      drop_event_packet(registration);
    }
    registration.state = RegistrationState::kClosedRemoving;
    return;
  }
  // The other reading (remove_dropped_on_close): the REMOVE is dropped; the event bits it was
  // OR-ed with stay, as a packet of the closed socket (E2).
  if (merged) {
    packets[static_cast<std::size_t>(remove)].bits &= ~kSockNotifyEventRemove;
  } else {
    erase_packet(registration.port, remove);
  }
  if (find_event(registration) >= 0 && options_.queued_dropped_on_disable) {
    drop_event_packet(registration);
  }
  if (find_event(registration) >= 0) {
    registration.state = RegistrationState::kClosed;
  } else {
    destroy(registration);
  }
}

void PsnModel::socket_reopen(int s) {
  READYPORT_ASSERT(!socket(s).open);
  ModelSocket fresh;
  fresh.incarnation = next_incarnation_++;
  sockets_[static_cast<std::size_t>(s)] = fresh;
}

void PsnModel::peer_send(int s, std::uint32_t bytes) {
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(bytes > 0 && state.peer_open && !state.peer_shut && !state.reset);
  READYPORT_ASSERT(state.unread_bytes + bytes <= options_.receive_buffer_bytes);
  state.unread_bytes += bytes;
  evaluate_socket(s);
}

void PsnModel::drain(int s) {
  ModelSocket& state = open_socket(s);
  // Nothing moves after a reset (WSAECONNRESET) or with nothing buffered: no change to see.
  if (state.reset || state.unread_bytes == 0) {
    return;
  }
  state.unread_bytes = 0;
  evaluate_socket(s);
}

void PsnModel::peer_shutdown(int s) {
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(state.peer_open && !state.peer_shut);
  state.peer_shut = true;
  state.peer_fin = true;
  evaluate_socket(s);
}

void PsnModel::peer_close(int s, bool abortive) {
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(state.peer_open);
  state.peer_open = false;
  if (abortive) {
    // Spec D2: SO_LINGER {on, 0} resets the connection; unread data is lost.
    state.reset = true;
    state.unread_bytes = 0;
  } else {
    state.peer_fin = true;  // a graceful close is a FIN
  }
  evaluate_socket(s);
}

void PsnModel::local_fill(int s) {
  READYPORT_ASSERT(can_send(s));
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(state.peer_unread_bytes < options_.receive_buffer_bytes);
  state.peer_unread_bytes = options_.receive_buffer_bytes;
  evaluate_socket(s);
}

void PsnModel::peer_drain(int s) {
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(state.peer_open && state.peer_unread_bytes > 0);
  state.peer_unread_bytes = 0;
  evaluate_socket(s);
}

void PsnModel::local_shutdown(int s) {
  ModelSocket& state = open_socket(s);
  READYPORT_ASSERT(!state.reset && !state.send_shut);
  state.send_shut = true;
  evaluate_socket(s);
}

}  // namespace readyport::properties
