// The engine's registrations: settle() turns a slot's machine decision into an ENABLE,
// DISABLE or REMOVE in a sink (under the lock); the calls and their retries (outside it); the
// results fed back to the machine (under the lock).
#include <algorithm>

#include "engine_internal.hpp"
#include "readyport/engine.hpp"

namespace readyport {

// ---- Registration decisions (under the lock) ------------------------------------------------

void Engine::settle(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  switch (internal::slot_settle(slot, sink.full())) {
    case SettleAction::kNone:
      return;
    case SettleAction::kDefer:
      // The sink has no room: a driver takes the slot before its next call (bounded buffers).
      slot.link = deferred_head_;
      deferred_head_ = index;
      return;
    case SettleAction::kEnable:
      // The whole registration, all directions (spec C2): the filter is the full interest.
      sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), slot.interest,
                                         kSockNotifyOpEnable, internal::trigger_of(slot.mode), 0},
                  RegRef{index, slot.generation});
      return;
    case SettleAction::kRemove:
      // kLive -> kRemoving: REMOVE is the port's last operation on this key (spec B7).
      sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), kInterestNone,
                                         kSockNotifyOpRemove, 0, 0},
                  RegRef{index, slot.generation});
      return;
  }
}

void Engine::pause(std::uint32_t index, RegSink& sink) {
  Slot& slot = slots_->at(index);
  if (!internal::slot_pause(slot, sink.full())) return;
  // DISABLE keeps the registration (spec B4); the dispatcher's re-arm enables it again.
  sink.append(SockNotifyRegistration{slot.socket, slots_->key_of(index), slot.interest_applied,
                                     kSockNotifyOpDisable, internal::trigger_of(slot.mode), 0},
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
      ++stats_.registration_failures;
#if defined(READYPORT_CANARY_remove_failure_as_done)
      // CANARY remove_failure_as_done: a refused REMOVE read as "nothing is registered, nothing
      // is queued": the engine posts itself the REMOVE packet and closes on it, with no drain.
      if (os_.post_queued_completion_status(port_, kSockNotifyEventRemove,
                                            slots_->key_of(ref.slot), 0))
        continue;
#endif
      apply_remove_failed(ref);
      continue;
    }
    READYPORT_ASSERT(reg.operation == kSockNotifyOpEnable || reg.operation == kSockNotifyOpDisable);
    Slot& slot = slots_->at(ref.slot);
    // An ENABLE or DISABLE in flight keeps its slot: REMOVE waits for op_in_flight to clear.
    READYPORT_ASSERT(slot.generation == ref.generation);
    // A failed registration (spec A8) closes its connection; the others go on.
    const bool failed = reg.registration_result != 0;
    if (failed) ++stats_.registration_failures;
    if (internal::slot_on_op_result(slot, failed) == ResultAction::kSettle)
      settle(ref.slot, follow_ups);
  }
}

void Engine::apply_remove_failed(RegRef ref) {
  // Spec B6: no REMOVE packet will come, so the slot is still ours; the port may still hold a
  // packet for the key (spec E4): kRemoving -> kQuarantined.
  Slot& slot = slots_->at(ref.slot);
  READYPORT_ASSERT(slot.generation == ref.generation);
  internal::slot_on_remove_failed(slot);
  slot.link = quarantine_head_;
  quarantine_head_ = ref.slot;
  ++stats_.quarantined;
  if (options_.observer) options_.observer->on_quarantined(slots_->id_of(ref.slot));
}

// ---- Calls --------------------------------------------------------------------------------------

void Engine::backoff(std::uint32_t attempt) {
  const std::uint32_t shift = std::min<std::uint32_t>(attempt, internal::kRetryBackoffShiftMax);
  const std::uint64_t delay_ms = std::uint64_t{internal::kRetryBackoffMs} << shift;
  os_.sleep_ms(
      static_cast<std::uint32_t>(std::min<std::uint64_t>(delay_ms, internal::kRetryBackoffMaxMs)));
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
  EngineLock lock(mutex_);
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
      EngineLock lock(mutex_);
      apply_results(&reg, &ref, 1, follow);
    }
    if (follow.count == 0) break;
    reg = next_reg;
    ref = next_ref;
  }
  service_quarantine();
}

}  // namespace readyport
