// readyport/fake/free_runtime.hpp: FakeOs on real, unscheduled threads (for ThreadSanitizer and
// for the main job on real threads).
//
// Threads are plain std::threads that run whenever the OS lets them; point() does nothing (or
// yields); a parked thread waits on a real
// condition variable. Time is virtual and moves as in SimScheduler: only when every participant
// is parked (or joining one that is). Then the clock jumps to the earliest deadline and those
// waits end. So a descheduled thread holds time still, and a bound in virtual time is a bound on
// progress, never a race with the OS's scheduler. Runs are not reproducible (SimScheduler's job).
//
//   readyport::FreeRuntime runtime;
//   readyport::FakeOs os(readyport::FakeOptions{}, runtime);
//   runtime.run([&] {                      // the calling thread takes part (it is thread 0)
//     auto worker = os.thread_start("worker", [&] { /* seam calls */ });
//     worker.value()->join();
//   });
//
// Participants: the threads it started (from thread_start until their body returns) and a thread
// inside run(). Once another thread (an outsider) has called in (since run() began), the runtime
// cannot know whether it runs: then a timed wait with every participant parked ends after a real
// slice (1 ms) in which the outsider could act, and time may pass while the outsider runs. Drive a
// run from inside run() for the strict rule.
// Hangs are reported, never waited out: every participant parked with no deadline (a deadlock,
// when no outsider takes part), virtual time past virtual_ms_max (timed waits that never end the
// run), or a wait longer than stall_ms_max of real time (a thread that runs and never parks). The
// report names each thread, where it waits or what it last called, and hang_detail's text, on
// stderr; then it asserts. So is a livelock, threads that keep calling the seam while virtual time
// never moves (no wait stalls, so no hang is seen): past steps_max seam calls the report names
// each thread, its state, its last call and its seam calls, and asserts. A run's work is bounded
// so, as a simulated run's is by SimOptions::steps_max.
// Ownership: the caller owns the runtime; it must outlive every FakeOs using it and every thread
// it started (asserted at destruction: all started threads joined). Threading: every method from
// any thread. Errors: thread_start returns kResourceExhausted past threads_max or when the OS
// refuses a thread; broken contracts assert.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "readyport/fake/runtime.hpp"

namespace readyport {

struct FreeOptions {
  // Real time a wait may last with the run not moving before it is reported as a hang.
  std::uint32_t stall_ms_max = 120'000;
  // Virtual time past which the run is reported as a hang (waits that time out for ever).
  std::uint64_t virtual_ms_max = 3'600'000;
  // point() calls std::this_thread::yield(), to shake interleavings a little more.
  bool point_yields = false;
  // Threads started at most over the runtime's life.
  std::uint32_t threads_max = 1024;
  // Seam calls (point() and park(), every thread's together) at most; past it the run is a
  // livelock. 0: no limit.
  std::uint64_t steps_max = 0;
  // Appended to a hang report (e.g. what the OS still holds). Called once, holding no lock of
  // the runtime, from the thread that found the hang. May be empty.
  std::function<std::string()> hang_detail;
};

// The runtime's view of one participant thread (free_runtime.cpp).
struct FreeRecord;
// One parked thread (free_runtime.cpp).
struct FreeWaiter;

class FreeRuntime final : public Runtime {
 public:
  explicit FreeRuntime(FreeOptions options = {});
  // Asserts that every thread it started was joined.
  ~FreeRuntime() override;
  FreeRuntime(const FreeRuntime&) = delete;
  FreeRuntime& operator=(const FreeRuntime&) = delete;

  std::uint64_t now_ns() const override { return now_ns_.load(std::memory_order_acquire); }
  void point(const char* call) override;
  ParkEnd park(std::unique_lock<std::mutex>& lock, Waiter& waiter, std::uint64_t deadline_ns,
               const char* call) override;
  void wake(Waiter& waiter) override;
  // A std::thread; its logical id is 1, 2, ... in start order (start order is itself racy).
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  std::uint32_t thread_current() const override;

  // Runs `body` on the calling thread as a participant (logical thread 0). Not nested.
  void run(const std::function<void()>& body);

  // Moves the virtual clock forward to at least `time_ns` (never backwards). Any thread.
  void advance_to(std::uint64_t time_ns);
  std::uint32_t threads_started() const { return threads_started_.load(); }
  // Seam calls so far (point() and park(), every thread's).
  std::uint64_t steps() const { return steps_.load(std::memory_order_relaxed); }

 private:
  friend class FreeThread;

  bool participant() const;
  // With mutex_ held: ends the waits that may end now that no participant runs.
  void settle_locked(std::unique_lock<std::mutex>& held);
  // With mutex_ held: moves the clock to the earliest deadline and ends those waits.
  void advance_locked(std::unique_lock<std::mutex>& held);
  // With mutex_ held: waits until `self` is released, moving the clock with an outsider about.
  void wait_released(std::unique_lock<std::mutex>& held, FreeWaiter& self);
  void release_locked(FreeWaiter& waiter);
  // With mutex_ held: the participants' states, one line each.
  std::string describe_locked() const;
  [[noreturn]] void hang(std::unique_lock<std::mutex>& held, const std::string& what);
  // Counts one seam call; past steps_max, the livelock's reason for the one thread that reports
  // it, else "".
  std::string count_step();
  // Reports a livelock (what each thread does and its seam calls) and asserts. Holds no lock of
  // the runtime.
  [[noreturn]] void livelock(const std::string& why);
  // The hang or livelock report on stderr, then the assertion `assertion` (a literal).
  [[noreturn]] void report(const std::string& threads, const std::string& what,
                           const char* assertion);
  FreeRecord& record_add_locked(std::uint32_t id, std::string name);
  // A participant stops running (finished, or joining `target`'s thread).
  void leave(FreeRecord& record);

  const FreeOptions options_;
  std::atomic<std::uint64_t> now_ns_{0};
  std::atomic<std::uint32_t> threads_started_{0};
  std::atomic<std::uint32_t> threads_live_{0};  // started and not yet joined
  std::atomic<std::uint64_t> steps_{0};         // seam calls, every thread's
  std::atomic<bool> livelock_reported_{false};  // one thread reports a livelock

  mutable std::mutex mutex_;    // guards what follows; taken after a FakeOs state mutex
  std::uint32_t running_ = 0;   // participants not parked, not joining, not finished
  bool outsider_seen_ = false;  // an outsider called in since the last run() began
  // One per thread started (at most threads_max) and one for run().
  std::vector<std::unique_ptr<FreeRecord>> records_;
  FreeRecord* run_record_ = nullptr;    // in records_, once run() was called
  FreeWaiter* parked_first_ = nullptr;  // parked threads not yet released, a list
};

}  // namespace readyport
