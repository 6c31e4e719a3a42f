// The engine's quarantine (spec E4) and disposal: slots leaving the table.
#include <algorithm>
#include <limits>

#include "engine_internal.hpp"

namespace readyport {

// ---- Quarantine (spec E4) -----------------------------------------------------------------------

void Engine::service_quarantine() {
  for (;;) {
    std::uint32_t index = kSlotNone;
    Socket socket = kInvalidSocket;
    std::uintptr_t key = 0;
    ConnId id;
    {
      EngineLock lock(mutex_);
      index = slots_->list_pop(quarantine_head_);
      if (index == kSlotNone) {
        return;
      }
      Slot& slot = slots_->at(index);
      // Close the socket first: closesocket deregisters it (spec E2), so no new packet can be
      // queued for the key; the marker posted after it is then behind every packet that was. A
      // probe's socket stays open: its REMOVE was applied, so nothing follows it (spec B5).
      socket = slot.socket;
      key = slots_->key_of(index);
      id = slots_->id_of(index);
      if (socket != kInvalidSocket && !slot.probe) {
        slot.socket = kInvalidSocket;
        close_socket_locked(id, socket);
      }
      note(SlotEvent::kMarkerPosting, index);
      internal::slot_on_marker_posting(slot);  // before the post: it may be dequeued at once
    }
    const bool posted = os_.post_queued_completion_status(port_, 0, internal::kDrainKey, key);
    EngineLock lock(mutex_);
    ++stats_.posts;
    if (!posted) {
      // No marker in the port, so the slot is still ours: back on the list, tried again at the
      // next quiescent point.
      Slot& slot = slots_->at(index);
      READYPORT_ASSERT(slot.generation == id.generation);
      note(SlotEvent::kMarkerPostFailed, index);
      internal::slot_on_marker_post_failed(slot);
      slots_->list_push(quarantine_head_, index);
      return;
    }
  }
}

void Engine::classify_marker(Driver& d, std::uintptr_t key) {
  const std::uint32_t index = slots_->find_key(key);
  // The marker keeps its slot: only the grace period below can free it.
  READYPORT_ASSERT(index != kSlotNone);
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.link == kSlotNone);
  note(SlotEvent::kMarkerSeen, index);
  internal::slot_on_marker_seen(slot);  // kDraining -> kGrace
  // Every packet queued before the marker has been dequeued (FIFO). A driver whose call began
  // before now may hold one still: the grace period ends when each such driver is quiescent.
  slot.grace_epoch = ++epoch_;
  slots_->list_push(grace_head_, index);
  for (const Driver& other : drivers_) {
    if (&other != &d && other.claimed && other.call_epoch != 0 &&
        other.call_epoch < slot.grace_epoch) {
      ++d.wakes_to_post;
    }
  }
}

void Engine::check_grace(Driver& d) {
  std::uint64_t min_epoch = std::numeric_limits<std::uint64_t>::max();
  for (const Driver& other : drivers_) {
    if (other.claimed && other.call_epoch != 0) {
      min_epoch = std::min(min_epoch, other.call_epoch);
    }
  }
  std::uint32_t* link = &grace_head_;
  while (*link != kSlotNone) {
    const std::uint32_t index = *link;
    Slot& slot = slots_->at(index);
    if (slot.grace_epoch > min_epoch) {
      // A driver whose call began before the marker was seen may still hold a packet for the
      // key: wait for its quiescent point.
      link = &slot.link;
      continue;
    }
    // Every packet queued before the marker was dequeued (FIFO, spec F1) and every driver that
    // could hold one has finished its batch: kGrace -> kClosing.
    slots_->list_pop(*link);
    note(SlotEvent::kGraceOver, index);
    if (internal::slot_on_grace_over(slot)) {
      ++stats_.removes_lost;
      --probes_out_;
    }
    --quarantine_open_;
    move_to_closing(index, d);
  }
}

void Engine::probe(std::uint32_t index) {
  note(SlotEvent::kProbe, index);
  internal::slot_probe(slots_->at(index));  // kRemoving -> kQuarantined
  ++probes_out_;
  ++quarantine_open_;
  slots_->list_push(quarantine_head_, index);
  --removes_awaited_;
  ++stats_.removes_probed;
}

void Engine::probe_awaited(Driver& d, std::uint64_t calls_min) {
  // Bounded by the table; only after idle calls, or every kAwaitedScanCalls port calls, with
  // REMOVEs awaited.
  if (calls_min == 0) {
    d.idle_calls = 0;
  }
  for (std::uint32_t i = 0; i < options_.connections_max && removes_awaited_ > 0; ++i) {
    const Slot& slot = slots_->at(i);
    if (slot.state() == SlotState::kRemoving && slot.remove_applied &&
        stats_.port_calls - slot.remove_call >= calls_min) {
      probe(i);
    }
  }
}

// ---- Slots leaving the table ------------------------------------------------------------------

void Engine::move_to_closing(std::uint32_t index, Driver& d) {
  Slot& slot = slots_->at(index);
  READYPORT_ASSERT(slot.state() == SlotState::kClosing);  // the machine moved it
  READYPORT_ASSERT(!slot.op_in_flight);
  READYPORT_ASSERT(!slot.deferred);
  READYPORT_ASSERT(slot.link == kSlotNone);
  // The socket stays in the index until closed: an add() of it meanwhile gets kAlreadyExists.
  // Appended: the list's last link is its head when it is empty, else its tail slot's link.
  std::uint32_t& last_link =
      d.dispose_head == kSlotNone ? d.dispose_head : slots_->at(d.dispose_tail).link;
  last_link = index;
  d.dispose_tail = index;
}

void Engine::release_slot(std::uint32_t index) {
  const ConnId id = slots_->id_of(index);
  slots_->release(index);
  if (options_.observer) {
    options_.observer->on_slot_freed(id);
  }
}

void Engine::close_socket_locked(ConnId id, Socket socket) {
  // Erased and closed under the lock: an add() of the value sees the engine's socket (refused) or
  // a closed or new one (reused at once, spec E5), never a stale entry. Reported before the call.
  slots_->socket_erase(socket);
  if (options_.observer) {
    options_.observer->on_socket_closed(id, socket);
  }
  (void)os_.closesocket(socket);
}

void Engine::dispose(Driver& d) {
  for (;;) {
    std::uint32_t index = kSlotNone;
    Socket socket = kInvalidSocket;
    Handler* handler = nullptr;
    ConnId id;
    {
      EngineLock lock(mutex_);
      index = slots_->list_pop(d.dispose_head);
      if (index == kSlotNone) {
        return;
      }
      if (d.dispose_head == kSlotNone) {
        d.dispose_tail = kSlotNone;
      }
      const Slot& slot = slots_->at(index);
      READYPORT_ASSERT(slot.state() == SlotState::kClosing);
      socket = slot.socket;  // kInvalidSocket: the quarantine closed it already
      handler = slot.handler;
      id = slots_->id_of(index);
      // The REMOVE packet was seen (or the quarantine drained): the port will not hand out this
      // key again, so the socket can be closed and the handler told (spec E1, E2).
      if (socket != kInvalidSocket) {
        close_socket_locked(id, socket);
      }
      slots_->at(index).closed_told = true;
    }
    READYPORT_ASSERT(handler != nullptr);
    if (boundary_ == nullptr) {
      handler->on_closed(id);
    } else {
      boundary_->handler_closed(*handler, id);
    }
    EngineLock lock(mutex_);
    ++stats_.connections_closed;
    // kClosing -> kFree: the generation changes, so any later packet is stale.
    note(SlotEvent::kDisposed, index);
    internal::slot_on_disposed(slots_->at(index));
    release_slot(index);
  }
}

}  // namespace readyport
