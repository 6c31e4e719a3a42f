// TraceObserver: one `obs.` line per observer event (trace_observer.hpp).
#include "readyport/fake/trace_observer.hpp"

#include <cstdio>
#include <string>

namespace readyport {
namespace {

std::string id_text(ConnId id) {
  return std::to_string(id.slot) + "/" + std::to_string(id.generation);
}

std::string hex_text(std::uint64_t value) {
  char text[24];
  const int size =
      std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return std::string(text, static_cast<std::size_t>(size > 0 ? size : 0));
}

}  // namespace

void TraceObserver::on_slot_acquired(ConnId id, Socket socket) {
  record("obs.acquired id=" + id_text(id) + " s=" + std::to_string(socket));
}

void TraceObserver::on_slot_freed(ConnId id) { record("obs.freed id=" + id_text(id)); }

void TraceObserver::on_handler_enter(ConnId id, std::uint32_t events) {
  record("obs.handler_enter id=" + id_text(id) + " ev=" + hex_text(events));
}

void TraceObserver::on_handler_leave(ConnId id, Interest result) {
  record("obs.handler_leave id=" + id_text(id) + " ret=" + hex_text(result));
}

void TraceObserver::on_remove_seen(ConnId id) { record("obs.remove_seen id=" + id_text(id)); }

void TraceObserver::on_quarantined(ConnId id) { record("obs.quarantined id=" + id_text(id)); }

void TraceObserver::on_socket_closed(ConnId id, Socket socket) {
  record("obs.socket_closed id=" + id_text(id) + " s=" + std::to_string(socket));
}

void TraceObserver::on_packet_stale(std::uintptr_t key, std::uint32_t events) {
  record("obs.stale key=" + std::to_string(key) + " ev=" + hex_text(events));
}

void TraceObserver::on_packet_dropped(ConnId id, std::uint32_t events) {
  record("obs.dropped id=" + id_text(id) + " ev=" + hex_text(events));
}

}  // namespace readyport
