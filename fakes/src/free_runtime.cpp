// FreeRuntime: real threads, real condition variables, a virtual clock. See free_runtime.hpp.
#include "readyport/fake/free_runtime.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {

namespace {

// The logical id of the thread running here, and the runtime that started it.
thread_local const FreeRuntime* tls_runtime = nullptr;
thread_local std::uint32_t tls_thread_id = 0;

}  // namespace

class FreeThread final : public Thread {
 public:
  FreeThread(FreeRuntime& runtime, std::uint32_t id, std::string name)
      : runtime_(runtime), id_(id), name_(std::move(name)) {}
  ~FreeThread() override {
    // Destroying an unjoined Thread breaks the contract (os.hpp).
    READYPORT_ASSERT(!thread_.joinable());
  }
  FreeThread(const FreeThread&) = delete;
  FreeThread& operator=(const FreeThread&) = delete;

  // Starts the real thread. Separate from the constructor so that failure is a value.
  Status start(std::function<void()> body) {
    try {
      thread_ = std::thread([runtime = &runtime_, id = id_, body = std::move(body)] {
        tls_runtime = runtime;
        tls_thread_id = id;
        body();
        tls_runtime = nullptr;
        tls_thread_id = 0;
      });
    } catch (const std::system_error& error) {
      return Status(StatusCode::kResourceExhausted,
                    "FreeRuntime: cannot start thread '" + name_ + "': " + error.what());
    }
    return Status();
  }

  void join() override {
    READYPORT_ASSERT(thread_.joinable());  // join exactly once
    READYPORT_ASSERT(thread_.get_id() != std::this_thread::get_id());
    thread_.join();
    runtime_.threads_live_.fetch_sub(1);
  }

 private:
  FreeRuntime& runtime_;
  const std::uint32_t id_;
  const std::string name_;
  std::thread thread_;
};

FreeRuntime::FreeRuntime(FreeOptions options) : options_(options) {
  READYPORT_ASSERT(options.slice_us > 0);
  READYPORT_ASSERT(options.stall_ms_max > 0);
}

FreeRuntime::~FreeRuntime() {
  // Threads still running would call into a destroyed runtime.
  READYPORT_ASSERT(threads_live_.load() == 0);
}

void FreeRuntime::point(const char* call) {
  READYPORT_ASSERT(call != nullptr);
  if (options_.point_yields) std::this_thread::yield();
}

void FreeRuntime::advance_to(std::uint64_t time_ns) {
  std::uint64_t now = now_ns_.load(std::memory_order_acquire);
  while (now < time_ns && !now_ns_.compare_exchange_weak(now, time_ns, std::memory_order_acq_rel)) {
    // `now` was reloaded by the failed exchange; retry while still behind.
  }
}

ParkEnd FreeRuntime::park(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                          std::uint64_t deadline_ns, const char* call) {
  READYPORT_ASSERT(lock.owns_lock());
  READYPORT_ASSERT(call != nullptr);
  waiter.deadline_ns = deadline_ns;
  waiter.thread_id = thread_current();
  if (waiter.woken) return ParkEnd::kWoken;
  if (deadline_ns <= now_ns()) return ParkEnd::kDeadline;
  // The condition variable lives on this stack; wake() reaches it through runtime_data, always
  // under the state mutex, which this thread holds again before it returns and clears the field.
  std::condition_variable woken;
  waiter.runtime_data = &woken;
  if (deadline_ns == kDeadlineNone) {
    const auto stall = std::chrono::milliseconds(options_.stall_ms_max);
    if (!woken.wait_for(lock, stall, [&] { return waiter.woken; })) {
      std::fprintf(stderr,
                   "readyport FreeRuntime: deadlock? thread %u waited %u ms of real time in %s "
                   "with no deadline\n",
                   static_cast<unsigned>(waiter.thread_id),
                   static_cast<unsigned>(options_.stall_ms_max), call);
      READYPORT_ASSERT(waiter.woken);
    }
  } else {
    const auto slice = std::chrono::microseconds(options_.slice_us);
    woken.wait_for(lock, slice, [&] { return waiter.woken || now_ns() >= deadline_ns; });
    // Not woken within the slice: the wait ends at its virtual deadline.
    if (!waiter.woken) advance_to(deadline_ns);
  }
  waiter.runtime_data = nullptr;
  return waiter.woken ? ParkEnd::kWoken : ParkEnd::kDeadline;
}

void FreeRuntime::wake(Waiter& waiter) {
  waiter.woken = true;
  auto* woken = static_cast<std::condition_variable*>(waiter.runtime_data);
  if (woken != nullptr) woken->notify_one();
}

Result<std::unique_ptr<Thread>> FreeRuntime::thread_start(std::string_view name,
                                                          std::function<void()> body) {
  READYPORT_ASSERT(body != nullptr);
  const std::uint32_t id = threads_started_.fetch_add(1) + 1;
  if (id > options_.threads_max) {
    threads_started_.fetch_sub(1);
    return Status(StatusCode::kResourceExhausted,
                  "FreeRuntime: threads_max " + std::to_string(options_.threads_max) +
                      " reached; cannot start '" + std::string(name) + "'");
  }
  auto thread = std::make_unique<FreeThread>(*this, id, std::string(name));
  threads_live_.fetch_add(1);
  Status started = thread->start(std::move(body));
  if (!started.ok()) {
    threads_live_.fetch_sub(1);
    return started;
  }
  return std::unique_ptr<Thread>(std::move(thread));
}

std::uint32_t FreeRuntime::thread_current() const {
  return tls_runtime == this ? tls_thread_id : 0;
}

}  // namespace readyport
