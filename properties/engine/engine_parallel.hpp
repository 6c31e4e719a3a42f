// properties/engine/engine_parallel.hpp: judging the parallel branches of an engine property case
// (engine_case.hpp): a sequential model of the engine's API results (core/include/readyport/
// engine.hpp states them) and a bounded search for an interleaving of the branches that explains
// what each branch's calls returned (Erlang QuickCheck's parallel state-machine testing).
//
//   ApiModelStart start{{ApiConnState::kOpen}, 6, false};       // connection 0, open, no faults
//   std::vector<std::vector<ApiStep>> results = ...;             // per branch, in its order
//   Status explained = branches_explained(start, results);      // ok, or why none explains them
//
// The model: each connection the world knows is kOpen (only a close() can end it), kMayEnd
// (something may end it at any moment: a close() returned ok, its handler was asked to close,
// its peer shut down or reset, an ERR was notified, or faults are armed in the case; its
// on_closed may run and its slot be freed at any moment) or kGone (a kNotFound proved its slot
// freed). Results the model cannot decide (a fault may fire, an on_closed may have run) are
// accepted as a set, and the observed result picks the next state: close of kMayEnd returning
// not_found makes it kGone. A step is one API call (or one effect) of a branch; a branch keeps
// its order, the branches interleave freely.
// Bound: at most kEngineBranchesMax branches of kApiBranchStepsMax steps (kEngineBranchCommandsMax
// commands of at most kApiStepsPerCommandMax steps); the depth-first search memoises every
// (positions, model state) node it left without success, so it visits each at most once, and
// stops at kApiSearchNodesMax nodes (reported as undecided, a failure: never reached by the
// property, whose branches have at most 8 commands).
// Ownership: plain values. Threading: none (pure functions). Errors: a Status naming the branches,
// their results and why no interleaving explains them; malformed steps assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_case.hpp"
#include "readyport/status.hpp"

namespace readyport::properties {

inline constexpr std::size_t kApiStepsPerCommandMax = 6;  // an edge add: add, notify, 4 retries
inline constexpr std::size_t kApiBranchStepsMax = kEngineBranchCommandsMax * kApiStepsPerCommandMax;
inline constexpr std::uint64_t kApiSearchNodesMax = 2'000'000;

enum class ApiConnState : std::uint8_t {
  kUnborn = 0,  // not added yet (a branch's own add makes it)
  kOpen,        // certainly open: close -> ok, notify -> ok (or os_error with faults)
  kMayEnd,      // may be closing or closed: close -> ok|not_found, notify -> ok|not_found
  kGone,        // its slot was freed: close and notify -> not_found
};

enum class ApiStepKind : std::uint8_t {
  kAdd,           // engine.add of a fresh socket; `conn` is the connection it made (when ok)
  kClose,         // engine.close(conn)
  kNotify,        // engine.notify(conn, ...)
  kPost,          // engine.post(task)
  kCloseForeign,  // engine.close of an id never handed out: not_found
  kMayEnd,        // no call: from here on something may end `conn` (its peer, a close request)
};

struct ApiStep {
  ApiStepKind kind = ApiStepKind::kPost;
  std::uint32_t conn = 0;  // the model's connection number (the world's order of adds)
  StatusCode code = StatusCode::kOk;
  // The connection's on_closed had run before the call began (the echo handler's own record):
  // the connection must have been ending, never kOpen.
  bool ended_before = false;
  std::string text;  // the call as the branch made it, for the report
};

// The model's state when the branches begin: the prefix's connections by number, the engine's
// table size, and whether faults can fire (any arm() in the case; then every connection may end
// by itself: kOpen is read as kMayEnd, and os_error is allowed where a fault can cause it).
struct ApiModelStart {
  std::vector<ApiConnState> conns;
  std::uint32_t connections_max = 0;
  bool faults = false;
};

// Applies one step to `conns` (indexed by connection number, kUnborn beyond those known): true
// when the model allows the step's result, and then `conns` is the state after it; false with
// `why` set otherwise (`conns` unspecified).
bool api_step_apply(const ApiStep& step, const ApiModelStart& start,
                    std::vector<ApiConnState>& conns, std::string* why);

// Ok when some interleaving of `branches` (each kept in order) is allowed step by step by the
// model from `start`; `order_out`, when set, receives that interleaving as branch numbers. Else
// kInternal: "no interleaving of the branches explains their results", the branches with their
// results, the longest explained order and why each branch's next step was refused there.
Status branches_explained(const ApiModelStart& start,
                          const std::vector<std::vector<ApiStep>>& branches,
                          std::vector<std::uint32_t>* order_out = nullptr);

// `close(c0: s=12 id=1/1) -> not_found`-style text of one step, with its result.
std::string api_step_text(const ApiStep& step);

}  // namespace readyport::properties
