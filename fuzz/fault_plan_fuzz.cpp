// fuzz/fault_plan_fuzz.cpp: the fault plan's text (FaultPlan::parse,
// readyport/fake/fault_plan.hpp), what `--faults PLAN`, bundles and corpus entries carry, and
// `--faults` itself (stress_faults_set: drawn, off, none or a plan), on any text.
//
// Contract: a plan, or a kInvalidArgument Status naming the bad token, never a crash, a sanitizer
// report, an assertion or a hang (at most FaultPlan::kHitsMax pinned hits). Checked here as well:
// parse is the inverse of to_string (an accepted plan printed and parsed again is the same plan,
// and prints the same); every accessor answers for every site; stress_faults_set accepts exactly
// what parse accepts (beside its three words) and keeps the text as given.
// Input: a plan's text. Corpus: the plans of the corpus entries and bundles, drawn plans and
// pinned hits (fuzz/corpus/fault_plan/); dictionary fuzz/dict/fault_plan.dict.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/stress_options.hpp"
#include "fuzz_support.hpp"
#include "readyport/fake/fault_plan.hpp"

namespace readyport::fuzz {
namespace {

void check_plan(const FaultPlan& plan) {
  const std::string printed = plan.to_string();
  const Result<FaultPlan> again = FaultPlan::parse(printed);
  fuzz_require(again.ok(), "a printed plan parses", again.status().message());
  fuzz_require(again.value() == plan, "a printed plan parses to the same plan", printed);
  fuzz_require(again.value().to_string() == printed, "a plan prints the same twice", printed);
  fuzz_require(plan.hits().size() <= FaultPlan::kHitsMax, "at most kHitsMax pinned hits");
  std::uint32_t active = 0;
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    const auto site = static_cast<FaultSite>(i);
    active += plan.active(site) ? 1 : 0;
    fuzz_require(plan.rate_percent(site) <= 100, "a rate is a percent");
    fuzz_require(!plan.has_outage(site) || plan.rate_percent(site) != 0,
                 "only a rated site has an outage", printed);
    fuzz_require(plan.rate_percent(site) == 0 || !plan.pinned(site),
                 "a site is rated or pinned, not both", printed);
  }
  fuzz_require(active == plan.active_count(), "active_count counts the active sites");
}

void check_faults_option(std::string_view text, const Result<FaultPlan>& plan) {
  StressOptions options;
  const Status status = stress_faults_set(text, &options);
  if (text == "drawn" || text == "off" || text == "none") {
    fuzz_require(status.ok(), "--faults takes its words");
    return;
  }
  fuzz_require(status.ok() == plan.ok(), "--faults takes exactly the plans parse takes");
  if (status.ok()) {
    fuzz_require(
        options.faults == StressOptions::Faults::kPlan && options.fault_plan == std::string(text),
        "--faults keeps the plan as given");
  }
}

}  // namespace
}  // namespace readyport::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  const Result<FaultPlan> plan = FaultPlan::parse(text);
  if (plan.ok()) {
    fuzz::check_plan(plan.value());
  } else {
    fuzz::fuzz_require(plan.status().code() == StatusCode::kInvalidArgument,
                       "FaultPlan::parse refuses with kInvalidArgument");
    fuzz::fuzz_require_error(plan.status(), "FaultPlan::parse");
  }
  fuzz::check_faults_option(text, plan);
  const Result<FaultSite> site = fault_site_parse(text);
  if (site.ok()) {
    fuzz::fuzz_require(text == fault_site_name(site.value()), "a site parses from its name only");
  }
  return 0;
}
