#include "jobs/run_summary.hpp"

#include <cstdio>
#include <utility>

#include "runs/slot_tuple_reasons.hpp"

namespace readyport {
namespace {

using ull = unsigned long long;

// The coverage table; returns the number of zero rows.
std::size_t print_coverage(const StressTotals& totals) {
  std::size_t zero = 0;
  std::printf("\ncoverage (summed over seeds; every row must be non-zero in the default run)\n");
  for (const auto& [name, count] : totals.coverage) {
    std::printf("  %-34s %12llu%s\n", name.c_str(), static_cast<ull>(count),
                count == 0 ? "   <-- never reached" : "");
    if (count == 0) {
      ++zero;
    }
  }
  return zero;
}

// Coverage of states in context; returns the number of problems (slot_tuple_reasons.hpp).
std::size_t print_tuples(const SlotTuples& tuples) {
  const SlotTupleCheck check = slot_tuple_check(tuples);
  std::printf(
      "\nstates in context (slot state, event, engine context; docs/coverage.md)\n"
      "  tuples reached         %u of %u the code allows (%u listed unreachable, with reasons; "
      "%u to reach; %u of those pending: reachable, not reached by the default run yet, listed "
      "with what they need)\n",
      check.reached, check.allowed, check.listed - check.pending,
      check.allowed - check.listed + check.pending, check.pending);
  constexpr std::size_t kListedMax = 40;
  const auto list = [](const char* what, const std::vector<std::uint32_t>& names) {
    for (std::size_t i = 0; i < names.size() && i < kListedMax; ++i) {
      std::printf("  %-22s %s\n", what, slot_tuple_name(names[i]).c_str());
    }
    if (names.size() > kListedMax) {
      std::printf("  %-22s (%zu more)\n", what, names.size() - kListedMax);
    }
  };
  std::printf(
      "  not seen               a generation's wrap (2^32 reuses of one slot; no engine option "
      "narrows a 64-bit host's generations: ci/coverage_reasons.txt)\n");
  list("never reached", check.unreached);
  list("listed, yet reached", check.listed_reached);
  for (const std::string& rule : check.rules_stale) {
    std::printf("  stale reason           '%s' names no allowed tuple it decides\n", rule.c_str());
  }
  return check.unreached.size() + check.listed_reached.size() + check.rules_stale.size();
}

void print_failures(const StressRunSummary& summary) {
  bool any_range = false;
  for (const StressFailure& failure : summary.failures) {
    any_range = any_range || !failure.from_corpus;
  }
  if (any_range) {
    // Every failing seed of the range on one line (scripts read it), then one line per bundle.
    std::printf("  failing seeds         ");
    for (const StressFailure& failure : summary.failures) {
      if (!failure.from_corpus) {
        std::printf(" %llu", static_cast<ull>(failure.seed));
      }
    }
    std::printf("\n");
  }
  for (const StressFailure& failure : summary.failures) {
    if (failure.from_corpus) {
      std::printf("  failing corpus entry   %s (seed %llu, %s): bundle %s\n", failure.entry.c_str(),
                  static_cast<ull>(failure.seed), failure.signature.c_str(),
                  failure.bundle.empty() ? "(not written)" : failure.bundle.c_str());
    } else {
      std::printf("  bundle                 seed %llu (%s): %s\n", static_cast<ull>(failure.seed),
                  failure.signature.c_str(),
                  failure.bundle.empty() ? "(not written)" : failure.bundle.c_str());
    }
  }
}

}  // namespace

std::string stress_faults_description(const StressOptions& options) {
  switch (options.faults) {
    case StressOptions::Faults::kDrawn:
      return "drawn per seed";
    case StressOptions::Faults::kOff:
      return "off";
    case StressOptions::Faults::kPlan:
      return options.fault_plan;
  }
  READYPORT_UNREACHABLE();
}

std::uint64_t stress_judgement_print(const OracleJudgement& judgement) {
  const std::uint64_t not_judged = judgement.not_judged();
  std::uint64_t bounds = 0;
  for (const std::uint64_t hits : judgement.bounds_hit) {
    bounds += hits;
  }
  // A rule that met nothing to judge in this run passed nothing either: named, never hidden.
  std::string idle;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    if (judgement.judged[rule] == 0) {
      idle += (idle.empty() ? "O" : " O") + std::to_string(rule);
    }
  }
  std::printf("  oracle judgement       %s; ambiguous: %s; unjudged: %s; nothing to judge: %s\n",
              not_judged == 0 ? "every rule judged" : "NOT every rule judged",
              oracle_rule_list_text(judgement.ambiguous).c_str(),
              oracle_rule_list_text(judgement.unjudged).c_str(),
              idle.empty() ? "none" : idle.c_str());
  std::string table = oracle_rules_text(judgement);
  std::size_t start = 0;
  while (start < table.size()) {
    const std::size_t end = std::min(table.find('\n', start), table.size());
    std::printf("    %.*s\n", static_cast<int>(end - start), table.c_str() + start);
    start = end + 1;
  }
  std::printf("  oracle bounds hit      %s%s\n", oracle_bounds_text(judgement.bounds_hit).c_str(),
              bounds == 0 ? "" : " (what it forgot there was NOT judged)");
  return not_judged;
}

std::string stress_limits_text(const StressLimits& limits) {
  std::string text = "a seed: " + std::to_string(limits.steps_max) + " steps";
  if (limits.trace_mb_max != 0) {
    text += " (seam calls), its trace kept to " + std::to_string(limits.trace_mb_max) + " MiB";
  }
  if (limits.hang_seconds == 0) {
    return text + "; no child process (one process: no memory limit, no hang limit)";
  }
  text += "; a child process: ";
  text += limits.memory_mb_max == 0
              ? std::string("no memory limit")
              : std::to_string(limits.memory_mb_max) + " MiB (resident" +
                    (limits.memory_data_limit ? ", and its data segment)" : ")");
  return text + ", " + std::to_string(limits.hang_seconds) + " s without a finished seed";
}

StressSeedAccount stress_seed_account(const StressRunSummary& summary) {
  const StressTotals& totals = summary.totals;
  StressSeedAccount account;
  account.cut = totals.seeds_cut;
  account.failed = totals.failures - totals.seeds_cut;
  account.passed = totals.seeds - totals.failures;
  account.not_run = summary.seeds_planned > totals.seeds ? summary.seeds_planned - totals.seeds : 0;
  return account;
}

StressRunSummary stress_summary_begin(std::uint64_t seeds_planned) {
  StressRunSummary summary;
  summary.seeds_planned = seeds_planned;
  for (const std::string& row : stress_coverage_rows()) {
    summary.totals.coverage.emplace_back(row, 0);
  }
  return summary;
}

double stress_summary_seeds_per_second(const StressRunSummary& summary) {
  if (summary.seconds <= 0) {
    return 0;
  }
  return static_cast<double>(summary.totals.seeds + summary.corpus.entries) / summary.seconds;
}

double stress_summary_steps_per_second(const StressRunSummary& summary) {
  if (summary.seconds <= 0) {
    return 0;
  }
  return static_cast<double>(summary.steps_all) / summary.seconds;
}

StressSeedShare stress_seed_share(const SeedReport& report) {
  StressSeedShare share;
  share.seed = report.parameters.seed;
  share.trace_hash = report.trace_hash;
  StressTotals& totals = share.totals;
  totals.seeds = 1;
  totals.failures = report.status.ok() ? 0 : 1;
  totals.connections = report.counts.clients_started + report.counts.server_accepted;
  totals.notifications = report.engine.notifications;
  totals.port_calls = report.engine.port_calls;
  totals.bytes_received = report.counts.bytes_received;
  totals.trace_lines = report.trace_lines;
  totals.stale_packets = report.engine.stale_dropped;
  totals.dropped_packets = report.engine.closing_dropped + report.engine.unwanted_dropped;
  totals.quarantined = report.engine.quarantined;
  totals.steps = report.sim.steps;
  totals.switches = report.sim.switches;
  totals.coverage = report.coverage;
  totals.tuples = report.tuples;
  totals.judgement = report.oracle.judgement;
  return share;
}

StressSeedShare stress_seed_share_lost(std::uint64_t seed) {
  StressSeedShare share;
  share.seed = seed;
  share.totals.seeds = 1;
  share.totals.failures = 1;
  share.totals.seeds_cut = 1;
  return share;
}

const std::vector<std::uint64_t StressTotals::*>& stress_totals_counters() {
  static const std::vector<std::uint64_t StressTotals::*> counters = {
      &StressTotals::seeds,         &StressTotals::failures,      &StressTotals::connections,
      &StressTotals::notifications, &StressTotals::port_calls,    &StressTotals::bytes_received,
      &StressTotals::trace_lines,   &StressTotals::stale_packets, &StressTotals::dropped_packets,
      &StressTotals::quarantined,   &StressTotals::steps,         &StressTotals::switches,
      &StressTotals::seeds_cut};
  return counters;
}

void stress_totals_add(StressTotals& totals, const StressTotals& more) {
  for (const auto counter : stress_totals_counters()) {
    totals.*counter += more.*counter;
  }
  totals.judgement.add(more.judgement);
  totals.tuples.add(more.tuples);
  // Rows are matched by name: the summary's rows are stress_coverage_rows(); a seed's rows are
  // those, then one per fault site fired (not summed).
  for (const auto& [name, count] : more.coverage) {
    for (auto& row : totals.coverage) {
      if (row.first == name) {
        row.second += count;
      }
    }
  }
}

void stress_summary_add_share(StressRunSummary& summary, const StressSeedShare& share) {
  if (summary.seed_hashes.size() < kStressSeedHashesMax) {
    summary.seed_hashes.push_back(StressSeedHash{share.seed, share.trace_hash});
  } else {
    summary.seed_hashes_left_off++;
  }
  stress_totals_add(summary.totals, share.totals);
}

void stress_summary_add_seed(StressRunSummary& summary, const SeedReport& report) {
  stress_summary_add_share(summary, stress_seed_share(report));
}

void stress_summary_add_failure(StressRunSummary& summary, StressFailure failure) {
  if (failure.from_corpus) {
    summary.corpus.failed++;
  }
  summary.failures.push_back(std::move(failure));
}

namespace {

// The summary's first lines: what ran, the corpus, how every seed ended, the limits.
void print_head(const StressOptions& options, const StressRunSummary& summary) {
  std::printf(
      "\nreadyport-stress summary (runtime %s, strategy %s, depth %u, shard %u/%u, "
      "faults %s)\n",
      stress_runtime_name(options.runtime), stress_strategy_name(options.strategy),
      options.pct_depth, options.shard_index + 1, options.shard_count,
      stress_faults_description(options).c_str());
  if (!summary.corpus.dir.empty()) {
    std::printf("  corpus entries         %llu (%llu passed, %llu failed) from %s\n",
                static_cast<ull>(summary.corpus.entries), static_cast<ull>(summary.corpus.passed),
                static_cast<ull>(summary.corpus.failed), summary.corpus.dir.c_str());
  } else {
    std::printf("  corpus entries         none (%s)\n", summary.corpus.note.c_str());
  }
  const StressSeedAccount account = stress_seed_account(summary);
  const std::string not_run =
      account.not_run == 0 ? std::string() : "; " + std::to_string(account.not_run) + " not run";
  std::printf(
      "  seeds run              %llu of %llu: %llu passed, %llu failed, %llu cut short (their "
      "process died in them)%s\n",
      static_cast<ull>(summary.totals.seeds), static_cast<ull>(summary.seeds_planned),
      static_cast<ull>(account.passed), static_cast<ull>(account.failed),
      static_cast<ull>(account.cut), not_run.c_str());
  std::printf("  limits                 %s\n", stress_limits_text(summary.limits).c_str());
}

}  // namespace

std::size_t stress_summary_print(const StressOptions& options, StressRunSummary& summary) {
  const StressTotals& totals = summary.totals;
  const double per_notification =
      totals.notifications == 0
          ? 0.0
          : static_cast<double>(totals.port_calls) / static_cast<double>(totals.notifications);
  print_head(options, summary);
  std::printf("  connections            %llu\n", static_cast<ull>(totals.connections));
  std::printf("  notifications          %llu\n", static_cast<ull>(totals.notifications));
  std::printf("  port calls             %llu\n", static_cast<ull>(totals.port_calls));
  std::printf("  port calls/notification %.3f\n", per_notification);
  std::printf("  bytes echoed back      %llu\n", static_cast<ull>(totals.bytes_received));
  std::printf("  stale/dropped packets  %llu/%llu\n", static_cast<ull>(totals.stale_packets),
              static_cast<ull>(totals.dropped_packets));
  std::printf("  quarantined slots      %llu\n", static_cast<ull>(totals.quarantined));
  std::printf("  trace lines judged     %llu\n", static_cast<ull>(totals.trace_lines));
  if (options.runtime == StressRuntime::kSim) {
    std::printf("  scheduler steps        %llu (%llu switches)\n", static_cast<ull>(totals.steps),
                static_cast<ull>(totals.switches));
  }
  summary.oracle_not_judged = stress_judgement_print(totals.judgement);
  if (totals.seeds_cut != 0) {
    // Their traces ended with the process: what came after was never judged.
    std::printf(
        "  seeds cut short        %llu: the process died in them; judged up to there, "
        "NOT counted in the judgement above\n",
        static_cast<ull>(totals.seeds_cut));
    summary.oracle_not_judged += totals.seeds_cut;
  }
  // Every failure, the corpus's included: a failing corpus entry fails the run as a seed does.
  std::printf("  failures               %llu", static_cast<ull>(summary.failures.size()));
  if (summary.corpus.failed != 0) {
    std::printf(" (%llu of them corpus entries)", static_cast<ull>(summary.corpus.failed));
  }
  std::printf("\n");
  print_failures(summary);
  for (const std::string& death : summary.unblamed_deaths) {
    std::printf("  process death          no seed blamed: %s\n", death.c_str());
  }
  if (!summary.sweep_error.empty()) {
    std::printf("  sweep FAILED           %s (the seeds after it were not run)\n",
                summary.sweep_error.c_str());
  }
  std::printf("  wall time              %.1f s on %u job(s)\n", summary.seconds, summary.jobs);
  std::printf("  seeds/s                %.1f (corpus entries included)\n",
              stress_summary_seeds_per_second(summary));
  if (options.runtime == StressRuntime::kSim) {
    std::printf("  scheduled calls/s      %.0f (%llu steps, corpus included)\n",
                stress_summary_steps_per_second(summary), static_cast<ull>(summary.steps_all));
  }
  summary.coverage_zero_rows = print_coverage(totals);
  SlotTuples tuples = totals.tuples;
  tuples.add(summary.corpus_tuples);
  summary.tuple_problems = print_tuples(tuples);
  return summary.coverage_zero_rows;
}

}  // namespace readyport
