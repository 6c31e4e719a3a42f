#include "readyport/fake/internal/fake_notify.hpp"

#include "readyport/assert.hpp"

namespace readyport::fake_internal {

namespace {

constexpr std::uint8_t kTriggerKnown = kSockNotifyTriggerOneshot | kSockNotifyTriggerPersistent |
                                       kSockNotifyTriggerLevel | kSockNotifyTriggerEdge;

struct Trigger {
  bool level = true;
  bool oneshot = true;
};

// Spec C1: exactly one of LEVEL/EDGE (both modes) and exactly one of ONESHOT/PERSISTENT (strict;
// lenient reads a missing one as PERSISTENT, two are still an error).
std::uint32_t parse_trigger(std::uint8_t flags, bool lenient, Trigger* trigger_out) {
  if ((flags & ~kTriggerKnown) != 0) {
    return kWsaEinval;
  }
  const bool level = (flags & kSockNotifyTriggerLevel) != 0;
  const bool edge = (flags & kSockNotifyTriggerEdge) != 0;
  if (level == edge) {
    return kWsaEinval;
  }
  const bool oneshot = (flags & kSockNotifyTriggerOneshot) != 0;
  const bool persistent = (flags & kSockNotifyTriggerPersistent) != 0;
  if (oneshot && persistent) {
    return kWsaEinval;
  }
  if (!oneshot && !persistent && !lenient) {
    return kWsaEinval;
  }
  trigger_out->level = level;
  trigger_out->oneshot = oneshot;
  return 0;
}

// The event bits a registration reports: its filter (IN/OUT/HANGUP share their bit values with
// the filter bits) plus ERR whatever the filter (spec D1).
std::uint32_t reportable_bits(std::uint16_t filter) {
  return (static_cast<std::uint32_t>(filter) & kSockNotifyRegisterEventsAll) | kSockNotifyEventErr;
}

FakePacket socket_packet(const FakeRegistration& registration, std::uint32_t bits,
                         const FakeOptions& options) {
  FakePacket packet;
  packet.registration_id = registration.id;
  packet.completion_key = registration.key;
  packet.overlapped = options.overlapped_poison ? kOverlappedPoison : 0;
  packet.internal = 0;
  packet.bytes_transferred = bits;
  return packet;
}

// Queues an event packet, or ORs the bits into the one already queued (spec D4).
void post_event(FakeRegistration& registration, std::uint32_t bits, const FakeOptions& options) {
  READYPORT_ASSERT(registration.state == RegistrationState::kEnabled);
  READYPORT_ASSERT(bits != 0 && (bits & kSockNotifyEventRemove) == 0);
  READYPORT_ASSERT(!registration.remove_packet.has_value());
  if (registration.event_packet.has_value()) {
    (*registration.event_packet)->bytes_transferred |= bits;
  } else {
    registration.event_packet =
        registration.port->queue(socket_packet(registration, bits, options));
  }
  // Spec C2 with the "at queue time" reading: the whole registration disarms now.
  if (registration.oneshot && options.oneshot_disarm == OneshotDisarm::kAtQueue) {
    registration.state = RegistrationState::kDisabled;
  }
  // Spec F1: a thread waiting on the port gets the packet now (the registration is up to date).
  handoff_to_waiters(*registration.port, options);
}

void drop_event_packet(FakeRegistration& registration) {
  READYPORT_ASSERT(registration.event_packet.has_value());
  READYPORT_ASSERT(registration.event_packet != registration.remove_packet);
  registration.port->drop(*registration.event_packet);
  registration.event_packet.reset();
}

void detach_socket(FakeRegistration& registration) {
  if (registration.socket == nullptr) {
    return;
  }
  READYPORT_ASSERT(registration.socket->registration == &registration);
  registration.socket->registration = nullptr;
  registration.socket = nullptr;
}

// Spec B5: exactly one REMOVE packet, with the registration's key. OR-ed into a queued event
// packet by default (D4), or queued separately behind it (option).
void queue_remove(FakeRegistration& registration, const FakeOptions& options) {
  READYPORT_ASSERT(!registration.remove_packet.has_value());
  if (registration.event_packet.has_value() && !options.remove_separate_packet) {
    (*registration.event_packet)->bytes_transferred |= kSockNotifyEventRemove;
    registration.remove_packet = registration.event_packet;
  } else {
    registration.remove_packet =
        registration.port->queue(socket_packet(registration, kSockNotifyEventRemove, options));
  }
  registration.state = RegistrationState::kRemoving;
  // Spec F1: a thread waiting on the port gets the REMOVE packet now, which ends the
  // registration (spec B5): nothing may use `registration` after this.
  handoff_to_waiters(*registration.port, options);
}

std::uint32_t apply_enable(const SockNotifyRegistration& element, FakeSocket* socket,
                           const ApplyContext& context) {
  const FakeOptions& options = context.options;
  // Spec B9: only sockets.
  if (socket == nullptr) {
    return options.not_socket_error;
  }
  if ((element.event_filter & ~kSockNotifyRegisterEventsAll) != 0) {
    return kWsaEinval;
  }
  Trigger trigger;
  const std::uint32_t trigger_error =
      parse_trigger(element.trigger_flags, options.trigger_lenient, &trigger);
  if (trigger_error != 0) {
    return trigger_error;  // spec C1
  }
  const std::uint32_t conditions = socket_conditions(*socket, options.receive_buffer_bytes);
  FakeRegistration* registration = socket->registration;
  if (registration == nullptr) {
    // Spec B2: a new registration bound to this port; the key is taken now. Conditions that hold
    // already are "seen": EDGE reports none of them (spec C5), LEVEL reports them below (C4).
    registration = &context.port.registration_create(context.next_registration_id++, *socket);
    socket->registration = registration;
    registration->key = element.completion_key;
    registration->conditions_seen = conditions;
  } else if (registration->port != &context.port) {
    // Spec B8: registered with another port; that registration is unchanged.
    return options.second_port_error;
  } else if (registration->state == RegistrationState::kRemoving) {
    // REMOVE accepted and its packet not yet out: nothing may follow it for this key (spec B5);
    // ENABLE works again once the REMOVE packet was dequeued (spec E6).
    return kWsaEinval;
  } else if (registration->key != element.completion_key && options.key_change_strict) {
    // Spec B3, strict reading: a different key fails and nothing changes.
    return kWsaEinval;
  } else {
    // Spec B2: enabled or disabled; overwrite filter and flags, keep the key (B3 default).
    // conditions_seen is current: every change of the socket was evaluated.
    READYPORT_ASSERT(registration->conditions_seen == conditions);
  }
  registration->filter = element.event_filter;
  registration->level = trigger.level;
  registration->oneshot = trigger.oneshot;
  registration->state = RegistrationState::kEnabled;
  registration_evaluate(*registration, conditions, options);
  return 0;
}

// Finds the registration a DISABLE or REMOVE acts on, or says why it cannot.
std::uint32_t registration_for_change(FakeSocket* socket, const ApplyContext& context,
                                      FakeRegistration** registration_out) {
  const FakeOptions& options = context.options;
  if (socket == nullptr) {
    return options.not_socket_error;  // spec B9
  }
  FakeRegistration* registration = socket->registration;
  if (registration == nullptr) {
    return options.unregistered_error;  // spec B6
  }
  if (registration->port != &context.port) {
    return options.second_port_error;  // spec B8
  }
  // Spec B6/B7: REMOVE already accepted counts as not registered.
  if (registration->state == RegistrationState::kRemoving) {
    return options.unregistered_error;
  }
  READYPORT_ASSERT(registration->state == RegistrationState::kEnabled ||
                   registration->state == RegistrationState::kDisabled);
  *registration_out = registration;
  return 0;
}

std::uint32_t apply_disable(FakeSocket* socket, const ApplyContext& context) {
  FakeRegistration* registration = nullptr;
  const std::uint32_t error = registration_for_change(socket, context, &registration);
  if (error != 0) {
    return error;
  }
  // Spec B4: keeps the registration, queues nothing; a queued packet is still delivered unless
  // the option drops it.
  registration->state = RegistrationState::kDisabled;
  if (registration->event_packet.has_value() && context.options.queued_dropped_on_disable) {
    drop_event_packet(*registration);
  }
  return 0;
}

std::uint32_t apply_remove(FakeSocket* socket, const ApplyContext& context) {
  FakeRegistration* registration = nullptr;
  const std::uint32_t error = registration_for_change(socket, context, &registration);
  if (error != 0) {
    return error;
  }
  // Spec B5: enabled or disabled alike; key, filter and flags of the element are ignored.
  queue_remove(*registration, context.options);
  return 0;
}

}  // namespace

std::uint32_t registration_apply(const SockNotifyRegistration& element, FakeSocket* socket,
                                 const ApplyContext& context) {
  switch (element.operation) {
    case kSockNotifyOpNone:
      // Spec B1: no change.
      return 0;
    case kSockNotifyOpEnable:
      return apply_enable(element, socket, context);
    case kSockNotifyOpDisable:
      return apply_disable(socket, context);
    case kSockNotifyOpRemove:
      return apply_remove(socket, context);
    default:
      // Not one of the four values (operation is a value, not a mask).
      return kWsaEinval;
  }
}

void registration_evaluate(FakeRegistration& registration, std::uint32_t conditions,
                           const FakeOptions& options) {
  READYPORT_ASSERT(registration.socket != nullptr);
  READYPORT_ASSERT((conditions & ~kSockNotifyEventsAll) == 0);
  READYPORT_ASSERT((conditions & kSockNotifyEventRemove) == 0);
  switch (registration.state) {
    case RegistrationState::kEnabled: {
      const std::uint32_t reportable = conditions & reportable_bits(registration.filter);
      // LEVEL (spec C4): whatever holds. EDGE (spec C5): only what rose since the last look.
      const std::uint32_t report =
          registration.level ? reportable : (reportable & ~registration.conditions_seen);
      registration.conditions_seen = conditions;
      if (report != 0) {
        post_event(registration, report, options);
      }
      return;
    }
    case RegistrationState::kDisabled:
      // Queues nothing (spec B4, C2); keeps watching so that a re-enabled EDGE registration
      // reports only rises that happen after the ENABLE (spec C5).
      registration.conditions_seen = conditions;
      return;
    case RegistrationState::kRemoving:
      // Nothing follows REMOVE (spec B5).
      registration.conditions_seen = conditions;
      return;
    case RegistrationState::kDetachedRemoving:
    case RegistrationState::kDetached:
      // Unreachable: a detached registration has no socket to change.
      READYPORT_UNREACHABLE();
  }
  READYPORT_UNREACHABLE();
}

AfterDequeue registration_dequeue_front(FakePort& port, FakeRegistration& registration,
                                        const FakeOptions& options) {
  READYPORT_ASSERT(registration.port == &port);
  const PacketList::iterator packet = port.front();
  READYPORT_ASSERT(packet->registration_id == registration.id);
  const bool is_remove = registration.remove_packet == packet;
  const bool is_event = registration.event_packet == packet;
  READYPORT_ASSERT(is_remove || is_event);
  port.pop_front();
  if (is_event) {
    registration.event_packet.reset();
  }
  if (is_remove) {
    // Spec B5, E1, E6: the REMOVE packet is the last for its key; the registration ends. A
    // separate event packet was queued before it, so it is already out (FIFO).
    registration.remove_packet.reset();
    READYPORT_ASSERT(!registration.event_packet.has_value());
    READYPORT_ASSERT(registration.state == RegistrationState::kRemoving ||
                     registration.state == RegistrationState::kDetachedRemoving);
    detach_socket(registration);
    port.registration_destroy(registration);
    return AfterDequeue::kNothing;
  }
  switch (registration.state) {
    case RegistrationState::kEnabled:
      // Spec C2: a one-shot disarms the whole registration when its packet is dequeued.
      if (registration.oneshot && options.oneshot_disarm == OneshotDisarm::kAtDequeue) {
        registration.state = RegistrationState::kDisabled;
        return AfterDequeue::kNothing;
      }
      // Spec C4: PERSISTENT (or a one-shot re-armed since its packet was queued, with the
      // at-queue disarm) and LEVEL: comes back while the condition holds. EDGE waits for a rise.
      return registration.level ? AfterDequeue::kReevaluate : AfterDequeue::kNothing;
    case RegistrationState::kDisabled:
      // Disabled or already disarmed: nothing more.
      return AfterDequeue::kNothing;
    case RegistrationState::kRemoving:
    case RegistrationState::kDetachedRemoving:
      // The separate REMOVE packet is still queued behind this one.
      READYPORT_ASSERT(registration.remove_packet.has_value());
      return AfterDequeue::kNothing;
    case RegistrationState::kDetached:
      // The last packet of a closed socket (spec E2): nothing can follow.
      port.registration_destroy(registration);
      return AfterDequeue::kNothing;
  }
  READYPORT_UNREACHABLE();
}

void handoff_to_waiters(FakePort& port, const FakeOptions& options) {
  // Re-entered from the re-evaluation below (a LEVEL packet queued again): that packet is handed
  // on by the loop that is already running.
  if (port.handoff_running()) {
    return;
  }
  port.handoff_running_set(true);
  // Bounded: each turn releases one waiter. The packet handed is the oldest (spec F1): the one
  // just queued, or, with a concurrency limit (F7), one that waited for a thread to stop running.
  while (port.handoff_due()) {
    const PacketList::iterator packet = port.front();
    const OverlappedEntry entry = packet_entry(*packet);
    if (packet->registration_id == 0) {
      // A posted packet (one FakePort::queue could not hand at once, F7): nothing to apply.
      port.pop_front();
      port.release_most_recent(entry);
      continue;
    }
    FakeRegistration* registration = port.registration_find(packet->registration_id);
    READYPORT_ASSERT(registration != nullptr);  // a registration outlives its queued packets
    const std::uint64_t id = registration->id;
    // The hand-off is the dequeue: one-shot disarm, REMOVE's end of the registration (spec C2,
    // B5, E2) apply now, as for a packet a thread takes from the FIFO.
    const AfterDequeue after = registration_dequeue_front(port, *registration, options);
    port.release_most_recent(entry);
    if (after != AfterDequeue::kReevaluate) {
      continue;
    }
    // Spec C4 after this one-entry batch: a LEVEL|PERSISTENT registration whose condition still
    // holds is queued again, at the back, and handed to the next waiter if there is one. With no
    // waiter left it stays queued, so the released waiter may take it too when it fills the rest
    // of its batch: one call can then carry the same key twice (its hand-off and the packet queued
    // again after it), which a thread dequeuing from the FIFO itself never sees (FakeOs re-queues
    // after its whole batch). On Windows both readings are possible; the engine must cope.
    registration = port.registration_find(id);
    if (registration == nullptr || registration->socket == nullptr) {
      continue;
    }
    registration_evaluate(*registration,
                          socket_conditions(*registration->socket, options.receive_buffer_bytes),
                          options);
  }
  port.handoff_running_set(false);
}

namespace {

// closesocket after REMOVE, before its packet was dequeued (table row "closesocket after REMOVE").
bool socket_closed_while_removing(FakeRegistration& registration, const FakeOptions& options) {
  READYPORT_ASSERT(registration.remove_packet.has_value());
  const bool merged = registration.event_packet == registration.remove_packet;
  if (!options.remove_dropped_on_close) {
    // Default: the REMOVE packet is still delivered. A separate event packet before it follows
    // the DISABLE/closesocket rule.
    if (!merged && registration.event_packet.has_value() && options.queued_dropped_on_disable) {
      drop_event_packet(registration);
    }
    registration.state = RegistrationState::kDetachedRemoving;
    return false;
  }
  if (merged) {
    // Strip REMOVE from the packet it was OR-ed into; the event bits stay.
    (*registration.remove_packet)->bytes_transferred &= ~kSockNotifyEventRemove;
    READYPORT_ASSERT((*registration.event_packet)->bytes_transferred != 0);
  } else {
    registration.port->drop(*registration.remove_packet);
  }
  registration.remove_packet.reset();
  if (registration.event_packet.has_value() && options.queued_dropped_on_disable) {
    drop_event_packet(registration);
  }
  if (registration.event_packet.has_value()) {
    registration.state = RegistrationState::kDetached;
  } else {
    registration.port->registration_destroy(registration);
  }
  return true;
}

}  // namespace

bool registration_socket_closed(FakeRegistration& registration, const FakeOptions& options) {
  READYPORT_ASSERT(registration_attached(registration.state));
  detach_socket(registration);
  switch (registration.state) {
    case RegistrationState::kEnabled:
    case RegistrationState::kDisabled:
      // Spec E2: deregistered with no REMOVE; a queued packet is still delivered unless the
      // option drops it. With nothing queued, nothing can ever name the registration again.
      READYPORT_ASSERT(!registration.remove_packet.has_value());
      if (registration.event_packet.has_value() && options.queued_dropped_on_disable) {
        drop_event_packet(registration);
      }
      if (registration.event_packet.has_value()) {
        registration.state = RegistrationState::kDetached;
      } else {
        registration.port->registration_destroy(registration);
      }
      return false;
    case RegistrationState::kRemoving:
      return socket_closed_while_removing(registration, options);
    case RegistrationState::kDetachedRemoving:
    case RegistrationState::kDetached:
      // Unreachable: asserted attached above.
      READYPORT_UNREACHABLE();
  }
  READYPORT_UNREACHABLE();
}

void registration_port_closed(FakeRegistration& registration) {
  // Spec F6: no REMOVE; every packet of the registration goes with the port.
  detach_socket(registration);
  FakePort& port = *registration.port;
  if (registration.remove_packet.has_value() &&
      registration.remove_packet != registration.event_packet) {
    port.drop(*registration.remove_packet);
  }
  if (registration.event_packet.has_value()) {
    port.drop(*registration.event_packet);
  }
  registration.remove_packet.reset();
  registration.event_packet.reset();
  port.registration_destroy(registration);
}

}  // namespace readyport::fake_internal
