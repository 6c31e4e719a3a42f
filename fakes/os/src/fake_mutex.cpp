#include "readyport/fake/internal/fake_mutex.hpp"

#include "readyport/assert.hpp"

namespace readyport::fake_internal {

FakeMutex::FakeMutex(std::mutex& state_mutex, Runtime& runtime, BlockHooks* hooks, std::uint64_t id)
    : state_mutex_(state_mutex),
      runtime_(runtime),
      hooks_(hooks),
      id_(id),
      serialized_(runtime.serializes_threads()) {}

FakeMutex::~FakeMutex() {
  std::lock_guard<std::mutex> guard(state_mutex_);
  // Os contract: destroyed unlocked, so nobody can be waiting either.
  READYPORT_ASSERT(word_.load(std::memory_order_relaxed) == 0);
  READYPORT_ASSERT(waiters_.empty());
}

bool FakeMutex::swap_if(std::uint32_t from, std::uint32_t to, std::memory_order order) {
  if (serialized_) {
    if (word_.load(std::memory_order_relaxed) != from) {
      return false;
    }
    word_.store(to, std::memory_order_relaxed);
    return true;
  }
  return word_.compare_exchange_strong(from, to, order);
}

void FakeMutex::lock() {
  runtime_.point("lock");
  runtime_.touch(SimObject::kMutex, id_);
  if (swap_if(0, kHeld, std::memory_order_acquire)) {
    return;  // free
  }
  std::unique_lock<std::mutex> state(state_mutex_);
  // Held: mark a waiter, so that unlock() takes the slow path and hands it over; or take it if
  // it was freed meanwhile. Only the fast paths change word_ without the state mutex.
  std::uint32_t word = word_.load(std::memory_order_relaxed);
  while (!word_.compare_exchange_weak(word, word == 0 ? kHeld : (word | kWaiters),
                                      std::memory_order_acquire)) {
  }
  if (word == 0) {
    return;
  }
  // Wait for unlock() to hand it over. No deadline: a mutex has no timeout.
  Waiter waiter;
  waiters_.push_back(&waiter);
  if (hooks_ != nullptr) {
    runtime_.touch(SimObject::kFakeState, 0);  // the port's running threads (spec F7)
    hooks_->block_begin_locked();
  }
  const ParkEnd end = runtime_.park(state, waiter, kDeadlineNone, "lock");
  runtime_.touch(SimObject::kMutex, id_);
  if (hooks_ != nullptr) {
    runtime_.touch(SimObject::kFakeState, 0);
    hooks_->block_end_locked();
  }
  // Handed over by unlock(): it popped us and left kHeld set on our behalf.
  READYPORT_ASSERT(end == ParkEnd::kWoken && waiter.woken);
  READYPORT_ASSERT((word_.load(std::memory_order_relaxed) & kHeld) != 0);
}

bool FakeMutex::try_lock() {
  runtime_.point("try_lock");
  runtime_.touch(SimObject::kMutex, id_);
  return swap_if(0, kHeld, std::memory_order_acquire);
}

void FakeMutex::unlock() {
  runtime_.point("unlock");
  runtime_.touch(SimObject::kMutex, id_);
  // Nobody waits: free it.
  if (swap_if(kHeld, 0, std::memory_order_release)) {
    return;
  }
  std::lock_guard<std::mutex> state(state_mutex_);
  const std::uint32_t word = word_.load(std::memory_order_relaxed);
  READYPORT_ASSERT(word == (kHeld | kWaiters));  // else not held: unlock() by a non-holder
  READYPORT_ASSERT(!waiters_.empty());
  // Hand-off to the oldest waiter: kHeld stays set, now on its behalf.
  Waiter* next = waiters_.front();
  waiters_.pop_front();
  if (waiters_.empty()) {
    word_.store(kHeld, std::memory_order_relaxed);
  }
  runtime_.wake(*next);
}

}  // namespace readyport::fake_internal
