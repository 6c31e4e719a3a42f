// properties/psn/psn_checks.hpp: what the PSN properties check after each command, given what the
// model predicted and what the system under test (the fake, or any Os) did.
//
//   PsnOutcome got;   // from world.os()
//   judge_step(step, model, [&](PsnModel& m) { ...; return want; }, got, world);
//   check_step(step, model_after, want, got, world);  // RC_FAIL on a mismatch or a violation
//
// judge_step: with world.model_set() (a system that may answer the spec's open questions either
// way, psn_model_set.hpp) every surviving reading's model predicts and those that disagree are
// dropped; the step fails when none is left. Otherwise a copy of `model` predicts and check_step
// compares.
//
// With world.rule() empty (the stateful property) the fake must do exactly what the model
// predicts: the call's code, each registration_result, the dequeued entries in order (key, mask,
// lpOverlapped), bytes moved, and after the command the queue length of every port, whether each
// socket is registered, the number of live registrations, and the fake's own invariants (these
// when world.fake() is there). With a
// rule (the explicit properties) only that rule is checked, on the fake's outputs and on the
// model's predictions alike (PsnRuleChecker), so a failure names the rule.
//
// Threading: one thread. Errors: RapidCheck failures (RC_FAIL throws), with a message that names
// the step and both sides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "psn_model.hpp"
#include "psn_world.hpp"
#include "readyport/os.hpp"

namespace readyport::properties {

// What one command did on one side.
struct PsnOutcome {
  std::uint32_t code = 0;                // the call's return code or last error; 0 when none
  std::vector<std::uint32_t> results;    // registration_result per element; empty if A3 failure
  std::vector<OverlappedEntry> entries;  // dequeued, in order
  std::int64_t bytes = 0;                // bytes a data call moved
  std::size_t queued_before = 0;         // packets queued on the call's port before it
};

// One PSN element, as the rule checkers see it.
struct PsnElementFact {
  std::uint32_t incarnation = 0;  // 0: not a socket
  std::uint8_t operation = 0;
  std::uint8_t trigger_flags = 0;
};

// The command, as the rule checkers see it.
struct PsnStep {
  std::string command;                   // its show() text, for messages
  int port = -1;                         // the port index of a port call, -1 for socket calls
  std::vector<PsnElementFact> elements;  // PSN elements, in order
  bool port_closed = false;              // close_port of `port` succeeded
  std::uint32_t socket_closed = 0;       // incarnation closed by closesocket, 0 for none
};

void check_step(const PsnStep& step, const PsnModel& after, const PsnOutcome& want,
                const PsnOutcome& got, PsnWorld& world);

// What a command does to a model (in place) and the outcome that model predicts.
using PsnPredict = std::function<PsnOutcome(PsnModel&)>;

// After the system ran the command and did `got`: the model set when world has one, else
// check_step with a copy of `model` advanced by `predict`.
void judge_step(const PsnStep& step, const PsnModel& model, const PsnPredict& predict,
                const PsnOutcome& got, PsnWorld& world);

// "[key 0x10002 IN|OUT ov 0xdead0000, ...]": entries for messages and show().
std::string entries_text(const std::vector<OverlappedEntry>& entries);
std::string mask_text(std::uint32_t mask);

}  // namespace readyport::properties
