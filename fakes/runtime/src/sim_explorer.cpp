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
      // One multiply a step (a word-wide FNV-1a step, then a fold of the high half).
      std::uint64_t& hash = per_bit[std::countr_zero(bits)];
      hash = (hash ^ step) * kFnv1a64Prime;
      hash ^= hash >> 32;
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
  std::vector<std::uint8_t> prefix;  // thread ids (at most 64) and answers: a byte each
  std::vector<Sleeper> sleep;
  std::uint8_t preemptions = 0;  // the prefix's (at most ExploreOptions' bounds, below 256)
  std::uint8_t faults = 0;
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

// One exploration: the pending schedules, the counts, the result.
class Search {
 public:
  Search(const ExploreOptions& options, const std::function<SimExplorer::Run(SimChoices&)>& run)
      : options_(options), run_(run), pending_(options.preemptions_max + 1) {
    READYPORT_ASSERT(options.preemptions_max < 256 && options.faults_max < 256);  // Pending's bytes
    pending_[0].push_back(Pending{});
  }

  ExploreResult explore() {
    for (std::uint32_t bound = 0; bound <= options_.preemptions_max; ++bound) {
      while (!pending_[bound].empty()) {
        if (result_.schedules >= options_.schedules_max) {
          return finish();
        }
        Pending item = std::move(pending_[bound].back());
        pending_[bound].pop_back();
        if (!run_one(std::move(item))) {
          return finish();
        }
      }
    }
    result_.complete = true;
    return finish();
  }

 private:
  // Where a walk over one run stands: the decision next, the choices taken so far and their
  // costs, the sleep set.
  struct Walk {
    explicit Walk(const SimChoices& run_choices) : choices(run_choices) {}
    const SimChoices& choices;
    std::size_t prefix_size = 0;
    std::size_t index = 0;  // the next decision
    std::vector<std::uint8_t> path;
    std::uint32_t preemptions = 0;
    std::uint32_t faults = 0;
    std::vector<Sleeper> sleep;
  };

  ExploreResult finish() {
    result_.distinct_schedules = sim_distinct_count(hashes_);
    result_.distinct_classes = sim_distinct_count(classes_);
    return result_;
  }

  // Runs one schedule and branches from it; false when it failed (the search ends).
  bool run_one(Pending item) {
    SimChoices choices;
    choices.prefix.assign(item.prefix.begin(), item.prefix.end());
    choices.prefix_preemptions = item.preemptions;
    choices.prefix_faults = item.faults;
    const SimExplorer::Run outcome = run_(choices);
    result_.schedules += 1;
    hashes_.push_back(outcome.schedule_hash);
    classes_.push_back(sim_class_hash(choices.segments));
    const std::vector<SimDecision>& decisions = choices.decisions;
    result_.decisions_max = std::max<std::uint64_t>(result_.decisions_max, decisions.size());
    Status verdict = outcome.verdict;
    if (verdict.ok() && (choices.diverged_at != SimChoices::kFollowed ||
                         decisions.size() < choices.prefix.size())) {
      // The same choices reached other decisions: the scenario is not a function of them.
      verdict = Status(StatusCode::kInternal,
                       "the scenario is not deterministic: its schedule diverged at decision " +
                           std::to_string(std::min(choices.diverged_at, decisions.size())));
    }
    if (!verdict.ok()) {
      result_.failure = verdict;
      result_.failing_preemptions = sim_preemptions(decisions, decisions.size());
      result_.failing_faults = sim_choices_yes(decisions, decisions.size());
      for (const SimDecision& decision : decisions) {
        result_.failing_prefix.push_back(decision.chosen);
      }
      return false;
    }
    walk(choices, options_.sleep_sets ? std::move(item.sleep) : std::vector<Sleeper>{});
    return true;
  }

  // Walks the run from its last prefix decision (the root: from the start), step by step,
  // keeping the sleep set, and branches at every decision past the prefix.
  void walk(const SimChoices& choices, std::vector<Sleeper> sleep) {
    const std::vector<SimDecision>& decisions = choices.decisions;
    const std::vector<SimSegment>& segments = choices.segments;
    Walk w(choices);
    w.prefix_size = choices.prefix.size();
    w.index = w.prefix_size == 0 ? 0 : w.prefix_size - 1;
    w.sleep = std::move(sleep);
    w.path.reserve(decisions.size());
    for (std::size_t i = 0; i < w.index; ++i) {
      w.path.push_back(static_cast<std::uint8_t>(choices.prefix[i]));
    }
    w.preemptions = sim_preemptions(decisions, w.index);
    w.faults = sim_choices_yes(decisions, w.index);
    bool joined = false;
    for (std::size_t g = w.prefix_size == 0 ? 0 : decisions[w.index].segment;
         g < segments.size() && !joined; ++g) {
      // The decision that picked step g's thread, if more than one could run.
      if (w.index < decisions.size() && decisions[w.index].segment == g &&
          !decisions[w.index].choice) {
        decide(w, g);
      }
      if (asleep(w.sleep, segments[g].thread)) {
        // A sleeping step runs: every schedule from here has an equivalent that runs elsewhere.
        joined = true;
        break;
      }
      // The choices made in step g.
      while (w.index < decisions.size() && decisions[w.index].segment == g) {
        READYPORT_ASSERT(decisions[w.index].choice);
        decide(w, g);
      }
      wake_dependent(w.sleep, segments[g].footprint);
    }
    READYPORT_ASSERT(joined || w.index == decisions.size());
    result_.runs_joined += joined ? 1 : 0;
  }

  // Decision w.index, made before step g (a step's) or in it (a choice): past the prefix,
  // branches to every other thread (or answer) within the bounds whose step is not asleep; then
  // takes the run's own choice.
  void decide(Walk& w, std::size_t g) {
    const SimDecision& decision = w.choices.decisions[w.index];
    if (w.index >= w.prefix_size) {
      std::vector<Sleeper> child_sleep = w.sleep;
      if (options_.sleep_sets && !decision.choice && decision.self_runnable &&
          decision.chosen == decision.self) {
        // The thread that could go on goes on here: its step sleeps where another runs first.
        child_sleep.push_back(Sleeper{decision.self, w.choices.segments[g].footprint});
      }
      branch(w, decision, child_sleep);
    }
    w.path.push_back(static_cast<std::uint8_t>(decision.chosen));
    w.preemptions += is_preemption(decision, decision.chosen) ? 1 : 0;
    w.faults += is_fault(decision, decision.chosen) ? 1 : 0;
    w.index += 1;
  }

  void branch(const Walk& w, const SimDecision& decision, const std::vector<Sleeper>& sleep) {
    for (std::uint32_t id = 1; id <= 64; ++id) {
      if ((decision.runnable >> (id - 1) & 1) == 0 || id == decision.chosen) {
        continue;
      }
      const std::uint32_t cost = w.preemptions + (is_preemption(decision, id) ? 1 : 0);
      const std::uint32_t fault_cost = w.faults + (is_fault(decision, id) ? 1 : 0);
      if (cost > options_.preemptions_max || fault_cost > options_.faults_max) {
        continue;
      }
      if (!decision.choice && asleep(sleep, id)) {
        result_.pruned += 1;
        continue;
      }
      Pending next;
      next.prefix = w.path;
      next.prefix.push_back(static_cast<std::uint8_t>(id));
      next.sleep = sleep;
      next.preemptions = static_cast<std::uint8_t>(cost);
      next.faults = static_cast<std::uint8_t>(fault_cost);
      pending_[cost].push_back(std::move(next));
    }
  }

  const ExploreOptions& options_;
  const std::function<SimExplorer::Run(SimChoices&)>& run_;
  ExploreResult result_;
  // Pending schedules by their preemption count: every schedule with p preemptions runs before
  // any with p + 1, so the first failure found has the fewest.
  std::vector<std::vector<Pending>> pending_;
  // Every run's schedule hash and class, counted at the end (8 bytes a run).
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> classes_;
};

}  // namespace

ExploreResult SimExplorer::explore(const std::function<Run(SimChoices&)>& run) {
  return Search(options_, run).explore();
}

}  // namespace readyport
