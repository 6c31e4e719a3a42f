#include "jobs/stress_shrink.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace readyport {
namespace {

// Bounds: every step below is a finite descent, but a runner that misbehaves must not loop.
constexpr std::uint32_t kRunsMax = 600;
constexpr std::uint32_t kPassesMax = 6;
// PCT depths tried in place of a random schedule (fewer preemptions: depth 1 has no change point).
constexpr std::uint32_t kPctDepthTriedMax = 3;

class Shrinker {
 public:
  Shrinker(const StressOptions& options, std::uint64_t seed, const SeedRunner& run)
      : seed_(seed), run_(run), best_(options) {}

  ShrinkResult shrink() {
    ShrinkResult result;
    result.original = run_(best_, seed_);
    ++runs_;
    if (result.original.status.ok()) {
      result.status = Status(StatusCode::kFailedPrecondition,
                             "seed " + std::to_string(seed_) + " passes: nothing to shrink");
      result.options = best_;
      result.minimal = result.original;
      result.runs = runs_;
      return result;
    }
    signature_ = stress_failure_signature(result.original.status);
    minimal_ = result.original;
    // Pin what the seed drew, so each step changes one thing: the exact plan and the strategy.
    best_.faults = StressOptions::Faults::kPlan;
    best_.fault_plan = result.original.parameters.plan.to_string();
    best_.strategy = stress_strategy_of(result.original.parameters.strategy);
    const SeedParameters& drawn = result.original.parameters;
    // Passes until nothing shrinks: after a pass that changed nothing, no single fault, site,
    // depth step or workload unit can go (1-minimal over those), unless the budget ran out.
    bool changed = true;
    std::uint32_t passes = 0;
    while (changed && passes < kPassesMax && runs_ < kRunsMax) {
      ++passes;
      changed = false;
      changed |= shrink_sites();
      changed |= shrink_hits();
      changed |= shrink_schedule();
      changed |= shrink_cap(&StressOptions::actions_max, drawn.workload.actions);
      changed |= shrink_cap(&StressOptions::clients_max, drawn.workload.clients);
      changed |= shrink_cap(&StressOptions::peers_max, drawn.workload.peers);
    }
    result.options = best_;
    result.minimal = minimal_;
    result.signature = signature_;
    result.runs = runs_;
    result.passes = passes;
    result.one_minimal = !changed && runs_ < kRunsMax;
    return result;
  }

 private:
  // Runs `candidate`; keeps it when it fails the same way.
  bool try_options(const StressOptions& candidate) {
    if (runs_ >= kRunsMax) {
      return false;
    }
    SeedReport report = run_(candidate, seed_);
    ++runs_;
    if (report.status.ok() || stress_failure_signature(report.status) != signature_) {
      return false;
    }
    best_ = candidate;
    minimal_ = std::move(report);
    return true;
  }

  FaultPlan plan() const {
    return best_.faults == StressOptions::Faults::kPlan ? FaultPlan::parse(best_.fault_plan).value()
                                                        : FaultPlan::none();
  }

  static void set_plan(StressOptions& options, const FaultPlan& plan) {
    const bool empty = plan.active_count() == 0;
    options.faults = empty ? StressOptions::Faults::kOff : StressOptions::Faults::kPlan;
    options.fault_plan = empty ? "" : plan.to_string();
  }

  // Whole sites, one at a time (removing a site removes every fault it fired).
  bool shrink_sites() {
    bool any = false;
    bool changed = true;
    while (changed && runs_ < kRunsMax) {
      changed = false;
      const FaultPlan current = plan();
      for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(FaultSite::kCount); ++i) {
        const auto site = static_cast<FaultSite>(i);
        if (!current.active(site)) {
          continue;
        }
        StressOptions candidate = best_;
        set_plan(candidate, current.without(site));
        if (try_options(candidate)) {
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
    if (minimal_.fired_hits.empty()) {
      return false;  // more fired than a plan holds
    }
    const FaultPlan fired = FaultPlan::parse(minimal_.fired_hits).value();
    bool any = false;
    if (!(plan() == fired)) {
      StressOptions candidate = best_;
      set_plan(candidate, fired);
      if (!try_options(candidate)) {
        return false;  // should not happen: the same run
      }
      // Not counted as a change: the same faults, written as hits.
    }
    std::size_t chunks = 2;
    while (runs_ < kRunsMax) {
      const std::vector<FaultHit> hits = plan().hits();
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
        StressOptions candidate = best_;
        set_plan(candidate, FaultPlan::of_hits(rest));
        if (try_options(candidate)) {
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

  // After a smaller plan was kept: keep only the hits that really fired in that run (a listed
  // hit the run never reached is not a fault of the case).
  void tighten_to_fired() {
    if (minimal_.fired_hits.empty()) {
      return;
    }
    const FaultPlan fired = FaultPlan::parse(minimal_.fired_hits).value();
    if (fired.hits().size() < plan().hits().size()) {
      StressOptions tighter = best_;
      set_plan(tighter, fired);
      best_ = tighter;  // the same run: these are exactly the faults that fired in it
    }
  }

  // The schedule: a lower depth (fewer PCT change points, fewer delays); a random or fair
  // schedule is tried as PCT of depth 1..kPctDepthTriedMax (runs to a block between change
  // points: few preemptions).
  bool shrink_schedule() {
    if (best_.strategy == StressStrategy::kPct || best_.strategy == StressStrategy::kDelayBounded) {
      for (std::uint32_t depth = 1; depth < best_.pct_depth; ++depth) {
        StressOptions candidate = best_;
        candidate.pct_depth = depth;
        if (try_options(candidate)) {
          return true;
        }
      }
      return false;
    }
    for (std::uint32_t depth = 1; depth <= kPctDepthTriedMax; ++depth) {
      StressOptions candidate = best_;
      candidate.strategy = StressStrategy::kPct;
      candidate.pct_depth = depth;
      if (try_options(candidate)) {
        return true;
      }
    }
    return false;
  }

  // A workload cap (from the drawn value): halved while the run still fails, then lowered by one
  // while it still fails, so that at the end cap - 1 passes (or the cap is 0).
  bool shrink_cap(std::uint32_t StressOptions::* cap, std::uint32_t drawn) {
    bool any = false;
    std::uint32_t value = std::min(best_.*cap, drawn);
    if (best_.*cap != value) {
      best_.*cap = value;  // the same run: the cap is the drawn value
    }
    while (value > 0 && runs_ < kRunsMax) {
      StressOptions candidate = best_;
      candidate.*cap = value / 2;
      if (!try_options(candidate)) {
        break;
      }
      value /= 2;
      any = true;
    }
    while (value > 0 && runs_ < kRunsMax) {
      StressOptions candidate = best_;
      candidate.*cap = value - 1;
      if (!try_options(candidate)) {
        break;
      }
      value -= 1;
      any = true;
    }
    return any;
  }

  const std::uint64_t seed_;
  const SeedRunner& run_;
  StressOptions best_;
  SeedReport minimal_;
  std::string signature_;
  std::uint32_t runs_ = 0;
};

}  // namespace

std::string stress_failure_signature(const Status& status) {
  const std::string& message = status.message();
  // The oracle's violations begin with their rule: "O12 engine misreports ...".
  if (message.size() >= 2 && message[0] == 'O' &&
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

std::uint64_t stress_faults_fired(const SeedReport& report) {
  std::uint64_t fired = 0;
  for (const auto& [name, count] : report.coverage) {
    if (name.rfind("fault.", 0) == 0) {
      fired += count;
    }
  }
  return fired;
}

ShrinkResult stress_shrink(const StressOptions& options, std::uint64_t seed,
                           const SeedRunner& run) {
  Shrinker shrinker(options, seed, run);
  return shrinker.shrink();
}

}  // namespace readyport
