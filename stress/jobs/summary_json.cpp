#include "jobs/summary_json.hpp"

#include <string>

#include "cli/build_info.hpp"
#include "files/options_json.hpp"
#include "runs/slot_tuple_reasons.hpp"

namespace readyport {
namespace {

Json failure_json(const StressFailure& failure) {
  Json object = Json::object();
  object["seed"] = failure.seed;
  object["source"] = failure.from_corpus ? "corpus" : "seeds";
  object["entry"] = failure.entry;
  object["status"] = failure.status;
  object["signature"] = failure.signature;
  object["message"] = failure.message;
  object["bundle"] = failure.bundle;
  return object;
}

Json totals_json(const StressTotals& t) {
  Json object = Json::object();
  object["connections"] = t.connections;
  object["notifications"] = t.notifications;
  object["port_calls"] = t.port_calls;
  object["bytes_received"] = t.bytes_received;
  object["trace_lines"] = t.trace_lines;
  object["stale_packets"] = t.stale_packets;
  object["dropped_packets"] = t.dropped_packets;
  object["quarantined"] = t.quarantined;
  object["scheduler_steps"] = t.steps;
  object["scheduler_switches"] = t.switches;
  object["seeds_cut"] = t.seeds_cut;
  return object;
}

// Coverage of states in context: the check's figures and lists, and every reached tuple's count.
Json tuples_json(const SlotTuples& tuples) {
  const SlotTupleCheck check = slot_tuple_check(tuples);
  Json object = Json::object();
  object["allowed"] = check.allowed;
  object["listed_unreachable"] = check.listed - check.pending;
  object["listed_pending"] = check.pending;
  object["reached"] = check.reached;
  const auto names = [](const std::vector<std::uint32_t>& list) {
    Json array = Json::array();
    for (const std::uint32_t index : list) {
      array.push_back(slot_tuple_name(index));
    }
    return array;
  };
  object["never_reached"] = names(check.unreached);
  object["listed_yet_reached"] = names(check.listed_reached);
  object["stale_reasons"] = check.rules_stale;
  Json counts = Json::object();
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (tuples.counts[i] != 0) {
      counts[slot_tuple_name(i)] = tuples.counts[i];
    }
  }
  object["counts"] = std::move(counts);
  return object;
}

}  // namespace

Json stress_judgement_json(const OracleJudgement& judgement) {
  Json object = Json::object();
  Json rules = Json::object();
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    Json one = Json::object();
    one["judged"] = judgement.judged[rule];
    one["violated"] = judgement.violated[rule];
    one["ambiguous"] = judgement.ambiguous[rule];
    one["unjudged"] = judgement.unjudged[rule];
    rules["O" + std::to_string(rule)] = std::move(one);
  }
  object["rules"] = std::move(rules);
  Json bounds = Json::object();
  for (std::size_t i = 0; i < kOracleBounds; ++i) {
    bounds[oracle_bound_name(static_cast<OracleBound>(i))] = judgement.bounds_hit[i];
  }
  object["bounds_hit"] = std::move(bounds);
  return object;
}

Json stress_figures_json(const StressFigures& figures) {
  Json object = Json::object();
  object["notifications"] = figures.notifications;
  object["port_calls"] = figures.port_calls;
  object["port_calls_per_notification"] = stress_figures_per_notification(figures);
  object["remove_ored_with_in"] = figures.remove_ored_with_in;
  object["remove_separate"] = figures.remove_separate;
  object["stale_packets"] = figures.stale_packets;
  return object;
}

namespace {

// The build that ran: version, commit, compiler, build type, canary, tree state.
Json build_json(const StressBuildInfo& info) {
  Json build = Json::object();
  build["version"] = info.version;
  build["commit"] = info.commit;
  build["compiler"] = info.compiler;
  build["build"] = info.build;
  build["canary"] = info.canary;
  build["tree"] = info.tree;
  return build;
}

// The bounds of a seed and of the process that ran it (run_summary.hpp).
Json limits_json(const StressLimits& limits) {
  Json object = Json::object();
  object["steps_max"] = limits.steps_max;
  object["trace_mb_max"] = limits.trace_mb_max;
  object["memory_mb_max"] = limits.memory_mb_max;
  object["memory_data_limit"] = limits.memory_data_limit;
  object["hang_seconds"] = limits.hang_seconds;
  return object;
}

// The corpus replayed first: where from, why none, how it went.
Json corpus_json(const StressCorpusSummary& c) {
  Json corpus = Json::object();
  corpus["dir"] = c.dir;
  corpus["note"] = c.note;
  corpus["entries"] = c.entries;
  corpus["passed"] = c.passed;
  corpus["failed"] = c.failed;
  return corpus;
}

}  // namespace

Json stress_summary_json(const StressOptions& options, const StressRunSummary& summary,
                         const StressFigures& figures) {
  Json document = Json::object();
  document["format"] = kStressSummaryFormat;
  document["format_version"] = 2;  // 2: passed + failed + cut == seeds_run; limits
  document["readyport"] = build_json(stress_build_info());
  document["options"] = stress_run_options_json(options);
  document["invocation"] = stress_invocation_json(options);
  document["shard"] =
      std::to_string(options.shard_index + 1) + "/" + std::to_string(options.shard_count);
  document["first_seed"] = options.first_seed;
  document["seeds_planned"] = summary.seeds_planned;
  document["seeds_run"] = summary.totals.seeds;
  const StressSeedAccount account = stress_seed_account(summary);
  document["passed"] = account.passed;
  document["failed"] = account.failed;
  document["cut"] = account.cut;
  document["not_run"] = account.not_run;
  document["limits"] = limits_json(summary.limits);
  document["unblamed_deaths"] = summary.unblamed_deaths;
  document["sweep_error"] = summary.sweep_error;
  document["corpus"] = corpus_json(summary.corpus);
  Json failures = Json::array();
  for (const StressFailure& failure : summary.failures) {
    failures.push_back(failure_json(failure));
  }
  document["failures"] = std::move(failures);
  document["failures_total"] = summary.failures.size();
  document["stopped_early"] = summary.stopped_early;
  document["totals"] = totals_json(summary.totals);
  document["oracle_judgement"] = stress_judgement_json(summary.totals.judgement);
  Json coverage = Json::object();
  Json zero_rows = Json::array();
  Json faults = Json::object();
  const std::string prefix = "fault.";
  for (const auto& [name, count] : summary.totals.coverage) {
    if (name.rfind(prefix, 0) == 0) {
      faults[name.substr(prefix.size())] = count;
    } else {
      coverage[name] = count;
    }
    if (count == 0) {
      zero_rows.push_back(name);
    }
  }
  document["coverage"] = std::move(coverage);
  document["coverage_zero_rows"] = std::move(zero_rows);
  SlotTuples tuples = summary.totals.tuples;  // the range's and the corpus's
  tuples.add(summary.corpus_tuples);
  document["slot_tuples"] = tuples_json(tuples);
  document["faults_fired"] = std::move(faults);
  document["os"] = stress_os_name(options.os);
  document["figures"] = stress_figures_json(figures);
  Json hashes = Json::array();
  for (const StressSeedHash& hash : summary.seed_hashes) {
    Json row = Json::object();
    row["seed"] = hash.seed;
    row["trace_hash"] = hash.trace_hash;
    hashes.push_back(std::move(row));
  }
  document["seed_hashes"] = std::move(hashes);
  document["seed_hashes_left_off"] = summary.seed_hashes_left_off;
  document["seconds"] = summary.seconds;
  document["jobs"] = summary.jobs;
  document["steps_all"] = summary.steps_all;
  document["seeds_per_second"] = stress_summary_seeds_per_second(summary);
  document["scheduled_calls_per_second"] = stress_summary_steps_per_second(summary);
  document["exit_status"] = summary.exit_status;
  return document;
}

}  // namespace readyport
