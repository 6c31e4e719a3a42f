// SimScheduler's strategies: who runs next at a step. See "Strategies" in sim_scheduler.hpp.
// Every function runs with SimCore::mutex held, on the thread taking the step; the only
// randomness is core.rng (the kSchedule stream), so a choice is a pure function of the seed and
// of the steps before it, whatever the mechanism.
#include <algorithm>
#include <string>

#include "readyport/assert.hpp"
#include "sim_core.hpp"

namespace readyport {

namespace internal {

namespace {

void append_points(std::string& text, const std::vector<std::uint64_t>& points) {
  text += '[';
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i > 0) {
      text += ',';
    }
    text += std::to_string(points[i]);
  }
  text += ']';
}

// `count` steps uniform in [1, estimate], sorted (duplicates allowed).
std::vector<std::uint64_t> draw_steps(Rng& rng, std::uint32_t count, std::uint64_t estimate) {
  std::vector<std::uint64_t> points;
  for (std::uint32_t i = 0; i < count; ++i) {
    points.push_back(1 + rng.below(estimate));
  }
  std::sort(points.begin(), points.end());
  return points;
}

// kPct: at each change point the running thread drops below every other thread.
void pct_change(SimCore& core, SimThread& self) {
  while (core.change_next < core.change_points.size() &&
         core.change_points[core.change_next] == core.stats.steps) {
    core.change_next += 1;
    if (self.state == SimThreadState::kFinished) {
      continue;
    }
    const auto found = std::find(core.priorities.begin(), core.priorities.end(), self.id);
    READYPORT_ASSERT(found != core.priorities.end());
    core.priorities.erase(found);
    core.priorities.push_back(self.id);
    if (tracing(core)) {
      core.line = "sched.demote ";
      append_thread(core.line, self.id);
      core.line += " change=" + std::to_string(core.change_next);
      trace_line(core, self.id);
    }
  }
}

// The round-robin choice: the first runnable thread after self in id order, wrapping around.
std::size_t round_robin_index(const SimCore& core, const SimThread& self) {
  for (std::size_t i = 0; i < core.runnable.size(); ++i) {
    if (core.runnable[i]->id > self.id) {
      return i;
    }
  }
  return 0;
}

// kFair: the runnable thread that waited longest, if it waited fair_window steps or more (the
// lowest id among equals); else null.
SimThread* fair_overdue(const SimCore& core) {
  SimThread* longest = nullptr;
  for (SimThread* thread : core.runnable) {
    // The longest wait began first (ties: the lower id, listed first).
    if (longest == nullptr || thread->wait_since < longest->wait_since) {
      longest = thread;
    }
  }
  READYPORT_ASSERT(longest != nullptr);
  return sim_wait_steps(core, *longest) >= core.options.fair_window ? longest : nullptr;
}

// kExplore: the prefix's choice, else the thread that took the step if it can go on, else the
// lowest runnable id; the decision is recorded (SimChoices).
SimThread* explore_pick(SimCore& core, const SimThread& self) {
  SimChoices& choices = *core.options.choices;
  SimDecision decision;
  decision.self = self.id;
  SimThread* fallback = nullptr;
  SimThread* self_runnable = nullptr;
  for (SimThread* thread : core.runnable) {
    decision.runnable |= std::uint64_t{1} << (thread->id - 1);
    if (thread == &self) {
      self_runnable = thread;
    }
  }
  decision.self_runnable = self_runnable != nullptr;
  const std::size_t index = choices.decisions.size();
  if (index < choices.prefix.size()) {
    const std::uint32_t id = choices.prefix[index];
    if (id >= 1 && id <= 64 && (decision.runnable >> (id - 1) & 1) != 0) {
      fallback = core.threads[id - 1].get();
    } else if (choices.diverged_at == SimChoices::kFollowed) {
      choices.diverged_at = index;
    }
  }
  if (fallback == nullptr) {
    fallback = self_runnable != nullptr ? self_runnable : core.runnable.front();
  }
  decision.chosen = fallback->id;
  decision.segment = choices.segments.size();  // self's step was appended: the next one
  choices.decisions.push_back(decision);
  return fallback;
}

}  // namespace

void strategy_init(SimCore& core) {
  const SimOptions& options = core.options;
  switch (options.strategy) {
    case SimStrategy::kPct:
      READYPORT_ASSERT(options.pct_depth >= 1);
      READYPORT_ASSERT(options.pct_steps_estimate >= 1);
      // d - 1 change points, uniform in [1, k], sorted (duplicates act once).
      core.change_points = draw_steps(core.rng, options.pct_depth - 1, options.pct_steps_estimate);
      break;
    case SimStrategy::kDelayBounded:
      READYPORT_ASSERT(options.pct_steps_estimate >= 1);
      // delay_bound delays, uniform in [1, k], sorted (duplicates: several delays at one step).
      core.delay_points = draw_steps(core.rng, options.delay_bound, options.pct_steps_estimate);
      break;
    case SimStrategy::kFair:
      READYPORT_ASSERT(options.fair_window >= 1);
      break;
    case SimStrategy::kExplore:
      READYPORT_ASSERT(options.choices != nullptr);
      READYPORT_ASSERT(options.threads_max <= 64);  // SimDecision::runnable is a 64-bit set
      options.choices->decisions.clear();
      options.choices->segments.clear();
      break;
    case SimStrategy::kRandom:
    case SimStrategy::kRoundRobin:
      break;
  }
}

void strategy_thread_added(SimCore& core, const SimThread& thread) {
  if (core.options.strategy != SimStrategy::kPct) {
    return;
  }
  // A uniform position among the existing priorities: over all threads, a uniform permutation.
  const std::uint64_t position = core.rng.below(core.priorities.size() + 1);
  core.priorities.insert(core.priorities.begin() + static_cast<std::ptrdiff_t>(position),
                         thread.id);
}

void strategy_step(SimCore& core, SimThread& self) {
  switch (core.options.strategy) {
    case SimStrategy::kPct:
      pct_change(core, self);
      return;
    case SimStrategy::kDelayBounded:
      core.delays_now = 0;
      while (core.delay_next < core.delay_points.size() &&
             core.delay_points[core.delay_next] <= core.stats.steps) {
        core.delay_next += 1;
        core.delays_now += 1;
      }
      return;
    case SimStrategy::kRandom:
    case SimStrategy::kRoundRobin:
    case SimStrategy::kFair:
    case SimStrategy::kExplore:
      return;
  }
  READYPORT_UNREACHABLE();
}

SimThread* strategy_pick(SimCore& core, const SimThread& self) {
  READYPORT_ASSERT(core.runnable.size() >= 2);  // step() takes a lone runnable thread itself
  switch (core.options.strategy) {
    case SimStrategy::kRandom:
      return core.runnable[core.rng.below(core.runnable.size())];
    case SimStrategy::kPct:
      // The runnable thread with the highest priority.
      for (const std::uint32_t id : core.priorities) {
        SimThread* thread = core.threads[id - 1].get();
        if (thread->state == SimThreadState::kRunnable &&
            (!core.skip_stalled || thread->stalled_until <= core.stats.steps)) {
          return thread;
        }
      }
      READYPORT_UNREACHABLE();
    case SimStrategy::kRoundRobin:
      return core.runnable[round_robin_index(core, self)];
    case SimStrategy::kDelayBounded: {
      // Each delay skips the thread round robin would run next (Emmi et al.: the deterministic
      // scheduler's choice is passed over once per delay).
      const std::size_t base = round_robin_index(core, self);
      if (core.delays_now == 0) {
        return core.runnable[base];
      }
      SimThread* chosen = core.runnable[(base + core.delays_now) % core.runnable.size()];
      if (tracing(core)) {
        core.line = "sched.delay skip=" + std::to_string(core.delays_now) + " instead_of=";
        append_thread(core.line, core.runnable[base]->id);
        trace_line(core, self.id);
      }
      core.delays_now = 0;
      return chosen;
    }
    case SimStrategy::kFair: {
      SimThread* overdue = fair_overdue(core);
      if (overdue != nullptr) {
        return overdue;
      }
      return core.runnable[core.rng.below(core.runnable.size())];
    }
    case SimStrategy::kExplore:
      return explore_pick(core, self);
  }
  READYPORT_UNREACHABLE();
}

void strategy_parameters(const SimCore& core, std::string& text) {
  switch (core.options.strategy) {
    case SimStrategy::kPct:
      text += " depth=" + std::to_string(core.options.pct_depth);
      text += " estimate=" + std::to_string(core.options.pct_steps_estimate);
      text += " change_points=";
      append_points(text, core.change_points);
      return;
    case SimStrategy::kDelayBounded:
      text += " delay_bound=" + std::to_string(core.options.delay_bound);
      text += " estimate=" + std::to_string(core.options.pct_steps_estimate);
      text += " delays=";
      append_points(text, core.delay_points);
      return;
    case SimStrategy::kFair:
      text += " fair_window=" + std::to_string(core.options.fair_window);
      return;
    case SimStrategy::kExplore:
      text += " prefix=" + std::to_string(core.options.choices->prefix.size());
      return;
    case SimStrategy::kRandom:
    case SimStrategy::kRoundRobin:
      return;
  }
  READYPORT_UNREACHABLE();
}

}  // namespace internal

namespace {
constexpr SimStrategy kStrategies[] = {SimStrategy::kRandom,     SimStrategy::kPct,
                                       SimStrategy::kRoundRobin, SimStrategy::kDelayBounded,
                                       SimStrategy::kFair,       SimStrategy::kExplore};
}  // namespace

const char* sim_strategy_name(SimStrategy strategy) {
  switch (strategy) {
    case SimStrategy::kRandom:
      return "random";
    case SimStrategy::kPct:
      return "pct";
    case SimStrategy::kRoundRobin:
      return "round_robin";
    case SimStrategy::kDelayBounded:
      return "delay_bounded";
    case SimStrategy::kFair:
      return "fair";
    case SimStrategy::kExplore:
      return "explore";
  }
  READYPORT_UNREACHABLE();
}

bool sim_strategy_parse(std::string_view name, SimStrategy* strategy_out) {
  READYPORT_ASSERT(strategy_out != nullptr);
  for (const SimStrategy strategy : kStrategies) {
    if (name == sim_strategy_name(strategy)) {
      *strategy_out = strategy;
      return true;
    }
  }
  return false;
}

SimStrategy sim_strategy_portfolio(std::uint64_t seed) {
  constexpr SimStrategy kPortfolio[] = {SimStrategy::kRandom, SimStrategy::kPct,
                                        SimStrategy::kDelayBounded, SimStrategy::kFair};
  return kPortfolio[seed % 4];
}

}  // namespace readyport
