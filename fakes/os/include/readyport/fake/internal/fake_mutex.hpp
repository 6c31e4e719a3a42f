// readyport/fake/internal/fake_mutex.hpp: the Mutex FakeOs::mutex_create hands out, built on the
// Runtime.
//
// lock() is a scheduling point ("lock"); a contended lock parks the caller until unlock() hands
// the mutex to it. Hand-off is FIFO: unlock() gives the mutex to the oldest waiter directly, so a
// thread that calls lock() later cannot overtake it. try_lock() never blocks.
// With the inline runtime a contended lock can never be released (one thread): it asserts as a
// deadlock, which is the test's bug. A contended lock tells FakeOs (BlockHooks) that the caller
// blocks and runs again, for the port's running threads (spec F7).
// Cost: uncontended, lock() and unlock() are a scheduling point and one compare-exchange each,
// as an OS mutex's fast path is (under a runtime that serializes its threads, SimScheduler, a
// load and a store: nobody else runs until the next point); only waiting and hand-off take the
// FakeOs state mutex. (Taking it on every call cost each engine lock section two extra mutex
// round trips, in the engine benchmark and in the simulation: an overhead no real Os has.)
//
// Ownership: the caller of FakeOs::mutex_create owns it; it must be destroyed unlocked and
// before its FakeOs (it borrows the FakeOs state mutex and runtime).
// Threading: any thread the runtime knows; unlock() only by the holder. Not recursive.
// Errors: none; misuse (unlock when not held, destroy while held) asserts.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

#include "readyport/fake/runtime.hpp"
#include "readyport/os.hpp"

namespace readyport::fake_internal {

// Told, under the state mutex, when a thread parks in a seam call and when it runs again (the
// port's running threads, spec F7). FakeOs implements it.
class BlockHooks {
 public:
  virtual void block_begin_locked() = 0;
  virtual void block_end_locked() = 0;

 protected:
  ~BlockHooks() = default;
};

class FakeMutex final : public Mutex {
 public:
  // `hooks` may be null; it must outlive the mutex. `id` names it to Runtime::touch
  // (SimObject::kMutex): distinct for the mutexes of one FakeOs.
  FakeMutex(std::mutex& state_mutex, Runtime& runtime, BlockHooks* hooks = nullptr,
            std::uint64_t id = 0);
  ~FakeMutex() override;
  FakeMutex(const FakeMutex&) = delete;
  FakeMutex& operator=(const FakeMutex&) = delete;

  void lock() override;      // blocks (parks) while another thread holds it
  bool try_lock() override;  // never blocks
  void unlock() override;    // hands the mutex to the oldest waiter, if any

 private:
  static constexpr std::uint32_t kHeld = 1;     // some thread holds it
  static constexpr std::uint32_t kWaiters = 2;  // waiters_ is not empty: unlock() hands it over

  // The fast paths: word_ from `from` to `to` if it is `from`, as compare_exchange_strong (its
  // `order` on success); under a serializing runtime, a load and a store (no other thread runs
  // between two scheduling points, and hand-overs synchronise). Returns whether it changed.
  bool swap_if(std::uint32_t from, std::uint32_t to, std::memory_order order);

  std::mutex& state_mutex_;  // the FakeOs state mutex: guards waiters_ and setting kWaiters
  Runtime& runtime_;
  BlockHooks* const hooks_;
  const std::uint64_t id_;
  const bool serialized_;               // runtime_.serializes_threads()
  std::atomic<std::uint32_t> word_{0};  // kHeld | kWaiters
  std::deque<Waiter*> waiters_;         // FIFO; each lives on its parked thread's stack
};

}  // namespace readyport::fake_internal
