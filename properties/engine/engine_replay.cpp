// Replaying an engine property case outside the property. See engine_replay.hpp.
#include "engine_replay.hpp"

#include <sstream>

namespace readyport::properties {

std::string engine_case_replay_command(const EngineCase& engine_case) {
  return "readyport-stress --engine-case '" + engine_case_line(engine_case) + "'";
}

std::string engine_failure_text(const EngineCase& engine_case, const EngineRunResult& r) {
  std::ostringstream out;
  out << "engine property failed: rule " << (r.rule.empty() ? "?" : r.rule);
  if (r.failed_step >= 0) {
    out << " after step " << r.failed_step;
  } else {
    out << " at the end (liveness, stop or finish)";
  }
  out << "\n" << r.status.to_string() << "\ncase: " << case_text(engine_case) << "faults fired:";
  bool any = false;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    if (r.fired[i] == 0) {
      continue;
    }
    out << " " << fault_site_name(static_cast<FaultSite>(i)) << " x" << r.fired[i];
    any = true;
  }
  out << (any ? "" : " none") << "; quarantined " << r.quarantined << "; scheduler steps "
      << r.steps << "\noracle judgement (per rule):\n"
      << oracle_rules_text(r.judgement)
      << "\noracle bounds hit: " << oracle_bounds_text(r.judgement.bounds_hit)
      << "\nreplay: " << engine_case_replay_command(engine_case)
      << "\n    (or the RC_PARAMS=\"reproduce=...\" line below, with --gtest_filter set to this "
         "test)\n";
  return out.str();
}

int engine_case_replay_main(std::string_view case_line, std::ostream& out) {
  const Result<EngineCase> parsed = engine_case_parse(case_line);
  if (!parsed.ok()) {
    out << "readyport-stress: --engine-case: " << parsed.status().to_string() << "\n";
    return 2;
  }
  const EngineCase& engine_case = parsed.value();
  out << "engine case: " << case_text(engine_case);
  const EngineRunResult r = run_engine_case_isolated(engine_case);
  if (!r.status.ok()) {
    out << engine_failure_text(engine_case, r);
    return 1;
  }
  out << "engine case passed: " << r.adds_ok << " connections added, " << r.echoed_connections
      << " echoed, " << r.quarantined << " quarantined, " << r.steps << " scheduler steps\n";
  return 0;
}

}  // namespace readyport::properties
