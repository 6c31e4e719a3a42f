// The harness's options from the environment, its names, and the fault sites it draws. See
// harness.hpp (the list of variables is there, in one place).
#include <cstdlib>
#include <string>

#include "readyport/fake/harness.hpp"

namespace readyport {
namespace {

Status bad(std::string_view variable, std::string_view value, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                std::string(variable) + "='" + std::string(value) + "': " + std::string(why));
}

// A decimal in [low, high].
bool parse_decimal(std::string_view text, std::uint64_t low, std::uint64_t high,
                   std::uint64_t* value_out) {
  if (text.empty() || text.size() > 20) {
    return false;
  }
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (~std::uint64_t{0} - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  if (value < low || value > high) {
    return false;
  }
  *value_out = value;
  return true;
}

const char* env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

Status read_number(const char* name, std::uint64_t low, std::uint64_t high,
                   std::uint64_t* value_out) {
  const char* text = env(name);
  if (text == nullptr) {
    return Status();
  }
  if (!parse_decimal(text, low, high, value_out)) {
    return bad(name, text,
               "not a decimal from " + std::to_string(low) + " to " + std::to_string(high));
  }
  return Status();
}

Status read_strategy(HarnessOptions& options) {
  const char* text = env("READYPORT_TEST_STRATEGY");
  if (text == nullptr) {
    return Status();
  }
  const std::string_view name = text;
  if (name == "portfolio") {
    options.portfolio = true;
    return Status();
  }
  SimStrategy strategy = SimStrategy::kRandom;
  if (!sim_strategy_parse(name, &strategy) || strategy == SimStrategy::kRoundRobin ||
      strategy == SimStrategy::kExplore) {
    return bad("READYPORT_TEST_STRATEGY", name,
               "not one of portfolio, random, pct, delay_bounded, fair");
  }
  options.portfolio = false;
  options.strategy = strategy;
  return Status();
}

Status read_faults(HarnessOptions& options) {
  if (const char* text = env("READYPORT_TEST_FAULTS"); text != nullptr) {
    const std::string_view value = text;
    if (value == "drawn") {
      options.faults = HarnessOptions::Faults::kDrawn;
    } else if (value == "none") {
      options.faults = HarnessOptions::Faults::kNone;
    } else {
      Result<FaultPlan> plan = FaultPlan::parse(value);
      if (!plan.ok()) {
        return bad("READYPORT_TEST_FAULTS", value,
                   "not drawn, none or a fault plan: " + plan.status().message());
      }
      options.faults = HarnessOptions::Faults::kPlan;
      options.plan = plan.value();
    }
  }
  const char* off = env("READYPORT_TEST_FAULTS_OFF");
  for (std::string_view rest = off != nullptr ? off : ""; !rest.empty();) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    Result<FaultSite> site = fault_site_parse(name);
    if (!site.ok()) {
      return bad("READYPORT_TEST_FAULTS_OFF", off, site.status().message());
    }
    options.sites_off.push_back(site.value());
  }
  return Status();
}

Status read_runtime(HarnessOptions& options) {
  const char* text = env("READYPORT_TEST_RUNTIME");
  if (text == nullptr) {
    return Status();
  }
  for (const HarnessRuntime runtime :
       {HarnessRuntime::kSim, HarnessRuntime::kFree, HarnessRuntime::kWindows}) {
    if (std::string_view(text) == harness_runtime_name(runtime)) {
      options.runtime = runtime;
      return Status();
    }
  }
  return bad("READYPORT_TEST_RUNTIME", text, "not one of sim, free, windows");
}

Status read_flag(const char* name, bool* flag_out) {
  const char* text = env(name);
  if (text == nullptr) {
    return Status();
  }
  const std::string_view value = text;
  if (value != "0" && value != "1") {
    return bad(name, value, "not 0 or 1");
  }
  *flag_out = value == "1";
  return Status();
}

}  // namespace

const char* harness_phase_name(HarnessPhase phase) {
  constexpr const char* kNames[] = {"start", "chaos", "liveness", "stop"};
  return kNames[static_cast<int>(phase)];
}

const char* harness_runtime_name(HarnessRuntime runtime) {
  constexpr const char* kNames[] = {"sim", "free", "windows"};
  return kNames[static_cast<int>(runtime)];
}

std::vector<FaultSite> harness_fault_sites() {
  std::vector<FaultSite> sites;
  for (std::uint32_t i = 0; i < kFaultSiteCount; ++i) {
    const auto site = static_cast<FaultSite>(i);
    if (site != FaultSite::kPsnRemoveFails && site != FaultSite::kPsnWaitShort &&
        site != FaultSite::kPsnDequeueFewer) {
      sites.push_back(site);
    }
  }
  return sites;
}

Result<HarnessOptions> harness_options_from_env(HarnessOptions defaults) {
  HarnessOptions options = std::move(defaults);
  std::uint64_t number = options.first_seed;
  if (Status s = read_number("READYPORT_TEST_SEED", 0, ~std::uint64_t{0} >> 1, &number); !s.ok()) {
    return s;
  }
  options.first_seed = number;
  number = options.seeds;
  if (Status s = read_number("READYPORT_TEST_SEEDS", 1, 100'000'000, &number); !s.ok()) {
    return s;
  }
  options.seeds = static_cast<std::uint32_t>(number);
  number = options.depth;
  if (Status s = read_number("READYPORT_TEST_DEPTH", 1, 64, &number); !s.ok()) {
    return s;
  }
  options.depth = static_cast<std::uint32_t>(number);
  number = options.steps_max;
  if (Status s = read_number("READYPORT_TEST_STEPS_MAX", 1000, 1'000'000'000, &number); !s.ok()) {
    return s;
  }
  options.steps_max = number;
  number = options.trace_mb_max;
  if (Status s = read_number("READYPORT_TEST_TRACE_MB_MAX", 1, 1'000'000, &number); !s.ok()) {
    return s;
  }
  options.trace_mb_max = static_cast<std::uint32_t>(number);
  for (Status s : {read_strategy(options), read_faults(options), read_runtime(options),
                   read_flag("READYPORT_TEST_DETERMINISM", &options.determinism),
                   read_flag("READYPORT_TEST_SHRINK", &options.shrink)}) {
    if (!s.ok()) {
      return s;
    }
  }
  if (const char* file = env("READYPORT_TEST_TRACE"); file != nullptr) {
    options.trace_out = file;
  }
  if (const char* dir = env("READYPORT_TEST_BUNDLES"); dir != nullptr) {
    options.bundle_dir = dir;
  }
  if (const char* hash = env("READYPORT_TEST_EXPECT_HASH"); hash != nullptr) {
    const std::string_view value = hash;
    if (value.size() != 16 || value.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return bad("READYPORT_TEST_EXPECT_HASH", value, "not 16 lower-case hex digits");
    }
    options.expect_hash = hash;
  }
  return options;
}

}  // namespace readyport
