// properties/engine/engine_replay.hpp: replays one engine property case from its one-line text,
// outside GoogleTest and RapidCheck: `readyport-stress --engine-case 'LINE'`, the replay command
// every failure of the engine property prints.
//
//   int rc = readyport::properties::engine_case_replay_main(line, std::cout);  // 0, 1 or 2
//
// The line is engine_case_line()'s format (engine_case.hpp): `seed=.. workers=.. batch=.. ;
// add(c0 oneshot_level IN) ; peer_send(c0, 300) ; ...`.
// Ownership: none kept. Threading: call from a thread no runtime started. Errors: a line that does
// not parse is reported on `out` (the Status's message) and returns 2.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "engine_case.hpp"
#include "engine_world.hpp"

namespace readyport::properties {

// Parses `case_line`, runs the case (isolated in a child process where fork exists, as the
// property does), prints the verdict, the rule, the step it broke after and what fired.
// Returns 0 when the case passes, 1 when it fails, 2 when the line does not parse.
int engine_case_replay_main(std::string_view case_line, std::ostream& out);

// The report of a failed case: the rule and the step it broke after, the status, the case as
// numbered steps, what fired, and the replay command (`readyport-stress --engine-case '...'`).
std::string engine_failure_text(const EngineCase& engine_case, const EngineRunResult& result);
// `readyport-stress --engine-case '<engine_case_line>'`.
std::string engine_case_replay_command(const EngineCase& engine_case);

}  // namespace readyport::properties
