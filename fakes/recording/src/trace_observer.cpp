// TraceObserver: one `obs.` line per observer event (trace_observer.hpp).
#include "readyport/fake/trace_observer.hpp"

#include "readyport/fake/trace_lines.hpp"

#include <string>

namespace readyport {

void TraceObserver::on_slot_acquired(ConnId id, Socket socket) {
  ++slots_live_;
  if (tuples_ != nullptr && table_slots_ != 0 && slots_live_ == table_slots_) {
    ++tuples_->last_free_taken;
  }
  TraceEvent event("obs.acquired");
  record(trace_event_conn(event, "id", id).num("s", socket));
}

void TraceObserver::on_slot_freed(ConnId id) {
  --slots_live_;
  TraceEvent event("obs.freed");
  record(trace_event_conn(event, "id", id));
}

void TraceObserver::on_handler_enter(ConnId id, std::uint32_t events) {
  TraceEvent event("obs.handler_enter");
  record(trace_event_conn(event, "id", id).hex("ev", events));
}

void TraceObserver::on_handler_leave(ConnId id, Interest result) {
  TraceEvent event("obs.handler_leave");
  record(trace_event_conn(event, "id", id).hex("ret", result));
}

void TraceObserver::on_remove_seen(ConnId id) {
  TraceEvent event("obs.remove_seen");
  record(trace_event_conn(event, "id", id));
}

void TraceObserver::on_quarantined(ConnId id) {
  TraceEvent event("obs.quarantined");
  record(trace_event_conn(event, "id", id));
}

void TraceObserver::on_socket_closed(ConnId id, Socket socket) {
  TraceEvent event("obs.socket_closed");
  record(trace_event_conn(event, "id", id).num("s", socket));
}

void TraceObserver::on_packet_stale(std::uintptr_t key, std::uint32_t events) {
  TraceEvent event("obs.stale");
  record(event.num("key", key).hex("ev", events));
}

void TraceObserver::on_packet_dropped(ConnId id, std::uint32_t events) {
  TraceEvent event("obs.dropped");
  record(trace_event_conn(event, "id", id).hex("ev", events));
}

void TraceObserver::on_slot_event(ConnId id, SlotEventPoint point) {
  if (tuples_ == nullptr) {
    return;
  }
  tuples_->add(point);
  if (table_slots_ != 0 && id.slot == table_slots_ - 1) {
    ++tuples_->slot_last;
  }
}

}  // namespace readyport
