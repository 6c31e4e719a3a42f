// properties/psn/psn_os_world.hpp: PsnOsWorld, the PSN properties' system under test over any `Os`
// seen only through the seam (WindowsOs on Windows; FakeOs here, to run every piece first), judged
// by the set of models of the spec's open questions (psn_model_set.hpp).
//
//   std::unique_ptr<WindowsOs> os = ...;                       // or a FakeOs
//   PsnOsWorld world(*os, options, kPsnSockets, kPsnPorts, kPsnSettleMsWindows);
//   rc::state::check(PsnModel(options, kPsnSockets, kPsnPorts), world, &psn_os_command_generator);
//   for (const PsnAnswer& answer : world.models().answers()) ...   // what the OS answered
//
// Nothing but the calls' outputs is compared (a real OS shows no queue lengths). A closed port
// index answers a value that is never a handle, not its stale handle: a real OS may give that
// value to a new handle at once.
//
// settle(): real sockets are asynchronous: after a command that puts something on the wire (the
// peer sends, shuts down, closes, resets; we shut down or close; a new connection), what it does to
// the other end's readiness, and the packet that readiness queues, comes a moment later. The world
// waits `settle_ms` (a bounded delay, os.sleep_ms) before the next call. A delay was chosen over
// polling the port with short timed dequeues because a dequeue consumes the packets the models are
// about to predict, and over peeking at the socket (recv MSG_PEEK) because a recv is the call
// that re-arms EDGE and AFD notifications: either would change what is being observed. On loopback
// the data is in the receiver's buffer within microseconds; the delay bounds the wait at a value
// far above that (kPsnSettleMsWindows). 0 for FakeOs, which is synchronous.
//
// Ownership: borrows `os` (it must outlive the world); owns the sockets and ports it makes and
// closes them when destroyed. Lifetime: one RapidCheck case. Threading: one thread. Errors: as
// PsnWorld (setup failures fail the case).
#pragma once

#include <cstdint>

#include "psn_model_set.hpp"
#include "psn_world.hpp"

namespace readyport::properties {

// settle() on a real OS: loopback delivery is immediate in practice, this bounds it generously.
inline constexpr std::uint32_t kPsnSettleMsWindows = 10;

class PsnOsWorld final : public PsnWorld {
 public:
  // `model_options`: the options the models share (receive_buffer_bytes); their open-question
  // switches are replaced by every reading.
  PsnOsWorld(Os& os, const FakeOptions& model_options, int sockets_count, int ports_count,
             std::uint32_t settle_ms);
  ~PsnOsWorld() override;

  Os& os() override { return os_; }
  PsnModelSet* model_set() override { return &models_; }
  void settle() override;

  const PsnModelSet& models() const { return models_; }

 private:
  Os& os_;
  PsnModelSet models_;
  std::uint32_t settle_ms_ = 0;
};

}  // namespace readyport::properties
