#include "files/bundle.hpp"

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "cli/build_info.hpp"
#include "files/options_json.hpp"
#include "jobs/stress_shrink.hpp"
#include "jobs/summary_json.hpp"
#include "readyport/engine.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport {
namespace {

Json readyport_json() {
  const StressBuildInfo info = stress_build_info();
  Json object = Json::object();
  object["version"] = info.version;
  object["commit"] = info.commit;
  object["compiler"] = info.compiler;
  object["build"] = info.build;
  object["canary"] = info.canary;
  object["tree"] = info.tree;
  return object;
}

Json workload_json(const ChaosWorkload& w) {
  Json object = Json::object();
  object["clients"] = w.clients;
  object["clients_concurrent"] = w.clients_concurrent;
  object["peers"] = w.peers;
  object["liveness_clients"] = w.liveness_clients;
  object["bytes_per_client"] = w.bytes_per_client;
  object["chunk_bytes_max"] = w.chunk_bytes_max;
  object["buffer_bytes"] = w.buffer_bytes;
  object["mode"] = mode_name(w.mode);
  object["workers"] = w.workers;
  object["pollers"] = w.pollers;
  object["connections_max"] = w.connections_max;
  object["actions"] = w.actions;
  object["weight_close"] = w.weight_close;
  object["weight_notify"] = w.weight_notify;
  object["weight_post"] = w.weight_post;
  object["weight_peer"] = w.weight_peer;
  object["weight_client"] = w.weight_client;
  object["weight_behind"] = w.weight_behind;
  object["handler_close_percent"] = w.handler_close_percent;
  object["handler_close_other_percent"] = w.handler_close_other_percent;
  object["action_gap_ms_max"] = w.action_gap_ms_max;
  object["quiet_ms"] = w.quiet_ms;
  object["settle_limit_ms"] = w.settle_limit_ms;
  object["liveness_limit_ms"] = w.liveness_limit_ms;
  object["seed"] = w.seed;
  return object;
}

// The swarm's reading of each open question (fake_options_swarm, fake_options.hpp), and the
// buffer size.
Json fake_json(const FakeOptions& f) {
  Json object = Json::object();
  object["receive_buffer_bytes"] = f.receive_buffer_bytes;
  object["key_change_strict"] = f.key_change_strict;
  object["queued_dropped_on_disable"] = f.queued_dropped_on_disable;
  object["remove_separate_packet"] = f.remove_separate_packet;
  object["remove_dropped_on_close"] = f.remove_dropped_on_close;
  object["oneshot_disarm"] = f.oneshot_disarm == OneshotDisarm::kAtQueue ? "queue" : "dequeue";
  object["early_wake_ms_max"] = f.early_wake_ms_max;
  object["socket_reuse"] = f.socket_reuse;
  object["concurrency_limited"] = f.concurrency_limited;
  object["processors"] = f.processors;
  return object;
}

Json parameters_json(const SeedParameters& p) {
  Json object = Json::object();
  object["line"] = stress_parameters_line(p);
  object["strategy"] = sim_strategy_name(p.strategy);
  object["batch"] = p.batch_count;
  object["workload"] = workload_json(p.workload);
  object["fake"] = fake_json(p.fake);
  object["fault_plan"] = p.plan.to_string();
  return object;
}

Json schedule_json(const StressOptions& options, const SeedParameters& p) {
  Json object = Json::object();
  object["strategy"] = sim_strategy_name(p.strategy);
  object["pct_depth"] =
      options.pct_depth;  // PCT only; kept for a random seed run under --strategy pct
  object["steps_max"] = options.steps_max;
  object["runtime"] = stress_runtime_name(options.runtime);
  return object;
}

// The fault.* coverage rows: faults fired per site.
Json faults_fired_json(const SeedReport& report) {
  Json object = Json::object();
  const std::string prefix = "fault.";
  for (const auto& [name, count] : report.coverage) {
    if (name.rfind(prefix, 0) == 0) {
      object[name.substr(prefix.size())] = count;
    }
  }
  return object;
}

std::string trimmed_line(const std::string& line) {
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

// The "failure" object: the status, its message and its signature ("" for ok).
Json failure_json(const Status& status) {
  Json failure = Json::object();
  failure["status"] = status_code_name(status.code());
  failure["message"] = status.message();
  failure["signature"] = status.ok() ? std::string() : stress_failure_signature(status);
  return failure;
}

// The "trace" object: hash, line count and the tail, each line without its newline.
Json trace_json(const std::string& hash, std::uint64_t lines,
                const std::vector<std::string>& tail_lines) {
  Json trace = Json::object();
  trace["hash"] = hash;
  trace["lines"] = lines;
  Json tail = Json::array();
  for (const std::string& line : tail_lines) {
    tail.push_back(trimmed_line(line));
  }
  trace["tail"] = std::move(tail);
  return trace;
}

// "<base>.json", or the first of "<base>.run2.json" to ".run<kStressBundleRunsMax>.json" that does
// not exist (past the last, the last).
std::string free_bundle_path(const std::string& base) {
  std::string path = base + ".json";
  std::error_code error;  // a path that cannot be checked counts as free
  for (std::uint32_t run = 2; run <= kStressBundleRunsMax && std::filesystem::exists(path, error);
       ++run) {
    path = base + ".run" + std::to_string(run) + ".json";
  }
  return path;
}

// "<dir>/" (or "" for no directory).
std::string dir_prefix(const std::string& dir) {
  std::string base = dir;
  if (!base.empty() && base.back() != '/' && base.back() != '\\') {
    base += '/';
  }
  return base;
}

// Everything but the outcome: shared by the two kinds of bundle.
Json bundle_head(const StressOptions& options, const SeedParameters& parameters,
                 const StressBundleContext& context) {
  Json bundle = Json::object();
  bundle["format"] = kStressBundleFormat;
  bundle["format_version"] = kStressBundleFormatVersion;
  bundle["readyport"] = readyport_json();
  bundle["origin"] = context.origin;
  bundle["command_line"] = context.command_line;
  bundle["seed"] = parameters.seed;
  bundle["options"] = stress_run_options_json(options);
  bundle["invocation"] = stress_invocation_json(options);
  bundle["parameters"] = parameters_json(parameters);
  bundle["schedule"] = schedule_json(options, parameters);
  return bundle;
}

void add_replay(Json& bundle, const StressOptions& options, std::uint64_t seed,
                const StressBundleContext& context) {
  const std::string program =
      context.command_line.empty() ? std::string("readyport-stress") : context.command_line[0];
  bundle["replay"] = program + " --replay " + context.path;
  bundle["replay_flags"] = program + " " + stress_run_flags(options, seed) + " --verbose";
}

}  // namespace

std::string stress_bundle_path(const std::string& dir, std::uint64_t seed,
                               std::string_view suffix) {
  return free_bundle_path(dir_prefix(dir) + "seed-" + std::to_string(seed) + std::string(suffix));
}

Json stress_bundle_json(const StressOptions& options, const SeedReport& report,
                        const StressBundleContext& context) {
  Json bundle = bundle_head(options, report.parameters, context);
  bundle["failure"] = failure_json(report.status);
  bundle["trace"] = trace_json(report.trace_hash, report.trace_lines, report.trace_tail);
  // How each rule fared on this seed: what it could not judge is never silently a pass.
  bundle["oracle_judgement"] = stress_judgement_json(report.oracle.judgement);
  bundle["faults_fired"] = faults_fired_json(report);
  // The faults that fired as pinned hits: `--faults <fired_hits>` replays the same run ("" when
  // more fired than a plan holds).
  bundle["fired_hits"] = report.fired_hits;
  Json sim = Json::object();
  sim["steps"] = report.sim.steps;
  sim["decisions"] = report.sim.decisions;
  sim["switches"] = report.sim.switches;
  sim["now_ns"] = report.sim.now_ns;
  bundle["sim"] = std::move(sim);
  add_replay(bundle, options, report.parameters.seed, context);
  return bundle;
}

Json stress_abort_bundle_json(const StressOptions& options, const SeedParameters& parameters,
                              std::string_view violation, const StressBundleContext& context) {
  Json bundle = bundle_head(options, parameters, context);
  Json failure = Json::object();
  failure["status"] = "aborted";
  std::string message =
      "the process aborted during this seed (an engine assertion: see its stderr)";
  if (!violation.empty()) {
    message += "; the oracle had found: " + std::string(violation);
  }
  failure["message"] = message;
  failure["signature"] =
      violation.empty()
          ? std::string("abort")
          : stress_failure_signature(Status(StatusCode::kInternal, std::string(violation)));
  bundle["failure"] = std::move(failure);
  Json trace = Json::object();
  trace["hash"] = "";
  trace["lines"] = 0;
  trace["tail"] = Json::array();
  bundle["trace"] = std::move(trace);
  add_replay(bundle, options, parameters.seed, context);
  return bundle;
}

Result<StressBundle> stress_bundle_parse(std::string_view text, std::string_view name) {
  Result<Json> document = json_parse_document(text, name);
  if (!document.ok()) {
    return document.status();
  }
  return stress_bundle_from_json(document.value(), name);
}

namespace {

// The bundle's "readyport" object: the build that wrote it.
Status read_build(const Json& document, const std::string& where, StressBundle& bundle) {
  const Json* build = nullptr;
  if (Status s = json_field_object(document, where, "readyport", &build); !s.ok()) {
    return s;
  }
  const std::string build_where = where + ".readyport";
  if (Status s = json_field_string(*build, build_where, "version", &bundle.version); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(*build, build_where, "commit", &bundle.commit); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string_optional(*build, build_where, "compiler", "", &bundle.compiler);
      !s.ok()) {
    return s;
  }
  if (Status s = json_field_string_optional(*build, build_where, "canary", "", &bundle.canary);
      !s.ok()) {
    return s;
  }
  if (Status s = json_field_string_optional(*build, build_where, "tree", "unknown", &bundle.tree);
      !s.ok()) {
    return s;
  }
  return Status();
}

// The bundle's "failure" and "trace" objects.
Status read_failure_and_trace(const Json& document, const std::string& where,
                              StressBundle& bundle) {
  const Json* failure = nullptr;
  if (Status s = json_field_object(document, where, "failure", &failure); !s.ok()) {
    return s;
  }
  const std::string failure_where = where + ".failure";
  if (Status s = json_field_string(*failure, failure_where, "status", &bundle.status); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(*failure, failure_where, "message", &bundle.message); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(*failure, failure_where, "signature", &bundle.signature);
      !s.ok()) {
    return s;
  }
  const Json* trace = nullptr;
  if (Status s = json_field_object(document, where, "trace", &trace); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(*trace, where + ".trace", "hash", &bundle.trace_hash); !s.ok()) {
    return s;
  }
  return Status();
}

// The bundle's "explore" object, when it has one (an exploration's failure).
Status read_explore(const Json& document, const std::string& where, StressBundle& bundle) {
  if (!document.contains("explore")) {
    return Status();
  }
  const Json* explore = nullptr;
  if (Status s = json_field_object(document, where, "explore", &explore); !s.ok()) {
    return s;
  }
  const std::string explore_where = where + ".explore";
  if (Status s = json_field_string(*explore, explore_where, "world", &bundle.explore_world);
      !s.ok()) {
    return s;
  }
  std::uint64_t faults = 0;
  if (Status s =
          json_field_u64(*explore, explore_where, "faults_max", 0, kStressExploreBoundMax, &faults);
      !s.ok()) {
    return s;
  }
  bundle.explore_faults = static_cast<std::uint32_t>(faults);
  if (Status s = json_field_string(*explore, explore_where, "schedule", &bundle.explore_schedule);
      !s.ok()) {
    return s;
  }
  if (bundle.explore_world.empty() || bundle.explore_schedule.empty() ||
      bundle.explore_schedule.find_first_not_of("0123456789,") != std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  explore_where + ": needs a world and a schedule of thread ids and commas");
  }
  return Status();
}

}  // namespace

std::string stress_explore_bundle_path(const std::string& dir, std::string_view world) {
  return free_bundle_path(dir_prefix(dir) + "explore-" + std::string(world));
}

Json stress_explore_bundle_json(const StressExploreFailure& failure,
                                const StressBundleContext& context) {
  Json bundle = Json::object();
  bundle["format"] = kStressBundleFormat;
  bundle["format_version"] = kStressBundleFormatVersion;
  bundle["readyport"] = readyport_json();
  bundle["origin"] = context.origin;
  bundle["command_line"] = context.command_line;
  bundle["seed"] = 0;  // an exploration draws nothing: the schedule names the run
  bundle["options"] = stress_run_options_json(StressOptions{});
  Json explore = Json::object();
  explore["world"] = failure.world;
  explore["preemptions_max"] = failure.preemptions_max;
  explore["faults_max"] = failure.faults_max;
  explore["schedule"] = failure.schedule;
  explore["preemptions"] = failure.preemptions;
  explore["faults"] = failure.faults;
  bundle["explore"] = std::move(explore);
  bundle["failure"] = failure_json(failure.verdict);
  bundle["trace"] = trace_json(failure.trace_hash, failure.trace_lines, failure.trace_tail);
  const std::string program =
      context.command_line.empty() ? std::string("readyport-stress") : context.command_line[0];
  bundle["replay"] = program + " --replay " + context.path;
  bundle["replay_flags"] = program + " --explore " + failure.world + " --faults " +
                           std::to_string(failure.faults_max) + " --schedule " + failure.schedule;
  return bundle;
}

Result<StressBundle> stress_bundle_from_json(const Json& document, std::string_view name) {
  const std::string where = std::string(name);
  StressBundle bundle;
  std::string format;
  if (Status s = json_field_string(document, where, "format", &format); !s.ok()) {
    return s;
  }
  if (format != kStressBundleFormat) {
    return Status(StatusCode::kInvalidArgument,
                  where + ".format: '" + format + "', expected '" + kStressBundleFormat + "'");
  }
  if (Status s = json_format_version_check(document, where, kStressBundleFormatVersion); !s.ok()) {
    return s;
  }
  if (Status s = read_build(document, where, bundle); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string_optional(document, where, "origin", "", &bundle.origin);
      !s.ok()) {
    return s;
  }
  if (Status s = stress_seed_and_options_from_json(document, where, &bundle.seed, &bundle.options);
      !s.ok()) {
    return s;
  }
  if (Status s = read_failure_and_trace(document, where, bundle); !s.ok()) {
    return s;
  }
  if (Status s = read_explore(document, where, bundle); !s.ok()) {
    return s;
  }
  return bundle;
}

}  // namespace readyport
