#include "readyport/fake/fake_port.hpp"

#include <algorithm>

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

FakePort::FakePort(Port handle, Runtime& runtime) : handle_(handle), runtime_(runtime) {
  READYPORT_ASSERT(!(handle == kInvalidPort));
}

FakePort::~FakePort() {
  // close_port released every waiter before destroying the port; a parked thread here would
  // wake up into freed memory.
  READYPORT_ASSERT(waiters_.empty());
}

PacketList::iterator FakePort::queue(const FakePacket& packet) {
  if (packet.registration_id == 0) {
    READYPORT_ASSERT(posted_count_ < kPostedPacketsMax);
    ++posted_count_;
  }
  packets_.push_back(packet);
  auto position = std::prev(packets_.end());
  // Spec F1: the most recent waiter is released first. It is popped so that the next packet
  // releases the next waiter; a released waiter that finds the FIFO empty waits again.
  if (!waiters_.empty()) {
    PortWaiter* waiter = waiters_.back();
    waiters_.pop_back();
    READYPORT_ASSERT(!waiter->abandoned);
    runtime_.wake(waiter->waiter);
  }
  return position;
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
  READYPORT_ASSERT(!waiter.abandoned && !waiter.waiter.woken);
  READYPORT_ASSERT(std::find(waiters_.begin(), waiters_.end(), &waiter) == waiters_.end());
  waiters_.push_back(&waiter);
}

void FakePort::remove_waiter(PortWaiter& waiter) {
  auto found = std::find(waiters_.begin(), waiters_.end(), &waiter);
  if (found == waiters_.end()) {
    // Released by queue(): it was popped there, together with the wake.
    READYPORT_ASSERT(waiter.waiter.woken);
    return;
  }
  // Ended by its deadline: nobody popped it.
  waiters_.erase(found);
}

void FakePort::abandon_waiters() {
  // Release order: most recent first, as for packets.
  while (!waiters_.empty()) {
    PortWaiter* waiter = waiters_.back();
    waiters_.pop_back();
    waiter->abandoned = true;
    runtime_.wake(waiter->waiter);
  }
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
  for (auto& entry : registrations_) result.push_back(entry.second.get());
  return result;
}

}  // namespace readyport::fake_internal
