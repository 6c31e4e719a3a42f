#include "lifetime_oracle.hpp"

#include <string>

namespace readyport {
namespace {

std::string conn_name(ConnId id) {
  return "connection " + std::to_string(id.slot) + "/" + std::to_string(id.generation);
}

}  // namespace

void LifetimeOracle::violate(const std::string& sentence) {
  if (violation_.empty()) violation_ = "lifetime: " + sentence;
}

LifetimeOracle::Record* LifetimeOracle::find(ConnId id, const char* event) {
  auto it = live_.find(id.slot);
  if (it == live_.end() || it->second.generation != id.generation) {
    violate(std::string(event) + " for " + conn_name(id) + ", which is not live");
    return nullptr;
  }
  return &it->second;
}

void LifetimeOracle::on_slot_acquired(ConnId id, Socket socket) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.acquired++;
  if (id.generation == 0) violate("slot acquired with generation 0: " + conn_name(id));
  if (live_.count(id.slot) != 0) {
    violate("slot " + std::to_string(id.slot) + " acquired while still live");
    return;
  }
  if (sockets_.count(socket) != 0) {
    violate("socket " + std::to_string(socket) + " held by two connections at once");
    return;
  }
  Record record;
  record.generation = id.generation;
  record.socket = socket;
  live_.emplace(id.slot, record);
  sockets_.emplace(socket, id.slot);
}

void LifetimeOracle::on_handler_enter(ConnId id, std::uint32_t events) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.handler_calls++;
  Record* record = find(id, "handler entered");
  if (record == nullptr) return;
  // Spec E1-E3: nothing runs for a connection once its socket is closed.
  if (record->socket_closed) violate("handler entered after the socket was closed: " + conn_name(id));
  // Per-socket handler serialisation, in every mode.
  if (record->in_handler) violate("two handlers at once for " + conn_name(id));
  // REMOVE is the engine's business, never a handler's event.
  if ((events & kSockNotifyEventRemove) != 0) violate("handler given REMOVE for " + conn_name(id));
  record->in_handler = true;
  record->handler_calls++;
}

void LifetimeOracle::on_handler_leave(ConnId id, Interest result) {
  std::lock_guard<std::mutex> guard(mutex_);
  Record* record = find(id, "handler left");
  if (record == nullptr) return;
  if (!record->in_handler) violate("handler left without entering: " + conn_name(id));
  if (result != kInterestClose && (result & ~kInterestAll) != 0) {
    violate("handler returned bits outside IN/OUT/HANGUP for " + conn_name(id));
  }
  record->in_handler = false;
}

void LifetimeOracle::on_remove_seen(ConnId id) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.removes_seen++;
  Record* record = find(id, "REMOVE seen");
  if (record == nullptr) return;
  // Spec B5/B7: one REMOVE packet per registration.
  if (record->remove_seen) violate("REMOVE seen twice for " + conn_name(id));
  record->remove_seen = true;
}

void LifetimeOracle::on_quarantined(ConnId id) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.quarantined++;
  Record* record = find(id, "quarantined");
  if (record == nullptr) return;
  record->quarantined = true;
}

void LifetimeOracle::on_socket_closed(ConnId id, Socket socket) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.sockets_closed++;
  Record* record = find(id, "socket closed");
  if (record == nullptr) return;
  if (record->socket != socket) violate("closed a socket the connection does not own: " + conn_name(id));
  // Spec E2: close only after REMOVE was seen (or, spec E4, the REMOVE failed: quarantined).
  if (!record->remove_seen && !record->quarantined) {
    violate("socket closed before its REMOVE was seen: " + conn_name(id));
  }
  if (record->socket_closed) violate("socket closed twice: " + conn_name(id));
  if (record->in_handler) violate("socket closed while its handler runs: " + conn_name(id));
  record->socket_closed = true;
  // The value may be reused at once (spec E5) while this slot awaits disposal.
  sockets_.erase(socket);
}

void LifetimeOracle::on_slot_freed(ConnId id) {
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.freed++;
  Record* record = find(id, "slot freed");
  if (record == nullptr) return;
  if (record->in_handler) violate("slot freed while its handler runs: " + conn_name(id));
  if (record->socket_closed) {
    // Spec E1: freed only after REMOVE was dequeued (or the quarantine drained).
    if (!record->remove_seen && !record->quarantined) {
      violate("slot freed before its REMOVE was seen: " + conn_name(id));
    }
  } else if (record->handler_calls != 0 || record->remove_seen) {
    // Only a failed add() frees a slot whose socket stays open, before any event.
    violate("slot freed with its socket still open after events: " + conn_name(id));
  }
  if (!record->socket_closed) sockets_.erase(record->socket);
  live_.erase(id.slot);
}

void LifetimeOracle::on_packet_stale(std::uintptr_t key, std::uint32_t events) {
  (void)key;
  (void)events;
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.stale_packets++;
}

void LifetimeOracle::on_packet_dropped(ConnId id, std::uint32_t events) {
  (void)id;
  (void)events;
  std::lock_guard<std::mutex> guard(mutex_);
  counts_.dropped_packets++;
}

void LifetimeOracle::finish() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!live_.empty()) {
    const auto& [slot, record] = *live_.begin();
    violate(std::to_string(live_.size()) + " slot(s) never freed, first " +
            conn_name(ConnId{slot, record.generation}));
  }
  if (counts_.acquired != counts_.freed) {
    violate("acquired " + std::to_string(counts_.acquired) + " slots but freed " +
            std::to_string(counts_.freed));
  }
}

Status LifetimeOracle::status() const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (violation_.empty()) return Status();
  return Status(StatusCode::kInternal, violation_);
}

OracleCounts LifetimeOracle::counts() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return counts_;
}

}  // namespace readyport
