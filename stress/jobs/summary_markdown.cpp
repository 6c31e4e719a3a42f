#include "jobs/summary_markdown.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/build_info.hpp"

namespace readyport {
namespace {

// A table cell's text: '|' would end the cell, a newline the row.
std::string cell_text(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') {
      cell += "\\|";
    } else {
      cell += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return cell;
}

// The bundle's file name (the artifact holds the directory), or "no bundle".
std::string bundle_name(const StressFailure& failure) {
  if (failure.bundle.empty()) {
    return "no bundle";
  }
  return "`" + cell_text(std::filesystem::path(failure.bundle).filename().string()) + "`";
}

std::string failing_cell(const StressRunSummary& summary) {
  if (summary.failures.empty()) {
    return "none";
  }
  std::string cell;
  std::size_t listed = 0;
  for (const StressFailure& failure : summary.failures) {
    if (listed == kStressMarkdownFailuresMax) {
      cell += ", and " + std::to_string(summary.failures.size() - listed) +
              " more: see the JSON summary";
      break;
    }
    if (listed != 0) {
      cell += ", ";
    }
    cell += std::to_string(failure.seed);
    if (failure.from_corpus) {
      cell += " (corpus " + cell_text(failure.entry) + ")";
    }
    cell += " " + cell_text(failure.signature) + " (" + bundle_name(failure) + ")";
    ++listed;
  }
  return cell;
}

}  // namespace

std::string stress_summary_markdown(const StressOptions& options, const StressRunSummary& summary) {
  const StressBuildInfo info = stress_build_info();
  const std::string shard =
      std::to_string(options.shard_index + 1) + "/" + std::to_string(options.shard_count);
  const std::size_t failures = summary.failures.size();
  std::string text =
      "### readyport-stress shard " + shard + ": " +
      (failures == 0 ? std::string("passed")
                     : std::to_string(failures) + (failures == 1 ? " failure" : " failures")) +
      "\n\n";
  text += "| shard | first seed | seeds run | failures | failing seeds (bundle) |\n";
  text += "|---|---|---|---|---|\n";
  const StressSeedAccount account = stress_seed_account(summary);
  text += "| " + shard + " | " + std::to_string(options.first_seed) + " | " +
          std::to_string(summary.totals.seeds) + " of " + std::to_string(summary.seeds_planned) +
          " (" + std::to_string(account.passed) + " passed, " + std::to_string(account.failed) +
          " failed, " + std::to_string(account.cut) + " cut short) | " + std::to_string(failures) +
          " | " + failing_cell(summary) + " |\n\n";
  if (summary.corpus.dir.empty()) {
    text += "Corpus: none (" + summary.corpus.note + "). ";
  } else {
    text += "Corpus: " + std::to_string(summary.corpus.entries) + " entries, " +
            std::to_string(summary.corpus.failed) + " failed. ";
  }
  char seconds[160];
  std::snprintf(seconds, sizeof(seconds),
                "%.1f s on %u job(s), %.1f seeds/s, %.0f scheduled calls/s", summary.seconds,
                summary.jobs, stress_summary_seeds_per_second(summary),
                stress_summary_steps_per_second(summary));
  text += "Faults " + stress_faults_description(options) + ", strategy " +
          stress_strategy_name(options.strategy) + ". Commit `" + info.commit + "`, " +
          info.compiler + (info.canary.empty() ? std::string() : ", canary " + info.canary) + ", " +
          seconds + ".";
  if (summary.coverage_zero_rows != 0) {
    text += " " + std::to_string(summary.coverage_zero_rows) + " coverage row(s) never reached.";
  }
  if (summary.tuple_problems != 0) {
    text += " " + std::to_string(summary.tuple_problems) +
            " tuple(s) of states in context never reached, listed yet reached, or stale.";
  }
  if (summary.stopped_early) {
    text += " Stopped at the first failure.";
  }
  text += " Limits: " + cell_text(stress_limits_text(summary.limits)) + ".";
  for (const std::string& death : summary.unblamed_deaths) {
    text += " A process died with no seed to blame: " + cell_text(death) + ".";
  }
  if (!summary.sweep_error.empty()) {
    text += " The sweep FAILED: " + cell_text(summary.sweep_error) + ".";
  }
  if (summary.totals.seeds_cut != 0) {
    text += " " + std::to_string(summary.totals.seeds_cut) +
            " seed(s) cut short: the process died in them (judged up to there, NOT counted in "
            "the table below).";
  }
  // The oracle's judgement, per rule: what it could not judge is never a silent pass.
  const OracleJudgement& judged = summary.totals.judgement;
  text += "\n\n| oracle rule | judged | violated | ambiguous | unjudged |\n|---|---|---|---|---|\n";
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    text += "| O" + std::to_string(rule) + " | " + std::to_string(judged.judged[rule]) + " | " +
            std::to_string(judged.violated[rule]) + " | " + std::to_string(judged.ambiguous[rule]) +
            " | " + std::to_string(judged.unjudged[rule]) + " |\n";
  }
  text += "\nOracle bounds hit: " + oracle_bounds_text(judged.bounds_hit) + ".";
  return text + "\n\n";
}

}  // namespace readyport
