// The shrinker of a failing world's case. See case_shrinker.hpp.
#include "readyport/fake/case_shrinker.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace readyport {
namespace {

class CaseShrinker {
 public:
  CaseShrinker(const ShrinkCase& failing, std::string fired_hits, const ShrinkRunner& run,
               std::uint32_t runs_before)
      : run_(run), best_(failing), fired_(std::move(fired_hits)), runs_(runs_before) {}

  ShrinkOutcome shrink() {
    // Passes until nothing shrinks: after a pass that changed nothing, no single fault, site,
    // depth step or cap unit can go (1-minimal over those), unless the budget ran out.
    bool changed = true;
    std::uint32_t passes = 0;
    while (changed && passes < kShrinkPassesMax && can_run()) {
      ++passes;
      changed = false;
      changed |= shrink_sites();
      changed |= shrink_hits();
      changed |= shrink_schedule();
      for (std::size_t i = 0; i < best_.caps.size(); ++i) {
        changed |= shrink_cap(i);
      }
    }
    ShrinkOutcome outcome;
    outcome.minimal = best_;
    outcome.runs = runs_;
    outcome.passes = passes;
    outcome.one_minimal = !changed && can_run();
    outcome.budget_spent = budget_spent_;
    return outcome;
  }

 private:
  // Runs `candidate`; keeps it when it fails the same way.
  bool can_run() const { return runs_ < kShrinkRunsMax && !budget_spent_; }

  bool try_case(const ShrinkCase& candidate) {
    if (!can_run()) {
      return false;
    }
    ShrinkRun result = run_(candidate);
    ++runs_;
    budget_spent_ = budget_spent_ || result.budget_spent;
    if (!result.same_failure) {
      return false;
    }
    best_ = candidate;
    fired_ = std::move(result.fired_hits);
    return true;
  }

  // Whole sites, one at a time (removing a site removes every fault it fired).
  bool shrink_sites() {
    bool any = false;
    bool changed = true;
    while (changed && can_run()) {
      changed = false;
      const FaultPlan current = best_.plan;
      for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(FaultSite::kCount); ++i) {
        const auto site = static_cast<FaultSite>(i);
        if (!current.active(site)) {
          continue;
        }
        ShrinkCase candidate = best_;
        candidate.plan = current.without(site);
        if (try_case(candidate)) {
          changed = any = true;
          break;  // the plan changed: start over from the smaller one
        }
      }
    }
    return any;
  }

  // The faults that fired in the smallest failing run, as pinned hits (FaultyOs decides each hit
  // from (seed, site, hit number) alone, so this plan replays that run), then removed in chunks
  // (delta debugging's complements) and one at a time until no single fault can go.
  bool shrink_hits() {
    if (fired_.empty()) {
      return false;  // more fired than a plan holds
    }
    const FaultPlan fired = FaultPlan::parse(fired_).value();
    bool any = false;
    if (!(best_.plan == fired)) {
      ShrinkCase candidate = best_;
      candidate.plan = fired;
      if (!try_case(candidate)) {
        return false;  // should not happen: the same run
      }
      // Not counted as a change: the same faults, written as hits.
    }
    std::size_t chunks = 2;
    while (can_run()) {
      const std::vector<FaultHit> hits = best_.plan.hits();
      if (hits.empty()) {
        break;
      }
      chunks = std::min(chunks, hits.size());
      bool removed = false;
      for (std::size_t c = 0; c < chunks && !removed; ++c) {
        const std::size_t begin = hits.size() * c / chunks;
        const std::size_t end = hits.size() * (c + 1) / chunks;
        std::vector<FaultHit> rest(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(begin));
        rest.insert(rest.end(), hits.begin() + static_cast<std::ptrdiff_t>(end), hits.end());
        ShrinkCase candidate = best_;
        candidate.plan = FaultPlan::of_hits(rest);
        if (try_case(candidate)) {
          removed = any = true;
          tighten_to_fired();
        }
      }
      if (removed) {
        chunks = std::max<std::size_t>(chunks - 1, 2);
      } else if (chunks >= hits.size()) {
        break;  // every single fault was tried: 1-minimal over the fired faults
      } else {
        chunks = std::min(chunks * 2, hits.size());
      }
    }
    return any;
  }

  // After a smaller plan was kept: keep only the hits that really fired in that run (a listed hit
  // the run never reached is not a fault of the case).
  void tighten_to_fired() {
    if (fired_.empty()) {
      return;
    }
    const FaultPlan fired = FaultPlan::parse(fired_).value();
    if (fired.hits().size() < best_.plan.hits().size()) {
      best_.plan = fired;  // the same run: these are exactly the faults that fired in it
    }
  }

  // The schedule: a lower depth (fewer PCT change points, fewer delays); a random or fair
  // schedule is tried as PCT of depth 1..kShrinkPctDepthTriedMax (runs to a block between change
  // points: few preemptions).
  bool shrink_schedule() {
    if (best_.strategy == SimStrategy::kPct || best_.strategy == SimStrategy::kDelayBounded) {
      for (std::uint32_t depth = 1; depth < best_.depth; ++depth) {
        ShrinkCase candidate = best_;
        candidate.depth = depth;
        if (try_case(candidate)) {
          return true;
        }
      }
      return false;
    }
    for (std::uint32_t depth = 1; depth <= kShrinkPctDepthTriedMax; ++depth) {
      ShrinkCase candidate = best_;
      candidate.strategy = SimStrategy::kPct;
      candidate.depth = depth;
      if (try_case(candidate)) {
        return true;
      }
    }
    return false;
  }

  // A cap: halved while the run still fails, then lowered by one while it still fails, so that
  // at the end cap - 1 passes (or the cap is 0).
  bool shrink_cap(std::size_t index) {
    bool any = false;
    std::uint32_t value = best_.caps[index];
    while (value > 0 && can_run()) {
      ShrinkCase candidate = best_;
      candidate.caps[index] = value / 2;
      if (!try_case(candidate)) {
        break;
      }
      value /= 2;
      any = true;
    }
    while (value > 0 && can_run()) {
      ShrinkCase candidate = best_;
      candidate.caps[index] = value - 1;
      if (!try_case(candidate)) {
        break;
      }
      value -= 1;
      any = true;
    }
    return any;
  }

  const ShrinkRunner& run_;
  ShrinkCase best_;
  std::string fired_;
  std::uint32_t runs_ = 0;
  bool budget_spent_ = false;
};

}  // namespace

std::string failure_signature(const Status& status) {
  const std::string& message = status.message();
  // The oracles' violations begin with their rule: "O12 engine misreports ...", "U2 at line ...".
  if (message.size() >= 2 && (message[0] == 'O' || message[0] == 'U') &&
      std::isdigit(static_cast<unsigned char>(message[1])) != 0) {
    return message.substr(0, message.find(' '));
  }
  // Otherwise the code and the first words, numbers written as N (a step limit reached at
  // another virtual time is the same failure).
  std::string words;
  for (const char c : message.substr(0, message.find(':'))) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digit) {
      words += c;
    } else if (words.empty() || words.back() != 'N') {
      words += 'N';
    }
  }
  return std::string(status_code_name(status.code())) + ": " + words;
}

ShrinkOutcome shrink_case(const ShrinkCase& failing, const std::string& fired_hits,
                          const ShrinkRunner& run, std::uint32_t runs_before) {
  CaseShrinker shrinker(failing, fired_hits, run, runs_before);
  return shrinker.shrink();
}

}  // namespace readyport
