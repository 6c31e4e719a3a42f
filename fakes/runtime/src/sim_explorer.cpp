// Systematic exploration up to a preemption bound. See sim_explorer.hpp.
#include "readyport/fake/sim_explorer.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/trace.hpp"

namespace readyport {
namespace {

bool is_preemption(const SimDecision& decision, std::uint32_t chosen) {
  return !decision.choice && decision.self_runnable && chosen != decision.self;
}

bool is_fault(const SimDecision& decision, std::uint32_t chosen) {
  return decision.choice && chosen == 2;
}

}  // namespace

std::uint64_t sim_class_hash(const std::vector<SimSegment>& segments) {
  std::uint64_t per_bit[64];
  std::fill(std::begin(per_bit), std::end(per_bit), kFnv1a64OffsetBasis);
  std::vector<std::uint32_t> steps_of;  // index: thread
  for (const SimSegment& segment : segments) {
    if (steps_of.size() <= segment.thread) {
      steps_of.resize(std::size_t{segment.thread} + 1, 0);
    }
    const std::uint64_t step = (std::uint64_t{segment.thread} << 32) | steps_of[segment.thread]++;
    for (SimFootprint bits = segment.footprint; bits != 0; bits &= bits - 1) {
      std::uint64_t& hash = per_bit[std::countr_zero(bits)];
      for (int shift = 0; shift < 64; shift += 8) {
        hash = (hash ^ static_cast<std::uint8_t>(step >> shift)) * kFnv1a64Prime;
      }
    }
  }
  std::uint64_t hash = kFnv1a64OffsetBasis;
  for (const std::uint64_t bit_hash : per_bit) {
    for (int shift = 0; shift < 64; shift += 8) {
      hash = (hash ^ static_cast<std::uint8_t>(bit_hash >> shift)) * kFnv1a64Prime;
    }
  }
  return hash;
}

std::uint64_t sim_distinct_count(std::vector<std::uint64_t>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values.size();
}

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

namespace {

// A thread whose next step is asleep, with that step's footprint.
struct Sleeper {
  std::uint32_t thread = 0;
  SimFootprint footprint = 0;
};

// A schedule to run: its choices, and the sleep set in force at its last decision (before the
// step that decision picks).
struct Pending {
  std::vector<std::uint32_t> prefix;
  std::vector<Sleeper> sleep;
};

bool asleep(const std::vector<Sleeper>& sleep, std::uint32_t thread) {
  return std::any_of(sleep.begin(), sleep.end(),
                     [thread](const Sleeper& sleeper) { return sleeper.thread == thread; });
}

// Wakes every sleeper that `footprint` depends on.
void wake_dependent(std::vector<Sleeper>& sleep, SimFootprint footprint) {
  sleep.erase(std::remove_if(sleep.begin(), sleep.end(),
                             [footprint](const Sleeper& sleeper) {
                               return sim_dependent(sleeper.footprint, footprint);
                             }),
              sleep.end());
}

}  // namespace

ExploreResult SimExplorer::explore(const std::function<Run(SimChoices&)>& run) {
  ExploreResult result;
  // Pending schedules by their preemption count: every schedule with p preemptions runs before
  // any with p + 1, so the first failure found has the fewest.
  std::vector<std::vector<Pending>> pending(options_.preemptions_max + 1);
  pending[0].push_back(Pending{});
  // Every run's schedule hash and class, counted at the end (8 bytes a run).
  std::vector<std::uint64_t> hashes;
  std::vector<std::uint64_t> classes;
  auto finish = [&] {
    result.distinct_schedules = sim_distinct_count(hashes);
    result.distinct_classes = sim_distinct_count(classes);
    return result;
  };
  for (std::uint32_t bound = 0; bound <= options_.preemptions_max; ++bound) {
    while (!pending[bound].empty()) {
      if (result.schedules >= options_.schedules_max) {
        return finish();
      }
      Pending item = std::move(pending[bound].back());
      pending[bound].pop_back();
      SimChoices choices;
      choices.prefix = std::move(item.prefix);
      const Run outcome = run(choices);
      result.schedules += 1;
      hashes.push_back(outcome.schedule_hash);
      classes.push_back(sim_class_hash(choices.segments));
      const std::vector<SimDecision>& decisions = choices.decisions;
      const std::vector<SimSegment>& segments = choices.segments;
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
        return finish();
      }
      // Walk the run from its last prefix decision (the root: from the start), step by step,
      // keeping the sleep set, and branch at every decision past the prefix.
      const std::size_t prefix_size = choices.prefix.size();
      std::size_t index = prefix_size == 0 ? 0 : prefix_size - 1;
      std::vector<Sleeper> sleep =
          options_.sleep_sets ? std::move(item.sleep) : std::vector<Sleeper>{};
      std::vector<std::uint32_t> path(choices.prefix.begin(),
                                      choices.prefix.begin() + static_cast<std::ptrdiff_t>(index));
      std::uint32_t preemptions = sim_preemptions(decisions, index);
      std::uint32_t faults = sim_choices_yes(decisions, index);
      const std::size_t first_segment = prefix_size == 0 ? 0 : decisions[index].segment;
      // Branches at decision `index` (past the prefix), then takes its choice.
      auto branch = [&](const SimDecision& decision, std::vector<Sleeper> child_sleep) {
        for (std::uint32_t id = 1; id <= 64; ++id) {
          if ((decision.runnable >> (id - 1) & 1) == 0 || id == decision.chosen) {
            continue;
          }
          const std::uint32_t cost = preemptions + (is_preemption(decision, id) ? 1 : 0);
          const std::uint32_t fault_cost = faults + (is_fault(decision, id) ? 1 : 0);
          if (cost > options_.preemptions_max || fault_cost > options_.faults_max) {
            continue;
          }
          if (!decision.choice && asleep(child_sleep, id)) {
            result.pruned += 1;
            continue;
          }
          Pending next;
          next.prefix = path;
          next.prefix.push_back(id);
          next.sleep = child_sleep;
          pending[cost].push_back(std::move(next));
        }
      };
      auto take = [&](const SimDecision& decision) {
        path.push_back(decision.chosen);
        preemptions += is_preemption(decision, decision.chosen) ? 1 : 0;
        faults += is_fault(decision, decision.chosen) ? 1 : 0;
      };
      // At each decision past the prefix, branches to every other thread (or answer) within the
      // bounds whose step is not asleep; then takes the run's own choice.
      auto decide = [&](const SimDecision& decision, std::size_t g) {
        if (index >= prefix_size) {
          std::vector<Sleeper> child_sleep = sleep;
          if (options_.sleep_sets && !decision.choice && decision.self_runnable &&
              decision.chosen == decision.self) {
            // The thread that could go on goes on here: its step sleeps where another runs first.
            child_sleep.push_back(Sleeper{decision.self, segments[g].footprint});
          }
          branch(decision, std::move(child_sleep));
        }
        take(decision);
        index += 1;
      };
      bool joined = false;
      for (std::size_t g = first_segment; g < segments.size(); ++g) {
        // The decision that picked step g's thread, if more than one could run.
        if (index < decisions.size() && decisions[index].segment == g && !decisions[index].choice) {
          decide(decisions[index], g);
        }
        if (asleep(sleep, segments[g].thread)) {
          // A sleeping step runs: every schedule from here has an equivalent that runs elsewhere.
          joined = true;
          break;
        }
        // The choices made in step g.
        while (index < decisions.size() && decisions[index].segment == g) {
          READYPORT_ASSERT(decisions[index].choice);
          decide(decisions[index], g);
        }
        wake_dependent(sleep, segments[g].footprint);
      }
      READYPORT_ASSERT(joined || index == decisions.size());
      result.runs_joined += joined ? 1 : 0;
    }
  }
  result.complete = true;
  return finish();
}

}  // namespace readyport
