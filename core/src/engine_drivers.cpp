// The engine's drivers: the threads that dequeue (run_worker, poll, stop), one batch each time
// round (the shape is described in engine.cpp), and stop().
#include <algorithm>
#include <string>

#include "engine_internal.hpp"

namespace readyport {

// ---- Drivers and batches ------------------------------------------------------------------------

Driver* Engine::claim_driver(bool for_stop, std::uint64_t thread) {
  const std::size_t workers = options_.workers_max;
  Driver* chosen = nullptr;
  // Prefer a driver that a poll() left with registrations decided: they go out with this call.
  for (std::size_t i = 0; i < workers && chosen == nullptr; ++i) {
    if (!drivers_[i].claimed && drivers_[i].pending.count > 0) {
      chosen = &drivers_[i];
    }
  }
  if (chosen == nullptr && for_stop) {
    chosen = &drivers_[workers];
  }
  for (std::size_t i = 0; i < workers && chosen == nullptr; ++i) {
    if (!drivers_[i].claimed) {
      chosen = &drivers_[i];
    }
  }
  if (chosen == nullptr || chosen->claimed) {
    return nullptr;
  }
  chosen->claimed = true;
  chosen->thread = thread;
  chosen->exit_seen = false;
  ++drivers_claimed_;
  return chosen;
}

void Engine::release_locked(Driver& d) {
  READYPORT_ASSERT(d.claimed);
  READYPORT_ASSERT(d.call_epoch == 0);
  READYPORT_ASSERT(d.dispose_head == kSlotNone);
  READYPORT_ASSERT(d.sent.count == 0);
  READYPORT_ASSERT(d.dispatch_count == 0);
  READYPORT_ASSERT(d.task_count == 0);
  d.claimed = false;
  d.thread = 0;
  --drivers_claimed_;
  batch_over(d);
}

Driver* Engine::driver_of(std::uint64_t thread) {
  if (drivers_claimed_ == 0) {
    return nullptr;  // the common case of poll()
  }
  for (Driver& d : drivers_) {
    if (d.claimed && d.thread == thread) {
      return &d;
    }
  }
  return nullptr;
}

void Engine::begin_call(Driver& d) {
  batch_over(d);
  // The deferred slots first. kDispatching: a packet came while the slot waited (a persistent
  // registration stays armed; a notify() posts one); its driver settles it on the return.
  while (deferred_head_ != kSlotNone && !d.pending.full()) {
    const std::uint32_t index = slots_->list_pop(deferred_head_);
    note(SlotEvent::kUndeferred, index);
    if (internal::slot_on_undeferred(slots_->at(index))) {
      settle(index, d.pending);
    }
  }
  READYPORT_ASSERT(d.sent.count == 0);    // the previous call's results were applied
  std::swap<RegSink>(d.pending, d.sent);  // swaps the sinks' buffers, allocates nothing
  d.call_epoch = epoch_;
}

std::uint32_t Engine::call_port(Driver& d, std::uint32_t timeout_ms, std::uint32_t* received,
                                bool begun) {
  if (!begun) {
    EngineLock lock(mutex_);
    begin_call(d);
  }
  std::uint32_t attempts = 0;
  const std::uint32_t error =
      call_retrying(d.sent.regs, d.sent.count, &d, timeout_ms, received, &attempts);
  if (error == kWaitTimeout) {
    *received = 0;  // spec A2: registrations applied, nothing dequeued
  }
  READYPORT_ASSERT(*received <= options_.batch_count);

  EngineLock lock(mutex_);
  count_calls(error, attempts);
  if (error == kWaitTimeout) {
    ++stats_.timeouts;
  }
  stats_.packets += *received;
  apply_results(d.sent, d.pending);
  d.sent.count = 0;
  // Idle calls in a row with REMOVEs awaited: any of them may be lost (engine.hpp). The probes
  // are posted at this batch's end (quiesce: whoever adds to the quarantine services it).
  d.idle_calls = error == kWaitTimeout ? d.idle_calls + 1 : 0;
  if (d.idle_calls >= internal::kIdleCallsToProbe && removes_awaited_ > 0) {
    probe_awaited(d, 0);
  } else if (removes_awaited_ > 0 && ++calls_since_scan_ >= internal::kAwaitedScanCalls) {
    // A busy port: only the REMOVEs awaited for long.
    calls_since_scan_ = 0;
    probe_awaited(d, internal::kAwaitedCallsToProbe);
  }
  classify_entries(d, *received);
  spin_check(d, *received);
  return (error == kWaitTimeout) ? kErrorSuccess : error;
}

void Engine::batch_over(Driver& d) {
  if (d.batch_full) {
    d.batch_full = false;
    --full_batches_;
  }
}

void Engine::classify_entries(Driver& d, std::uint32_t received) {
  if (received == options_.batch_count) {
    d.batch_full = true;
    ++full_batches_;
  }
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
        // notify() never posts REMOVE; the packet takes the path of a real one (stale, dispatch,
        // merge or drop), so it is serialised with the connection's packets.
        ++stats_.notifies;
        READYPORT_ASSERT((entry.bytes_transferred & ~internal::kEventsForHandler) == 0);
        classify_socket_packet(d, entry.overlapped, entry.bytes_transferred);
        break;
      default:
        classify_socket_packet(d, entry.completion_key, entry.bytes_transferred);
        break;
    }
  }
}

READYPORT_FORCE_INLINE void Engine::classify_socket_packet(Driver& d, std::uintptr_t key,
                                                           std::uint32_t mask) {
  const std::uint32_t index = slots_->find_key(key);
  if (index == kSlotNone) {
    // Stale: the key names a connection that no longer exists. Never dereferenced.
    ++stats_.stale_dropped;
    ++d.wasted;
    if (options_.observer) {
      options_.observer->on_packet_stale(key, mask);
    }
    return;
  }
  Slot& slot = slots_->at(index);
  const ConnId id = slots_->id_of(index);
  note((mask & kSockNotifyEventRemove) != 0 ? SlotEvent::kRemovePacket : SlotEvent::kPacket, index);
  const PacketAction action = internal::slot_on_packet(slot, mask, d.index);
  switch (action) {
    case PacketAction::kDispatch: {
      // This driver owns the handler until it returns (run_dispatches() sets the result). Field
      // by field: a Dispatch built aside and copied stalled on store forwarding.
      Dispatch& x = d.dispatches[d.dispatch_count++];
      x.id = id;
      x.socket = slot.socket;
      x.handler = slot.handler;
      x.events = mask & internal::kEventsForHandler;
      return;
    }
    case PacketAction::kMergeOwn:
    case PacketAction::kMergeForeign:
    case PacketAction::kMergePause:
      ++stats_.pending_merged;
      // Merged into another driver's dispatch: wasted here, and maybe paused (spec C4).
      if (action == PacketAction::kMergeOwn) {
        return;
      }
      ++d.wasted;
      if (action == PacketAction::kMergePause) {
        pause(index, d.pending);
      }
      return;
    case PacketAction::kRemoveSeen:
      // The last packet for the key (spec E3): kRemoving -> kClosing.
      if (options_.observer) {
        options_.observer->on_remove_seen(id);
      }
      if (slot.remove_applied) {
        --removes_awaited_;
      }
      move_to_closing(index, d);
      return;
    case PacketAction::kProbeAnswered:
      // A probed REMOVE came after all: the drain under way ends the slot.
      --probes_out_;
      if (options_.observer) {
        options_.observer->on_remove_seen(id);
      }
      return;
    case PacketAction::kDropClosing:
      ++stats_.closing_dropped;
      break;
    case PacketAction::kDropUnwanted:
      ++stats_.unwanted_dropped;
      break;
  }
  ++d.wasted;
  if (options_.observer) {
    options_.observer->on_packet_dropped(id, mask);
  }
}

void Engine::run_dispatches(Driver& d) {
  EngineObserver* observer = options_.observer;
  for (std::uint32_t i = 0, count = d.dispatch_count; i < count; ++i) {
    Dispatch& x = d.dispatches[i];
    if (observer) {
      observer->on_handler_enter(x.id, x.events);
    }
    x.result = boundary_ == nullptr
                   ? x.handler->on_events(x.id, x.socket, x.events)
                   : boundary_->handler_events(*x.handler, x.id, x.socket, x.events);
    if (observer) {
      observer->on_handler_leave(x.id, x.result);
    }
    // A handler returns interest bits or kInterestClose, nothing else (contract).
    READYPORT_ASSERT(x.result == kInterestClose || (x.result & ~kInterestAll) == 0);
  }
}

void Engine::finish_dispatches(Driver& d) {
  std::uint32_t kept = 0;
  stats_.notifications += d.dispatch_count;
  for (std::uint32_t i = 0, count = d.dispatch_count; i < count; ++i) {
    Dispatch& x = d.dispatches[i];
    Slot& slot = slots_->at(x.id.slot);
    READYPORT_ASSERT(slot.dispatcher == d.index);
    READYPORT_ASSERT(slot.generation == x.id.generation);
    note(SlotEvent::kHandlerReturned, x.id.slot);
    if (internal::slot_on_handler_returned(slot, x.result, &x.events) == ReturnAction::kRunAgain) {
      // Packets came while the handler ran: this driver runs it again with them, so no other
      // thread ever enters it.
      d.dispatches[kept++] = x;
      continue;
    }
    settle(x.id.slot, d.pending);
  }
  d.dispatch_count = kept;
}

void Engine::spin_check(Driver& d, std::uint32_t received) {
  d.spin_sleep_due = false;
  if (received == 0 || d.wasted < received) {
    d.wasted_runs = 0;
    return;
  }
  // Only packets for connections in transition: the driver that applies the transition needs
  // to run (on a fair scheduler it does at once; in simulation it may not be picked).
  if (++d.wasted_runs < internal::kSpinBatchesMax) {
    return;
  }
  d.wasted_runs = 0;
  d.spin_sleep_due = true;
  ++stats_.spin_sleeps;
}

void Engine::repost_exit() {
  // Pass the exit packet on to the next worker (chained). Retried until it is in the port: a
  // worker that never sees it would never return.
  for (std::uint32_t attempt = 0;; ++attempt) {
    const bool posted = os_.post_queued_completion_status(port_, 0, internal::kExitKey, 0);
    {
      EngineLock lock(mutex_);
      ++stats_.posts;
    }
    if (posted) {
      return;
    }
    backoff(attempt);
  }
}

void Engine::run_tasks(Driver& d) {
  for (std::uint32_t i = 0; i < d.task_count; ++i) {
    if (boundary_ == nullptr) {
      d.tasks[i]->run();
    } else {
      boundary_->task_run(*d.tasks[i]);
    }
  }
  EngineLock lock(mutex_);
  tasks_outstanding_ -= d.task_count;
  stats_.tasks_run += d.task_count;
  d.task_count = 0;
}

Engine::QuietPoint Engine::quiesce(Driver& d, bool release) {
  d.call_epoch = 0;  // quiescent point: this driver holds no packet now
  if (grace_head_ != kSlotNone) {
    check_grace(d);
  }
  QuietPoint quiet;
  quiet.wakes = d.wakes_to_post;
  d.wakes_to_post = 0;
  // Whoever adds to the quarantine services it (this driver, issue_direct, close_for_stop).
  quiet.quarantined = quarantine_head_ != kSlotNone;
  // Released here only if nothing after this section uses the driver (the slots whose grace
  // period ended, to dispose) or the port (stop() closes it once every driver is released).
  quiet.released = release && d.dispose_head == kSlotNone && quiet.wakes == 0 && !quiet.quarantined;
  if (quiet.released) {
    release_locked(d);
  }
  return quiet;
}

Engine::BatchOutcome Engine::drive_once(Driver& d, std::uint32_t timeout_ms, bool begun,
                                        bool release) {
  BatchOutcome outcome;
  outcome.error = call_port(d, timeout_ms, &outcome.received, begun);
  // Read without the lock: this driver's thread's own state, read before the last section,
  // which may release the driver; not with the exit packet, passed on first (stop() waits).
  const bool spin = d.spin_sleep_due;
  const bool exit_seen = d.exit_seen;
  if (d.task_count > 0) {
    run_tasks(d);
  }
  QuietPoint quiet;
  bool quiesced = false;
  while (d.dispatch_count > 0) {
    run_dispatches(d);
    EngineLock lock(mutex_);
    finish_dispatches(d);
    // Nothing to dispose: the quiescent point joins the batch's last section.
    if (d.dispatch_count == 0 && d.dispose_head == kSlotNone) {
      quiet = quiesce(d, release && !exit_seen);
      quiesced = true;
      break;  // d is not read again once released
    }
  }
  if (!quiesced) {
    // Disposal after the batch: no handler of this batch runs any more.
    if (d.dispose_head != kSlotNone) {
      dispose(d);
    }
    EngineLock lock(mutex_);
    quiet = quiesce(d, release && !exit_seen);
  }
  if (quiet.wakes > 0) {
    // Best effort: a waiting driver also ends its call at wait_timeout_ms.
    for (std::uint32_t i = 0; i < quiet.wakes; ++i) {
      (void)os_.post_queued_completion_status(port_, 0, internal::kWakeKey, 0);
    }
    EngineLock lock(mutex_);
    stats_.posts += quiet.wakes;
  }
  // Released: another thread may have claimed the driver already.
  if (!quiet.released && d.dispose_head != kSlotNone) {
    dispose(d);  // grace periods that ended
  }
  if (quiet.quarantined) {
    service_quarantine();
  }
  if (spin) {
    os_.sleep_ms(internal::kSpinSleepMs);  // let the transition's driver run
  }
  if (exit_seen) {
    repost_exit();
    outcome.end = BatchEnd::kExit;
  } else if (outcome.error != 0) {
    outcome.end = BatchEnd::kCallFailed;
  }
  if ((release || exit_seen) && !quiet.released) {
    EngineLock lock(mutex_);
    release_locked(d);
  }
  return outcome;
}

Result<Driver*> Engine::enter_driver(const char* call) {
  const std::uint64_t thread = os_.thread_id();
  EngineLock lock(mutex_);
  if (driver_of(thread) != nullptr) {
    return Status(StatusCode::kFailedPrecondition, std::string(call) + ": called from a handler");
  }
  if (run_state_ == RunState::kCreated || run_state_ == RunState::kStopped) {
    return check_running(call);
  }
  Driver* d = claim_driver(false, thread);
  if (d == nullptr) {
    return Status(StatusCode::kResourceExhausted,
                  std::string(call) + ": " + std::to_string(options_.workers_max) +
                      " drivers are running (EngineOptions::workers_max)");
  }
  begin_call(*d);  // the claim's section begins the first call too
  return d;
}

Status Engine::run_worker() {
  return across_boundary<Status>(boundary_, EngineCrossing(EngineCall::kRunWorker),
                                 [&] { return run_worker_inner(); });
}

Result<std::uint32_t> Engine::poll(std::uint32_t timeout_ms) {
  return across_boundary<Result<std::uint32_t>>(boundary_, EngineCrossing(EngineCall::kPoll),
                                                [&] { return poll_inner(timeout_ms); });
}

Status Engine::stop() {
  return across_boundary<Status>(boundary_, EngineCrossing(EngineCall::kStop),
                                 [&] { return stop_inner(); });
}

Status Engine::run_worker_inner() {
  Result<Driver*> d = enter_driver("run_worker()");
  if (!d.ok()) {
    return d.status();
  }
  for (bool begun = true;
       drive_once(*d.value(), options_.wait_timeout_ms, begun, false).end != BatchEnd::kExit;) {
    begun = false;
  }
  return Status();  // the exit batch released the driver
}

Result<std::uint32_t> Engine::poll_inner(std::uint32_t timeout_ms) {
  Result<Driver*> d = enter_driver("poll()");
  if (!d.ok()) {
    return d.status();
  }
  const BatchOutcome outcome = drive_once(*d.value(), timeout_ms, true, true);
  switch (outcome.end) {
    case BatchEnd::kDone:
      return outcome.received;
    case BatchEnd::kExit:
      return Status(StatusCode::kFailedPrecondition, "poll(): the engine stopped");
    case BatchEnd::kCallFailed:
      return os_failure("poll(): ProcessSocketNotifications kept failing (spec A3): ",
                        outcome.error);
  }
  READYPORT_UNREACHABLE();
}

// ---- stop -------------------------------------------------------------------------------------

void Engine::close_for_stop() {
  // stop()'s own driver is idle until stop() drives the port: its buffer holds these REMOVEs.
  internal::RegBuffer& sink = drivers_.back().sent;
  std::uint32_t cursor = 0;
  const std::uint32_t capacity = options_.connections_max;  // slots_->capacity(), unlocked
  while (cursor < capacity) {
    {
      EngineLock lock(mutex_);
      READYPORT_ASSERT(sink.count == 0);
      for (; cursor < capacity && !sink.full(); ++cursor) {
        // kLive: REMOVE now, or when its registration in flight returns; kDispatching: its
        // dispatcher issues the REMOVE when the handler returns.
        Slot& slot = slots_->at(cursor);
        if (slot.state() != SlotState::kLive && slot.state() != SlotState::kDispatching) {
          continue;
        }
        note(SlotEvent::kClose, cursor);
        if (internal::slot_on_close(slot) == CloseAction::kSettle) {
          settle(cursor, sink);
        }
      }
    }
    if (sink.count == 0) {
      continue;
    }
    (void)call_registrations(sink.regs, sink.count);
    RegSink none{nullptr, nullptr, 0, 0};  // a REMOVE's result never decides a follow-up
    EngineLock lock(mutex_);
    apply_results(sink, none);
    READYPORT_ASSERT(none.count == 0);
    sink.count = 0;
  }
  service_quarantine();
}

Status Engine::stop_inner() {
  const std::uint64_t thread = os_.thread_id();
  {
    EngineLock lock(mutex_);
    if (driver_of(thread) != nullptr) {
      return Status(StatusCode::kFailedPrecondition, "stop(): called from a handler or task");
    }
    if (Status status = check_running("stop()"); !status.ok()) {
      return status;
    }
    run_state_ = RunState::kStopping;
    stop_sweeping_ = true;  // until the drive below begins (engine_coverage.hpp)
  }
  close_for_stop();
  // Drive the port until every slot is free (every REMOVE seen, every quarantine drained) and
  // every posted task ran. Workers, if any, help.
  for (;;) {
    Driver* d = nullptr;
    {
      EngineLock lock(mutex_);
      stop_sweeping_ = false;
      if (slots_->live_count() == 0 && tasks_outstanding_ == 0) {
        break;
      }
      d = claim_driver(true, thread);
      READYPORT_ASSERT(d != nullptr);  // stop()'s own driver is reserved
      begin_call(*d);
    }
    (void)drive_once(*d, internal::kStopPollMs, true, true);
  }
  {
    EngineLock lock(mutex_);
    READYPORT_ASSERT(deferred_head_ == kSlotNone);
    READYPORT_ASSERT(probes_out_ == 0 && quarantine_open_ == 0);
    READYPORT_ASSERT(quarantine_head_ == kSlotNone);
    READYPORT_ASSERT(grace_head_ == kSlotNone);
    run_state_ = RunState::kExiting;
  }
  // Release the workers: each one that dequeues the exit packet posts it again and returns.
  repost_exit();
  for (;;) {
    {
      EngineLock lock(mutex_);
      // None claimed: none may be claimed any more (poll() on another thread) as the port closes.
      if (drivers_claimed_ == 0) {
        run_state_ = RunState::kStopped;
      }
      if (run_state_ == RunState::kStopped) {
        break;
      }
    }
    os_.sleep_ms(1);
  }
  // Nothing is registered and no driver uses the port or can claim one: close it (spec F6).
  (void)os_.close_port(port_);
  if (boundary_ != nullptr) {
    boundary_->engine_stopped(stats());
  }
  return Status();
}

}  // namespace readyport
