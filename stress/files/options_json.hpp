// stress/files/options_json.hpp: StressOptions as JSON, for failure bundles, corpus entries and the
// JSON summary (docs/replay.md shows the objects).
//
// Two objects:
// - the run options, everything that decides what one seed's run is: {"strategy": "mixed",
//   "pct_depth": 3, "runtime": "sim", "steps_max": 2000000, "faults": "drawn",
//   "actions_max": null, "clients_max": null, "peers_max": null} (null: no cap). Every key is
//   required when read back, and no other key is accepted, so that an entry replays the same
//   case even if a default changes later, and a misspelt key is not silently ignored;
// - the invocation: the rest of the command line (seed range, shard, outputs, flags), written
//   for the record and never read back.
//
//   Json run = stress_run_options_json(options);
//   Result<StressOptions> back = stress_run_options_from_json(run, "bundle.options");
//
// Ownership: values. Threading: reentrant. Errors: kInvalidArgument naming the field
// (json_fields.hpp).
#pragma once

#include <string_view>

#include "cli/stress_options.hpp"
#include "files/json_fields.hpp"
#include "readyport/status.hpp"

namespace readyport {

Json stress_run_options_json(const StressOptions& options);
// Default StressOptions with the run options set from `object`.
Result<StressOptions> stress_run_options_from_json(const Json& object, std::string_view where);
// The "seed" and "options" fields of a bundle or corpus entry `document` named `where`.
Status stress_seed_and_options_from_json(const Json& document, const std::string& where,
                                         std::uint64_t* seed_out, StressOptions* options_out);
Json stress_invocation_json(const StressOptions& options);
// The flags that make readyport-stress run `seed` with `options`' run options:
// "--seed 25 --strategy mixed --depth 3 --runtime sim --steps-max 2000000 --faults drawn".
std::string stress_run_flags(const StressOptions& options, std::uint64_t seed);

}  // namespace readyport
