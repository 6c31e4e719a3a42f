// The engine's registrations (settle() is in engine_internal.hpp): pause's DISABLE and the results
// fed back to the machine (under the lock); the calls and their retries (outside it).
#include <algorithm>

#include "engine_internal.hpp"

namespace readyport {

// ---- Registration decisions (under the lock) ------------------------------------------------

void Engine::pause(std::uint32_t index, RegSink& sink) {
  // DISABLE keeps the registration (spec B4); the dispatcher's re-arm enables it again.
  note(SlotEvent::kPause, index);
  if (internal::slot_pause(slots_->at(index), sink.full())) {
    append_registration(*slots_, sink, index, kSockNotifyOpDisable);
  }
}

void Engine::apply_results(const RegSink& done, RegSink& follow_ups) {
  const SockNotifyRegistration* const regs = done.regs;  // local: the slots' stores would have
  const RegRef* const refs = done.refs;                  // them reloaded every time round
  for (std::uint32_t i = 0, count = done.count; i < count; ++i) {
    const SockNotifyRegistration& reg = regs[i];
    const RegRef ref = refs[i];
    if (reg.operation == kSockNotifyOpRemove) {
      if (reg.registration_result == 0) {
        note_remove_applied(ref);
        continue;
      }
      ++stats_.registration_failures;
      apply_remove_failed(ref);
      continue;
    }
    READYPORT_ASSERT(reg.operation == kSockNotifyOpEnable || reg.operation == kSockNotifyOpDisable);
    Slot& slot = slots_->at(ref.slot);
    // An ENABLE or DISABLE in flight keeps its slot: REMOVE waits for op_in_flight to clear.
    READYPORT_ASSERT(slot.generation == ref.generation);
    // A failed registration (spec A8) closes its connection; the others go on.
    const bool failed = reg.registration_result != 0;
    if (failed) {
      ++stats_.registration_failures;
    }
    note(SlotEvent::kOpResult, ref.slot);
    if (internal::slot_on_op_result(slot, failed) == ResultAction::kSettle) {
      settle(ref.slot, follow_ups);
    }
  }
}

void Engine::apply_remove_failed(RegRef ref) {
  // Spec B6: no REMOVE packet will come, so the slot is still ours; the port may still hold a
  // packet for the key (spec E4): kRemoving -> kQuarantined.
  Slot& slot = slots_->at(ref.slot);
  READYPORT_ASSERT(slot.generation == ref.generation);
  note(SlotEvent::kRemoveFailed, ref.slot);
  internal::slot_on_remove_failed(slot);
  slots_->list_push(quarantine_head_, ref.slot);
  ++quarantine_open_;
  ++stats_.quarantined;
  if (options_.observer) {
    options_.observer->on_quarantined(slots_->id_of(ref.slot));
  }
}

void Engine::note_remove_applied(RegRef ref) {
  // Its REMOVE packet may have been dequeued already, on another driver (spec A7): then the slot
  // moved on, or was freed and taken again (another generation), and is not touched.
  Slot& slot = slots_->at(ref.slot);
  if (slot.generation != ref.generation || slot.state() != SlotState::kRemoving) {
    return;
  }
  slot.remove_applied = true;
  slot.remove_call = stats_.port_calls;
  ++removes_awaited_;
}

// ---- Calls --------------------------------------------------------------------------------------

void Engine::backoff(std::uint32_t attempt) {
  const std::uint32_t shift = std::min<std::uint32_t>(attempt, internal::kRetryBackoffShiftMax);
  const std::uint64_t delay_ms = std::uint64_t{internal::kRetryBackoffMs} << shift;
  os_.sleep_ms(
      static_cast<std::uint32_t>(std::min<std::uint64_t>(delay_ms, internal::kRetryBackoffMaxMs)));
}

std::uint32_t Engine::call_retrying(SockNotifyRegistration* regs, std::uint32_t count, Driver* d,
                                    std::uint32_t timeout_ms, std::uint32_t* received,
                                    std::uint32_t* attempts_out) {
  // A driver's failures count across its calls; a registration-only call's, within the call.
  std::uint32_t call_failures = 0;
  std::uint32_t& failures = d != nullptr ? d->failures_in_row : call_failures;
  for (std::uint32_t attempt = 1;; ++attempt) {
    *attempts_out = attempt;
    if (received != nullptr) {
      *received = 0;
    }
    // A registration-only call neither dequeues nor waits (spec A4).
    const std::uint32_t error = os_.process_socket_notifications(
        port_, count, count ? regs : nullptr, timeout_ms, d != nullptr ? options_.batch_count : 0,
        d != nullptr ? d->entries.data() : nullptr, received);
    if (error == kErrorSuccess || error == kWaitTimeout) {
      failures = 0;
      return error;
    }
    // Spec A3: nothing applied, nothing dequeued; the registrations stay in flight and the
    // slots stay live. Retry after a bounded backoff; in the end, fail them one by one. A driver
    // backs off after its last try too, as its next call follows at once.
    if (received != nullptr) {
      *received = 0;
    }
    const bool last = attempt >= options_.call_retry_max;
    if (d != nullptr || !last) {
      backoff(failures++);
    }
    if (last) {
      for (std::uint32_t i = 0; i < count; ++i) {
        regs[i].registration_result = error;
      }
      return error;
    }
  }
}

void Engine::count_calls(std::uint32_t error, std::uint32_t attempts) {
  stats_.port_calls += attempts;
  const bool ok = error == kErrorSuccess || error == kWaitTimeout;
  stats_.call_failures += ok ? attempts - 1 : attempts;
}

std::uint32_t Engine::call_registrations(SockNotifyRegistration* regs, std::uint32_t count) {
  std::uint32_t attempts = 0;
  std::uint32_t error = call_retrying(regs, count, nullptr, 0, nullptr, &attempts);
  if (error == kWaitTimeout) {
    error = kErrorSuccess;
  }
  EngineLock lock(mutex_);
  count_calls(error, attempts);
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
      EngineLock lock(mutex_);
      apply_results(RegSink{&reg, &ref, 1, 1}, follow);
    }
    if (follow.count == 0) {
      break;
    }
    reg = next_reg;
    ref = next_ref;
  }
  service_quarantine();
}

}  // namespace readyport
