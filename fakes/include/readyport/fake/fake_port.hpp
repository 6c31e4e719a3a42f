// readyport/fake/fake_port.hpp: FakeOs internals. One I/O completion port: its FIFO of packets
// (socket packets and posted packets share it, spec F1, F2, F4), its LIFO stack of waiting
// threads (spec F1) and the registrations bound to it.
//
// Not a public API: FakeOs (fake_os.hpp) is.
// Ownership: FakeOs owns its ports (one std::unique_ptr each, so a FakePort never moves); a port
// owns its packets and registrations. A PortWaiter lives on the waiting thread's stack.
// Threading: none of its own; every method is called under the FakeOs state mutex.
// Errors: none; misuse asserts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "readyport/fake/fake_registration.hpp"
#include "readyport/fake/runtime.hpp"
#include "readyport/os.hpp"

namespace readyport::fake_internal {

// Posted packets a port holds at most (the fake's bound on PostQueuedCompletionStatus; Windows is
// bounded by memory). Past it, post fails with ERROR_NO_SYSTEM_RESOURCES.
inline constexpr std::size_t kPostedPacketsMax = 1u << 16;

// A thread waiting in ProcessSocketNotifications or GetQueuedCompletionStatusEx.
struct PortWaiter {
  Waiter waiter;
  // Set with the wake when close_port releases the waiter (spec F6); the port is gone then.
  bool abandoned = false;
};

class FakePort {
 public:
  FakePort(Port handle, Runtime& runtime);
  ~FakePort();
  FakePort(const FakePort&) = delete;
  FakePort& operator=(const FakePort&) = delete;

  Port handle() const { return handle_; }

  // ---- the FIFO ----
  // Appends a packet and wakes the most recent waiter (spec F1). Returns its stable position.
  PacketList::iterator queue(const FakePacket& packet);
  // Removes a packet that is still queued (a dropped packet: options, close).
  void drop(PacketList::iterator packet);
  bool empty() const { return packets_.empty(); }
  std::size_t packet_count() const { return packets_.size(); }
  std::size_t posted_count() const { return posted_count_; }
  // The FIFO itself, oldest first: for invariant checks only.
  const PacketList& packets() const { return packets_; }
  // The oldest packet (precondition: !empty()).
  PacketList::iterator front();
  // Removes the oldest packet after the caller has copied it (precondition: !empty()).
  void pop_front();

  // ---- waiters (LIFO, spec F1) ----
  void push_waiter(PortWaiter& waiter);
  // Removes a waiter that ended by its deadline; a woken waiter was already popped.
  void remove_waiter(PortWaiter& waiter);
  std::size_t waiter_count() const { return waiters_.size(); }
  // close_port: marks every waiter abandoned and wakes it (spec F6).
  void abandon_waiters();

  // ---- registrations ----
  FakeRegistration& registration_create(std::uint64_t id, FakeSocket& socket);
  // The registration with this id, or null when it no longer exists.
  FakeRegistration* registration_find(std::uint64_t id);
  // Destroys a registration whose packets are gone (asserted).
  void registration_destroy(FakeRegistration& registration);
  std::size_t registration_count() const { return registrations_.size(); }
  // Every registration, in id order (deterministic). For close_port.
  std::vector<FakeRegistration*> registrations_in_order();
  // The same, read-only: for invariant checks.
  const std::map<std::uint64_t, std::unique_ptr<FakeRegistration>>& registrations() const {
    return registrations_;
  }

 private:
  Port handle_;
  Runtime& runtime_;
  PacketList packets_;
  std::size_t posted_count_ = 0;
  std::vector<PortWaiter*> waiters_;  // back() is the most recent waiter
  std::map<std::uint64_t, std::unique_ptr<FakeRegistration>> registrations_;
};

}  // namespace readyport::fake_internal
