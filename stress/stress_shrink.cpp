#include "stress_shrink.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

namespace readyport {
namespace {

// Bounds: every step below is a finite descent, but a runner that misbehaves must not loop.
constexpr std::uint32_t kRunsMax = 400;

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
    best_.strategy = result.original.parameters.strategy == SimStrategy::kPct
                         ? StressStrategy::kPct
                         : StressStrategy::kRandom;
    shrink_sites();
    shrink_depth();
    shrink_cap(&StressOptions::actions_max, result.original.parameters.workload.actions);
    shrink_cap(&StressOptions::clients_max, result.original.parameters.workload.clients);
    shrink_cap(&StressOptions::peers_max, result.original.parameters.workload.peers);
    shrink_sites();
    result.options = best_;
    result.minimal = minimal_;
    result.signature = signature_;
    result.runs = runs_;
    return result;
  }

 private:
  // Runs `candidate`; keeps it when it fails the same way.
  bool try_options(const StressOptions& candidate) {
    if (runs_ >= kRunsMax) return false;
    SeedReport report = run_(candidate, seed_);
    ++runs_;
    if (report.status.ok() || stress_failure_signature(report.status) != signature_) return false;
    best_ = candidate;
    minimal_ = std::move(report);
    return true;
  }

  void shrink_sites() {
    bool changed = true;
    while (changed && best_.faults == StressOptions::Faults::kPlan) {
      changed = false;
      const FaultPlan plan = FaultPlan::parse(best_.fault_plan).value();
      for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(FaultSite::kCount); ++i) {
        const auto site = static_cast<FaultSite>(i);
        if (!plan.active(site)) continue;
        StressOptions candidate = best_;
        const FaultPlan smaller = plan.without(site);
        candidate.faults = smaller.active_count() == 0 ? StressOptions::Faults::kOff
                                                        : StressOptions::Faults::kPlan;
        candidate.fault_plan = smaller.active_count() == 0 ? "" : smaller.to_string();
        if (try_options(candidate)) {
          changed = true;
          break;  // the plan changed: start over from the smaller one
        }
      }
    }
  }

  void shrink_depth() {
    if (best_.strategy != StressStrategy::kPct) return;
    for (std::uint32_t depth = 1; depth < best_.pct_depth; ++depth) {
      StressOptions candidate = best_;
      candidate.pct_depth = depth;
      if (try_options(candidate)) return;
    }
  }

  // Halves a workload cap (from the drawn value) while the run still fails; then tries 0.
  void shrink_cap(std::uint32_t StressOptions::*cap, std::uint32_t drawn) {
    std::uint32_t value = std::min(best_.*cap, drawn);
    while (value > 0) {
      StressOptions candidate = best_;
      candidate.*cap = value / 2;
      if (!try_options(candidate)) break;
      value /= 2;
    }
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
  return std::string(status_code_name(status.code())) + ": " +
         message.substr(0, message.find(':'));
}

std::uint64_t stress_faults_fired(const SeedReport& report) {
  std::uint64_t fired = 0;
  for (const auto& [name, count] : report.coverage) {
    if (name.rfind("fault.", 0) == 0) fired += count;
  }
  return fired;
}

ShrinkResult stress_shrink(const StressOptions& options, std::uint64_t seed,
                           const SeedRunner& run) {
  Shrinker shrinker(options, seed, run);
  return shrinker.shrink();
}

}  // namespace readyport
