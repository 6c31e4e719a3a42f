// sim_harness.hpp: a tiny stand-in for FakeOs, to test runtimes against the Runtime contract alone.
//
// It keeps its state under one std::mutex, calls point() at the start of every operation, parks
// through Runtime::park() with that mutex held and wakes through Runtime::wake() under it, exactly
// as runtime.hpp asks of FakeOs. It offers a one-shot event (wait/set) and a mutex built on
// park/wake (lock/unlock), which is enough to plant deadlocks and ordering bugs.
//
// Ownership: the test owns it; the Runtime must outlive it. Threading: any runtime thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/fake/runtime.hpp"

namespace readyport::test {

class ParkHarness {
 public:
  explicit ParkHarness(Runtime& runtime) : runtime_(runtime) {}

  // A one-shot event: once set, every wait returns kWoken at once.
  struct Event {
    bool set = false;
    std::vector<Waiter*> waiters;  // LIFO, like a port's waiters
  };
  // A mutex whose contended lock() parks (FakeOs's mutexes work the same way).
  struct Lock {
    std::uint32_t holder = 0;  // 1 + logical thread id of the holder; 0: free
    std::vector<Waiter*> waiters;
  };

  // Waits until `event` is set or the virtual clock reaches deadline_ns.
  ParkEnd wait(Event& event, std::uint64_t deadline_ns, const char* call = "event.wait") {
    runtime_.point(call);
    std::unique_lock<std::mutex> lock(mutex_);
    if (event.set) {
      return ParkEnd::kWoken;
    }
    Waiter waiter;
    event.waiters.push_back(&waiter);
    const ParkEnd end = runtime_.park(lock, waiter, deadline_ns, call);
    erase(event.waiters, &waiter);
    return end;
  }
  // Waits `duration_ns` of virtual time (a sleep).
  void sleep(std::uint64_t duration_ns) {
    runtime_.point("sleep");
    std::unique_lock<std::mutex> lock(mutex_);
    Waiter waiter;
    const ParkEnd end = runtime_.park(lock, waiter, runtime_.now_ns() + duration_ns, "sleep");
    READYPORT_ASSERT(end == ParkEnd::kDeadline);
  }
  void set(Event& event, const char* call = "event.set") {
    runtime_.point(call);
    std::lock_guard<std::mutex> lock(mutex_);
    event.set = true;
    for (Waiter* waiter : event.waiters) {
      runtime_.wake(*waiter);
    }
  }

  void lock(Lock& target, const char* call = "lock") {
    runtime_.point(call);
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint32_t self = runtime_.thread_current() + 1;
    READYPORT_ASSERT(target.holder != self);  // not recursive
    while (target.holder != 0) {
      Waiter waiter;
      target.waiters.push_back(&waiter);
      runtime_.park(lock, waiter, kDeadlineNone, call);
      erase(target.waiters, &waiter);
    }
    target.holder = self;
  }
  void unlock(Lock& target, const char* call = "unlock") {
    runtime_.point(call);
    std::lock_guard<std::mutex> lock(mutex_);
    READYPORT_ASSERT(target.holder == runtime_.thread_current() + 1);
    target.holder = 0;
    if (!target.waiters.empty()) {
      runtime_.wake(*target.waiters.back());
    }
  }

  // A plain scheduling point (a seam call that cannot block).
  void point(const char* call = "point") { runtime_.point(call); }

  Runtime& runtime() { return runtime_; }

 private:
  static void erase(std::vector<Waiter*>& waiters, Waiter* waiter) {
    const auto found = std::find(waiters.begin(), waiters.end(), waiter);
    READYPORT_ASSERT(found != waiters.end());
    waiters.erase(found);
  }

  Runtime& runtime_;
  std::mutex mutex_;
};

}  // namespace readyport::test
