#include "readyport/fake/internal/fake_port.hpp"

#include <algorithm>
#include <iterator>

#include "readyport/assert.hpp"

namespace readyport::fake_internal {

const char* registration_state_name(RegistrationState state) {
  switch (state) {
    case RegistrationState::kEnabled:
      return "enabled";
    case RegistrationState::kDisabled:
      return "disabled";
    case RegistrationState::kRemoving:
      return "removing";
    case RegistrationState::kDetachedRemoving:
      return "detached_removing";
    case RegistrationState::kDetached:
      return "detached";
  }
  READYPORT_UNREACHABLE();
}

FakePort::FakePort(Port handle, Runtime& runtime, std::uint32_t concurrency_limit)
    : handle_(handle), runtime_(runtime), limit_(concurrency_limit) {
  READYPORT_ASSERT(!(handle == kInvalidPort));
}

FakePort::~FakePort() {
  // close_port released every waiter before destroying the port; a parked (or released, not yet
  // run) thread here would wake up into freed memory.
  READYPORT_ASSERT(waiters_.empty());
  READYPORT_ASSERT(released_.empty());
  READYPORT_ASSERT(!handoff_running_);
}

OverlappedEntry packet_entry(const FakePacket& packet) {
  OverlappedEntry entry;
  entry.completion_key = packet.completion_key;
  entry.overlapped = packet.overlapped;
  entry.internal = packet.internal;
  entry.bytes_transferred = packet.bytes_transferred;
  return entry;
}

PacketList::iterator FakePort::queue(const FakePacket& packet) {
  if (packet.registration_id == 0) {
    READYPORT_ASSERT(posted_count_ < kPostedPacketsMax);
    ++posted_count_;
  }
  packets_.push_back(packet);
  const PacketList::iterator position = std::prev(packets_.end());
  if (packet.registration_id != 0 || waiters_.empty() || !may_run()) {
    return position;
  }
  // Spec F1, F2: a posted packet has no consequence of its own, so it is dequeued for the most
  // recent waiter now. Threads wait while one more may run only while the FIFO is empty (F7), so
  // it is the oldest packet.
  READYPORT_ASSERT(packets_.size() == 1);
  const OverlappedEntry entry = packet_entry(packet);
  pop_front();
  release_most_recent(entry);
  return packets_.end();
}

void FakePort::drop(PacketList::iterator packet) {
  READYPORT_ASSERT(!packets_.empty());
  if (packet->registration_id == 0) {
    READYPORT_ASSERT(posted_count_ > 0);
    --posted_count_;
  }
  packets_.erase(packet);
}

PacketList::iterator FakePort::front() {
  READYPORT_ASSERT(!packets_.empty());
  return packets_.begin();
}

void FakePort::pop_front() { drop(front()); }

void FakePort::push_waiter(PortWaiter& waiter) {
  READYPORT_ASSERT(!waiter.abandoned && !waiter.waiter.woken && !waiter.handoff.has_value());
  // A thread waits only when it may not take a packet, and while anyone waits every packet is
  // handed on while one more thread may run (spec F1, F7).
  READYPORT_ASSERT(packets_.empty() || !may_run());
  READYPORT_ASSERT(std::find(waiters_.begin(), waiters_.end(), &waiter) == waiters_.end());
  READYPORT_ASSERT(std::find(released_.begin(), released_.end(), &waiter) == released_.end());
  waiters_.push_back(&waiter);
}

void FakePort::release_most_recent(const OverlappedEntry& entry) {
  READYPORT_ASSERT(!waiters_.empty());
  PortWaiter* waiter = waiters_.back();
  waiters_.pop_back();
  READYPORT_ASSERT(!waiter->abandoned && !waiter->handoff.has_value());
  // One entry per released waiter: Windows passes the released thread one completion ("the
  // completion information for the oldest I/O completion"); the documentation of
  // GetQueuedCompletionStatusEx and PSN says nothing of a batch handed at release, so the rest of
  // the batch is taken when the thread runs, from what is queued then (remove_waiter).
  waiter->handoff = entry;
  ++running_;  // spec F7: it runs from its release
  // The hand-off is the waiter's dequeue: its begin line goes here, not where it next runs.
  effect_point_for(waiter->begins, EffectPoint::kDequeue);
  released_.push_back(waiter);
  runtime_.wake(waiter->waiter);
}

void FakePort::run_end() {
  READYPORT_ASSERT(running_ > 0);
  --running_;
}

bool FakePort::remove_waiter(PortWaiter& waiter) {
  READYPORT_ASSERT(!waiter.abandoned);
  auto waiting = std::find(waiters_.begin(), waiters_.end(), &waiter);
  if (waiting != waiters_.end()) {
    // Ended by its deadline: nobody released it, so it holds nothing.
    READYPORT_ASSERT(!waiter.handoff.has_value());
    waiters_.erase(waiting);
    return false;
  }
  // Released by release_most_recent(), which popped it together with the wake.
  READYPORT_ASSERT(waiter.waiter.woken && waiter.handoff.has_value());
  auto released = std::find(released_.begin(), released_.end(), &waiter);
  READYPORT_ASSERT(released != released_.end());
  released_.erase(released);
  // Its entry goes to the head of the FIFO as a plain packet (registration_id 0: no consequence
  // left to apply), for the caller's dequeue that follows at once: it was handed while the FIFO
  // was empty, so it is older than anything queued since (FIFO order holds). Counted as posted
  // for the moment it is there, as a registration_id 0 packet must be.
  FakePacket plain;
  plain.registration_id = 0;
  plain.completion_key = waiter.handoff->completion_key;
  plain.overlapped = waiter.handoff->overlapped;
  plain.internal = waiter.handoff->internal;
  plain.bytes_transferred = waiter.handoff->bytes_transferred;
  waiter.handoff.reset();
  packets_.push_front(plain);
  ++posted_count_;
  return true;
}

void FakePort::abandon_waiters() {
  // Release order: most recent first, as for packets.
  while (!waiters_.empty()) {
    PortWaiter* waiter = waiters_.back();
    waiters_.pop_back();
    READYPORT_ASSERT(!waiter->handoff.has_value());
    waiter->abandoned = true;
    runtime_.wake(waiter->waiter);
  }
  // Released waiters that have not run yet are still inside their call: spec F6 ends their wait
  // with ERROR_ABANDONED_WAIT_0 too, and the entry handed to each is lost with the port, as its
  // queued packets are (the harder case for the engine: a packet it never sees).
  for (PortWaiter* waiter : released_) {
    READYPORT_ASSERT(waiter->handoff.has_value());
    waiter->handoff.reset();
    waiter->abandoned = true;
    runtime_.wake(waiter->waiter);  // already woken: harmless (runtime.hpp)
  }
  released_.clear();
}

FakeRegistration& FakePort::registration_create(std::uint64_t id, FakeSocket& socket) {
  READYPORT_ASSERT(id != 0);
  READYPORT_ASSERT(registrations_.find(id) == registrations_.end());
  auto registration = std::make_unique<FakeRegistration>();
  registration->id = id;
  registration->socket = &socket;
  registration->port = this;
  FakeRegistration& created = *registration;
  registrations_.emplace(id, std::move(registration));
  return created;
}

FakeRegistration* FakePort::registration_find(std::uint64_t id) {
  auto found = registrations_.find(id);
  return found == registrations_.end() ? nullptr : found->second.get();
}

void FakePort::registration_destroy(FakeRegistration& registration) {
  READYPORT_ASSERT(registration.port == this);
  // A registration is destroyed only when nothing of it can come out of the FIFO any more.
  READYPORT_ASSERT(!registration.event_packet.has_value());
  READYPORT_ASSERT(!registration.remove_packet.has_value());
  READYPORT_ASSERT(registration.socket == nullptr);
  const std::size_t erased = registrations_.erase(registration.id);
  READYPORT_ASSERT(erased == 1);
}

std::vector<FakeRegistration*> FakePort::registrations_in_order() {
  std::vector<FakeRegistration*> result;
  result.reserve(registrations_.size());
  for (auto& entry : registrations_) {
    result.push_back(entry.second.get());
  }
  return result;
}

}  // namespace readyport::fake_internal
