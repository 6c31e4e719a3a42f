// The engine: drivers, batches, the slot state machine's transitions, teardown.
//
// Shape of one batch on a driver (a thread in run_worker, poll or stop):
//   1. under the lock: take deferred slots, hand the pending registrations to the call;
//   2. one ProcessSocketNotifications call: the registrations decided by the previous batch plus
//      the dequeue of the next batch (spec A7: applied first);
//   3. under the lock: apply each registration's result (spec A8), then classify each entry:
//      sentinel, stale, dispatch, merge into a running dispatch, REMOVE, or drop;
//   4. without the lock: run tasks and handlers; under the lock: record the returned interest
//      and decide the next registration of each slot (settle), or run the handler again when
//      packets arrived meanwhile (per-connection serialisation);
//   5. disposal after the batch: close sockets whose REMOVE was seen, call on_closed, free;
//   6. quiescent point: grace periods of quarantined slots (spec E4), drain markers.
// Every state change happens under the one engine lock (Os::mutex_create), so the simulation
// schedules it; no other cross-thread synchronisation exists.
#include "readyport/engine.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "readyport/internal/slot_table.hpp"

namespace readyport {

namespace internal {

struct RegRef {
  std::uint32_t slot = kSlotNone;
  std::uint32_t generation = 0;
};

// Where settle() puts the registration it decides: a driver's next call or a direct call.
struct RegSink {
  SockNotifyRegistration* regs = nullptr;
  RegRef* refs = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t count = 0;

  bool full() const { return count >= capacity; }
  void append(const SockNotifyRegistration& reg, RegRef ref) {
    READYPORT_ASSERT(!full());
    regs[count] = reg;
    refs[count] = ref;
    ++count;
  }
};

struct RegBuffer {
  std::vector<SockNotifyRegistration> regs;
  std::vector<RegRef> refs;
  std::uint32_t count = 0;

  void allocate(std::uint32_t capacity) {
    regs.resize(capacity);
    refs.resize(capacity);
  }
  RegSink sink() {
    return RegSink{regs.data(), refs.data(), static_cast<std::uint32_t>(regs.size()), count};
  }
  void commit(const RegSink& sink) { count = sink.count; }
};

struct Dispatch {
  std::uint32_t slot = kSlotNone;
  ConnId id;
  Socket socket = kInvalidSocket;
  Handler* handler = nullptr;
  std::uint32_t events = 0;
  Interest result = kInterestNone;
};

// A thread that dequeues: its batch buffers, allocated once by the engine's constructor.
struct Driver {
  std::uint16_t index = 0;
  bool claimed = false;
  std::uint64_t call_epoch = 0;  // engine epoch when its current call began; 0: quiescent
  std::uint32_t failures_in_row = 0;
  RegBuffer pending;  // decided, for the next call
  RegBuffer sent;     // in the current call
  std::vector<OverlappedEntry> entries;
  std::vector<Dispatch> dispatches;
  std::uint32_t dispatch_count = 0;
  std::vector<Task*> tasks;
  std::uint32_t task_count = 0;
  std::uint32_t dispose_head = kSlotNone;  // FIFO: closed in the order the REMOVEs were seen
  std::uint32_t dispose_tail = kSlotNone;
  std::uint32_t wakes_to_post = 0;
  std::uint32_t wasted = 0;       // this batch's entries that were stale, dropped or merged
  std::uint32_t wasted_runs = 0;  // batches in a row made only of those (spin guard)
  bool exit_seen = false;
};

}  // namespace internal

using internal::Dispatch;
using internal::Driver;
using internal::kSlotNone;
using internal::RegRef;
using internal::RegSink;
using internal::Slot;
using internal::SlotState;

namespace {

class Lock {
 public:
  explicit Lock(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~Lock() { mutex_.unlock(); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  Mutex& mutex_;
};

// The engine and driver the calling thread is driving, if any: lets close() from a handler put
// its REMOVE into the driver's next call, and lets stop() refuse to run inside a handler.
// thread_local is deterministic: every logical thread of the simulation is a real thread.
struct DriverContext {
  const Engine* engine = nullptr;
  Driver* driver = nullptr;
};
thread_local DriverContext t_context;

class ContextScope {
 public:
  ContextScope(const Engine* engine, Driver* driver) : saved_(t_context) {
    t_context = DriverContext{engine, driver};
  }
  ~ContextScope() { t_context = saved_; }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  DriverContext saved_;
};

constexpr std::uint32_t kEventsForHandler =
    kSockNotifyEventIn | kSockNotifyEventOut | kSockNotifyEventHangup | kSockNotifyEventErr;

bool is_oneshot(Mode mode) { return mode == Mode::kOneshotLevel || mode == Mode::kOneshotEdge; }

std::uint8_t trigger_of(Mode mode) {
  switch (mode) {
    case Mode::kOneshotLevel:
      return kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;
    case Mode::kPersistentLevel:
      return kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel;
    case Mode::kPersistentEdge:
      return kSockNotifyTriggerPersistent | kSockNotifyTriggerEdge;
    case Mode::kOneshotEdge:
      return kSockNotifyTriggerOneshot | kSockNotifyTriggerEdge;
  }
  READYPORT_UNREACHABLE();
}

Status validate(const EngineOptions& o) {
  if (o.connections_max < 1 || o.connections_max > (1u << 28))
    return Status(StatusCode::kInvalidArgument, "connections_max must be in [1, 2^28]");
  if (o.batch_count < 1 || o.batch_count > 4096)
    return Status(StatusCode::kInvalidArgument, "batch_count must be in [1, 4096]");
  if (o.workers_max < 1 || o.workers_max > 1024)
    return Status(StatusCode::kInvalidArgument, "workers_max must be in [1, 1024]");
  if (o.tasks_max < 1) return Status(StatusCode::kInvalidArgument, "tasks_max must be >= 1");
  if (o.call_retry_max < 1)
    return Status(StatusCode::kInvalidArgument, "call_retry_max must be >= 1");
  return Status();
}

std::string conn_text(ConnId id) {
  return "connection {slot " + std::to_string(id.slot) + ", generation " +
         std::to_string(id.generation) + "}";
}

// Why the port refused add()'s registration, as a Status (the codes are undocumented, spec A8;
// WSAEINVAL is what a socket registered with another port gets, B8; WSAENOTSOCK, B9).
Status add_refused(Socket socket, std::uint32_t code, bool call_failed) {
  if (call_failed)
    return Status(StatusCode::kOsError,
                  std::string("add(): ProcessSocketNotifications kept failing (spec A3): ") +
                      os_error_name(code),
                  code);
  if (code == kWsaEnotsock)
    return Status(StatusCode::kInvalidArgument,
                  "add(): " + std::to_string(socket) + " is not a socket (WSAENOTSOCK)", code);
  if (code == kWsaEinval)
    return Status(StatusCode::kAlreadyExists,
                  "add(): the port refused socket " + std::to_string(socket) +
                      " with WSAEINVAL: it is probably registered with another completion port "
                      "(spec B8)",
                  code);
  return Status(StatusCode::kOsError,
                std::string("add(): the registration failed: ") + os_error_name(code), code);
}

}  // namespace

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kOneshotLevel:
      return "oneshot_level";
    case Mode::kPersistentLevel:
      return "persistent_level";
    case Mode::kPersistentEdge:
      return "persistent_edge";
    case Mode::kOneshotEdge:
      return "oneshot_edge";
  }
  return "unknown";
}

// ---- Construction, start, stats -----------------------------------------------------------------

Engine::Engine(Os& os, EngineOptions options)
    : os_(os),
      options_(options),
      mutex_(os.mutex_create()),
      deferred_head_(kSlotNone),
      quarantine_head_(kSlotNone),
      grace_head_(kSlotNone) {
  READYPORT_ASSERT(mutex_ != nullptr);
  if (!validate(options_).ok()) return;  // start() reports it; nothing to allocate
  slots_ = std::make_unique<internal::SlotTable>(options_.connections_max);
  drivers_.resize(std::size_t{options_.workers_max} + 1);  // the last one is stop()'s
  for (std::size_t i = 0; i < drivers_.size(); ++i) {
    Driver& d = drivers_[i];
    d.index = static_cast<std::uint16_t>(i);
    d.pending.allocate(options_.batch_count);
    d.sent.allocate(options_.batch_count);
    d.entries.resize(options_.batch_count);
    d.dispatches.resize(options_.batch_count);
    d.tasks.resize(options_.batch_count);
  }
  stop_regs_.resize(options_.batch_count);
  stop_refs_.resize(options_.batch_count);
}

Engine::~Engine() {
  bool running = false;
  {
    Lock lock(*mutex_);
    running = run_state_ == RunState::kRunning;
  }
  if (running) (void)stop();
  Lock lock(*mutex_);
  // Destroying an engine while stop() runs elsewhere, or from a driver, is a broken contract.
  READYPORT_ASSERT(run_state_ == RunState::kCreated || run_state_ == RunState::kStopped);
  READYPORT_ASSERT(drivers_claimed_ == 0);
}

Status Engine::start() {
  {
    Lock lock(*mutex_);
    if (run_state_ != RunState::kCreated)
      return Status(StatusCode::kFailedPrecondition, "start(): the engine was already started");
  }
  if (Status status = validate(options_); !status.ok()) return status;
  const Port port = os_.create_io_completion_port(0);
  if (port == kInvalidPort) {
    const std::uint32_t error = os_.last_error();
    return Status(StatusCode::kOsError,
                  std::string("start(): CreateIoCompletionPort failed: ") + os_error_name(error),
                  error);
  }
  Lock lock(*mutex_);
  port_ = port;
  run_state_ = RunState::kRunning;
  return Status();
}

EngineStats Engine::stats() const {
  Lock lock(*mutex_);
  EngineStats copy = stats_;
  copy.connections_live = slots_ ? slots_->live_count() : 0;
  return copy;
}

Status Engine::check_running(const char* call) const {
  switch (run_state_) {
    case RunState::kRunning:
      return Status();
    case RunState::kCreated:
      return Status(StatusCode::kFailedPrecondition,
                    std::string(call) + ": the engine is not started (call start() first)");
    case RunState::kStopping:
    case RunState::kExiting:
      return Status(StatusCode::kFailedPrecondition,
                    std::string(call) + ": the engine is stopping");
    case RunState::kStopped:
      return Status(StatusCode::kFailedPrecondition,
                    std::string(call) + ": the engine was stopped");
  }
  READYPORT_UNREACHABLE();
}

// ---- add, close, post -------------------------------------------------------------------------

Status Engine::reserve_slot(Socket socket, Interest interest, Mode mode, Handler& handler,
                            SockNotifyRegistration* reg_out, RegRef* ref_out) {
  Lock lock(*mutex_);
  if (Status status = check_running("add()"); !status.ok()) return status;
  if (const std::uint32_t other = slots_->socket_find(socket); other != kSlotNone)
    return Status(StatusCode::kAlreadyExists, "add(): socket " + std::to_string(socket) +
                                                  " is already added, as " +
                                                  conn_text(slots_->id_of(other)));
  const std::uint32_t index = slots_->acquire();
  if (index == kSlotNone)
    return Status(StatusCode::kResourceExhausted,
                  "add(): all " + std::to_string(options_.connections_max) +
                      " connection slots are in use (EngineOptions::connections_max)");
  Slot& slot = slots_->at(index);
  // Transition kFree -> kLive: the ENABLE that add() issues is this slot's first registration.
  READYPORT_ASSERT(slot.state == SlotState::kFree && slot.link == kSlotNone);
  slot.state = SlotState::kLive;
  slot.mode = mode;
  slot.socket = socket;
  slot.handler = &handler;
  slot.interest = interest;
  slot.interest_applied = interest;
  slot.op_in_flight = true;
  slots_->socket_insert(socket, index);
  *ref_out = RegRef{index, slot.generation};
  *reg_out = SockNotifyRegistration{
      socket, slots_->key_of(index), interest, kSockNotifyOpEnable, trigger_of(mode), 0};
  if (options_.observer) options_.observer->on_slot_acquired(slots_->id_of(index), socket);
  return Status();
}

Result<ConnId> Engine::add(Socket socket, Interest interest, Mode mode, Handler& handler) {
  if (socket == kInvalidSocket)
    return Status(StatusCode::kInvalidArgument, "add(): INVALID_SOCKET is not a socket");
  if ((interest & ~kInterestAll) != 0)
    return Status(StatusCode::kInvalidArgument, "add(): interest " + std::to_string(interest) +
                                                    " has bits outside IN|OUT|HANGUP (0x07)");
  if (static_cast<std::uint8_t>(mode) > static_cast<std::uint8_t>(Mode::kOneshotEdge))
    return Status(StatusCode::kInvalidArgument, "add(): unknown mode");
  SockNotifyRegistration reg;
  RegRef ref;
  if (Status status = reserve_slot(socket, interest, mode, handler, &reg, &ref); !status.ok())
    return status;

  const std::uint32_t call_error = call_registrations(&reg, 1);
  SockNotifyRegistration follow_reg;
  RegRef follow_ref;
  RegSink follow{&follow_reg, &follow_ref, 1, 0};
  ConnId id;
  {
    Lock lock(*mutex_);
    Slot& slot = slots_->at(ref.slot);
    // op_in_flight kept the slot ours: no REMOVE can be decided while it is set.
    READYPORT_ASSERT(slot.generation == ref.generation && slot.op_in_flight);
    slot.op_in_flight = false;
    if (reg.registration_result != 0) {
      // Not applied (spec A3/A8): no registration, so no packet can carry this key. Transition
      // kLive -> kFree at once; the socket stays the caller's.
      READYPORT_ASSERT(slot.state == SlotState::kLive && !slot.deferred);
      if (call_error == 0) ++stats_.registration_failures;
      slots_->socket_erase(socket);
      release_slot(ref.slot);
      return add_refused(socket, reg.registration_result, call_error != 0);
    }
    ++stats_.connections_added;
    id = slots_->id_of(ref.slot);
    // A packet may already have been dispatched (spec A7); then its driver settles the slot.
    if (slot.state == SlotState::kLive) settle(ref.slot, follow);
  }
  if (follow.count > 0) issue_direct(follow_reg, follow_ref);
  return id;
}

Status Engine::close(ConnId id) {
  SockNotifyRegistration reg;
  RegRef ref;
  RegSink direct{&reg, &ref, 1, 0};
  {
    Lock lock(*mutex_);
    if (run_state_ == RunState::kCreated || run_state_ == RunState::kStopped)
      return check_running("close()");
    const std::uint32_t index = slots_->find(id);
    if (index == kSlotNone)
      return Status(StatusCode::kNotFound,
                    "close(): no " + conn_text(id) + " (never added, or already closed)");
    Slot& slot = slots_->at(index);
    switch (slot.state) {
      case SlotState::kLive:
        // Idle: decide the REMOVE now, unless a registration is in flight (its result settles)
        // or the slot already waits for a driver.
        if (slot.close_requested) return Status();
        slot.close_requested = true;
        if (t_context.engine == this) {
          // From a handler or task: the REMOVE rides this driver's next port call.
          RegSink sink = t_context.driver->pending.sink();
          settle(index, sink);
          t_context.driver->pending.commit(sink);
          return Status();
        }
        settle(index, direct);
        break;
      case SlotState::kDispatching:
        // A driver runs the handler: it sees the request when the handler returns.
        slot.close_requested = true;
        return Status();
      case SlotState::kRemoving:
#if defined(READYPORT_CANARY_double_remove)
        // CANARY double_remove: close() of a removing connection issues its REMOVE again.
        direct.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), kInterestNone,
                                             kSockNotifyOpRemove, 0, 0},
                      RegRef{index, slot.generation});
        break;
#endif
      case SlotState::kQuarantined:
      case SlotState::kClosing:
        // Already closing: close() is idempotent.
        return Status();
      case SlotState::kFree:
        READYPORT_UNREACHABLE();  // find() never returns a free slot
    }
  }
  if (direct.count > 0) issue_direct(reg, ref);
  return Status();
}

Status Engine::notify(ConnId id, std::uint32_t events) {
  if ((events & ~kEventsForHandler) != 0)
    return Status(StatusCode::kInvalidArgument, "notify(): events " + std::to_string(events) +
                                                    " has bits outside IN|OUT|HANGUP|ERR (0x47)");
  std::uintptr_t key = 0;
  {
    Lock lock(*mutex_);
    if (Status status = check_running("notify()"); !status.ok()) return status;
    const std::uint32_t index = slots_->find(id);
    if (index == kSlotNone)
      return Status(StatusCode::kNotFound,
                    "notify(): no " + conn_text(id) + " (never added, or already closed)");
    key = slots_->key_of(index);
  }
  // The packet names the slot by key and generation: if the connection is gone when it is
  // dequeued, it is stale like any other packet.
  const bool posted = os_.post_queued_completion_status(port_, events, internal::kNotifyKey, key);
  const std::uint32_t error = posted ? 0 : os_.last_error();
  Lock lock(*mutex_);
  ++stats_.posts;
  if (posted) return Status();
  return Status(StatusCode::kOsError,
                std::string("notify(): PostQueuedCompletionStatus failed: ") + os_error_name(error),
                error);
}

Status Engine::post(Task& task) {
  {
    Lock lock(*mutex_);
    if (Status status = check_running("post()"); !status.ok()) return status;
    if (tasks_outstanding_ >= options_.tasks_max)
      return Status(StatusCode::kResourceExhausted,
                    "post(): " + std::to_string(options_.tasks_max) +
                        " tasks are outstanding (EngineOptions::tasks_max)");
    ++tasks_outstanding_;
  }
  const bool posted = os_.post_queued_completion_status(port_, 0, internal::kTaskKey,
                                                        reinterpret_cast<std::uintptr_t>(&task));
  const std::uint32_t error = posted ? 0 : os_.last_error();
  Lock lock(*mutex_);
  ++stats_.posts;
  if (posted) return Status();
  --tasks_outstanding_;
  return Status(StatusCode::kOsError,
                std::string("post(): PostQueuedCompletionStatus failed: ") + os_error_name(error),
                error);
}

// ---- Registration decisions (under the lock) ------------------------------------------------

void Engine::settle(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.state == SlotState::kLive);
  // A registration of this slot is in flight: processing its result settles again. One
  // registration in flight per slot keeps the port's order of operations equal to ours.
  if (slot.op_in_flight) return;
  // Already on the deferred list: the driver that takes it settles it.
  if (slot.deferred) return;
  // Armed as wanted and not closing: nothing to issue.
  if (!slot.close_requested && !slot.rearm_needed) return;
  if (sink.full()) {
    // The sink has no room: a driver takes the slot before its next call (bounded buffers).
    slot.deferred = true;
    slot.link = deferred_head_;
    deferred_head_ = index;
    return;
  }
  if (slot.close_requested) {
    begin_remove(index, sink);
    return;
  }
  begin_enable(index, sink);
}

void Engine::begin_enable(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.state == SlotState::kLive && !slot.op_in_flight);
  slot.rearm_needed = false;
  slot.paused = false;
  slot.op_in_flight = true;
  slot.interest_applied = slot.interest;
  // The whole registration, all directions (spec C2): the filter is the full interest.
  sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), slot.interest,
                                     kSockNotifyOpEnable, trigger_of(slot.mode), 0},
              RegRef{index, slot.generation});
}

void Engine::pause(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.state == SlotState::kDispatching);
  // Only with no registration in flight (their order must stay ours) and room in the sink; the
  // pause only saves work, nothing depends on it.
  if (slot.paused || slot.op_in_flight || slot.deferred || slot.close_requested || sink.full())
    return;
  slot.paused = true;
  slot.op_in_flight = true;
  // DISABLE keeps the registration (spec B4); the dispatcher's re-arm enables it again.
  sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), slot.interest_applied,
                                     kSockNotifyOpDisable, trigger_of(slot.mode), 0},
              RegRef{index, slot.generation});
}

void Engine::begin_remove(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  // Transition kLive -> kRemoving: no registration in flight, so REMOVE is the port's last
  // operation on this key; it is issued once (spec B7).
  READYPORT_ASSERT(slot.state == SlotState::kLive && !slot.op_in_flight && slot.close_requested);
  slot.state = SlotState::kRemoving;
  slot.rearm_needed = false;
  sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), kInterestNone,
                                     kSockNotifyOpRemove, 0, 0},
              RegRef{index, slot.generation});
}

void Engine::apply_results(const SockNotifyRegistration* regs, const RegRef* refs,
                           std::uint32_t count, RegSink& follow_ups) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const SockNotifyRegistration& reg = regs[i];
    const RegRef ref = refs[i];
    if (reg.operation == kSockNotifyOpRemove) {
      // Applied: the REMOVE packet frees the slot, maybe already on another driver, so the
      // slot is not touched here.
      if (reg.registration_result == 0) continue;
      // Failed (spec B6): no REMOVE packet will come, so the slot is still ours. Transition
      // kRemoving -> kQuarantined: the port may still hold a packet for the key (spec E4).
      ++stats_.registration_failures;
#if defined(READYPORT_CANARY_remove_failure_as_done)
      // CANARY remove_failure_as_done: a refused REMOVE read as "nothing is registered, nothing
      // is queued": the engine posts itself the REMOVE packet and closes on it, with no drain.
      if (os_.post_queued_completion_status(port_, kSockNotifyEventRemove,
                                            slots_->key_of(ref.slot), 0))
        continue;
#endif
      Slot& slot = slots_->at(ref.slot);
      READYPORT_ASSERT(slot.generation == ref.generation && slot.state == SlotState::kRemoving);
      slot.state = SlotState::kQuarantined;
      slot.link = quarantine_head_;
      quarantine_head_ = ref.slot;
      ++stats_.quarantined;
      if (options_.observer) options_.observer->on_quarantined(slots_->id_of(ref.slot));
      continue;
    }
    READYPORT_ASSERT(reg.operation == kSockNotifyOpEnable || reg.operation == kSockNotifyOpDisable);
    Slot& slot = slots_->at(ref.slot);
    // An ENABLE or DISABLE in flight keeps its slot: REMOVE waits for op_in_flight to clear.
    READYPORT_ASSERT(slot.generation == ref.generation && slot.op_in_flight);
    slot.op_in_flight = false;
    if (reg.registration_result != 0) {
      // This registration failed (spec A8): the connection is closed; the others go on.
      ++stats_.registration_failures;
      slot.close_requested = true;
    }
    switch (slot.state) {
      case SlotState::kLive:
        // Idle: decide what follows (a REMOVE, or an ENABLE wanted meanwhile).
        settle(ref.slot, follow_ups);
        break;
      case SlotState::kDispatching:
        // A packet proved the ENABLE applied and a driver runs the handler: it settles.
        break;
      default:
        READYPORT_UNREACHABLE();  // removing, quarantined, closing need op_in_flight clear
    }
  }
}

// ---- Calls --------------------------------------------------------------------------------------

void Engine::backoff(std::uint32_t attempt) {
  const std::uint32_t shift = std::min<std::uint32_t>(attempt, 16);
  const std::uint64_t delay_ms = std::uint64_t{options_.retry_backoff_ms} << shift;
  os_.sleep_ms(
      static_cast<std::uint32_t>(std::min<std::uint64_t>(delay_ms, options_.retry_backoff_max_ms)));
}

std::uint32_t Engine::call_registrations(SockNotifyRegistration* regs, std::uint32_t count) {
  std::uint32_t attempts = 0;
  std::uint32_t error = 0;
  for (;;) {
    ++attempts;
    // Registrations only (spec A4): no dequeue, no wait.
    error = os_.process_socket_notifications(port_, count, regs, 0, 0, nullptr, nullptr);
    if (error == kErrorSuccess || error == kWaitTimeout) {
      error = 0;
      break;
    }
    // The whole call failed and nothing changed (spec A3): retry, bounded.
    if (attempts >= options_.call_retry_max) {
      for (std::uint32_t i = 0; i < count; ++i) regs[i].registration_result = error;
      break;
    }
    backoff(attempts - 1);
  }
  Lock lock(*mutex_);
  stats_.port_calls += attempts;
  stats_.call_failures += error == 0 ? attempts - 1 : attempts;
  return error;
}

void Engine::issue_direct(SockNotifyRegistration reg, RegRef ref) {
  // One slot, one registration in flight: each result decides at most one follow-up.
  for (;;) {
    (void)call_registrations(&reg, 1);
    SockNotifyRegistration next_reg;
    RegRef next_ref;
    RegSink follow{&next_reg, &next_ref, 1, 0};
    {
      Lock lock(*mutex_);
      apply_results(&reg, &ref, 1, follow);
    }
    if (follow.count == 0) break;
    reg = next_reg;
    ref = next_ref;
  }
  service_quarantine();
}

// ---- Quarantine (spec E4) -----------------------------------------------------------------------

void Engine::service_quarantine() {
  for (;;) {
    std::uint32_t index = kSlotNone;
    Socket socket = kInvalidSocket;
    bool close_socket = false;
    std::uintptr_t key = 0;
    ConnId id;
    {
      Lock lock(*mutex_);
      index = quarantine_head_;
      if (index == kSlotNone) return;
      Slot& slot = slots_->at(index);
      READYPORT_ASSERT(slot.state == SlotState::kQuarantined && !slot.marker_posted);
      quarantine_head_ = slot.link;
      slot.link = kSlotNone;
      // Close the socket first: closesocket deregisters it (spec E2), so no new packet can be
      // queued for the key; the marker posted after it is then behind every packet that was.
      close_socket = !slot.socket_closed;
      if (close_socket) {
        slots_->socket_erase(slot.socket);
        slot.socket_closed = true;
      }
      slot.marker_posted = true;  // before the post: another driver may dequeue it at once
      socket = slot.socket;
      key = slots_->key_of(index);
      id = slots_->id_of(index);
    }
    if (close_socket) {
      // Reported before the call: once closed, the value may be reused at once (spec E5).
      if (options_.observer) options_.observer->on_socket_closed(id, socket);
      (void)os_.closesocket(socket);
    }
    const bool posted = os_.post_queued_completion_status(port_, 0, internal::kDrainKey, key);
    Lock lock(*mutex_);
    ++stats_.posts;
    if (!posted) {
      // No marker in the port, so the slot is still ours: back on the list, tried again at the
      // next quiescent point.
      Slot& slot = slots_->at(index);
      READYPORT_ASSERT(slot.generation == id.generation && slot.state == SlotState::kQuarantined);
      slot.marker_posted = false;
      slot.link = quarantine_head_;
      quarantine_head_ = index;
      return;
    }
  }
}

void Engine::check_grace(Driver& d) {
  if (grace_head_ == kSlotNone) return;
  std::uint64_t min_epoch = std::numeric_limits<std::uint64_t>::max();
  for (const Driver& other : drivers_) {
    if (other.claimed && other.call_epoch != 0) min_epoch = std::min(min_epoch, other.call_epoch);
  }
  std::uint32_t* link = &grace_head_;
  while (*link != kSlotNone) {
    const std::uint32_t index = *link;
    Slot& slot = slots_->at(index);
    READYPORT_ASSERT(slot.state == SlotState::kQuarantined);
    if (slot.grace_epoch > min_epoch) {
      // A driver whose call began before the marker was seen may still hold a packet for the
      // key: wait for its quiescent point.
      link = &slot.link;
      continue;
    }
    // Every packet queued before the marker was dequeued (FIFO, spec F1) and every driver that
    // could hold one has finished its batch: transition kQuarantined -> kClosing.
    *link = slot.link;
    slot.link = kSlotNone;
    move_to_closing(index, d);
  }
}

// ---- Slots leaving the table ------------------------------------------------------------------

void Engine::move_to_closing(std::uint32_t index, Driver& d) {
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.state == SlotState::kRemoving || slot.state == SlotState::kQuarantined);
  READYPORT_ASSERT(!slot.op_in_flight && !slot.deferred && slot.link == kSlotNone);
  slot.state = SlotState::kClosing;
  // Out of the socket index before closesocket: the value may be reused at once (spec E5).
  if (!slot.socket_closed) slots_->socket_erase(slot.socket);
  if (d.dispose_head == kSlotNone) {
    d.dispose_head = index;
  } else {
    slots_->at(d.dispose_tail).link = index;
  }
  d.dispose_tail = index;
}

void Engine::release_slot(std::uint32_t index) {
  const ConnId id = slots_->id_of(index);
  slots_->release(index);
  if (options_.observer) options_.observer->on_slot_freed(id);
}

void Engine::dispose(Driver& d) {
  for (;;) {
    std::uint32_t index = kSlotNone;
    Socket socket = kInvalidSocket;
    Handler* handler = nullptr;
    bool close_socket = false;
    ConnId id;
    {
      Lock lock(*mutex_);
      index = d.dispose_head;
      if (index == kSlotNone) return;
      Slot& slot = slots_->at(index);
      READYPORT_ASSERT(slot.state == SlotState::kClosing);
      d.dispose_head = slot.link;
      if (d.dispose_head == kSlotNone) d.dispose_tail = kSlotNone;
      slot.link = kSlotNone;
      socket = slot.socket;
      handler = slot.handler;
      close_socket = !slot.socket_closed;
      slot.socket_closed = true;
      id = slots_->id_of(index);
    }
    // The REMOVE packet was seen (or the quarantine drained): the port will not hand out this
    // key again, so the socket can be closed and the handler told (spec E1, E2).
    if (close_socket) {
      // Reported before the call: once closed, the value may be reused at once (spec E5).
      if (options_.observer) options_.observer->on_socket_closed(id, socket);
      (void)os_.closesocket(socket);
    }
    READYPORT_ASSERT(handler != nullptr);
    handler->on_closed(id);
    Lock lock(*mutex_);
    ++stats_.connections_closed;
    // Transition kClosing -> kFree: the generation changes, so any later packet is stale.
    release_slot(index);
  }
}

// ---- Drivers and batches ------------------------------------------------------------------------

Driver* Engine::claim_driver(bool for_stop) {
  const std::size_t workers = options_.workers_max;
  Driver* chosen = nullptr;
  // Prefer a driver that a poll() left with registrations decided: they go out with this call.
  for (std::size_t i = 0; i < workers && chosen == nullptr; ++i) {
    if (!drivers_[i].claimed && drivers_[i].pending.count > 0) chosen = &drivers_[i];
  }
  if (chosen == nullptr && for_stop) chosen = &drivers_[workers];
  for (std::size_t i = 0; i < workers && chosen == nullptr; ++i) {
    if (!drivers_[i].claimed) chosen = &drivers_[i];
  }
  if (chosen == nullptr || chosen->claimed) return nullptr;
  chosen->claimed = true;
  chosen->exit_seen = false;
  ++drivers_claimed_;
  return chosen;
}

void Engine::release_driver(Driver& d) {
  Lock lock(*mutex_);
  READYPORT_ASSERT(d.claimed && d.call_epoch == 0 && d.dispose_head == kSlotNone);
  READYPORT_ASSERT(d.sent.count == 0 && d.dispatch_count == 0 && d.task_count == 0);
  d.claimed = false;
  --drivers_claimed_;
}

void Engine::take_deferred(Driver& d) {
  RegSink sink = d.pending.sink();
  while (deferred_head_ != kSlotNone && !sink.full()) {
    const std::uint32_t index = deferred_head_;
    Slot& slot = slots_->at(index);
    READYPORT_ASSERT(slot.deferred);
    deferred_head_ = slot.link;
    slot.link = kSlotNone;
    slot.deferred = false;
    if (slot.state == SlotState::kDispatching) {
      // A packet came while the slot waited here (a persistent registration stays armed; a
      // notify() posts one) and a driver runs its handler: that driver settles the slot when
      // the handler returns (finish_dispatches), with the interest it returns.
      continue;
    }
    READYPORT_ASSERT(slot.state == SlotState::kLive);
    settle(index, sink);
  }
  d.pending.commit(sink);
}

std::uint32_t Engine::call_port(Driver& d, std::uint32_t timeout_ms, std::uint32_t* received) {
  {
    Lock lock(*mutex_);
    take_deferred(d);
    READYPORT_ASSERT(d.sent.count == 0);  // the previous call's results were applied
    std::swap(d.pending, d.sent);         // swaps buffers, allocates nothing
    d.call_epoch = epoch_;
  }
  std::uint32_t error = 0;
  std::uint32_t attempts = 0;
  for (;;) {
    ++attempts;
    *received = 0;
    const std::uint32_t count = d.sent.count;
    error = os_.process_socket_notifications(port_, count, count ? d.sent.regs.data() : nullptr,
                                             timeout_ms, options_.batch_count, d.entries.data(),
                                             received);
    if (error == kErrorSuccess || error == kWaitTimeout) break;
    // Spec A3: nothing applied, nothing dequeued; the registrations stay in flight and the
    // slots stay live. Retry after a bounded backoff; in the end, fail them one by one.
    *received = 0;
    backoff(d.failures_in_row);
    ++d.failures_in_row;
    if (attempts >= options_.call_retry_max) {
      for (std::uint32_t i = 0; i < count; ++i) d.sent.regs[i].registration_result = error;
      break;
    }
  }
  if (error == kErrorSuccess || error == kWaitTimeout) d.failures_in_row = 0;
  if (error == kWaitTimeout) *received = 0;  // spec A2: registrations applied, nothing dequeued
  READYPORT_ASSERT(*received <= options_.batch_count);

  Lock lock(*mutex_);
  stats_.port_calls += attempts;
  stats_.call_failures +=
      (error == kErrorSuccess || error == kWaitTimeout) ? attempts - 1 : attempts;
  if (error == kWaitTimeout) ++stats_.timeouts;
  stats_.packets += *received;
  RegSink follow = d.pending.sink();
  apply_results(d.sent.regs.data(), d.sent.refs.data(), d.sent.count, follow);
  d.pending.commit(follow);
  d.sent.count = 0;
  classify_entries(d, *received);
  return (error == kWaitTimeout) ? kErrorSuccess : error;
}

void Engine::classify_entries(Driver& d, std::uint32_t received) {
  d.dispatch_count = 0;
  d.task_count = 0;
  d.wasted = 0;
  for (std::uint32_t i = 0; i < received; ++i) {
    const OverlappedEntry& entry = d.entries[i];
    switch (entry.completion_key) {
      case internal::kExitKey:
        // stop() released the workers: finish this batch, pass the packet on, return.
        d.exit_seen = true;
        break;
      case internal::kTaskKey:
        d.tasks[d.task_count++] = reinterpret_cast<Task*>(entry.overlapped);
        break;
      case internal::kDrainKey:
        classify_marker(d, entry.overlapped);
        break;
      case internal::kWakeKey:
        // Only ends a wait so that this driver reaches its quiescent point.
        break;
      case internal::kNotifyKey:
        classify_notify(d, entry.overlapped, entry.bytes_transferred);
        break;
      default:
        classify_socket_packet(d, entry.completion_key, entry.bytes_transferred);
        break;
    }
  }
}

void Engine::classify_socket_packet(Driver& d, std::uintptr_t key, std::uint32_t mask) {
  std::uint32_t index = kSlotNone;
  std::uint32_t generation = 0;
  if (!slots_->decode(key, &index, &generation) || slots_->at(index).generation != generation) {
    // Stale: the key names a connection that no longer exists. Never dereferenced.
    ++stats_.stale_dropped;
    ++d.wasted;
    if (options_.observer) options_.observer->on_packet_stale(key, mask);
    return;
  }
  Slot& slot = slots_->at(index);
  const ConnId id = slots_->id_of(index);
  // REMOVE can come OR-ed with other bits (spec D4): test it with &.
  const bool remove = (mask & kSockNotifyEventRemove) != 0;
  const std::uint32_t events = mask & kEventsForHandler;
  switch (slot.state) {
    case SlotState::kFree:
      READYPORT_UNREACHABLE();  // a free slot's generation is carried by no key yet
    case SlotState::kLive:
      // REMOVE is issued only after kLive -> kRemoving.
      READYPORT_ASSERT(!remove);
#if defined(READYPORT_CANARY_dispatch_after_close)
      // CANARY dispatch_after_close: packets of a connection being closed still reach its handler.
      if (false) {
#else
      if (slot.close_requested) {
#endif
        // Closing: the handler is not entered again; the pending registration's result (or the
        // deferred list) leads to the REMOVE.
        READYPORT_ASSERT(slot.op_in_flight || slot.deferred);
        ++stats_.closing_dropped;
        ++d.wasted;
        if (options_.observer) options_.observer->on_packet_dropped(id, mask);
        return;
      }
      if (!is_oneshot(slot.mode) && (events & (slot.interest | kSockNotifyEventErr)) == 0) {
        // Persistent: nothing the handler still asks for (its narrower ENABLE is not applied
        // yet, or a notify() outside the interest). One-shot packets are always delivered: the
        // packet disarmed the registration and only the handler's return re-arms it.
        ++stats_.unwanted_dropped;
        ++d.wasted;
        if (options_.observer) options_.observer->on_packet_dropped(id, mask);
        return;
      }
      // Transition kLive -> kDispatching: this driver owns the handler until it returns.
      slot.state = SlotState::kDispatching;
      slot.dispatcher = d.index;
      slot.pending_events = 0;
      d.dispatches[d.dispatch_count++] = Dispatch{index, id, slot.socket, slot.handler, events, 0};
      return;
    case SlotState::kDispatching:
      // A driver (maybe this one) runs the handler: never a second thread in it. The events
      // wait; the dispatcher runs the handler again with them.
      READYPORT_ASSERT(!remove);
      slot.pending_events |= events;
      ++stats_.pending_merged;
      if (slot.dispatcher != d.index) ++d.wasted;
      if (slot.mode == Mode::kPersistentLevel && slot.dispatcher != d.index) {
        // The condition re-queues the packet after every dequeue (spec C4): without a pause
        // this driver would spin on it until the other one returns.
        RegSink sink = d.pending.sink();
        pause(index, sink);
        d.pending.commit(sink);
      }
      return;
    case SlotState::kRemoving:
#if defined(READYPORT_CANARY_free_before_remove)
      // CANARY free_before_remove: any packet of a removing slot is taken as its REMOVE, so the
      // socket is closed and the slot freed while the real REMOVE packet is still to come.
      if (true) {
#else
      if (remove) {
#endif
        // Transition kRemoving -> kClosing: the last packet for the key (spec E3).
        if (options_.observer) options_.observer->on_remove_seen(id);
        move_to_closing(index, d);
        return;
      }
      // Not the REMOVE: dropped (spec B5, D4).
      ++stats_.closing_dropped;
      ++d.wasted;
      if (options_.observer) options_.observer->on_packet_dropped(id, mask);
      return;
    case SlotState::kQuarantined:
    case SlotState::kClosing:
      // No REMOVE was applied (quarantined) or it was already seen (closing, spec B7).
      READYPORT_ASSERT(!remove);
      ++stats_.closing_dropped;
      ++d.wasted;
      if (options_.observer) options_.observer->on_packet_dropped(id, mask);
      return;
  }
  READYPORT_UNREACHABLE();
}

void Engine::classify_notify(Driver& d, std::uintptr_t key, std::uint32_t events) {
  ++stats_.notifies;
  // notify() never posts REMOVE; the packet takes the path of a real one (stale, dispatch, merge
  // or drop), so it is serialised with the connection's packets.
  READYPORT_ASSERT((events & ~kEventsForHandler) == 0);
  classify_socket_packet(d, key, events);
}

void Engine::classify_marker(Driver& d, std::uintptr_t key) {
  std::uint32_t index = kSlotNone;
  std::uint32_t generation = 0;
  const bool decoded = slots_->decode(key, &index, &generation);
  READYPORT_ASSERT(decoded);
  Slot& slot = slots_->at(index);
  // The marker keeps its slot: only the grace period below can free it.
  READYPORT_ASSERT(slot.generation == generation && slot.state == SlotState::kQuarantined &&
                   slot.marker_posted && slot.link == kSlotNone);
  // Every packet queued before the marker has been dequeued (FIFO). A driver whose call began
  // before now may hold one still: the grace period ends when each such driver is quiescent.
  slot.grace_epoch = ++epoch_;
  slot.link = grace_head_;
  grace_head_ = index;
  for (const Driver& other : drivers_) {
    if (&other != &d && other.claimed && other.call_epoch != 0 &&
        other.call_epoch < slot.grace_epoch)
      ++d.wakes_to_post;
  }
}

void Engine::post_wakes(std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    // Best effort: a waiting driver also ends its call at wait_timeout_ms.
    (void)os_.post_queued_completion_status(port_, 0, internal::kWakeKey, 0);
  }
  Lock lock(*mutex_);
  stats_.posts += count;
}

void Engine::run_tasks(Driver& d) {
  for (std::uint32_t i = 0; i < d.task_count; ++i) d.tasks[i]->run();
}

void Engine::run_dispatches(Driver& d) {
  EngineObserver* observer = options_.observer;
  for (std::uint32_t i = 0; i < d.dispatch_count; ++i) {
    Dispatch& x = d.dispatches[i];
    if (observer) observer->on_handler_enter(x.id, x.events);
    x.result = x.handler->on_events(x.id, x.socket, x.events);
    if (observer) observer->on_handler_leave(x.id, x.result);
    // A handler returns interest bits or kInterestClose, nothing else (contract).
    READYPORT_ASSERT(x.result == kInterestClose || (x.result & ~kInterestAll) == 0);
  }
}

std::uint32_t Engine::finish_dispatches(Driver& d) {
  std::uint32_t kept = 0;
  RegSink sink = d.pending.sink();
  for (std::uint32_t i = 0; i < d.dispatch_count; ++i) {
    Dispatch& x = d.dispatches[i];
    Slot& slot = slots_->at(x.slot);
    READYPORT_ASSERT(slot.state == SlotState::kDispatching && slot.dispatcher == d.index &&
                     slot.generation == x.id.generation);
    ++stats_.notifications;
    if (x.result == kInterestClose) {
      slot.close_requested = true;
    } else {
      slot.interest = x.result;
    }
    if (slot.pending_events != 0 && !slot.close_requested) {
      // Transition kDispatching -> kDispatching: packets came while the handler ran; this
      // driver runs it again, so no other thread ever enters it.
      x.events = slot.pending_events;
      slot.pending_events = 0;
      d.dispatches[kept++] = x;
      continue;
    }
    // Transition kDispatching -> kLive. One-shot: the packet disarmed every direction (spec
    // C2), so re-arm the whole interest. Persistent: only if the interest changed.
    slot.state = SlotState::kLive;
    slot.dispatcher = internal::kDriverNone;
    slot.pending_events = 0;
    slot.rearm_needed =
        is_oneshot(slot.mode) || slot.interest != slot.interest_applied || slot.paused;
    settle(x.slot, sink);
  }
  d.pending.commit(sink);
  d.dispatch_count = kept;
  return kept;
}

void Engine::end_batch(Driver& d) {
  std::uint32_t wakes = 0;
  {
    Lock lock(*mutex_);
    // Quiescent point: this driver holds no packet now.
    d.call_epoch = 0;
    check_grace(d);
    wakes = d.wakes_to_post;
    d.wakes_to_post = 0;
  }
  if (wakes > 0) post_wakes(wakes);
  dispose(d);
  service_quarantine();
}

void Engine::spin_guard(Driver& d, std::uint32_t received) {
  if (received == 0 || d.wasted < received || options_.spin_batches_max == 0) {
    d.wasted_runs = 0;
    return;
  }
  // Only packets for connections in transition: the driver that applies the transition needs
  // to run (on a fair scheduler it does at once; in simulation it may not be picked).
  if (++d.wasted_runs < options_.spin_batches_max) return;
  d.wasted_runs = 0;
  {
    Lock lock(*mutex_);
    ++stats_.spin_sleeps;
  }
  os_.sleep_ms(options_.spin_sleep_ms);
}

void Engine::repost_exit() {
  // Pass the exit packet on to the next worker (chained). Retried until it is in the port: a
  // worker that never sees it would never return.
  for (std::uint32_t attempt = 0;; ++attempt) {
    const bool posted = os_.post_queued_completion_status(port_, 0, internal::kExitKey, 0);
    {
      Lock lock(*mutex_);
      ++stats_.posts;
    }
    if (posted) return;
    backoff(attempt);
  }
}

Engine::BatchOutcome Engine::drive_once(Driver& d, std::uint32_t timeout_ms) {
  ContextScope scope(this, &d);
  BatchOutcome outcome;
  outcome.error = call_port(d, timeout_ms, &outcome.received);
  run_tasks(d);
  {
    Lock lock(*mutex_);
    tasks_outstanding_ -= d.task_count;
    stats_.tasks_run += d.task_count;
    d.task_count = 0;
  }
  while (d.dispatch_count > 0) {
    run_dispatches(d);
    Lock lock(*mutex_);
    finish_dispatches(d);
  }
  // Disposal after the batch: no handler of this batch runs any more.
  dispose(d);
  end_batch(d);
  spin_guard(d, outcome.received);
  if (d.exit_seen) {
    repost_exit();
    outcome.end = BatchEnd::kExit;
  } else if (outcome.error != 0) {
    outcome.end = BatchEnd::kCallFailed;
  }
  return outcome;
}

Status Engine::run_worker() {
  Driver* d = nullptr;
  {
    Lock lock(*mutex_);
    if (t_context.engine == this)
      return Status(StatusCode::kFailedPrecondition, "run_worker(): called from a handler");
    if (run_state_ == RunState::kCreated || run_state_ == RunState::kStopped)
      return check_running("run_worker()");
    d = claim_driver(false);
    if (d == nullptr)
      return Status(StatusCode::kResourceExhausted,
                    "run_worker(): " + std::to_string(options_.workers_max) +
                        " drivers are running (EngineOptions::workers_max)");
  }
  for (;;) {
    const BatchOutcome outcome = drive_once(*d, options_.wait_timeout_ms);
    if (outcome.end == BatchEnd::kExit) break;
  }
  release_driver(*d);
  return Status();
}

Result<std::uint32_t> Engine::poll(std::uint32_t timeout_ms) {
  Driver* d = nullptr;
  {
    Lock lock(*mutex_);
    if (t_context.engine == this)
      return Status(StatusCode::kFailedPrecondition, "poll(): called from a handler");
    if (run_state_ == RunState::kCreated || run_state_ == RunState::kStopped)
      return check_running("poll()");
    d = claim_driver(false);
    if (d == nullptr)
      return Status(StatusCode::kResourceExhausted,
                    "poll(): " + std::to_string(options_.workers_max) +
                        " drivers are running (EngineOptions::workers_max)");
  }
  const BatchOutcome outcome = drive_once(*d, timeout_ms);
  release_driver(*d);
  switch (outcome.end) {
    case BatchEnd::kDone:
      return outcome.received;
    case BatchEnd::kExit:
      return Status(StatusCode::kFailedPrecondition, "poll(): the engine stopped");
    case BatchEnd::kCallFailed:
      return Status(StatusCode::kOsError,
                    std::string("poll(): ProcessSocketNotifications kept failing (spec A3): ") +
                        os_error_name(outcome.error),
                    outcome.error);
  }
  READYPORT_UNREACHABLE();
}

// ---- stop -------------------------------------------------------------------------------------

void Engine::close_for_stop() {
  std::uint32_t cursor = 0;
  const std::uint32_t capacity = slots_->capacity();
  while (cursor < capacity) {
    RegSink sink{stop_regs_.data(), stop_refs_.data(),
                 static_cast<std::uint32_t>(stop_regs_.size()), 0};
    {
      Lock lock(*mutex_);
      for (; cursor < capacity && !sink.full(); ++cursor) {
        Slot& slot = slots_->at(cursor);
        if (slot.state == SlotState::kLive) {
          // Idle: REMOVE now, or when its registration in flight returns.
          slot.close_requested = true;
          settle(cursor, sink);
        } else if (slot.state == SlotState::kDispatching) {
          // Its dispatcher issues the REMOVE when the handler returns.
          slot.close_requested = true;
        }
      }
    }
    if (sink.count == 0) continue;
    (void)call_registrations(stop_regs_.data(), sink.count);
    RegSink none{nullptr, nullptr, 0, 0};  // a REMOVE's result never decides a follow-up
    Lock lock(*mutex_);
    apply_results(stop_regs_.data(), stop_refs_.data(), sink.count, none);
    READYPORT_ASSERT(none.count == 0);
  }
  service_quarantine();
}

Status Engine::stop() {
  {
    Lock lock(*mutex_);
    if (t_context.engine == this)
      return Status(StatusCode::kFailedPrecondition, "stop(): called from a handler or task");
    if (Status status = check_running("stop()"); !status.ok()) return status;
    run_state_ = RunState::kStopping;
  }
  close_for_stop();
  // Drive the port until every slot is free (every REMOVE seen, every quarantine drained) and
  // every posted task ran. Workers, if any, help.
  for (;;) {
    Driver* d = nullptr;
    {
      Lock lock(*mutex_);
      if (slots_->live_count() == 0 && tasks_outstanding_ == 0) break;
      d = claim_driver(true);
      READYPORT_ASSERT(d != nullptr);  // stop()'s own driver is reserved
    }
    (void)drive_once(*d, options_.stop_poll_ms);
    release_driver(*d);
  }
  {
    Lock lock(*mutex_);
    READYPORT_ASSERT(deferred_head_ == kSlotNone && quarantine_head_ == kSlotNone &&
                     grace_head_ == kSlotNone);
    run_state_ = RunState::kExiting;
  }
  // Release the workers: each one that dequeues the exit packet posts it again and returns.
  repost_exit();
  for (;;) {
    {
      Lock lock(*mutex_);
      if (drivers_claimed_ == 0) break;
    }
    os_.sleep_ms(1);
  }
  // Nothing is registered and no driver uses the port: close it (spec F6 drops nothing).
  (void)os_.close_port(port_);
  Lock lock(*mutex_);
  run_state_ = RunState::kStopped;
  return Status();
}

}  // namespace readyport
