// properties/psn/psn_rules.hpp: PsnRuleChecker, four lifetime rules of docs/rules.md checked from
// what a caller of the API can observe: each element's result and the dequeued packets, in order.
//
//   readyport::properties::PsnRuleChecker rules(readyport::OneshotDisarm::kAtDequeue);
//   rules.element(0, 1, kSockNotifyOpEnable, kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
//                 0, false);
//   rules.dequeued(0, entry);   // every entry, in the order the port gave them
//   if (!rules.violation(PsnRule::kRemoveIsLast).empty()) { ... }
//
// It needs no model: packets name their connection through their key (psn_keys.hpp), and what a
// registration is (its port, its trigger, whether it ended) follows from the results the caller
// saw: an applied ENABLE starts or changes one, its REMOVE packet, closesocket or close_port ends
// it. So the same checker judges the fake's outputs and the model's predictions. It records the
// first violation of each rule and keeps going.
//
// Ownership: a plain value. Threading: one thread. Errors: violations are recorded as text, never
// thrown or asserted (the caller decides: RC_FAIL in the properties).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "readyport/fake/fake_options.hpp"
#include "readyport/os.hpp"

namespace readyport::properties {

enum class PsnRule : std::uint8_t {
  // Spec E2 (with B5): closesocket never produces a REMOVE packet. Checked as: a connection never
  // gets more REMOVE packets than REMOVE operations it had applied (pending ones dropped by
  // close_port, spec F6, excepted).
  kClosesocketNoRemove,
  // Spec B5, E3: the REMOVE packet is the last packet for its key, until an ENABLE registers the
  // socket again (E6).
  kRemoveIsLast,
  // Spec B8: a socket is registered with one port at a time: no operation applies on a second
  // port while it is registered with a first, and its packets come from the port it is
  // registered with.
  kOnePortAtATime,
  // Spec C2: a one-shot packet disarms every direction: after an applied ONESHOT ENABLE and
  // before the next applied ENABLE, one event packet at most (two with the at-queue disarm when a
  // packet of the socket may have been queued before that ENABLE).
  kOneshotDisarmsAll,
};
inline constexpr int kPsnRuleCount = 4;

// "closesocket_never_queues_remove", ...: for messages and test names.
const char* psn_rule_name(PsnRule rule);

class PsnRuleChecker {
 public:
  explicit PsnRuleChecker(OneshotDisarm disarm) : disarm_(disarm) {}

  // One PSN element on port index `port` for connection `incarnation` (0: not a socket) and its
  // registration_result. `packet_maybe_queued`: a packet of this socket may be queued before the
  // element (the port was not empty before the call, or an earlier element of the call applied).
  void element(int port, std::uint32_t incarnation, std::uint8_t operation,
               std::uint8_t trigger_flags, std::uint32_t result, bool packet_maybe_queued);
  // One dequeued entry, in order.
  void dequeued(int port, const OverlappedEntry& entry);
  // closesocket of the connection (spec E2).
  void socket_closed(std::uint32_t incarnation);
  // close_port of the index (spec F6).
  void port_closed(int port);

  // The first violation of `rule` so far, or "".
  const std::string& violation(PsnRule rule) const {
    return violations_[static_cast<std::size_t>(rule)];
  }

 private:
  struct Connection {
    std::uint32_t removes_applied = 0;  // REMOVE elements applied, minus those close_port dropped
    std::uint32_t remove_packets = 0;   // REMOVE packets dequeued
    bool closed = false;                // closesocket happened
    bool after_remove = false;          // its REMOVE packet was dequeued, no ENABLE since
    int registered_port = -1;           // port of the live registration, -1 when none
    int packets_port = -1;              // port its packets may come from, -1 when none
    bool oneshot = false;               // the last applied ENABLE was ONESHOT
    std::uint32_t event_packets = 0;    // event packets dequeued since that ENABLE
    std::uint32_t event_packets_max = 1;
  };

  void violate(PsnRule rule, const std::string& text);

  OneshotDisarm disarm_;
  std::map<std::uint32_t, Connection> connections_;  // by incarnation (ordered)
  std::array<std::string, kPsnRuleCount> violations_;
};

}  // namespace readyport::properties
