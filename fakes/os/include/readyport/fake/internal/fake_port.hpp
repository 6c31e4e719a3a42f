// readyport/fake/internal/fake_port.hpp: FakeOs internals. One I/O completion port: its FIFO of
// packets (socket packets and posted packets share it, spec F1, F2, F4), its LIFO stack of waiting
// threads (spec F1), the waiters it released with a packet, and the registrations bound to it.
//
// The hand-off (spec F1): a packet queued while threads wait does not stay in the FIFO for
// whoever runs first. The most recent waiter is released and the packet is dequeued for it at
// that moment, as Windows does: "when a completion packet is released to a thread, the system
// releases the last (most recent) thread associated with that port, passing it the completion
// information for the oldest I/O completion" (I/O Completion Ports). A thread that polls later
// (timeout 0) finds nothing; the released waiter returns the packet when it runs, with the rest
// of its batch taken from the FIFO then, without waiting.
//
// Not a public API: FakeOs (fake_os.hpp) is.
// Ownership: FakeOs owns its ports (one std::unique_ptr each, so a FakePort never moves); a port
// owns its packets and registrations. A PortWaiter lives on the waiting thread's stack from before
// push_waiter() until after remove_waiter() or its abandonment; the port only points at it.
// Threading: none of its own; every method is called under the FakeOs state mutex.
// Errors: none; misuse asserts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "readyport/fake/internal/effect_point.hpp"
#include "readyport/fake/internal/fake_registration.hpp"
#include "readyport/fake/runtime.hpp"
#include "readyport/os.hpp"

namespace readyport::fake_internal {

// Posted packets a port holds at most (the fake's bound on PostQueuedCompletionStatus; Windows is
// bounded by memory). Past it, post fails with ERROR_NO_SYSTEM_RESOURCES.
inline constexpr std::size_t kPostedPacketsMax = 1u << 16;

// The entry a dequeue returns for a packet (its four values, spec F2 and the PSN layout).
OverlappedEntry packet_entry(const FakePacket& packet);

// A thread waiting in ProcessSocketNotifications or GetQueuedCompletionStatusEx. Its states:
//   waiting  (on the LIFO stack)  --a packet is handed to it-->  released, holding that entry
//   waiting                       --its deadline-->              remove_waiter(): times out
//   released                      --it runs-->                   remove_waiter(): its entry is
//                                                                the first of its batch
//   waiting or released           --close_port-->                abandoned (the entry is lost)
struct PortWaiter {
  Waiter waiter;
  // Set with the wake when close_port releases the waiter (spec F3, F6); the port is gone then.
  bool abandoned = false;
  // The packet handed to it when it was released (spec F1), already dequeued: its registration's
  // consequences (one-shot disarm, REMOVE, spec C2, B5) were applied then.
  std::optional<OverlappedEntry> handoff;
  // The waiting call's pending trace begin lines (effect_point.hpp), written when a packet is
  // handed to it: the hand-off is its dequeue. Null when it has none.
  EffectBegins* begins = nullptr;
};

class FakePort {
 public:
  // `concurrency_limit`: threads of this port that may run at once (spec F7); 0: no limit.
  FakePort(Port handle, Runtime& runtime, std::uint32_t concurrency_limit = 0);
  ~FakePort();
  FakePort(const FakePort&) = delete;
  FakePort& operator=(const FakePort&) = delete;

  Port handle() const { return handle_; }

  // ---- the FIFO ----
  // Appends a packet and returns its stable position. A posted packet (registration_id 0) queued
  // while threads wait is handed at once to the most recent one (spec F1) and never enters the
  // FIFO: then the result is packets_end(). A socket packet always enters the FIFO: its
  // registration records it first, then calls handoff_to_waiters() (fake_notify.hpp), which hands
  // it on and applies its dequeue there.
  PacketList::iterator queue(const FakePacket& packet);
  PacketList::iterator packets_end() { return packets_.end(); }
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

  // ---- running threads (spec F7) ----
  // Whether one more of its threads may run: always without a limit.
  bool may_run() const { return limit_ == 0 || running_ < limit_; }
  // A thread of this port starts or stops running (released or returned; waits, blocks, ends).
  void run_begin() { ++running_; }
  void run_end();
  std::uint32_t running() const { return running_; }
  std::uint32_t limit() const { return limit_; }

  // ---- waiters (LIFO, spec F1) ----
  // Precondition: empty() or !may_run(): a thread waits only when it may not take a packet.
  void push_waiter(PortWaiter& waiter);
  // True when a thread waits, a packet is queued and one more thread may run: the moment of a
  // hand-off (spec F1, F7).
  bool handoff_due() const { return !waiters_.empty() && !packets_.empty() && may_run(); }
  // Releases the most recent waiter with `entry`, a packet its caller has just dequeued (spec F1);
  // the released thread runs from now (F7). Precondition: a thread waits.
  void release_most_recent(const OverlappedEntry& entry);
  // The waiter's park() returned (woken or deadline) and it was not abandoned. A waiter still on
  // the stack ended by its deadline and is removed; it holds nothing. A released waiter's entry is
  // put back at the head of the FIFO as a plain packet (registration_id 0: its dequeue already
  // happened), which the caller must dequeue first, now, under the same hold of the state mutex
  // (FakeOs::wait_and_dequeue does: it dequeues right after). So a released waiter never times
  // out, and its batch is its entry followed by what is queued now.
  // Returns true for a released waiter (it holds the FIFO's head and counts as running).
  bool remove_waiter(PortWaiter& waiter);
  // Threads inside a wait call on this port: waiting, or released and not yet run.
  std::size_t waiter_count() const { return waiters_.size() + released_.size(); }
  // Waiting only (on the LIFO stack), and released only: for invariant checks.
  std::size_t waiting_count() const { return waiters_.size(); }
  std::size_t released_count() const { return released_.size(); }
  // close_port: marks every waiter abandoned and wakes it (spec F3, F6), waiting or released; a
  // released waiter's entry is lost with the port, as its queued packets are.
  void abandon_waiters();
  // handoff_to_waiters() is running (it re-enters through a re-queued LEVEL packet): set and read
  // by it only.
  bool handoff_running() const { return handoff_running_; }
  void handoff_running_set(bool running) { handoff_running_ = running; }

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
  std::uint32_t limit_ = 0;    // spec F7; 0: none
  std::uint32_t running_ = 0;  // threads of this port running now (spec F7)
  PacketList packets_;
  std::size_t posted_count_ = 0;
  std::vector<PortWaiter*> waiters_;   // back() is the most recent waiter
  std::vector<PortWaiter*> released_;  // released with an entry, not yet run; in release order
  bool handoff_running_ = false;
  std::map<std::uint64_t, std::unique_ptr<FakeRegistration>> registrations_;
};

}  // namespace readyport::fake_internal
