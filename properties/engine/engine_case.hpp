// properties/engine/engine_case.hpp: the commands of the engine property and the case
// that carries them, as plain values with a one-line text form that parses back, so that a
// failing case is replayed outside RapidCheck (`readyport-stress --engine-case 'LINE'`).
//
//   readyport::properties::EngineCase c = ...;
//   std::string line = readyport::properties::engine_case_line(c);
//   // seed=7 workers=2 batch=64; add(oneshot_level IN); peer_send(c0, 300); run(5 ms)
//   readyport::Result<readyport::properties::EngineCase> again =
//       readyport::properties::engine_case_parse(line);        // equal to c
//
// Commands name a connection by an index into the connections the case has added so far (taken
// modulo their number; a no-op while there is none), so every sublist of a case is a valid case.
// Parallel branches (docs/properties.md "Parallel commands"): after the sequential prefix, each
// branch runs on a logical thread of its own; a branch's `c<n>` indexes the prefix's connections
// followed by the ones this branch added (never another branch's), so the name resolves the same
// way in every interleaving and every sublist of a branch is still valid.
// Ownership: plain values. Threading: none. Errors: engine_case_parse returns kInvalidArgument
// naming the bad token; every EngineCase value is valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/status.hpp"

namespace readyport::properties {

enum class EngineCommandKind : std::uint8_t {
  kAdd = 0,       // add a loopback TCP connection (mode, interest) with an echo handler
  kPeerSend,      // the peer sends `value` bytes (what its send buffer takes)
  kPeerShutdown,  // the peer shuts down its sending side (FIN)
  kPeerReset,     // the peer closes abortively (SO_LINGER {on, 0}): the engine's side sees ERR
  kClose,         // engine.close(id) from the director
  kCloseInside,   // the handler closes itself on its next call (even value: returns
                  // kInterestClose; odd: calls engine.close(id)), then notify(IN) to call it
  kNotify,        // engine.notify(id, value's bits of IN/OUT/HANGUP/ERR, at least IN)
  kPost,          // engine.post(task)
  kArm,           // FaultyOs::arm_next(site)
  kRun,           // the director sleeps `value` virtual ms (workers run), then reads its peers
  // API misuse: each must get its documented Status and change nothing else.
  kAddAgain,      // add() of the connection's socket again: kAlreadyExists while the engine
                  // holds it; once it closed it, as any socket: kResourceExhausted (table
                  // full), kInvalidArgument (not a socket), kOsError (an armed fault); never ok
  kCloseForeign,  // close() of an id the engine never handed out (slot `value`, generation 0):
                  // kNotFound
  kStopInside,    // the handler calls stop() at its next call (then notify(IN) to call it):
                  // kFailedPrecondition
};

struct EngineCommand {
  EngineCommandKind kind = EngineCommandKind::kRun;
  std::uint32_t conn = 0;   // connection index (mod the number added so far)
  std::uint32_t value = 0;  // bytes, ms or event bits, by kind
  Mode mode = Mode::kOneshotLevel;
  Interest interest = kInterestIn;
  FaultSite site = FaultSite::kPsnRemoveFails;

  bool operator==(const EngineCommand& other) const = default;
};

// Parallel branches: at most kEngineBranchesMax, each of at most kEngineBranchCommandsMax
// commands (the bound of the interleaving search, engine_parallel.hpp).
inline constexpr std::size_t kEngineBranchesMax = 3;
inline constexpr std::size_t kEngineBranchCommandsMax = 8;

// A case: the seed of the scheduler, the fault draws and the payloads; worker threads; the
// engine's batch size; the commands in order (the sequential prefix), then the branches that run
// in parallel (none: a sequential case).
struct EngineCase {
  std::uint64_t seed = 0;
  std::uint32_t workers = 2;
  std::uint32_t batch_count = 64;
  std::vector<EngineCommand> commands;
  std::vector<std::vector<EngineCommand>> branches;

  bool operator==(const EngineCase& other) const = default;
};

// `add(oneshot_level IN)`, `peer_send(c1, 300)`, `arm(psn.remove_fails)`, ...
std::string command_text(const EngineCommand& command);
std::ostream& operator<<(std::ostream& out, const EngineCommand& command);
// `seed=.. workers=.. batch=..` then `  <i>: <command>` per line; each branch under a
// `  branch <b> (parallel):` line, its steps numbered on from the prefix's (case_step_number).
std::string case_text(const EngineCase& engine_case);
std::ostream& operator<<(std::ostream& out, const EngineCase& engine_case);

// All commands of the case: the prefix's and every branch's.
std::size_t case_command_count(const EngineCase& engine_case);
// The step number of command `index` of branch `branch` (prefix length plus the earlier branches'
// lengths plus `index`): how case_text and failure reports number it.
std::size_t case_step_number(const EngineCase& engine_case, std::size_t branch, std::size_t index);

// Whether a case has an edge-mode add (then stale-mask faults are not armed: an edge
// registration never reports data again after a spurious WSAEWOULDBLOCK, which no OS does).
bool case_has_edge(const EngineCase& engine_case);

// The one-line form: `seed=.. workers=.. batch=..` then `; <command>` per command, each command
// as command_text writes it; then per branch ` ||` and its commands joined by `; ` (a case
// without branches has no `||`):
//   seed=7 workers=2 batch=64; add(oneshot_level IN) || close(c0); post() || notify(c0, IN)
// engine_case_parse is its exact inverse (whitespace around `;` and `||` and after `,` is free).
// At most kEngineCaseCommandsMax commands in all, kEngineBranchesMax branches of at most
// kEngineBranchCommandsMax commands.
inline constexpr std::size_t kEngineCaseCommandsMax = 10000;
std::string engine_case_line(const EngineCase& engine_case);
Result<EngineCase> engine_case_parse(std::string_view line);

}  // namespace readyport::properties
