// FakeOs glue: construction, the completion port calls (spec A, F), locks, threads, time and the
// fake-only inspection. The socket calls are in fake_os_sockets.cpp; the registration state
// machine in fake_notify.cpp.
#include "readyport/fake/fake_os.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/fake/internal/effect_point.hpp"
#include "readyport/fake/internal/fake_last_error.hpp"
#include "readyport/fake/internal/fake_mutex.hpp"
#include "readyport/fake/internal/fake_notify.hpp"
#include "readyport/fake/internal/logical_locals.hpp"

namespace readyport {

namespace fake_internal {

void last_error_set(std::uint32_t code) {
  READYPORT_ASSERT(code != 0);
  logical_locals().last_error = code;
}

std::uint32_t last_error_get() { return logical_locals().last_error; }

}  // namespace fake_internal

namespace {

using fake_internal::last_error_set;
using fake_internal::PortWaiter;

constexpr std::uint64_t kNsPerMs = 1'000'000;

bool fail_bool(std::uint32_t code) {
  last_error_set(code);
  return false;
}

void check_options(const FakeOptions& options) {
  READYPORT_ASSERT(options.sockets_max > 0);
  READYPORT_ASSERT(options.ports_max > 0);
  READYPORT_ASSERT(options.receive_buffer_bytes > 0);
  READYPORT_ASSERT(options.backlog_max > 0);
  READYPORT_ASSERT(options.batch_max > 0);
  // Failure codes must be failures (spec A8: 0 means applied).
  READYPORT_ASSERT(options.second_port_error != 0);
  READYPORT_ASSERT(options.unregistered_error != 0);
  READYPORT_ASSERT(options.not_socket_error != 0);
}

}  // namespace

namespace {
// FakeOs::instance_ values: unique in the process (an identity, never part of any output).
std::uint64_t next_instance() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}
}  // namespace

// Forwards a FakeMutex's block hooks to its FakeOs.
class FakeOs::Hooks final : public fake_internal::BlockHooks {
 public:
  explicit Hooks(FakeOs& os) : os_(os) {}
  void block_begin_locked() override { os_.block_begin_locked(); }
  void block_end_locked() override { os_.block_end_locked(); }

 private:
  FakeOs& os_;
};

FakeOs::FakeOs(FakeOptions options)
    : owned_runtime_(std::make_unique<InlineRuntime>()),
      runtime_(*owned_runtime_),
      options_(options),
      sockets_(std::make_unique<fake_internal::SocketTable>(options_)),
      instance_(next_instance()),
      early_rng_(SeedStreams(options.seed).stream(SeedStream::kFake)),
      hooks_(std::make_unique<Hooks>(*this)) {
  check_options(options_);
}

FakeOs::FakeOs(FakeOptions options, Runtime& runtime)
    : runtime_(runtime),
      options_(options),
      sockets_(std::make_unique<fake_internal::SocketTable>(options_)),
      instance_(next_instance()),
      early_rng_(SeedStreams(options.seed).stream(SeedStream::kFake)),
      hooks_(std::make_unique<Hooks>(*this)) {
  check_options(options_);
}

FakeOs::~FakeOs() {
  std::lock_guard<std::mutex> lock(mutex_);
  // A thread parked in a FakeOs that is being destroyed would wake into freed memory.
  for (const auto& entry : ports_) {
    READYPORT_ASSERT(entry.second->waiter_count() == 0);
  }
  READYPORT_ASSERT(sockets_->blocked_count() == 0);
  // Whatever the test did, the model it leaves behind is consistent.
  check_invariants_locked();
}

void FakeOs::enter(const char* call) {
  runtime_.point(call);
  runtime_.touch(SimObject::kFakeState, 0);
}

// ---- ports
// ---------------------------------------------------------------------------------------

FakeOs::FakePort* FakeOs::port_find(Port port) {
  auto found = ports_.find(port.value);
  return found == ports_.end() ? nullptr : found->second.get();
}

Port FakeOs::create_io_completion_port(std::uint32_t concurrency) {
  enter("create_io_completion_port");
  // Spec F7: the value limits the port's running threads when the switch models it; 0 means
  // the number of processors.
  const std::uint32_t limit =
      !options_.concurrency_limited ? 0 : (concurrency != 0 ? concurrency : options_.processors);
  std::lock_guard<std::mutex> lock(mutex_);
  if (ports_.size() >= options_.ports_max) {
    last_error_set(kErrorNotEnoughMemory);
    return kInvalidPort;
  }
  const Port handle{next_port_value_};
  next_port_value_ += kFakePortValueStep;  // never reused
  ports_.emplace(handle.value, std::make_unique<FakePort>(handle, runtime_, limit));
  return handle;
}

bool FakeOs::close_port(Port port) {
  enter("close_port");
  std::lock_guard<std::mutex> lock(mutex_);
  FakePort* found = port_find(port);
  if (found == nullptr) {
    return fail_bool(kErrorInvalidHandle);
  }
  // Spec F6: registrations dropped without REMOVE, waiters released with ERROR_ABANDONED_WAIT_0.
  for (fake_internal::FakeRegistration* registration : found->registrations_in_order()) {
    fake_internal::registration_port_closed(*registration);
  }
  READYPORT_ASSERT(found->registration_count() == 0);
  found->abandon_waiters();
  ports_.erase(port.value);  // the posted packets go with it
  return true;
}

std::uint64_t FakeOs::deadline_for(std::uint32_t timeout_ms) {
  if (timeout_ms == kInfinite) {
    return kDeadlineNone;  // spec A5: never times out
  }
  std::uint64_t wait_ms = timeout_ms;
  if (options_.early_wake_ms_max > 0 && timeout_ms > 0) {
    // Spec A5: a timed wait may end early, by a seeded amount (reproducible).
    const std::uint64_t early_max = std::min<std::uint64_t>(options_.early_wake_ms_max, wait_ms);
    wait_ms -= early_rng_.below(early_max + 1);
  }
  return runtime_.now_ns() + wait_ms * kNsPerMs;
}

std::uint32_t FakeOs::dequeue_batch(FakePort& port, OverlappedEntry* entries, std::uint32_t count) {
  READYPORT_ASSERT(count > 0 && entries != nullptr);
  std::vector<std::uint64_t> reevaluate;  // LEVEL|PERSISTENT registrations dequeued (spec C4)
  std::uint32_t dequeued = 0;
  // Bounded by count and by the FIFO, which only shrinks here.
  while (dequeued < count && !port.empty()) {
    const fake_internal::PacketList::iterator packet = port.front();
    OverlappedEntry& entry = entries[dequeued++];
    entry.completion_key = packet->completion_key;
    entry.overlapped = packet->overlapped;
    entry.internal = packet->internal;
    entry.bytes_transferred = packet->bytes_transferred;
    if (packet->registration_id == 0) {
      // A posted packet (spec F2): its three values, nothing else to do.
      port.pop_front();
      continue;
    }
    fake_internal::FakeRegistration* registration = port.registration_find(packet->registration_id);
    READYPORT_ASSERT(registration != nullptr);  // a registration outlives its queued packets
    const std::uint64_t id = registration->id;
    if (fake_internal::registration_dequeue_front(port, *registration, options_) ==
        fake_internal::AfterDequeue::kReevaluate) {
      reevaluate.push_back(id);
    }
  }
  // Spec C4: after the batch, a LEVEL|PERSISTENT registration whose condition still holds is
  // queued again, at the back of the FIFO (so the dequeue loop above does not return it twice;
  // a released waiter's batch may still carry a key twice: its hand-off and the packet queued
  // again after it).
  for (const std::uint64_t id : reevaluate) {
    fake_internal::FakeRegistration* registration = port.registration_find(id);
    if (registration == nullptr || registration->socket == nullptr) {
      continue;
    }
    fake_internal::registration_evaluate(
        *registration,
        fake_internal::socket_conditions(*registration->socket, options_.receive_buffer_bytes),
        options_);
  }
  return dequeued;
}

std::uint32_t FakeOs::wait_and_dequeue(std::unique_lock<std::mutex>& lock, FakePort& port,
                                       OverlappedEntry* entries, std::uint32_t count,
                                       std::uint32_t timeout_ms, std::uint32_t* received_out,
                                       const char* call) {
  READYPORT_ASSERT(lock.owns_lock());
  *received_out = 0;
  const std::uint64_t deadline_ns = deadline_for(timeout_ms);
  port_enter_locked(port);
  // Each turn starts the call or follows a wake; a woken thread re-checks because another thread
  // may have taken the packet, and waits again until the same deadline (the remaining time).
  for (;;) {
    // Spec F7: the caller takes a packet only while one more thread of the port may run.
    if (!port.empty() && port.may_run()) {
      effect_point(EffectPoint::kDequeue);
      *received_out = dequeue_batch(port, entries, count);
      READYPORT_ASSERT(*received_out >= 1 && *received_out <= count);
      port_run_locked(port);
      return kErrorSuccess;  // spec A1, F3
    }
    if (timeout_ms == 0 || runtime_.now_ns() >= deadline_ns) {
      port_run_locked(port);
      return kWaitTimeout;  // spec A2, A5, F3: *received_out stays 0
    }
    PortWaiter waiter;
    waiter.begins = effect_begins_current();
    port.push_waiter(waiter);
    runtime_.park(lock, waiter.waiter, deadline_ns, call);
    runtime_.touch(SimObject::kFakeState, 0);  // the call goes on in a new step
    if (waiter.abandoned) {
      fake_internal::logical_locals().port_value = 0;  // spec F6: the port is gone
      return kErrorAbandonedWait0;                     // spec F3, F6
    }
    if (port.remove_waiter(waiter)) {
      // Released with a packet (spec F1), counted as running from then (F7): its entry is the
      // FIFO's head, dequeued now with what is queued behind it.
      *received_out = dequeue_batch(port, entries, count);
      READYPORT_ASSERT(*received_out >= 1 && *received_out <= count);
      fake_internal::logical_locals().port_running = true;
      fake_internal::handoff_to_waiters(port, options_);  // F7: room for another?
      return kErrorSuccess;
    }
  }
}

void FakeOs::port_enter_locked(FakePort& port) {
  fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  if (locals.port_running) {
    locals.port_running = false;
    FakePort* previous = associated_port();
    if (previous != nullptr) {
      previous->run_end();
      // Spec F7: on its own port the caller itself takes what is queued ("returns with the next
      // completion packet"); leaving another port lets a thread waiting there run.
      if (previous != &port) {
        fake_internal::handoff_to_waiters(*previous, options_);
      }
    }
  }
  locals.port_os = instance_;
  locals.port_value = port.handle().value;
}

FakeOs::FakePort* FakeOs::associated_port() {
  const fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  if (locals.port_os != instance_ || locals.port_value == 0) {
    return nullptr;
  }
  return port_find(Port{locals.port_value});
}

void FakeOs::port_run_locked(FakePort& port) {
  port.run_begin();
  fake_internal::logical_locals().port_running = true;
  fake_internal::handoff_to_waiters(port, options_);  // packets left and room for another
}

void FakeOs::stop_running_locked() {
  fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  READYPORT_ASSERT(locals.port_running);
  locals.port_running = false;
  FakePort* port = associated_port();
  if (port != nullptr) {
    port->run_end();
    fake_internal::handoff_to_waiters(*port, options_);  // room for a waiter
  }
}

void FakeOs::port_leave_locked() {
  fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  if (locals.port_running) {
    stop_running_locked();
  }
  locals.port_value = 0;
}

void FakeOs::block_begin_locked() {
  fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  if (!locals.port_running) {
    return;
  }
  stop_running_locked();  // still associated: it runs again when it wakes
  locals.port_blocked = true;
}

void FakeOs::block_end_locked() {
  fake_internal::LogicalLocals& locals = fake_internal::logical_locals();
  if (!locals.port_blocked) {
    return;
  }
  locals.port_blocked = false;
  FakePort* port = associated_port();
  if (port == nullptr) {
    locals.port_value = 0;  // closed meanwhile
    return;
  }
  // Spec F7: it runs again at once, even past the limit ("a brief period when the number of
  // active threads exceeds the concurrency value"); no new thread is released meanwhile.
  port->run_begin();
  locals.port_running = true;
}

std::uint32_t FakeOs::psn_validate(std::uint32_t registration_count,
                                   const SockNotifyRegistration* registrations,
                                   std::uint32_t timeout_ms, std::uint32_t completion_count,
                                   const OverlappedEntry* entries,
                                   const std::uint32_t* received_out) const {
  // The fake's batch limit: more fails as a whole.
  if (registration_count > options_.batch_max || completion_count > options_.batch_max) {
    return kWsaEinval;
  }
  // Spec A4: registrationCount 0 exactly when registrationInfos is NULL.
  if ((registration_count == 0) != (registrations == nullptr)) {
    return kWsaEinval;
  }
  if (completion_count == 0) {
    // Spec A4: registrations only: no entries, no count pointer, no wait.
    if (entries != nullptr || received_out != nullptr || timeout_ms != 0) {
      return kWsaEinval;
    }
  } else if (entries == nullptr || received_out == nullptr) {
    return kWsaEinval;
  }
  return 0;
}

std::uint32_t FakeOs::process_socket_notifications(Port port, std::uint32_t registration_count,
                                                   SockNotifyRegistration* registrations,
                                                   std::uint32_t timeout_ms,
                                                   std::uint32_t completion_count,
                                                   OverlappedEntry* entries,
                                                   std::uint32_t* received_out) {
  enter("process_socket_notifications");
  std::unique_lock<std::mutex> lock(mutex_);
  // Spec A3: a failure of the whole call changes nothing, so everything is checked first.
  const std::uint32_t invalid = psn_validate(registration_count, registrations, timeout_ms,
                                             completion_count, entries, received_out);
  if (invalid != 0) {
    return invalid;
  }
  FakePort* found = port_find(port);
  if (found == nullptr) {
    return kErrorInvalidHandle;
  }
  effect_point(EffectPoint::kRegistrations);
  // Spec A7, A8, A10: in array order, each on its own, before the dequeue.
  const fake_internal::ApplyContext context{options_, *found, next_registration_id_};
  for (std::uint32_t i = 0; i < registration_count; ++i) {
    SockNotifyRegistration& element = registrations[i];
    element.registration_result =
        fake_internal::registration_apply(element, sockets_->find(element.socket), context);
  }
  if (completion_count == 0) {
    return kErrorSuccess;  // spec A4: registrations only
  }
  return wait_and_dequeue(lock, *found, entries, completion_count, timeout_ms, received_out,
                          "process_socket_notifications");
}

bool FakeOs::get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                             std::uint32_t count, std::uint32_t* removed_out,
                                             std::uint32_t timeout_ms, bool alertable) {
  enter("get_queued_completion_status_ex");
  std::unique_lock<std::mutex> lock(mutex_);
  if (alertable) {
    return fail_bool(kErrorInvalidParameter);  // no APCs in readyport
  }
  if (entries == nullptr || removed_out == nullptr || count == 0) {
    return fail_bool(kErrorInvalidParameter);
  }
  FakePort* found = port_find(port);
  if (found == nullptr) {
    return fail_bool(kErrorInvalidHandle);
  }
  // Spec F3; dequeuing socket packets here applies the same one-shot/level rules as PSN.
  const std::uint32_t code = wait_and_dequeue(lock, *found, entries, count, timeout_ms, removed_out,
                                              "get_queued_completion_status_ex");
  if (code == kErrorSuccess) {
    return true;
  }
  *removed_out = 0;
  return fail_bool(code);
}

bool FakeOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                           std::uintptr_t completion_key,
                                           std::uintptr_t overlapped) {
  enter("post_queued_completion_status");
  std::lock_guard<std::mutex> lock(mutex_);
  FakePort* found = port_find(port);
  if (found == nullptr) {
    return fail_bool(kErrorInvalidHandle);
  }
  effect_point(EffectPoint::kCall);
  if (found->posted_count() >= fake_internal::kPostedPacketsMax) {
    return fail_bool(kErrorNoSystemResources);
  }
  // Spec F2: exactly these three values, at the back of the FIFO (F4); wakes a waiter (F1).
  fake_internal::FakePacket packet;
  packet.registration_id = 0;
  packet.completion_key = completion_key;
  packet.overlapped = overlapped;
  packet.internal = 0;
  packet.bytes_transferred = bytes_transferred;
  found->queue(packet);
  return true;
}

// ---- threads, locks, time --------------------------------------------------------------------

std::uint32_t FakeOs::last_error() {
  runtime_.point("last_error");
  runtime_.touch(SimObject::kNothing, 0);  // the calling thread's own
  return fake_internal::last_error_get();
}

std::unique_ptr<Mutex> FakeOs::mutex_create() {
  enter("mutex_create");
  std::uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    id = next_mutex_id_++;
  }
  return std::make_unique<fake_internal::FakeMutex>(mutex_, runtime_, hooks_.get(), id);
}

Result<std::unique_ptr<Thread>> FakeOs::thread_start(std::string_view name,
                                                     std::function<void()> body) {
  runtime_.point("thread_start");
  return runtime_.thread_start(name, [this, body = std::move(body)] {
    body();
    // Spec F7: a thread that ends leaves its port's running threads.
    runtime_.touch(SimObject::kFakeState, 0);
    std::lock_guard<std::mutex> lock(mutex_);
    port_leave_locked();
  });
}

std::uint64_t FakeOs::thread_id() {
  const std::uint32_t logical = runtime_.thread_current();
  if (logical != 0) {
    return logical;
  }
  // Threads the runtime did not start are real threads: an id per OS thread, drawn once. Only
  // compared for equality (never traced), so the draw order does not affect a run.
  static std::atomic<std::uint64_t> next_id{std::uint64_t{1} << 32};
  thread_local const std::uint64_t os_thread_id = next_id.fetch_add(1);
  return os_thread_id;
}

std::uint64_t FakeOs::now_ns() {
  runtime_.point("now_ns");
  runtime_.touch(SimObject::kClock, 0);
  return runtime_.now_ns();
}

void FakeOs::sleep_ms(std::uint32_t duration_ms) {
  enter("sleep_ms");
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t deadline_ns = runtime_.now_ns() + duration_ms * kNsPerMs;
  // Nobody wakes a sleeper: each park ends at the deadline; loop in case a runtime ends one
  // earlier (the clock never goes backwards, so this terminates).
  if (runtime_.now_ns() < deadline_ns) {
    block_begin_locked();  // spec F7: a sleeper is blocked
  }
  while (runtime_.now_ns() < deadline_ns) {
    Waiter waiter;
    const ParkEnd end = runtime_.park(lock, waiter, deadline_ns, "sleep_ms");
    runtime_.touch(SimObject::kFakeState, 0);  // the call goes on in a new step
    READYPORT_ASSERT(end == ParkEnd::kDeadline);
  }
  block_end_locked();
}

// ---- inspection
// ----------------------------------------------------------------------------------

FakeStats FakeOs::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeStats stats;
  stats.sockets_open = static_cast<std::uint32_t>(sockets_->open_count());
  stats.ports_open = static_cast<std::uint32_t>(ports_.size());
  std::size_t waiters = sockets_->blocked_count();
  for (const auto& entry : ports_) {
    stats.registrations_live += static_cast<std::uint32_t>(entry.second->registration_count());
    stats.packets_queued += static_cast<std::uint32_t>(entry.second->packet_count());
    waiters += entry.second->waiter_count();
  }
  stats.waiters = static_cast<std::uint32_t>(waiters);
  stats.removes_dropped = removes_dropped_;
  return stats;
}

std::uint32_t FakeOs::queued_packet_count(Port port) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = ports_.find(port.value);
  return found == ports_.end() ? 0 : static_cast<std::uint32_t>(found->second->packet_count());
}

bool FakeOs::socket_registered(Socket s) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const fake_internal::FakeSocket* socket = sockets_->find(s);
  return socket != nullptr && socket->registration != nullptr;
}

}  // namespace readyport
