#include "readyport/fake/inline_runtime.hpp"

#include <cstdio>
#include <string>

namespace readyport {

void InlineRuntime::check_thread() {
  // The inline runtime has no synchronisation: a second thread would be a data race.
  if (owner_ == std::thread::id{}) {
    owner_ = std::this_thread::get_id();
  }
  READYPORT_ASSERT(owner_ == std::this_thread::get_id());
}

void InlineRuntime::point(const char* call) {
  READYPORT_ASSERT(call != nullptr);
  check_thread();
}

ParkEnd InlineRuntime::park(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                            std::uint64_t deadline_ns, const char* call) {
  READYPORT_ASSERT(lock.owns_lock());
  check_thread();
  waiter.deadline_ns = deadline_ns;
  waiter.thread_id = 0;
  if (waiter.woken) {
    return ParkEnd::kWoken;
  }
  if (deadline_ns == kDeadlineNone) {
    // Only this thread exists and it is about to wait with nothing that could wake it.
    std::fprintf(stderr,
                 "readyport FakeOs: deadlock: %s waits with no deadline and the inline runtime "
                 "has no other thread to wake it (use SimScheduler or FreeRuntime)\n",
                 call);
    READYPORT_ASSERT(deadline_ns != kDeadlineNone);
  }
  if (deadline_ns > now_ns_) {
    now_ns_ = deadline_ns;
  }
  return ParkEnd::kDeadline;
}

void InlineRuntime::wake(Waiter& waiter) {
  check_thread();
  waiter.woken = true;
}

Result<std::unique_ptr<Thread>> InlineRuntime::thread_start(std::string_view name,
                                                            std::function<void()> body) {
  (void)body;
  return Status(StatusCode::kFailedPrecondition,
                "FakeOs with the inline runtime runs one thread and cannot start thread '" +
                    std::string(name) + "': construct it with a SimScheduler or a FreeRuntime");
}

}  // namespace readyport
