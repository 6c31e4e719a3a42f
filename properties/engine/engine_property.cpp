// The engine property and its runner. See engine_property.hpp.
#include "engine_property.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "property_runner.hpp"

namespace readyport::properties {
namespace {

// The last failing case (RapidCheck accepts each failing shrink at once, so the last failure it
// ran is its final counterexample). GoogleTest's thread only.
EnginePropertyOutcome g_last_failure;

// Counted over a whole check, printed after it: what the cases reached.
struct Coverage {
  std::uint64_t cases = 0;
  std::uint64_t modes[4] = {};
  std::uint64_t fired[kFaultSiteCount] = {};
  std::uint64_t remove_refused = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t close_inside = 0;
  std::uint64_t echo_checked = 0;
  std::uint64_t parallel = 0;            // cases whose branches ran and were judged
  std::uint64_t parallel_not_found = 0;  // of those, cases where a branch call got not_found
  std::uint64_t branch_steps = 0;        // API steps the interleaving check judged, in all
  OracleJudgement judgement;             // summed over the cases
};
Coverage g_coverage;

void print_coverage(const Coverage& c) {
  std::cout << "engine property coverage (cases reaching each state, of " << c.cases << "):\n";
  for (std::uint32_t m = 0; m < 4; ++m) {
    std::cout << "  added " << mode_name(static_cast<Mode>(m)) << ": " << c.modes[m] << "\n";
  }
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    std::cout << "  fired " << fault_site_name(static_cast<FaultSite>(i)) << ": " << c.fired[i]
              << "\n";
  }
  std::cout << "  remove refused (oracle): " << c.remove_refused << "\n"
            << "  quarantined (EngineStats): " << c.quarantined << "\n"
            << "  close inside a handler: " << c.close_inside << "\n"
            << "  echo checked on a survivor: " << c.echo_checked << "\n"
            << "  parallel branches judged: " << c.parallel << " (" << c.branch_steps
            << " API steps; " << c.parallel_not_found << " cases with a not_found)\n"
            << "  oracle judgement, summed over the cases:\n"
            << oracle_rules_text(c.judgement)
            << "\n  oracle bounds hit: " << oracle_bounds_text(c.judgement.bounds_hit) << "\n";
}

}  // namespace

void engine_property(const EngineCase& engine_case) {
  const EngineRunResult r = run_engine_case_isolated(engine_case);
  ++g_coverage.cases;
  for (std::uint32_t m = 0; m < 4; ++m) {
    const bool added = (r.modes_added & (1u << m)) != 0;
    if (added) {
      ++g_coverage.modes[m];
    }
  }
  std::uint64_t fired_total = 0;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    if (r.fired[i] != 0) {
      ++g_coverage.fired[i];
    }
    fired_total += r.fired[i];
  }
  if (r.removes_refused != 0) {
    ++g_coverage.remove_refused;
  }
  g_coverage.judgement.add(r.judgement);
  if (r.quarantined != 0) {
    ++g_coverage.quarantined;
  }
  if (r.closes_inside != 0) {
    ++g_coverage.close_inside;
  }
  if (r.echoed_connections != 0) {
    ++g_coverage.echo_checked;
  }
  if (r.branches_run != 0) {
    ++g_coverage.parallel;
    g_coverage.branch_steps += r.branch_steps;
    g_coverage.parallel_not_found += r.branch_not_found != 0 ? 1u : 0u;
  }
  RC_CLASSIFY(r.fired[static_cast<std::size_t>(FaultSite::kPsnRemoveFails)] != 0,
              "remove_fails fired");
  RC_CLASSIFY(r.quarantined != 0, "quarantined");
  RC_CLASSIFY(fired_total == 0, "no fault fired");
  RC_CLASSIFY(fired_total >= 3, "3+ faults fired");
  RC_CLASSIFY(r.adds_ok == 0, "no connection");
  RC_CLASSIFY(r.adds_ok >= 4, "4+ connections");
  RC_CLASSIFY(!engine_case.branches.empty(), "parallel");
  if (!r.status.ok()) {
    g_last_failure.failed = true;
    g_last_failure.shrunk = engine_case;
    g_last_failure.result = r;
    RC_FAIL(engine_failure_text(engine_case, r));
  }
}

EnginePropertyOutcome check_engine_property(bool expect_failure) {
  const auto start = std::chrono::steady_clock::now();
  g_last_failure = EnginePropertyOutcome{};
  g_coverage = Coverage{};
  const rc::detail::TestMetadata metadata = current_test_metadata();
  std::string error;
  // The engine's cases are costlier: kEngineCasesDefault at scale 1.
  const rc::detail::TestParams params = property_params(metadata.id, &error, kEngineCasesDefault);
  EXPECT_TRUE(error.empty()) << error;
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [](void) { engine_property(*gen_engine_case()); }, metadata, params);
  EnginePropertyOutcome outcome = g_last_failure;
  outcome.failed = !result.template is<rc::detail::SuccessResult>();
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  print_coverage(g_coverage);
  if (!outcome.failed) {
    std::cout << message.str() << std::endl;
  } else if (expect_failure) {
    std::cout << message.str() << "\n" << property_replay_line(metadata, result) << std::endl;
  } else {
    ADD_FAILURE() << message.str() << "\n" << property_replay_line(metadata, result);
  }
  return outcome;
}

}  // namespace readyport::properties
