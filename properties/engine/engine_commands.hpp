// properties/engine/engine_commands.hpp: RapidCheck generators of the engine property's commands
// and cases (engine_case.hpp holds the values and their text).
//
//   readyport::properties::EngineCase c = *readyport::properties::gen_engine_case();
//
// Ownership: none. Threading: RapidCheck's. Errors: none (every generated value is valid).
#pragma once

#include <rapidcheck.h>

#include <vector>

#include "engine_case.hpp"

namespace readyport::properties {

rc::Gen<EngineCommand> gen_engine_command();
// The seed is drawn without shrinking (a different seed is a different case, not a smaller one).
// Half the cases have 2 or 3 parallel branches of 1..kEngineBranchCommandsMax commands. Shrinking:
// RapidCheck's own first (commands removed from the prefix and the branches, branches dropped,
// fields simplified), then engine_case_branch_shrinks at every step.
rc::Gen<EngineCase> gen_engine_case();

// The custom shrinks of a case with branches (none without): each whole branch removed; each
// branch's first command moved to the end of the prefix (a branch left empty is removed); each
// branch command removed; each prefix command removed (RapidCheck's own prefix shrinks do not
// apply below a custom shrink, rc::shrinkable::postShrink). Every shrink has fewer branch
// commands or fewer commands, so shrinking ends.
std::vector<EngineCase> engine_case_branch_shrinks(const EngineCase& engine_case);

}  // namespace readyport::properties
