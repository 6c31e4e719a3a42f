// properties/psn/psn_commands.hpp: the RapidCheck commands of the PSN properties: everything a test
// can do to PsnModel (apply) and to a PsnWorld (run, then judge_step), over a few ports and
// sockets. The same commands run on PsnFakeWorld (the fake, compared with the one model) and on
// PsnOsWorld (any Os through the seam, judged by the set of models, psn_model_set.hpp).
//
//   PsnModel initial(options, kPsnSockets, kPsnPorts);
//   PsnFakeWorld world(options, kPsnSockets, kPsnPorts, std::nullopt);
//   rc::state::check(initial, world, &psn_command_generator);
//
// psn_os_command_generator draws the same commands except fill and peer_drain: they rely on the
// fake's fixed receive buffer (fill sends exactly what fits, so OUT falls), which a real TCP stack
// does not have (its buffers and window are larger and change). After each socket command that
// puts something on the wire the command calls world.settle() before anything is compared.
//
// Commands (each immutable; its values drawn in the constructor from the model it is generated
// for, so they shrink; checkPreconditions re-checks them, because shrinking changes the state):
//   psn         ProcessSocketNotifications on a port: 1-2 elements (ENABLE/DISABLE/REMOVE/NONE,
//               any filter, valid and invalid trigger flags, either key variant, a non-socket
//               value), then optionally a dequeue of 1-4 entries in the same call (spec A7)
//   dequeue     PSN with no elements, or GetQueuedCompletionStatusEx; timeout 0
//   post        PostQueuedCompletionStatus with a posted key
//   peer_send   the peer sends 1-64 bytes          drain        we recv until WSAEWOULDBLOCK/EOF
//   peer_shutdown   the peer's shutdown(SD_SEND)   peer_close   the peer's closesocket, graceful or
//                                                               abortive (SO_LINGER {on, 0})
//   fill        we fill the peer's receive buffer (OUT falls)   peer_drain  the peer reads it all
//   shutdown    our shutdown(SD_SEND)              closesocket  closesocket of our end
//   reopen      a new connection at a closed index close_port / open_port
// Keys are computed when a command runs, from the connection the index holds then (psn_keys.hpp).
//
// Ownership: commands are shared immutable values (std::shared_ptr<const PsnCommand>).
// Threading: one thread. Errors: RapidCheck failures (RC_ASSERT/RC_FAIL) from run().
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "psn_model.hpp"
#include "psn_world.hpp"

namespace readyport::properties {

inline constexpr int kPsnSockets = 3;
inline constexpr int kPsnPorts = 2;

using PsnCommand = rc::state::Command<PsnModel, PsnWorld>;

// A generator of one command for a model state, for rc::state::check / gen::commands.
rc::Gen<std::shared_ptr<const PsnCommand>> psn_command_generator(const PsnModel& model);
// The commands that mean the same on a real TCP stack (no fill, no peer_drain).
rc::Gen<std::shared_ptr<const PsnCommand>> psn_os_command_generator(const PsnModel& model);

// One PSN element before keys are known: the key is socket_key(incarnation, key_variant).
struct PsnElementDraw {
  int socket = 0;  // socket index or kModelNotSocket
  int key_variant = 0;
  std::uint16_t event_filter = 0;
  std::uint8_t operation = 0;
  std::uint8_t trigger_flags = 0;
};

class PsnCallCommand final : public PsnCommand {
 public:
  explicit PsnCallCommand(const PsnModel& model);
  void checkPreconditions(const PsnModel& model) const override;
  void apply(PsnModel& model) const override;
  void run(const PsnModel& model, PsnWorld& world) const override;
  void show(std::ostream& os) const override;

 private:
  std::vector<ModelElement> elements_for(const PsnModel& model) const;
  int port_ = 0;
  std::vector<PsnElementDraw> elements_;
  std::uint32_t dequeue_count_ = 0;
};

class DequeueCommand final : public PsnCommand {
 public:
  explicit DequeueCommand(const PsnModel& model);
  void checkPreconditions(const PsnModel& model) const override;
  void apply(PsnModel& model) const override;
  void run(const PsnModel& model, PsnWorld& world) const override;
  void show(std::ostream& os) const override;

 private:
  int port_ = 0;
  std::uint32_t count_ = 1;
  bool gqcs_ = false;  // GetQueuedCompletionStatusEx instead of PSN
};

class PostCommand final : public PsnCommand {
 public:
  explicit PostCommand(const PsnModel& model);
  void checkPreconditions(const PsnModel& model) const override;
  void apply(PsnModel& model) const override;
  void run(const PsnModel& model, PsnWorld& world) const override;
  void show(std::ostream& os) const override;

 private:
  int port_ = 0;
  std::uint32_t index_ = 0;  // posted_key(index_), bytes index_, lpOverlapped 16 * index_
};

// The socket commands: one class, one kind each (they differ only in what they do).
enum class SocketAction : std::uint8_t {
  kPeerSend,
  kDrain,
  kPeerShutdown,
  kPeerClose,
  kPeerReset,
  kFill,
  kPeerDrain,
  kShutdown,
  kClosesocket,
  kReopen,
};

class SocketCommand final : public PsnCommand {
 public:
  SocketCommand(const PsnModel& model, SocketAction action);
  void checkPreconditions(const PsnModel& model) const override;
  void apply(PsnModel& model) const override;
  void run(const PsnModel& model, PsnWorld& world) const override;
  void show(std::ostream& os) const override;
  // Whether `action` may run on socket index s in this state.
  static bool allowed(const PsnModel& model, SocketAction action, int s);

 private:
  SocketAction action_;
  int socket_ = 0;
  std::uint32_t bytes_ = 0;  // kPeerSend only
};

class PortCommand final : public PsnCommand {
 public:
  PortCommand(const PsnModel& model, bool close);
  void checkPreconditions(const PsnModel& model) const override;
  void apply(PsnModel& model) const override;
  void run(const PsnModel& model, PsnWorld& world) const override;
  void show(std::ostream& os) const override;

 private:
  bool close_ = true;  // close_port, or create a port at a closed index
  int port_ = 0;
};

}  // namespace readyport::properties
