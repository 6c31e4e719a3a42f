// SimCoreMutex: the mutex of a SimScheduler's core (sim_core.hpp), which a kFibers run does not
// need to take.
//
// Under kThreads every logical thread is a real thread: this is a std::mutex. Under kFibers the
// logical threads and run()'s caller are fibers of one OS thread, run one at a time, and switch
// only at the scheduler's own points, never with the mutex held (a fiber that did would deadlock
// the next one's lock()). So from the switch into the first fiber until the switch back,
// run_fibers() keeps the real mutex locked for the run's OS thread (begin_elision(), then
// end_elision()) and that thread's lock() and unlock() only mark it held or free: no atomic
// operation per scheduling point. A lock() of any other OS thread meanwhile takes the real
// mutex, so it waits for the run's end: it can neither interleave with nor corrupt the core.
//
// Ownership and lifetime: a member of SimCore, which outlives every run and thread that locks it;
// the thread-local names it only between begin_elision() and end_elision(), within one run().
// Threading: lock(), try_lock() and unlock() from any thread (BasicLockable, Lockable: for
// std::unique_lock and std::lock_guard); begin_elision() and end_elision() by the thread that
// holds the mutex. Errors: misuse (a second lock() on the eliding thread, an unlock() of a free
// mutex there, end_elision() with the mutex free) is a READYPORT_ASSERT failure.
#pragma once

#include <mutex>

#include "readyport/assert.hpp"

namespace readyport::internal {

class SimCoreMutex {
 public:
  void lock() {
    if (eliding_here()) {
      READYPORT_ASSERT(!elided_held_);  // taken twice by one OS thread: a self-deadlock
      elided_held_ = true;
      return;
    }
    mutex_.lock();
  }
  bool try_lock() {
    if (eliding_here()) {
      if (elided_held_) {
        return false;
      }
      elided_held_ = true;
      return true;
    }
    return mutex_.try_lock();
  }
  void unlock() {
    if (eliding_here()) {
      READYPORT_ASSERT(elided_held_);
      elided_held_ = false;
      return;
    }
    mutex_.unlock();
  }

  // With the mutex locked by this thread: from now on this thread's lock() and unlock() keep the
  // real mutex locked and only mark it held or free (held now). A run nested in another's fiber
  // elides its own mutex until its end_elision(), then the outer one's again.
  void begin_elision() {
    READYPORT_ASSERT(!eliding_here());
    outer_ = tls_eliding_;
    tls_eliding_ = this;
    elided_held_ = true;
  }
  // With the mutex marked held: this thread holds the real mutex again, as before
  // begin_elision().
  void end_elision() {
    READYPORT_ASSERT(eliding_here() && elided_held_);
    tls_eliding_ = outer_;
    outer_ = nullptr;
  }

 private:
  // Only the eliding OS thread's own thread-local names this mutex: another thread's never does,
  // so it takes mutex_ (one thread-local read, no atomic operation, no call).
  bool eliding_here() const { return tls_eliding_ == this; }

  static inline thread_local const SimCoreMutex* tls_eliding_ = nullptr;
  std::mutex mutex_;
  const SimCoreMutex* outer_ = nullptr;  // the eliding thread's: the run this one is nested in
  bool elided_held_ = false;             // only the eliding thread reads and writes it
};

using SimCoreLock = std::unique_lock<SimCoreMutex>;

}  // namespace readyport::internal
