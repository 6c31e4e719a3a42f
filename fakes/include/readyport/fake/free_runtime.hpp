// readyport/fake/free_runtime.hpp: FakeOs on real, unscheduled threads (for ThreadSanitizer).
//
// FreeRuntime lets the same FakeOs run under true concurrency: threads are plain std::threads
// that run whenever the OS lets them, point() does nothing (or yields), and a parked thread waits
// on a real condition variable with the FakeOs state mutex. Time is still virtual: an atomic,
// monotonic clock that only waits move. A timed wait that nothing wakes within a short real slice
// (FreeOptions::slice_us) advances the virtual clock to its deadline (if the clock is not already
// past it) and returns kDeadline. So "wait 5 s" costs at most a slice of real time, and timeouts
// still happen in the order of their deadlines as far as real time allows. Runs are not
// reproducible (that is SimScheduler's job); they exist so that TSan can watch the engine.
//
//   readyport::FreeRuntime runtime;
//   readyport::FakeOs os(readyport::FakeOptions{}, runtime);
//   auto worker = os.thread_start("worker", [&] { /* seam calls */ });
//   ...
//   worker.value()->join();
//
// A wait with no deadline that lasts longer than FreeOptions::stall_ms_max of real time is taken
// as a deadlock: it prints the call and thread and asserts (a hung test would say nothing).
//
// Ownership: the caller owns the runtime; it must outlive every FakeOs using it and every thread
// it started (asserted at destruction: all started threads joined).
// Threading: every method from any thread. Errors: thread_start returns kResourceExhausted past
// threads_max or when the OS refuses a thread; broken contracts assert.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "readyport/fake/runtime.hpp"

namespace readyport {

struct FreeOptions {
  // Real time a timed wait waits for a wake before it takes its virtual deadline.
  std::uint32_t slice_us = 1000;
  // Real time a wait with no deadline may last before it is reported as a deadlock.
  std::uint32_t stall_ms_max = 120'000;
  // point() calls std::this_thread::yield(), to shake interleavings a little more.
  bool point_yields = false;
  // Threads started at most over the runtime's life.
  std::uint32_t threads_max = 1024;
};

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

  // Moves the virtual clock forward to at least `time_ns` (never backwards). Any thread.
  void advance_to(std::uint64_t time_ns);
  std::uint32_t threads_started() const { return threads_started_.load(); }

 private:
  friend class FreeThread;

  const FreeOptions options_;
  std::atomic<std::uint64_t> now_ns_{0};
  std::atomic<std::uint32_t> threads_started_{0};
  std::atomic<std::uint32_t> threads_live_{0};  // started and not yet joined
};

}  // namespace readyport
