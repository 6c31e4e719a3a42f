// The engine's API: construction, start, add, close, notify, post, stats. The drivers are in
// engine_drivers.cpp, registrations in engine_registrations.cpp, the quarantine and disposal in
// engine_quarantine.cpp; every slot's state change in the slot machine (slot_machine*.cpp/hpp).
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
#include <iterator>
#include <string>

#include "engine_internal.hpp"

namespace readyport {

namespace {

// Indexed by Mode.
constexpr const char* kModeNames[] = {"oneshot_level", "persistent_level", "persistent_edge",
                                      "oneshot_edge"};
static_assert(std::size(kModeNames) == std::size(internal::kModeTriggers));

// The options, with the boundary's observer when the embedder gave none (engine_boundary.hpp).
EngineOptions observed(EngineOptions options, EngineBoundary* boundary) {
  if (options.observer == nullptr && boundary != nullptr) {
    options.observer = boundary->observer();
  }
  return options;
}

Status validate(const EngineOptions& o) {
  if (o.connections_max < 1 || o.connections_max > (1u << 28)) {
    return Status(StatusCode::kInvalidArgument, "connections_max must be in [1, 2^28]");
  }
  if (o.batch_count < 1 || o.batch_count > 4096) {
    return Status(StatusCode::kInvalidArgument, "batch_count must be in [1, 4096]");
  }
  if (o.workers_max < 1 || o.workers_max > 1024) {
    return Status(StatusCode::kInvalidArgument, "workers_max must be in [1, 1024]");
  }
  if (o.tasks_max < 1) {
    return Status(StatusCode::kInvalidArgument, "tasks_max must be >= 1");
  }
  if (o.call_retry_max < 1) {
    return Status(StatusCode::kInvalidArgument, "call_retry_max must be >= 1");
  }
  return Status();
}

std::string conn_text(ConnId id) {
  return "connection {slot " + std::to_string(id.slot) + ", generation " +
         std::to_string(id.generation) + "}";
}

Status no_connection(const char* call, ConnId id) {
  return Status(StatusCode::kNotFound,
                std::string(call) + ": no " + conn_text(id) + " (never added, or already closed)");
}

// Why the port refused add()'s registration, as a Status (the codes are undocumented, spec A8;
// WSAEINVAL is what a socket registered with another port gets, B8; WSAENOTSOCK, B9).
Status add_refused(Socket socket, std::uint32_t code, bool call_failed) {
  if (call_failed) {
    return os_failure("add(): ProcessSocketNotifications kept failing (spec A3): ", code);
  }
  if (code == kWsaEnotsock) {
    return Status(StatusCode::kInvalidArgument,
                  "add(): " + std::to_string(socket) + " is not a socket (WSAENOTSOCK)", code);
  }
  if (code == kWsaEinval) {
    return Status(StatusCode::kAlreadyExists,
                  "add(): the port refused socket " + std::to_string(socket) +
                      " with WSAEINVAL: it is probably registered with another completion port "
                      "(spec B8)",
                  code);
  }
  return os_failure("add(): the registration failed: ", code);
}

}  // namespace

Status internal::os_failure(const std::string& what, std::uint32_t error) {
  return Status(StatusCode::kOsError, what + os_error_name(error), error);
}

const char* mode_name(Mode mode) {
  const auto i = static_cast<std::size_t>(mode);
  return i < std::size(kModeNames) ? kModeNames[i] : "unknown";
}

// ---- Construction, start, stats -----------------------------------------------------------------

Engine::Engine(EngineOs& os, EngineOptions options)
    : os_(os),
      options_(observed(options, os.engine_boundary())),
      boundary_(os.engine_boundary()),
      mutex_(os.mutex_create()),
      deferred_head_(kSlotNone),
      quarantine_head_(kSlotNone),
      grace_head_(kSlotNone) {
  if (!validate(options_).ok()) {
    return;  // start() reports it; nothing to allocate
  }
  slots_ = std::make_unique<internal::SlotTable>(options_.connections_max);
  drivers_.resize(std::size_t{options_.workers_max} + 1);  // the last one is stop()'s
  for (std::size_t i = 0; i < drivers_.size(); ++i) {
    internal::Driver& d = drivers_[i];
    d.index = static_cast<std::uint16_t>(i);
    d.pending.allocate(options_.batch_count);
    d.sent.allocate(options_.batch_count);
    d.entries.resize(options_.batch_count);
    d.dispatches.resize(options_.batch_count);
    d.tasks.resize(options_.batch_count);
  }
}

Engine::~Engine() {
  bool running = false;
  {
    EngineLock lock(mutex_);
    running = run_state_ == RunState::kRunning;
  }
  if (running) {
    (void)stop();
  }
  EngineLock lock(mutex_);
  // Destroying an engine while stop() runs elsewhere, or from a driver, is a broken contract.
  READYPORT_ASSERT(run_state_ == RunState::kCreated || run_state_ == RunState::kStopped);
  READYPORT_ASSERT(drivers_claimed_ == 0);
}

Status Engine::start() {
  {
    EngineLock lock(mutex_);
    if (run_state_ != RunState::kCreated) {
      return Status(StatusCode::kFailedPrecondition, "start(): the engine was already started");
    }
  }
  if (Status status = validate(options_); !status.ok()) {
    return status;
  }
  const Port port = os_.create_io_completion_port(0);
  if (port == kInvalidPort) {
    return os_failure("start(): CreateIoCompletionPort failed: ", os_.last_error());
  }
  EngineLock lock(mutex_);
  port_ = port;
  run_state_ = RunState::kRunning;
  return Status();
}

EngineStats Engine::stats() const {
  EngineLock lock(mutex_);
  EngineStats copy = stats_;
  copy.connections_live = slots_ ? slots_->live_count() : 0;
  return copy;
}

std::uint16_t Engine::contexts_locked() const {
  const auto bit = [](EngineContext c) {
    return static_cast<std::uint16_t>(1u << static_cast<std::uint32_t>(c));
  };
  std::uint16_t bits = 0;
  if (run_state_ == RunState::kRunning) {
    bits |= bit(EngineContext::kRunning);
  } else {
    // Slots change only while running or stopping (stop() frees every one before kExiting).
    READYPORT_ASSERT(run_state_ == RunState::kStopping);
    bits |= bit(stop_sweeping_ ? EngineContext::kStopSweep : EngineContext::kStopDrain);
  }
  if (probes_out_ > 0) {
    bits |= bit(EngineContext::kProbeOut);
  }
  if (deferred_head_ != kSlotNone) {
    bits |= bit(EngineContext::kDeferredWaiting);
  }
  if (quarantine_open_ > 0) {
    bits |= bit(EngineContext::kQuarantineOpen);
  }
  if (full_batches_ > 0) {
    bits |= bit(EngineContext::kBatchFull);
  }
  if (drivers_claimed_ == 0) {
    bits |= bit(EngineContext::kNoDriver);
  }
  return bits;
}

Status Engine::check_running(const char* call) const {
  if (run_state_ == RunState::kRunning) {
    return Status();
  }
  // Indexed by RunState (kRunning answered above).
  constexpr const char* kWhy[] = {"the engine is not started (call start() first)", "",
                                  "the engine is stopping", "the engine is stopping",
                                  "the engine was stopped"};
  const auto i = static_cast<std::size_t>(run_state_);
  READYPORT_ASSERT(i < sizeof(kWhy) / sizeof(kWhy[0]));
  return Status(StatusCode::kFailedPrecondition, std::string(call) + ": " + kWhy[i]);
}

// ---- add, close, notify, post -------------------------------------------------------------------

Status Engine::reserve_slot(Socket socket, Interest interest, Mode mode, Handler& handler,
                            RegSink& first) {
  EngineLock lock(mutex_);
  if (Status status = check_running("add()"); !status.ok()) {
    return status;
  }
  if (const std::uint32_t other = slots_->socket_find(socket); other != kSlotNone) {
    return Status(StatusCode::kAlreadyExists, "add(): socket " + std::to_string(socket) +
                                                  " is already added, as " +
                                                  conn_text(slots_->id_of(other)));
  }
  const std::uint32_t index = slots_->acquire();
  if (index == kSlotNone) {
    return Status(StatusCode::kResourceExhausted,
                  "add(): all " + std::to_string(options_.connections_max) +
                      " connection slots are in use (EngineOptions::connections_max)");
  }
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.link == kSlotNone);
  note(SlotEvent::kAdd, index);
  internal::slot_on_add(slot, mode, interest);  // kFree -> kLive, its first ENABLE in flight
  slot.socket = socket;
  slot.handler = &handler;
  slots_->socket_insert(socket, index);
  append_registration(*slots_, first, index, kSockNotifyOpEnable);
  if (options_.observer) {
    options_.observer->on_slot_acquired(slots_->id_of(index), socket);
  }
  return Status();
}

Result<ConnId> Engine::add(Socket socket, Interest interest, Mode mode, Handler& handler) {
  EngineCrossing call(EngineCall::kAdd);
  call.socket = socket;
  call.interest = interest;
  call.mode = mode;
  call.handler = &handler;
  return across_boundary<Result<ConnId>>(
      boundary_, call, [&] { return add_inner(socket, interest, mode, handler); });
}

Status Engine::close(ConnId id) {
  EngineCrossing call(EngineCall::kClose);
  call.id = id;
  return across_boundary<Status>(boundary_, call, [&] { return close_inner(id); });
}

Status Engine::notify(ConnId id, std::uint32_t events) {
  EngineCrossing call(EngineCall::kNotify);
  call.id = id;
  call.events = events;
  return across_boundary<Status>(boundary_, call, [&] { return notify_inner(id, events); });
}

Status Engine::post(Task& task) {
  EngineCrossing call(EngineCall::kPost);
  call.task = &task;
  return across_boundary<Status>(boundary_, call, [&] { return post_inner(task); });
}

Result<ConnId> Engine::add_inner(Socket socket, Interest interest, Mode mode, Handler& handler) {
  if (socket == kInvalidSocket) {
    return Status(StatusCode::kInvalidArgument, "add(): INVALID_SOCKET is not a socket");
  }
  if ((interest & ~kInterestAll) != 0) {
    return Status(StatusCode::kInvalidArgument, "add(): interest " + std::to_string(interest) +
                                                    " has bits outside IN|OUT|HANGUP (0x07)");
  }
  if (static_cast<std::uint8_t>(mode) > static_cast<std::uint8_t>(Mode::kOneshotEdge)) {
    return Status(StatusCode::kInvalidArgument, "add(): unknown mode");
  }
  SockNotifyRegistration reg;
  RegRef ref;
  RegSink first{&reg, &ref, 1, 0};
  if (Status status = reserve_slot(socket, interest, mode, handler, first); !status.ok()) {
    return status;
  }

  const std::uint32_t call_error = call_registrations(&reg, 1);
  SockNotifyRegistration follow_reg;
  RegRef follow_ref;
  RegSink follow{&follow_reg, &follow_ref, 1, 0};
  ConnId id;
  {
    EngineLock lock(mutex_);
    Slot& slot = slots_->at(ref.slot);
    // op_in_flight kept the slot ours: no REMOVE can be decided while it is set.
    READYPORT_ASSERT(slot.generation == ref.generation);
    const bool refused = reg.registration_result != 0;
    note(SlotEvent::kAddResult, ref.slot);
    const ResultAction next = internal::slot_on_add_result(slot, refused);
    if (refused) {
      // Not applied (spec A3/A8): no registration, so no packet can carry this key; the slot
      // went back to kFree at once and the socket stays the caller's.
      if (call_error == 0) {
        ++stats_.registration_failures;
      }
      slots_->socket_erase(socket);
      release_slot(ref.slot);
      return add_refused(socket, reg.registration_result, call_error != 0);
    }
    ++stats_.connections_added;
    id = slots_->id_of(ref.slot);
    // A packet may already have been dispatched (spec A7); then its driver settles the slot.
    if (next == ResultAction::kSettle) {
      settle(ref.slot, follow);
    }
  }
  if (follow.count > 0) {
    issue_direct(follow_reg, follow_ref);
  }
  return id;
}

Status Engine::close_inner(ConnId id) {
  SockNotifyRegistration reg;
  RegRef ref;
  RegSink direct{&reg, &ref, 1, 0};
  const std::uint64_t thread = os_.thread_id();
  {
    EngineLock lock(mutex_);
    if (run_state_ == RunState::kCreated || run_state_ == RunState::kStopped) {
      return check_running("close()");
    }
    const std::uint32_t index = slots_->find(id);
    // Ended: on_closed runs or ran (the slot is released after it returned).
    if (index == kSlotNone || slots_->at(index).closed_told) {
      return no_connection("close()", id);
    }
    Slot& slot = slots_->at(index);
    note(SlotEvent::kClose, index);
    // Closing already (idempotent), or a driver or a registration result decides the REMOVE.
    // Else from a handler or task the REMOVE rides the driver's next port call; else a direct one.
    if (internal::slot_on_close(slot) == CloseAction::kSettle) {
      Driver* driver = driver_of(thread);
      settle(index, driver != nullptr ? driver->pending : direct);
    }
  }
  if (direct.count > 0) {
    issue_direct(reg, ref);
  }
  return Status();
}

Status Engine::notify_inner(ConnId id, std::uint32_t events) {
  if ((events & ~internal::kEventsForHandler) != 0) {
    return Status(StatusCode::kInvalidArgument, "notify(): events " + std::to_string(events) +
                                                    " has bits outside IN|OUT|HANGUP|ERR (0x47)");
  }
  std::uintptr_t key = 0;
  {
    EngineLock lock(mutex_);
    if (Status status = check_running("notify()"); !status.ok()) {
      return status;
    }
    const std::uint32_t index = slots_->find(id);
    if (index == kSlotNone || slots_->at(index).closed_told) {
      return no_connection("notify()", id);
    }
    key = slots_->key_of(index);
  }
  // The packet names the slot by key and generation: if the connection is gone when it is
  // dequeued, it is stale like any other packet.
  return post_packet("notify(): ", internal::kNotifyKey, key, events);
}

Status Engine::post_inner(Task& task) {
  {
    EngineLock lock(mutex_);
    if (Status status = check_running("post()"); !status.ok()) {
      return status;
    }
    if (tasks_outstanding_ >= options_.tasks_max) {
      return Status(StatusCode::kResourceExhausted,
                    "post(): " + std::to_string(options_.tasks_max) +
                        " tasks are outstanding (EngineOptions::tasks_max)");
    }
    ++tasks_outstanding_;
  }
  return post_packet("post(): ", internal::kTaskKey, reinterpret_cast<std::uintptr_t>(&task), 0);
}

Status Engine::post_packet(const char* call, std::uintptr_t key, std::uintptr_t overlapped,
                           std::uint32_t bytes) {
  const bool posted = os_.post_queued_completion_status(port_, bytes, key, overlapped);
  const std::uint32_t error = posted ? 0 : os_.last_error();
  EngineLock lock(mutex_);
  ++stats_.posts;
  if (posted) {
    return Status();
  }
  if (key == internal::kTaskKey) {
    --tasks_outstanding_;  // a task not in the port is not outstanding
  }
  return os_failure(std::string(call) + "PostQueuedCompletionStatus failed: ", error);
}

}  // namespace readyport
