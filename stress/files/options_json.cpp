#include "files/options_json.hpp"

#include <string>

namespace readyport {
namespace {

// The same ranges as the command line (stress_options.cpp).
constexpr std::uint64_t kDepthMax = 64;
constexpr std::uint64_t kStepsMin = 1000;
constexpr std::uint64_t kStepsMax = 1'000'000'000;
constexpr std::uint64_t kCapMax = 1'000'000;

Json cap_json(std::uint32_t cap) {
  return cap == StressOptions::kNoCap ? Json(nullptr) : Json(cap);
}

Status read_cap(const Json& object, std::string_view where, const char* key,
                std::uint32_t* cap_out) {
  bool null = false;
  std::uint64_t value = 0;
  if (Status s = json_field_u64_or_null(object, where, key, 0, kCapMax, &null, &value); !s.ok()) {
    return s;
  }
  *cap_out = null ? StressOptions::kNoCap : static_cast<std::uint32_t>(value);
  return Status();
}

// "schedule_seed" (absent: the seed's own) and "stalls" (absent: none; sim_stalls_parse's text,
// on the simulated runtime only).
Status read_schedule(const Json& object, std::string_view where, StressOptions* options) {
  if (object.contains("schedule_seed")) {
    if (Status s =
            json_field_u64(object, where, "schedule_seed", 1, kJsonU64Max, &options->schedule_seed);
        !s.ok()) {
      return s;
    }
  }
  if (!object.contains("stalls")) {
    return Status();
  }
  std::string text;
  if (Status s = json_field_string(object, where, "stalls", &text); !s.ok()) {
    return s;
  }
  Result<std::vector<SimStall>> stalls = sim_stalls_parse(text);
  if (!stalls.ok()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ".stalls: " + stalls.status().message());
  }
  if (!stalls.value().empty() && options->runtime != StressRuntime::kSim) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ".stalls: the simulation's schedule only (runtime sim)");
  }
  options->stalls = std::move(stalls).value();
  return Status();
}

}  // namespace

Json stress_run_options_json(const StressOptions& options) {
  Json object = Json::object();
  object["strategy"] = stress_strategy_name(options.strategy);
  object["pct_depth"] = options.pct_depth;
  object["runtime"] = stress_runtime_name(options.runtime);
  object["os"] = stress_os_name(options.os);
  object["steps_max"] = options.steps_max;
  object["faults"] = stress_faults_text(options);
  object["actions_max"] = cap_json(options.actions_max);
  object["clients_max"] = cap_json(options.clients_max);
  object["peers_max"] = cap_json(options.peers_max);
  if (options.schedule_seed != 0) {  // absent: each seed's own (as before the field existed)
    object["schedule_seed"] = options.schedule_seed;
  }
  if (!options.stalls.empty()) {  // absent: none (as before the field existed)
    object["stalls"] = sim_stalls_text(options.stalls);
  }
  return object;
}

Result<StressOptions> stress_run_options_from_json(const Json& object, std::string_view where) {
  if (Status s =
          json_fields_known(object, where,
                            {"strategy", "pct_depth", "runtime", "os", "steps_max", "faults",
                             "actions_max", "clients_max", "peers_max", "schedule_seed", "stalls"});
      !s.ok()) {
    return s;
  }
  StressOptions options;
  std::string text;
  if (Status s = json_field_string(object, where, "strategy", &text); !s.ok()) {
    return s;
  }
  if (!stress_strategy_parse(text, &options.strategy)) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ".strategy: '" + text +
                      "' is not random, pct, delay_bounded, fair, mixed or portfolio");
  }
  std::uint64_t number = 0;
  if (Status s = json_field_u64(object, where, "pct_depth", 1, kDepthMax, &number); !s.ok()) {
    return s;
  }
  options.pct_depth = static_cast<std::uint32_t>(number);
  if (Status s = json_field_string(object, where, "runtime", &text); !s.ok()) {
    return s;
  }
  if (!stress_runtime_parse(text, &options.runtime)) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ".runtime: '" + text + "' is not sim or free");
  }
  // "os" is absent from entries written before --os existed: the fake.
  if (object.contains("os")) {
    if (Status s = json_field_string(object, where, "os", &text); !s.ok()) {
      return s;
    }
    if (text == "windows") {
      options.os = StressOs::kWindows;
    } else if (text != "fake") {
      return Status(StatusCode::kInvalidArgument,
                    std::string(where) + ".os: '" + text + "' is not fake or windows");
    }
  }
  if (Status s =
          json_field_u64(object, where, "steps_max", kStepsMin, kStepsMax, &options.steps_max);
      !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(object, where, "faults", &text); !s.ok()) {
    return s;
  }
  if (Status s = stress_faults_set(text, &options); !s.ok()) {
    return Status(StatusCode::kInvalidArgument, std::string(where) + ".faults: " + s.message());
  }
  if (Status s = read_cap(object, where, "actions_max", &options.actions_max); !s.ok()) {
    return s;
  }
  if (Status s = read_cap(object, where, "clients_max", &options.clients_max); !s.ok()) {
    return s;
  }
  if (Status s = read_cap(object, where, "peers_max", &options.peers_max); !s.ok()) {
    return s;
  }
  if (Status s = read_schedule(object, where, &options); !s.ok()) {
    return s;
  }
  return options;
}

Json stress_invocation_json(const StressOptions& options) {
  Json object = Json::object();
  object["first_seed"] = options.first_seed;
  object["seeds"] = options.seeds;
  object["seed_given"] = options.seed_given;
  object["shard"] =
      std::to_string(options.shard_index + 1) + "/" + std::to_string(options.shard_count);
  object["require_coverage"] = options.require_coverage;
  object["stop_on_failure"] = options.stop_on_failure;
  object["trace"] = options.trace;
  object["verbose"] = options.verbose;
  object["trace_out"] = options.trace_out;
  object["trace_format"] = stress_trace_format_name(options.trace_format);
  object["shrink"] = options.shrink;
  object["bundle_dir"] = options.bundle_dir;
  object["json"] = options.json_out;
  object["markdown"] = options.markdown_out;
  object["corpus"] = options.corpus == StressOptions::Corpus::kDefault ? std::string("default")
                     : options.corpus == StressOptions::Corpus::kNone  ? std::string("none")
                                                                       : options.corpus_dir;
  object["replay"] = options.replay;
  return object;
}

std::string stress_run_flags(const StressOptions& options, std::uint64_t seed) {
  std::string flags =
      "--seed " + std::to_string(seed) + " --strategy " + stress_strategy_name(options.strategy) +
      " --depth " + std::to_string(options.pct_depth) + " --runtime " +
      stress_runtime_name(options.runtime) + " --steps-max " + std::to_string(options.steps_max) +
      " --faults " + stress_faults_text(options);
  constexpr std::uint32_t kNoCap = StressOptions::kNoCap;
  if (options.actions_max != kNoCap) {
    flags += " --actions-max " + std::to_string(options.actions_max);
  }
  if (options.clients_max != kNoCap) {
    flags += " --clients-max " + std::to_string(options.clients_max);
  }
  if (options.peers_max != kNoCap) {
    flags += " --peers-max " + std::to_string(options.peers_max);
  }
  if (options.schedule_seed != 0) {
    flags += " --schedule-seed " + std::to_string(options.schedule_seed);
  }
  if (!options.stalls.empty()) {
    flags += " --stalls " + sim_stalls_text(options.stalls);
  }
  return flags;
}

Status stress_seed_and_options_from_json(const Json& document, const std::string& where,
                                         std::uint64_t* seed_out, StressOptions* options_out) {
  if (Status s = json_field_u64(document, where, "seed", 0, kJsonU64Max, seed_out); !s.ok()) {
    return s;
  }
  const Json* options = nullptr;
  if (Status s = json_field_object(document, where, "options", &options); !s.ok()) {
    return s;
  }
  Result<StressOptions> run_options = stress_run_options_from_json(*options, where + ".options");
  if (!run_options.ok()) {
    return run_options.status();
  }
  *options_out = run_options.value();
  return Status();
}

}  // namespace readyport
