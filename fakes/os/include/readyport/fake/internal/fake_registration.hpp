// readyport/fake/internal/fake_registration.hpp: FakeOs internals. A completion packet, and one
// socket's registration with one port (spec B, C, D, E), with its explicit state machine.
//
// Not a public API: FakeOs (fake_os.hpp) is. These types exist so that each concept of the fake
// lives in its own small file; tests use FakeOs only.
//
// Ownership: a FakePort owns its registrations and its packets. A registration points at its
// socket while attached and at its port always; a socket points back at its registration.
// Threading: none of its own; every access happens under the FakeOs state mutex.
#pragma once

#include <cstdint>
#include <list>
#include <optional>

#include "readyport/os.hpp"

namespace readyport::fake_internal {

struct FakeSocket;
class FakePort;

// One completion packet in a port's FIFO (spec F1, F2).
struct FakePacket {
  // The registration that queued it; 0 for a posted packet (PostQueuedCompletionStatus).
  std::uint64_t registration_id = 0;
  std::uintptr_t completion_key = 0;
  std::uintptr_t overlapped = 0;
  std::uintptr_t internal = 0;
  // The event mask for a socket packet (spec D4: bits OR-ed while queued); bytes for a posted one.
  std::uint32_t bytes_transferred = 0;
};

// The FIFO. A std::list so that a registration can hold an iterator to its queued packet (to OR
// new bits into it, spec D4) that stays valid while other packets come and go.
using PacketList = std::list<FakePacket>;

// The registration state machine. Transitions (all in fake_notify.cpp, each asserted):
//   (none)            --ENABLE-->              kEnabled
//   kEnabled          --DISABLE / one-shot-->  kDisabled           (spec B4, C2)
//   kDisabled         --ENABLE-->              kEnabled            (spec B2: re-arm)
//   kEnabled|kDisabled --REMOVE-->             kRemoving           (spec B5)
//   kRemoving         --REMOVE packet out-->   (destroyed)         (spec B5, E1, E6)
//   kEnabled|kDisabled --closesocket-->        kDetached or (destroyed)       (spec E2)
//   kRemoving         --closesocket-->         kDetachedRemoving, kDetached or (destroyed)
//   kDetached         --its last packet out--> (destroyed)
//   kDetachedRemoving --REMOVE packet out-->   (destroyed)
//   any               --close_port-->          (destroyed, no REMOVE)   (spec F6)
enum class RegistrationState : std::uint8_t {
  kEnabled,           // attached; queues packets for its filter and trigger flags
  kDisabled,          // attached; queues nothing (DISABLE, or a one-shot that fired)
  kRemoving,          // attached; REMOVE accepted, its packet queued, nothing else follows
  kDetachedRemoving,  // socket closed after REMOVE; the REMOVE packet is still queued
  kDetached,          // socket closed; an event packet is still queued and will be delivered
};

const char* registration_state_name(RegistrationState state);

struct FakeRegistration {
  // Unique within one FakeOs and never reused: packets name their registration by it.
  std::uint64_t id = 0;
  RegistrationState state = RegistrationState::kEnabled;
  FakeSocket* socket = nullptr;  // null exactly in the detached states
  FakePort* port = nullptr;      // never null
  std::uintptr_t key = 0;        // taken at creation (spec B2, B3)
  std::uint16_t filter = 0;      // kSockNotifyRegisterEvent* bits
  bool level = true;             // LEVEL (true) or EDGE (false)
  bool oneshot = true;           // ONESHOT (true) or PERSISTENT (false)
  // The socket's conditions at the last evaluation: EDGE reports only bits that rise (spec C5).
  std::uint32_t conditions_seen = 0;
  // The queued event packet, if any (at most one, spec D4).
  std::optional<PacketList::iterator> event_packet;
  // The queued REMOVE packet, if any. Equal to event_packet when REMOVE was OR-ed into it.
  std::optional<PacketList::iterator> remove_packet;
};

// True in the states where the registration is bound to an open socket.
inline bool registration_attached(RegistrationState state) {
  return state == RegistrationState::kEnabled || state == RegistrationState::kDisabled ||
         state == RegistrationState::kRemoving;
}

}  // namespace readyport::fake_internal
