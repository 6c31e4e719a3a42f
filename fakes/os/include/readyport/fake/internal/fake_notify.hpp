// readyport/fake/internal/fake_notify.hpp: FakeOs internals. The registration state machine of
// fake_registration.hpp driven by the events of the model: a PSN element (spec B, C1), a change of
// a socket's conditions (spec C4, C5, D1, D4), a packet dequeued (spec C2, C4, B5) or handed to a
// waiting thread (spec F1), a socket closed (spec E2) and a port closed (spec F6).
//
// Not a public API: FakeOs (fake_os.hpp) is.
// Ownership: functions only; they change registrations, ports and sockets they are given.
// Threading: called under the FakeOs state mutex only. Errors: PSN element codes are returned as
// values (spec A8); broken invariants assert.
#pragma once

#include <cstdint>

#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/internal/fake_port.hpp"
#include "readyport/fake/internal/fake_registration.hpp"
#include "readyport/fake/internal/fake_socket.hpp"
#include "readyport/os.hpp"

namespace readyport::fake_internal {

// What an applied element needs besides the element itself.
struct ApplyContext {
  const FakeOptions& options;
  FakePort& port;  // the port of the PSN call
  std::uint64_t& next_registration_id;
};

// Applies one PSN element (spec B1-B9, C1) and returns its registration_result (0 = applied).
// `socket` is the open socket the element names, or null when its value is not one (spec B9).
std::uint32_t registration_apply(const SockNotifyRegistration& element, FakeSocket* socket,
                                 const ApplyContext& context);

// The socket's conditions changed (or may have): queues or merges a packet per the registration's
// filter and trigger flags. Attached registrations only.
void registration_evaluate(FakeRegistration& registration, std::uint32_t conditions,
                           const FakeOptions& options);

// What the dequeuing call must do after a registration's packet came out of the FIFO.
enum class AfterDequeue : std::uint8_t {
  kNothing,    // nothing more
  kReevaluate  // LEVEL|PERSISTENT and still enabled: re-evaluate after the batch (spec C4)
};

// The packet at the front of `port`'s FIFO belongs to `registration`. Removes it from the FIFO and
// applies its consequences: one-shot disarm (spec C2), destruction after REMOVE (spec B5, E1) or
// after the last packet of a closed socket (spec E2). May destroy `registration`.
AfterDequeue registration_dequeue_front(FakePort& port, FakeRegistration& registration,
                                        const FakeOptions& options);

// Spec F1, the hand-off: while threads wait on `port`, a packet is queued and one more thread
// may run (F7), dequeues the oldest packet (with the consequences registration_dequeue_front
// applies to a socket packet) and releases the most recent waiter with it. Called by the
// registration that queued the packet, once it has recorded it, and by FakeOs when a thread of
// the port stops running; posted packets are handed by FakePort::queue when it can. May destroy
// the registration of a handed REMOVE packet.
void handoff_to_waiters(FakePort& port, const FakeOptions& options);

// closesocket (spec E2): deregisters without a REMOVE packet. May destroy `registration`. True
// when an applied REMOVE's packet was dropped with it (FakeOptions::remove_dropped_on_close).
bool registration_socket_closed(FakeRegistration& registration, const FakeOptions& options);

// close_port (spec F6): drops the registration and its packets, no REMOVE. Destroys it.
void registration_port_closed(FakeRegistration& registration);

}  // namespace readyport::fake_internal
