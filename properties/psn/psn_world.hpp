// properties/psn/psn_world.hpp: the systems under test of the PSN properties. PsnWorld is the part
// that works over any `Os`: `ports_count` completion ports and `sockets_count` loopback TCP
// connections made through the Os itself (a listener, connect, accept; every socket non-blocking),
// addressed by the same indices as PsnModel (psn_model.hpp). PsnFakeWorld is a PsnWorld over a
// FakeOs it owns, whose internal state the checks may also compare; PsnOsWorld (psn_os_world.hpp)
// is one over an Os it borrows (WindowsOs, or a FakeOs seen only through the seam).
//
//   readyport::properties::PsnFakeWorld world(options, 3, 2, std::nullopt);
//   world.os().send(world.peer(0), "x", 1, 0);   // the peer end of connection 0 sends a byte
//   world.os().process_socket_notifications(world.port(1), ...);
//
// Socket index s holds our end, local(s) (the socket the properties register), and the peer end,
// peer(s), which the test drives and never registers. reopen(s) gives the index a new connection
// (its values may reuse old ones, spec E5). Ports are created again by index with new handles.
//
// It also carries what the checks accumulate over one run (psn_checks.hpp): the rule checkers of
// the system's outputs and of the model's predictions, and the model's coverage at the last step.
//
// Ownership: a PsnWorld owns every socket and port it made through os() (PsnOsWorld closes them
// when destroyed; PsnFakeWorld's FakeOs takes them with it). Lifetime: one RapidCheck case.
// Threading: one thread. Errors: a failed setup call fails the case (RC_FAIL) naming the call and
// the Os's last error: the fake documents these calls as succeeding, a real OS may refuse them.
#pragma once

#include <optional>
#include <vector>

#include "psn_model.hpp"
#include "psn_rules.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport::properties {

// A SOCKET value that is never a socket (the fake's values are 0x100 + 4k, Windows handles are
// multiples of 4): spec B9.
inline constexpr Socket kNotSocketValue = 0x3;

class PsnModelSet;  // psn_model_set.hpp

class PsnWorld {
 public:
  virtual ~PsnWorld() = default;
  PsnWorld(const PsnWorld&) = delete;
  PsnWorld& operator=(const PsnWorld&) = delete;

  virtual Os& os() = 0;
  // The FakeOs behind os() when its internal state may be compared with the model's, or nullptr.
  virtual FakeOs* fake() { return nullptr; }
  // The readings of the spec's open questions still possible (psn_model_set.hpp), or nullptr:
  // then the system is compared with the one model RapidCheck drives.
  virtual PsnModelSet* model_set() { return nullptr; }
  // Returns once what the last command sent over the wire has reached the other end's socket
  // (a real network is asynchronous; the fake is not, and returns at once).
  virtual void settle() {}

  // The port's current handle; for a closed index, the stale handle (closed_port_stale) or a
  // value that is never a handle.
  Port port(int index) const;
  // Our end of connection `s`; kNotSocketValue for kModelNotSocket.
  Socket local(int s) const;
  // The peer end (kInvalidSocket once the peer was closed).
  Socket peer(int s) const;
  // A new port at `index` (the old handle must have been closed).
  void port_create(int index);
  // The test closed the port at `index` (close_port succeeded).
  void port_closed(int index);
  // The test closed our end of connection s (closesocket).
  void local_closed(int s);
  // The peer end was closed by the test.
  void peer_closed(int s);
  // A new connection at index s (our end was closed); closes the old peer end if still open.
  void reopen(int s);

  const std::optional<PsnRule>& rule() const { return rule_; }
  PsnRuleChecker& fake_rules() { return fake_rules_; }
  PsnRuleChecker& model_rules() { return model_rules_; }
  ModelCoverage& coverage() { return coverage_; }

 protected:
  // `closed_port_stale`: a closed index keeps its stale handle (the fake, whose handles are never
  // reused) or gets a value that is never a handle (a real OS may give the stale value to a new
  // handle). `rule`: which check psn_checks applies after each command; empty: the models.
  PsnWorld(OneshotDisarm disarm, std::optional<PsnRule> rule, bool closed_port_stale);
  // Makes the ports and connections through os(); the derived constructor calls it once os()
  // works.
  void populate(int sockets_count, int ports_count);
  // Closes every socket and port still open (the derived destructor of a borrowed Os).
  void release();

 private:
  struct Connection {
    Socket local = kInvalidSocket;  // kInvalidSocket once closed
    Socket peer = kInvalidSocket;
    Socket local_stale = kInvalidSocket;  // what local() answers once closed
  };
  struct PortSlot {
    Port handle = kInvalidPort;
    bool open = false;
  };
  Connection connect_pair();

  Socket listener_ = kInvalidSocket;
  Ipv4Address listener_address_{};
  std::vector<PortSlot> ports_;
  std::vector<Connection> connections_;
  bool closed_port_stale_ = true;
  std::optional<PsnRule> rule_;
  PsnRuleChecker fake_rules_;
  PsnRuleChecker model_rules_;
  ModelCoverage coverage_;
};

// A PsnWorld over a FakeOs of its own, on the fake's inline runtime.
class PsnFakeWorld final : public PsnWorld {
 public:
  PsnFakeWorld(const FakeOptions& options, int sockets_count, int ports_count,
               std::optional<PsnRule> rule);

  FakeOs& os() override { return os_; }
  FakeOs* fake() override { return &os_; }

 private:
  FakeOs os_;
};

}  // namespace readyport::properties
