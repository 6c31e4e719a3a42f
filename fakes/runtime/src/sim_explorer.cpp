// Systematic exploration up to a preemption bound. See sim_explorer.hpp.
#include "readyport/fake/sim_explorer.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {
namespace {

bool is_preemption(const SimDecision& decision, std::uint32_t chosen) {
  return !decision.choice && decision.self_runnable && chosen != decision.self;
}

bool is_fault(const SimDecision& decision, std::uint32_t chosen) {
  return decision.choice && chosen == 2;
}

}  // namespace

std::uint32_t sim_preemptions(const std::vector<SimDecision>& decisions, std::size_t count) {
  READYPORT_ASSERT(count <= decisions.size());
  std::uint32_t preemptions = 0;
  for (std::size_t i = 0; i < count; ++i) {
    preemptions += is_preemption(decisions[i], decisions[i].chosen) ? 1 : 0;
  }
  return preemptions;
}

std::uint32_t sim_choices_yes(const std::vector<SimDecision>& decisions, std::size_t count) {
  READYPORT_ASSERT(count <= decisions.size());
  std::uint32_t yes = 0;
  for (std::size_t i = 0; i < count; ++i) {
    yes += is_fault(decisions[i], decisions[i].chosen) ? 1 : 0;
  }
  return yes;
}

ExploreResult SimExplorer::explore(const std::function<Run(SimChoices&)>& run) {
  ExploreResult result;
  // Pending prefixes by their preemption count: every schedule with p preemptions runs before any
  // with p + 1, so the first failure found has the fewest.
  std::vector<std::vector<std::vector<std::uint32_t>>> pending(options_.preemptions_max + 1);
  pending[0].push_back({});
  std::set<std::uint64_t> hashes;
  for (std::uint32_t bound = 0; bound <= options_.preemptions_max; ++bound) {
    while (!pending[bound].empty()) {
      if (result.schedules >= options_.schedules_max) {
        result.distinct_schedules = hashes.size();
        return result;
      }
      SimChoices choices;
      choices.prefix = std::move(pending[bound].back());
      pending[bound].pop_back();
      const Run outcome = run(choices);
      result.schedules += 1;
      hashes.insert(outcome.schedule_hash);
      const std::vector<SimDecision>& decisions = choices.decisions;
      Status verdict = outcome.verdict;
      if (verdict.ok() && (choices.diverged_at != SimChoices::kFollowed ||
                           decisions.size() < choices.prefix.size())) {
        // The same choices reached other decisions: the scenario is not a function of them.
        verdict = Status(StatusCode::kInternal,
                         "the scenario is not deterministic: its schedule diverged at decision " +
                             std::to_string(std::min(choices.diverged_at, decisions.size())));
      }
      result.decisions_max = std::max<std::uint64_t>(result.decisions_max, decisions.size());
      if (!verdict.ok()) {
        result.failure = verdict;
        result.failing_preemptions = sim_preemptions(decisions, decisions.size());
        result.failing_faults = sim_choices_yes(decisions, decisions.size());
        for (const SimDecision& decision : decisions) {
          result.failing_prefix.push_back(decision.chosen);
        }
        result.distinct_schedules = hashes.size();
        return result;
      }
      // Alternatives past the prefix, deepest last so that the stack runs them first.
      std::uint32_t preemptions = sim_preemptions(decisions, choices.prefix.size());
      std::uint32_t faults = sim_choices_yes(decisions, choices.prefix.size());
      std::vector<std::uint32_t> path = choices.prefix;
      for (std::size_t i = choices.prefix.size(); i < decisions.size(); ++i) {
        const SimDecision& decision = decisions[i];
        for (std::uint32_t id = 1; id <= 64; ++id) {
          if ((decision.runnable >> (id - 1) & 1) == 0 || id == decision.chosen) {
            continue;
          }
          const std::uint32_t cost = preemptions + (is_preemption(decision, id) ? 1 : 0);
          const std::uint32_t fault_cost = faults + (is_fault(decision, id) ? 1 : 0);
          if (cost > options_.preemptions_max || fault_cost > options_.faults_max) {
            continue;
          }
          std::vector<std::uint32_t> next = path;
          next.push_back(id);
          pending[cost].push_back(std::move(next));
        }
        path.push_back(decision.chosen);
        preemptions += is_preemption(decision, decision.chosen) ? 1 : 0;
        faults += is_fault(decision, decision.chosen) ? 1 : 0;
      }
    }
  }
  result.complete = true;
  result.distinct_schedules = hashes.size();
  return result;
}

}  // namespace readyport
