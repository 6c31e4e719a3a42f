// FreeRuntime: real threads, real condition variables, a virtual clock that moves only when no
// participant runs. See free_runtime.hpp.
#include "readyport/fake/free_runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {

enum class FreeState : std::uint8_t { kRunning, kParked, kJoining, kFinished };

struct FreeRecord {
  std::uint32_t id = 0;
  std::string name;
  FreeState state = FreeState::kRunning;  // under the runtime's mutex
  std::uint32_t join_target = 0;          // kJoining: the thread it joins
  bool joined_by_participant = false;     // a participant waits in join() for this thread
  // The last seam call it entered (point or park); read by a hang report from another thread.
  std::atomic<const char*> call{"(none)"};
  // Its seam calls; written by its own thread only, read by a livelock report.
  std::atomic<std::uint64_t> steps{0};
};

struct FreeWaiter {
  std::condition_variable cv;
  Waiter* waiter = nullptr;
  FreeRecord* record = nullptr;  // null: an outsider
  std::uint64_t deadline_ns = kDeadlineNone;
  const char* call = nullptr;
  bool released = false;  // its wait ends (woken or timed out); under the runtime's mutex
  FreeWaiter* next = nullptr;
  FreeWaiter* previous = nullptr;
};

namespace {

// With an outsider about: the real time a timed wait gives it before the clock moves.
constexpr std::uint32_t kOutsiderSliceUs = 1000;

// The calling thread's runtime, logical id and record (null for an outsider).
thread_local const FreeRuntime* tls_runtime = nullptr;
thread_local std::uint32_t tls_thread_id = 0;
thread_local FreeRecord* tls_record = nullptr;

const char* state_name(FreeState state) {
  switch (state) {
    case FreeState::kRunning:
      return "running";
    case FreeState::kParked:
      return "parked";
    case FreeState::kJoining:
      return "joining";
    case FreeState::kFinished:
      return "finished";
  }
  READYPORT_UNREACHABLE();
}

}  // namespace

class FreeThread final : public Thread {
 public:
  FreeThread(FreeRuntime& runtime, FreeRecord& record) : runtime_(runtime), record_(record) {}
  ~FreeThread() override {
    // Destroying an unjoined Thread breaks the contract (os.hpp).
    READYPORT_ASSERT(!thread_.joinable());
  }
  FreeThread(const FreeThread&) = delete;
  FreeThread& operator=(const FreeThread&) = delete;

  // Starts the real thread. Separate from the constructor so that failure is a value.
  Status start(std::function<void()> body) {
    try {
      thread_ = std::thread([runtime = &runtime_, record = &record_, body = std::move(body)] {
        tls_runtime = runtime;
        tls_thread_id = record->id;
        tls_record = record;
        body();
        runtime->leave(*record);
        tls_record = nullptr;
        tls_runtime = nullptr;
        tls_thread_id = 0;
      });
    } catch (const std::system_error& error) {
      return Status(StatusCode::kResourceExhausted,
                    "FreeRuntime: cannot start thread '" + record_.name + "': " + error.what());
    }
    return Status();
  }

  void join() override;

 private:
  FreeRuntime& runtime_;
  FreeRecord& record_;
  std::thread thread_;
};

void FreeThread::join() {
  READYPORT_ASSERT(thread_.joinable());  // join exactly once
  READYPORT_ASSERT(thread_.get_id() != std::this_thread::get_id());
  FreeRecord* self = runtime_.participant() ? tls_record : nullptr;
  bool counted = false;
  if (self != nullptr) {
    std::unique_lock<std::mutex> held(runtime_.mutex_);
    if (record_.state != FreeState::kFinished) {
      // Not running while it waits; the joined thread's end hands its count to this one.
      counted = true;
      record_.joined_by_participant = true;
      self->state = FreeState::kJoining;
      self->join_target = record_.id;
      READYPORT_ASSERT(runtime_.running_ > 0);
      runtime_.running_ -= 1;
      runtime_.settle_locked(held);
    }
  }
  thread_.join();
  if (counted) {
    READYPORT_ASSERT(self->state == FreeState::kRunning);  // leave() handed it over
  }
  runtime_.threads_live_.fetch_sub(1);
}

FreeRuntime::FreeRuntime(FreeOptions options) : options_(std::move(options)) {
  READYPORT_ASSERT(options_.stall_ms_max > 0);
  READYPORT_ASSERT(options_.virtual_ms_max > 0);
}

FreeRuntime::~FreeRuntime() {
  // Threads still running would call into a destroyed runtime.
  READYPORT_ASSERT(threads_live_.load() == 0);
  READYPORT_ASSERT(parked_first_ == nullptr);
}

bool FreeRuntime::participant() const { return tls_runtime == this && tls_record != nullptr; }

void FreeRuntime::point(const char* call) {
  READYPORT_ASSERT(call != nullptr);
  if (participant()) {
    tls_record->call.store(call, std::memory_order_relaxed);
  } else {
    std::lock_guard<std::mutex> held(mutex_);
    outsider_seen_ = true;
  }
  if (const std::string over = count_step(); !over.empty()) {
    livelock(over);
  }
  if (options_.point_yields) {
    std::this_thread::yield();
  }
}

std::string FreeRuntime::count_step() {
  if (tls_runtime == this && tls_record != nullptr) {
    // Its own thread alone writes it: no read-modify-write needed.
    std::atomic<std::uint64_t>& own = tls_record->steps;
    own.store(own.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  const std::uint64_t steps = steps_.fetch_add(1, std::memory_order_relaxed) + 1;
  // The first thread past the bound reports it; the others go on until the process ends.
  if (options_.steps_max == 0 || steps <= options_.steps_max || livelock_reported_.exchange(true)) {
    return "";
  }
  return std::to_string(options_.steps_max) + " seam calls (FreeOptions::steps_max) passed";
}

void FreeRuntime::advance_to(std::uint64_t time_ns) {
  std::uint64_t now = now_ns_.load(std::memory_order_acquire);
  while (now < time_ns && !now_ns_.compare_exchange_weak(now, time_ns, std::memory_order_acq_rel)) {
    // `now` was reloaded by the failed exchange; retry while still behind.
  }
}

void FreeRuntime::release_locked(FreeWaiter& waiter) {
  if (waiter.released) {
    return;
  }
  waiter.released = true;
  if (waiter.previous != nullptr) {
    waiter.previous->next = waiter.next;
  }
  if (waiter.next != nullptr) {
    waiter.next->previous = waiter.previous;
  }
  if (parked_first_ == &waiter) {
    parked_first_ = waiter.next;
  }
  waiter.next = waiter.previous = nullptr;
  if (waiter.record != nullptr) {
    waiter.record->state = FreeState::kRunning;
    running_ += 1;
  }
  waiter.cv.notify_one();
}

void FreeRuntime::settle_locked(std::unique_lock<std::mutex>& held) {
  if (running_ != 0 || parked_first_ == nullptr) {
    return;
  }
  std::uint64_t earliest_ns = kDeadlineNone;
  bool outsider_parked = false;
  for (const FreeWaiter* w = parked_first_; w != nullptr; w = w->next) {
    earliest_ns = std::min(earliest_ns, w->deadline_ns);
    outsider_parked = outsider_parked || w->record == nullptr;
  }
  if (earliest_ns == kDeadlineNone) {
    // An outsider may still wake someone: then only the real-time stall bound can tell.
    if (!outsider_parked && !outsider_seen_) {
      hang(held, "deadlock: every thread waits with no deadline");
    }
    return;
  }
  if (outsider_seen_) {
    // An outsider may be running: the timed waits end after a real slice each (park()).
    for (FreeWaiter* w = parked_first_; w != nullptr; w = w->next) {
      if (w->deadline_ns != kDeadlineNone) {
        w->cv.notify_one();
      }
    }
    return;
  }
  advance_locked(held);
}

void FreeRuntime::advance_locked(std::unique_lock<std::mutex>& held) {
  std::uint64_t earliest_ns = kDeadlineNone;
  for (const FreeWaiter* w = parked_first_; w != nullptr; w = w->next) {
    earliest_ns = std::min(earliest_ns, w->deadline_ns);
  }
  if (earliest_ns == kDeadlineNone) {
    return;
  }
  if (earliest_ns > options_.virtual_ms_max * 1'000'000) {
    hang(held, "virtual time would pass " + std::to_string(options_.virtual_ms_max) +
                   " ms (FreeOptions::virtual_ms_max): waits that time out for ever");
  }
  advance_to(earliest_ns);
  const std::uint64_t now = now_ns();
  for (FreeWaiter* w = parked_first_; w != nullptr;) {
    FreeWaiter* next = w->next;
    if (w->deadline_ns <= now) {
      release_locked(*w);
    }
    w = next;
  }
}

ParkEnd FreeRuntime::park(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                          std::uint64_t deadline_ns, const char* call) {
  READYPORT_ASSERT(lock.owns_lock());
  READYPORT_ASSERT(call != nullptr);
  if (const std::string over = count_step(); !over.empty()) {
    lock.unlock();  // the report reads the fake's state
    livelock(over);
  }
  waiter.deadline_ns = deadline_ns;
  waiter.thread_id = thread_current();
  if (waiter.woken) {
    return ParkEnd::kWoken;
  }
  if (deadline_ns <= now_ns()) {
    return ParkEnd::kDeadline;
  }
  FreeWaiter self;
  self.waiter = &waiter;
  self.record = participant() ? tls_record : nullptr;
  self.deadline_ns = deadline_ns;
  self.call = call;
  std::unique_lock<std::mutex> held(mutex_);
  // wake() reaches `self` through runtime_data under the state mutex, which this thread holds
  // again before it clears the field and returns.
  waiter.runtime_data = &self;
  self.next = parked_first_;
  if (parked_first_ != nullptr) {
    parked_first_->previous = &self;
  }
  parked_first_ = &self;
  if (self.record != nullptr) {
    self.record->state = FreeState::kParked;
    self.record->call.store(call, std::memory_order_relaxed);
    READYPORT_ASSERT(running_ > 0);
    running_ -= 1;
  }
  // A wake() may come now: it takes the state mutex, then this one, held until the wait below.
  lock.unlock();
  settle_locked(held);
  wait_released(held, self);
  held.unlock();
  lock.lock();
  waiter.runtime_data = nullptr;
  return waiter.woken ? ParkEnd::kWoken : ParkEnd::kDeadline;
}

void FreeRuntime::wait_released(std::unique_lock<std::mutex>& held, FreeWaiter& self) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const auto stall = std::chrono::milliseconds(options_.stall_ms_max);
  while (!self.released) {
    const Clock::duration waited = Clock::now() - start;
    if (waited >= stall) {
      hang(held, std::string("a wait in ") + self.call + " lasted " +
                     std::to_string(options_.stall_ms_max) +
                     " ms of real time (FreeOptions::stall_ms_max) while some thread ran");
    }
    // An outsider may be running (not counted): every participant waits, so time may move, but
    // only after a real slice in which the outsider could act (the rule before participants).
    const bool slicing = outsider_seen_ && running_ == 0 && self.deadline_ns != kDeadlineNone;
    if (!slicing) {
      self.cv.wait_for(held, stall - waited);
      continue;
    }
    if (self.cv.wait_for(held, std::chrono::microseconds(kOutsiderSliceUs)) ==
            std::cv_status::timeout &&
        !self.released && running_ == 0) {
      advance_locked(held);
    }
  }
}

void FreeRuntime::wake(Waiter& waiter) {
  waiter.woken = true;
  auto* self = static_cast<FreeWaiter*>(waiter.runtime_data);
  if (self == nullptr) {
    return;  // not parked yet: park() sees `woken` and returns at once
  }
  std::lock_guard<std::mutex> held(mutex_);
  release_locked(*self);
}

FreeRecord& FreeRuntime::record_add_locked(std::uint32_t id, std::string name) {
  records_.push_back(std::make_unique<FreeRecord>());
  FreeRecord& record = *records_.back();
  record.id = id;
  record.name = std::move(name);
  running_ += 1;
  return record;
}

void FreeRuntime::leave(FreeRecord& record) {
  std::unique_lock<std::mutex> held(mutex_);
  READYPORT_ASSERT(record.state == FreeState::kRunning);
  record.state = FreeState::kFinished;
  for (const auto& other : records_) {
    // A participant joining this thread runs again: the count passes to it.
    if (record.joined_by_participant && other->state == FreeState::kJoining &&
        other->join_target == record.id) {
      other->state = FreeState::kRunning;
      return;
    }
  }
  READYPORT_ASSERT(running_ > 0);
  running_ -= 1;
  settle_locked(held);
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
  FreeRecord* record = nullptr;
  {
    // Running from now on: the starter may park before the thread is scheduled.
    std::lock_guard<std::mutex> held(mutex_);
    record = &record_add_locked(id, std::string(name));
  }
  auto thread = std::make_unique<FreeThread>(*this, *record);
  threads_live_.fetch_add(1);
  Status started = thread->start(std::move(body));
  if (!started.ok()) {
    threads_live_.fetch_sub(1);
    leave(*record);
    return started;
  }
  return std::unique_ptr<Thread>(std::move(thread));
}

std::uint32_t FreeRuntime::thread_current() const {
  return tls_runtime == this ? tls_thread_id : 0;
}

void FreeRuntime::run(const std::function<void()>& body) {
  READYPORT_ASSERT(tls_runtime == nullptr);  // not nested, not on a thread it started
  FreeRecord* record = nullptr;
  {
    std::lock_guard<std::mutex> held(mutex_);
    outsider_seen_ = false;  // calls before run() (constructing a world) wake nobody later
    // One record for every run() of this runtime (they never overlap): bounded however often.
    if (run_record_ == nullptr) {
      run_record_ = &record_add_locked(0, "run");
    } else {
      READYPORT_ASSERT(run_record_->state == FreeState::kFinished);
      run_record_->state = FreeState::kRunning;
      run_record_->call.store("(none)", std::memory_order_relaxed);
      running_ += 1;
    }
    record = run_record_;
  }
  tls_runtime = this;
  tls_thread_id = 0;
  tls_record = record;
  body();
  tls_record = nullptr;
  tls_runtime = nullptr;
  leave(*record);
}

std::string FreeRuntime::describe_locked() const {
  std::string text;
  for (const auto& record : records_) {
    if (record->state == FreeState::kFinished) {
      continue;
    }
    text +=
        "  T" + std::to_string(record->id) + " '" + record->name + "' " + state_name(record->state);
    if (record->state == FreeState::kJoining) {
      text += " T" + std::to_string(record->join_target);
    }
    text += record->state == FreeState::kParked ? " in " : ", last call ";
    text += record->call.load(std::memory_order_relaxed);
    for (const FreeWaiter* w = parked_first_; w != nullptr; w = w->next) {
      if (w->record != record.get()) {
        continue;
      }
      text += w->deadline_ns == kDeadlineNone
                  ? std::string(" (no deadline)")
                  : " (deadline " + std::to_string(w->deadline_ns) + " ns)";
    }
    text += "; " + std::to_string(record->steps.load(std::memory_order_relaxed)) + " seam calls\n";
  }
  for (const FreeWaiter* w = parked_first_; w != nullptr; w = w->next) {
    if (w->record == nullptr) {
      text += std::string("  an outsider parked in ") + w->call + "\n";
    }
  }
  return text;
}

void FreeRuntime::hang(std::unique_lock<std::mutex>& held, const std::string& what) {
  const std::string threads = describe_locked();
  held.unlock();
  report(threads, "hang: " + what, "FreeRuntime: no hang (report above)");
}

void FreeRuntime::livelock(const std::string& why) {
  std::string threads;
  {
    std::lock_guard<std::mutex> held(mutex_);
    threads = describe_locked();
  }
  // Threads that keep calling the seam while virtual time stands still, or a run past the bound
  // it was given: either way the run ends here, with what each thread was doing.
  report(threads, "livelock: " + why + "; " + std::to_string(steps()) + " seam calls in all",
         "FreeRuntime: no livelock, within steps_max (report above)");
}

void FreeRuntime::report(const std::string& threads, const std::string& what,
                         const char* assertion) {
  std::string text = "readyport FreeRuntime: " + what + " at t=" + std::to_string(now_ns()) +
                     " ns (virtual); threads:\n" + threads;
  if (options_.hang_detail) {
    text += options_.hang_detail() + "\n";
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  internal::assert_fail(assertion, __FILE__, __LINE__);
}

}  // namespace readyport
