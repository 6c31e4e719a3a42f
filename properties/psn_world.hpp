// properties/psn_world.hpp: PsnFakeWorld, the system under test of the PSN properties: a FakeOs on
// its own inline runtime with `ports_count` completion ports and `sockets_count` loopback TCP
// connections made through the fake itself (a listener, connect, accept; every socket
// non-blocking), addressed by the same indices as PsnModel (psn_model.hpp).
//
//   readyport::properties::PsnFakeWorld world(options, 3, 2);
//   world.os().send(world.peer(0), "x", 1, 0);   // the peer end of connection 0 sends a byte
//   world.os().process_socket_notifications(world.port(1), ...);
//
// Socket index s holds our end, local(s) (the socket the properties register), and the peer end,
// peer(s), which the test drives and never registers. reopen(s) gives the index a new connection
// (its values may reuse old ones, spec E5). Ports are created again by index with new handles.
//
// It also carries what the checks accumulate over one run (psn_checks.hpp): the rule checkers of
// the fake's outputs and of the model's predictions, and the model's coverage at the last step.
//
// Ownership: owns its FakeOs and through it every socket and port. Lifetime: one RapidCheck case.
// Threading: one thread (the inline runtime). Errors: a failed setup call is a broken contract of
// the fake (asserted): the commands only ask for what the fake documents as succeeding.
#pragma once

#include <optional>
#include <vector>

#include "psn_model.hpp"
#include "psn_rules.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport::properties {

// A SOCKET value that is never a socket (the fake's values are 0x100 + 4k): spec B9.
inline constexpr Socket kNotSocketValue = 0x3;

class PsnFakeWorld {
 public:
  // `rule`: which check psn_checks applies after each command; empty: compare with the model.
  PsnFakeWorld(const FakeOptions& options, int sockets_count, int ports_count,
               std::optional<PsnRule> rule);
  PsnFakeWorld(const PsnFakeWorld&) = delete;
  PsnFakeWorld& operator=(const PsnFakeWorld&) = delete;

  FakeOs& os() { return os_; }
  // The port's current handle (a closed port keeps its stale handle until port_create).
  Port port(int index) const;
  // Our end of connection `s`; kNotSocketValue for kModelNotSocket.
  Socket local(int s) const;
  // The peer end (kInvalidSocket once the peer was closed).
  Socket peer(int s) const;
  // A new port at `index` (the old handle must have been closed).
  void port_create(int index);
  // The peer end was closed by the test.
  void peer_closed(int s);
  // A new connection at index s (our end was closed); closes the old peer end if still open.
  void reopen(int s);

  const std::optional<PsnRule>& rule() const { return rule_; }
  PsnRuleChecker& fake_rules() { return fake_rules_; }
  PsnRuleChecker& model_rules() { return model_rules_; }
  ModelCoverage& coverage() { return coverage_; }

 private:
  struct Connection {
    Socket local = kInvalidSocket;
    Socket peer = kInvalidSocket;
  };
  Connection connect_pair();

  FakeOs os_;
  Socket listener_ = kInvalidSocket;
  Ipv4Address listener_address_{};
  std::vector<Port> ports_;
  std::vector<Connection> connections_;
  std::optional<PsnRule> rule_;
  PsnRuleChecker fake_rules_;
  PsnRuleChecker model_rules_;
  ModelCoverage coverage_;
};

}  // namespace readyport::properties
