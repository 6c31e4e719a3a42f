// readyport/fake/inline_runtime.hpp: the single-threaded Runtime (FakeOs's default).
//
// One thread uses the fake. Nothing else can end a wait, so a wait with a deadline advances the
// virtual clock to that deadline at once and ends; a wait with no deadline can never end: that is
// a deadlock in the test, and it asserts with the name of the call. thread_start fails with a
// Status that points to SimScheduler and FreeRuntime.
//
// Ownership: a plain object; FakeOs owns one when constructed without a runtime.
// Threading: one thread only (assertions check it is always the same one).
#pragma once

#include <thread>

#include "readyport/fake/runtime.hpp"

namespace readyport {

class InlineRuntime final : public Runtime {
 public:
  InlineRuntime() = default;
  InlineRuntime(const InlineRuntime&) = delete;
  InlineRuntime& operator=(const InlineRuntime&) = delete;

  std::uint64_t now_ns() const override { return now_ns_; }
  void point(const char* call) override;
  ParkEnd park(std::unique_lock<std::mutex>& lock, Waiter& waiter, std::uint64_t deadline_ns,
               const char* call) override;
  void wake(Waiter& waiter) override;
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  std::uint32_t thread_current() const override { return 0; }

 private:
  void check_thread();

  std::uint64_t now_ns_ = 0;
  std::thread::id owner_{};  // the one thread that uses this runtime, set at first use
};

}  // namespace readyport
