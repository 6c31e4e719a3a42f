// properties/engine_commands.hpp: RapidCheck generators of the engine property's commands and
// cases (engine_case.hpp holds the values and their text).
//
//   readyport::properties::EngineCase c = *readyport::properties::gen_engine_case();
//
// Ownership: none. Threading: RapidCheck's. Errors: none (every generated value is valid).
#pragma once

#include <rapidcheck.h>

#include "engine_case.hpp"

namespace readyport::properties {

rc::Gen<EngineCommand> gen_engine_command();
// The seed is drawn without shrinking (a different seed is a different case, not a smaller one).
rc::Gen<EngineCase> gen_engine_case();

}  // namespace readyport::properties
