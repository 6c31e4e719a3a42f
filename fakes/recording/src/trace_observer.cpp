// TraceObserver: one `obs.` line per observer event (trace_observer.hpp).
#include "readyport/fake/trace_observer.hpp"

#include "readyport/fake/trace_lines.hpp"

#include <string>

namespace readyport {

void TraceObserver::on_slot_acquired(ConnId id, Socket socket) {
  record("obs.acquired id=" + trace_id_text(id) + " s=" + std::to_string(socket));
}

void TraceObserver::on_slot_freed(ConnId id) { record("obs.freed id=" + trace_id_text(id)); }

void TraceObserver::on_handler_enter(ConnId id, std::uint32_t events) {
  record("obs.handler_enter id=" + trace_id_text(id) + " ev=" + trace_hex_text(events));
}

void TraceObserver::on_handler_leave(ConnId id, Interest result) {
  record("obs.handler_leave id=" + trace_id_text(id) + " ret=" + trace_hex_text(result));
}

void TraceObserver::on_remove_seen(ConnId id) { record("obs.remove_seen id=" + trace_id_text(id)); }

void TraceObserver::on_quarantined(ConnId id) { record("obs.quarantined id=" + trace_id_text(id)); }

void TraceObserver::on_socket_closed(ConnId id, Socket socket) {
  record("obs.socket_closed id=" + trace_id_text(id) + " s=" + std::to_string(socket));
}

void TraceObserver::on_packet_stale(std::uintptr_t key, std::uint32_t events) {
  record("obs.stale key=" + std::to_string(key) + " ev=" + trace_hex_text(events));
}

void TraceObserver::on_packet_dropped(ConnId id, std::uint32_t events) {
  record("obs.dropped id=" + trace_id_text(id) + " ev=" + trace_hex_text(events));
}

}  // namespace readyport
