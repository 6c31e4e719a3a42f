// PsnRuleChecker: the bookkeeping of each connection's registration from observed results.
#include "psn_rules.hpp"

#include "psn_keys.hpp"

namespace readyport::properties {

namespace {

std::string hex(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), kDigits[value % 16]);
    value /= 16;
  } while (value != 0);
  return "0x" + text;
}

}  // namespace

const char* psn_rule_name(PsnRule rule) {
  switch (rule) {
    case PsnRule::kClosesocketNoRemove:
      return "closesocket_never_queues_remove";
    case PsnRule::kRemoveIsLast:
      return "remove_is_last_packet_for_its_key";
    case PsnRule::kOnePortAtATime:
      return "one_port_at_a_time";
    case PsnRule::kOneshotDisarmsAll:
      return "oneshot_disarms_every_direction";
  }
  return "?";
}

void PsnRuleChecker::violate(PsnRule rule, const std::string& text) {
  std::string& first = violations_[static_cast<std::size_t>(rule)];
  if (first.empty()) {
    first = text;
  }
}

void PsnRuleChecker::element(int port, std::uint32_t incarnation, std::uint8_t operation,
                             std::uint8_t trigger_flags, std::uint32_t result,
                             bool packet_maybe_queued) {
  // Spec A8: an element that failed changed nothing.
  if (incarnation == 0 || result != 0) {
    return;
  }
  Connection& connection = connections_[incarnation];
  const std::string name = "connection " + std::to_string(incarnation);
  const bool elsewhere = connection.registered_port >= 0 && connection.registered_port != port;
  switch (operation) {
    case kSockNotifyOpEnable:
      if (elsewhere) {
        violate(PsnRule::kOnePortAtATime,
                name + ": ENABLE applied on port " + std::to_string(port) +
                    " while registered with port " + std::to_string(connection.registered_port));
      }
      connection.registered_port = port;
      connection.packets_port = port;
      connection.after_remove = false;  // spec E6: registered again
      connection.oneshot = (trigger_flags & kSockNotifyTriggerOneshot) != 0;
      connection.event_packets = 0;
      connection.event_packets_max =
          (disarm_ == OneshotDisarm::kAtQueue && packet_maybe_queued) ? 2 : 1;
      return;
    case kSockNotifyOpDisable:
    case kSockNotifyOpRemove:
      if (elsewhere) {
        violate(PsnRule::kOnePortAtATime,
                name + ": " + (operation == kSockNotifyOpRemove ? "REMOVE" : "DISABLE") +
                    " applied on port " + std::to_string(port) + " while registered with port " +
                    std::to_string(connection.registered_port));
      }
      if (operation == kSockNotifyOpRemove) {
        ++connection.removes_applied;
      }
      return;
    default:
      return;
  }
}

void PsnRuleChecker::dequeued(int port, const OverlappedEntry& entry) {
  const std::uint32_t incarnation = key_incarnation(entry.completion_key);
  if (incarnation == 0) {
    return;  // a posted packet
  }
  Connection& connection = connections_[incarnation];
  const std::string name = "connection " + std::to_string(incarnation) + " (key " +
                           hex(entry.completion_key) + ", mask " + hex(entry.bytes_transferred) +
                           ")";
  if (connection.packets_port >= 0 && connection.packets_port != port) {
    violate(PsnRule::kOnePortAtATime, name + ": packet dequeued from port " + std::to_string(port) +
                                          ", registered with port " +
                                          std::to_string(connection.packets_port));
  }
  if (connection.after_remove) {
    violate(PsnRule::kRemoveIsLast,
            name + ": packet dequeued after the REMOVE packet of its key, with no ENABLE between");
  }
  if ((entry.bytes_transferred & kSockNotifyEventRemove) != 0) {
    ++connection.remove_packets;
    if (connection.remove_packets > connection.removes_applied) {
      violate(PsnRule::kClosesocketNoRemove,
              name + ": REMOVE packet number " + std::to_string(connection.remove_packets) +
                  " after " + std::to_string(connection.removes_applied) +
                  " applied REMOVE operations" + (connection.closed ? ", after closesocket" : ""));
    }
    connection.after_remove = true;
    connection.registered_port = -1;  // spec B5: the registration ended
  }
  if ((entry.bytes_transferred & ~kSockNotifyEventRemove) != 0) {
    ++connection.event_packets;
    if (connection.oneshot && connection.event_packets > connection.event_packets_max) {
      violate(PsnRule::kOneshotDisarmsAll, name + ": event packet number " +
                                               std::to_string(connection.event_packets) +
                                               " since its ONESHOT ENABLE (at most " +
                                               std::to_string(connection.event_packets_max) + ")");
    }
  }
}

void PsnRuleChecker::socket_closed(std::uint32_t incarnation) {
  Connection& connection = connections_[incarnation];
  connection.closed = true;
  connection.registered_port = -1;  // spec E2: deregistered; queued packets may still come
}

void PsnRuleChecker::port_closed(int port) {
  // Spec F6: the port's registrations end without REMOVE; their packets, pending REMOVEs
  // included, go with the port.
  for (auto& [incarnation, connection] : connections_) {
    if (connection.packets_port != port) {
      continue;
    }
    connection.removes_applied = connection.remove_packets;
    connection.registered_port = -1;
    connection.packets_port = -1;
  }
}

}  // namespace readyport::properties
