#include "readyport/fake/fake_mutex.hpp"

#include "readyport/assert.hpp"

namespace readyport::fake_internal {

FakeMutex::FakeMutex(std::mutex& state_mutex, Runtime& runtime)
    : state_mutex_(state_mutex), runtime_(runtime) {}

FakeMutex::~FakeMutex() {
  std::lock_guard<std::mutex> guard(state_mutex_);
  // Os contract: destroyed unlocked, so nobody can be waiting either.
  READYPORT_ASSERT(!held_);
  READYPORT_ASSERT(waiters_.empty());
}

void FakeMutex::lock() {
  runtime_.point("lock");
  std::unique_lock<std::mutex> state(state_mutex_);
  if (!held_) {
    // Free: take it.
    held_ = true;
    return;
  }
  // Held: wait for unlock() to hand it over. No deadline: a mutex has no timeout.
  Waiter waiter;
  waiters_.push_back(&waiter);
  const ParkEnd end = runtime_.park(state, waiter, kDeadlineNone, "lock");
  // Handed over by unlock(): it popped us and left held_ set on our behalf.
  READYPORT_ASSERT(end == ParkEnd::kWoken && waiter.woken);
  READYPORT_ASSERT(held_);
}

bool FakeMutex::try_lock() {
  runtime_.point("try_lock");
  std::lock_guard<std::mutex> state(state_mutex_);
  if (held_) return false;
  held_ = true;
  return true;
}

void FakeMutex::unlock() {
  runtime_.point("unlock");
  std::lock_guard<std::mutex> state(state_mutex_);
  READYPORT_ASSERT(held_);
  if (waiters_.empty()) {
    // Nobody waits: free it.
    held_ = false;
    return;
  }
  // Hand-off to the oldest waiter: held_ stays true, now on its behalf.
  Waiter* next = waiters_.front();
  waiters_.pop_front();
  runtime_.wake(*next);
}

}  // namespace readyport::fake_internal
