// The guided search (guided_search.hpp).
#include "jobs/guided_search.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "files/bundle.hpp"
#include "files/corpus.hpp"
#include "files/file_io.hpp"
#include "jobs/abort_report.hpp"
#include "jobs/failure_report.hpp"
#include "jobs/run_summary.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/rng.hpp"
#include "runs/slot_tuple_reasons.hpp"
#include "runs/stress_run.hpp"

namespace readyport {
namespace {

using ull = unsigned long long;

// The pinned hits a mutation adds at most to one plan (a plan's own bound is far above).
constexpr std::size_t kHitsPerPlanMax = 64;
// A hit a mutation adds is one of a site's first this many draws.
constexpr std::uint64_t kHitAddedMax = 24;

struct Input {
  std::uint64_t seed = 0;
  StressOptions options;  // its strategy, depth, schedule seed and faults
};

// A tuple's count as a bucket (AFL's): 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128 and more. An
// input that reaches a tuple in a bucket no input reached it in is kept too: reaching a rare
// tuple more often is a step towards its neighbours.
std::uint32_t count_bucket(std::uint64_t count) {
  static constexpr std::uint64_t kBounds[] = {1, 2, 3, 7, 15, 31, 127};
  std::uint32_t bucket = 0;
  while (bucket < std::size(kBounds) && count > kBounds[bucket]) {
    ++bucket;
  }
  return bucket;
}
inline constexpr std::uint32_t kBuckets = 8;

struct Kept {
  Input input;
  std::uint64_t run = 0;              // the search's run that kept it
  std::vector<std::uint32_t> tuples;  // the tuples it reached (their indices)
  std::vector<std::uint8_t> buckets;  // each one's count bucket
  std::vector<std::string> rows;      // the coverage rows it reached
  std::string fired_hits;             // the faults that fired, as pinned hits ("" if unknown)
  std::uint64_t steps = 0;            // its run's scheduler steps (where a stall may go)
};

// What the search has reached: per tuple and per row, how many kept inputs reached it.
struct Reached {
  std::vector<std::uint64_t> tuple_inputs = std::vector<std::uint64_t>(kSlotTupleCount, 0);
  std::vector<bool> tuple_buckets = std::vector<bool>(kSlotTupleCount * kBuckets, false);
  std::map<std::string, std::uint64_t> row_inputs;
};

std::vector<std::uint32_t> tuples_of(const SeedReport& report) {
  std::vector<std::uint32_t> tuples;
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (report.tuples.counts[i] != 0) {
      tuples.push_back(i);
    }
  }
  return tuples;
}

std::vector<std::string> rows_of(const SeedReport& report) {
  std::vector<std::string> rows;
  for (const auto& [name, count] : report.coverage) {
    if (count != 0) {
      rows.push_back(name);
    }
  }
  return rows;
}

// Whether the run reached a tuple or a row that no kept input reached.
bool reaches_new(const Reached& reached, const Kept& kept) {
  for (std::size_t i = 0; i < kept.tuples.size(); ++i) {
    if (!reached.tuple_buckets[kept.tuples[i] * kBuckets + kept.buckets[i]]) {
      return true;
    }
  }
  const std::vector<std::string>& rows = kept.rows;
  for (const std::string& row : rows) {
    const auto it = reached.row_inputs.find(row);
    if (it == reached.row_inputs.end() || it->second == 0) {
      return true;
    }
  }
  return false;
}

void note_reached(Reached& reached, const Kept& kept) {
  for (std::size_t i = 0; i < kept.tuples.size(); ++i) {
    ++reached.tuple_inputs[kept.tuples[i]];
    reached.tuple_buckets[kept.tuples[i] * kBuckets + kept.buckets[i]] = true;
  }
  for (const std::string& row : kept.rows) {
    ++reached.row_inputs[row];
  }
}

// Whether tuples `a` and `b` differ in one part only (state, event or context): neighbours.
bool neighbours(std::uint32_t a, std::uint32_t b) {
  const SlotTuple x = slot_tuple_at(a);
  const SlotTuple y = slot_tuple_at(b);
  const int same = (x.state == y.state ? 1 : 0) + (x.event == y.event ? 1 : 0) +
                   (x.context == y.context ? 1 : 0);
  return same == 2;
}

// For each tuple, how many tuples still to find are its neighbours. To find: allowed, not listed
// unreachable (pending ones are to find), and reached by no kept input.
std::vector<std::uint32_t> wanted_neighbours(const Reached& reached) {
  const std::vector<SlotTupleReason>& reasons = slot_tuple_reasons();
  std::vector<std::uint32_t> wanted;
  for (std::uint32_t t = 0; t < kSlotTupleCount; ++t) {
    const int rule = slot_tuple_reason_of(t, reasons);
    const bool unreachable = rule >= 0 && !reasons[static_cast<std::size_t>(rule)].pending;
    if (slot_tuple_allowed(t) && !unreachable && reached.tuple_inputs[t] == 0) {
      wanted.push_back(t);
    }
  }
  std::vector<std::uint32_t> near(kSlotTupleCount, 0);
  for (std::uint32_t t = 0; t < kSlotTupleCount; ++t) {
    for (const std::uint32_t w : wanted) {
      near[t] += neighbours(t, w) ? 1 : 0;
    }
  }
  return near;
}

// How thin the coverage an input reached is: the sum over its tuples and rows of one over how
// many kept inputs reached each (in millionths, so that the pick stays in whole numbers), a
// tuple's share multiplied by one more than the tuples still wanted next to it: the search goes
// where a missing tuple is one part away, the more so the rarer the way there (directed greybox
// fuzzing's distance, at its shortest).
std::uint64_t rarity(const Reached& reached, const std::vector<std::uint32_t>& near,
                     const Kept& kept) {
  std::uint64_t score = 0;
  for (const std::uint32_t t : kept.tuples) {
    score += (1 + std::uint64_t{near[t]}) * 1'000'000 /
             std::max<std::uint64_t>(1, reached.tuple_inputs[t]);
  }
  for (const std::string& row : kept.rows) {
    const auto it = reached.row_inputs.find(row);
    score +=
        1'000'000 / std::max<std::uint64_t>(1, it == reached.row_inputs.end() ? 1 : it->second);
  }
  return std::max<std::uint64_t>(score, 1);
}

// A kept input, picked with probability in proportion to its rarity.
const Kept& pick_kept(Rng& rng, const Reached& reached, const std::vector<Kept>& corpus) {
  const std::vector<std::uint32_t> near = wanted_neighbours(reached);
  std::vector<std::uint64_t> scores;
  std::uint64_t total = 0;
  for (const Kept& kept : corpus) {
    scores.push_back(rarity(reached, near, kept));
    total += scores.back();
  }
  std::uint64_t point = rng.next() % total;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (point < scores[i]) {
      return corpus[i];
    }
    point -= scores[i];
  }
  return corpus.back();
}

// The parent's faults as pinned hits (what fired), one hit removed, added or moved.
std::string mutate_faults(Rng& rng, const Kept& parent) {
  std::vector<FaultHit> hits;
  if (!parent.fired_hits.empty() && parent.fired_hits != "none") {
    const Result<FaultPlan> plan = FaultPlan::parse(parent.fired_hits);
    if (plan.ok()) {
      hits = plan.value().hits();
    }
  }
  const std::uint64_t how = hits.empty() ? 1 : rng.below(3);
  if (how == 0) {  // remove one
    hits.erase(hits.begin() + static_cast<std::ptrdiff_t>(rng.below(hits.size())));
  } else if (how == 1 && hits.size() < kHitsPerPlanMax) {  // add one
    FaultHit hit;
    hit.site = static_cast<FaultSite>(rng.below(kFaultSiteCount));
    hit.hit = 1 + rng.below(kHitAddedMax);
    if (std::find(hits.begin(), hits.end(), hit) == hits.end()) {
      hits.push_back(hit);
    }
  } else if (!hits.empty()) {  // move one a few draws earlier or later
    FaultHit& hit = hits[rng.below(hits.size())];
    const std::uint64_t step = 1 + rng.below(3);
    const std::uint64_t moved =
        rng.below(2) == 0 && hit.hit > step ? hit.hit - step : hit.hit + step;
    FaultHit candidate{hit.site, moved};
    if (std::find(hits.begin(), hits.end(), candidate) == hits.end()) {
      hit = candidate;
    }
  }
  return FaultPlan::of_hits(hits).to_string();
}

// The parent's stalls (sim_stall.hpp), one added, moved or made longer or shorter: a thread
// kept off the CPU where no strategy would keep it (past the point where it alone can run). A new
// stall goes to a step of the parent's run, for one of kStallLengths steps; a stall moves by a
// few steps (the same schedule up to there: the stall meets the next point instead).
std::vector<SimStall> mutate_stalls(Rng& rng, const Kept& parent) {
  static constexpr std::uint64_t kStallLengths[] = {16, 256, 4096};
  std::vector<SimStall> stalls = parent.input.options.stalls;
  const std::uint64_t how = stalls.empty() ? 0 : rng.below(3);
  if (how == 0 && stalls.size() < kSimStallsMax) {  // add one
    const SimStall stall{1 + rng.below(std::max<std::uint64_t>(parent.steps, 1)),
                         kStallLengths[rng.below(std::size(kStallLengths))]};
    const bool taken = std::any_of(stalls.begin(), stalls.end(),
                                   [&](const SimStall& s) { return s.step == stall.step; });
    if (!taken) {
      stalls.push_back(stall);
    }
  } else if (how == 1) {  // move one a few steps earlier or later
    SimStall& stall = stalls[rng.below(stalls.size())];
    const std::uint64_t by = 1 + rng.below(8);
    const std::uint64_t moved =
        rng.below(2) == 0 && stall.step > by ? stall.step - by : stall.step + by;
    const bool taken = std::any_of(stalls.begin(), stalls.end(),
                                   [&](const SimStall& s) { return s.step == moved; });
    if (!taken) {
      stall.step = moved;
    }
  } else if (!stalls.empty()) {  // twice or half as long
    SimStall& stall = stalls[rng.below(stalls.size())];
    stall.steps = rng.below(2) == 0 ? std::max<std::uint64_t>(stall.steps / 2, 1)
                                    : std::min(stall.steps * 2, kSimStallStepsMax);
  }
  return stalls;
}

// One mutation of `parent`: its schedule, its faults, its world, its strategy, or its stalls.
Input mutate(Rng& rng, const Kept& parent) {
  Input child = parent.input;
  switch (rng.below(5)) {
    case 0:  // another schedule of the same world and faults
      child.options.schedule_seed = 1 + (rng.next() >> 1);
      break;
    case 1:  // the same world and schedule, one fault hit changed
      child.options.faults = StressOptions::Faults::kPlan;
      child.options.fault_plan = mutate_faults(rng, parent);
      break;
    case 2:  // another world under the same schedule and faults
      if (child.options.schedule_seed == 0) {
        child.options.schedule_seed = child.seed;
      }
      child.seed = 1'000'000'000'000ULL + (rng.next() >> 24);
      break;
    case 3: {  // another strategy or depth
      static constexpr StressStrategy kStrategies[] = {
          StressStrategy::kRandom, StressStrategy::kPct, StressStrategy::kDelayBounded,
          StressStrategy::kFair};
      child.options.strategy = kStrategies[rng.below(std::size(kStrategies))];
      child.options.pct_depth = 1 + static_cast<std::uint32_t>(rng.below(5));
      break;
    }
    case 4:  // the same schedule, a thread kept off the CPU somewhere (sim_stall.hpp)
      if (child.options.runtime != StressRuntime::kSim) {
        child.options.schedule_seed = 1 + (rng.next() >> 1);  // real threads have no steps
        break;
      }
      if (child.options.schedule_seed == 0) {
        child.options.schedule_seed = child.seed;
      }
      child.options.stalls = mutate_stalls(rng, parent);
      break;
    default:
      READYPORT_UNREACHABLE();
  }
  // A pinned plan meets the world's mode as a drawn one does (stress_run.cpp, plan_for): a
  // spurious WSAEWOULDBLOCK with data present is no OS's behaviour, which an edge-triggered
  // registration never recovers from, so an edge world gets none.
  if (child.options.faults == StressOptions::Faults::kPlan) {
    const Mode mode = stress_parameters(child.options, child.seed).workload.mode;
    if (mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge) {
      const FaultPlan plan = FaultPlan::parse(child.options.fault_plan)
                                 .value()
                                 .without(FaultSite::kRecvWouldblock)
                                 .without(FaultSite::kSendWouldblock);
      child.options.fault_plan = plan.to_string();
    }
  }
  return child;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct Search {
  Search(const StressOptions& o, std::vector<std::string> argv)
      : options(o), command_line(std::move(argv)), rng(o.first_seed * 0x9E3779B97F4A7C15ULL + 1) {}

  const StressOptions& options;
  std::vector<std::string> command_line;
  Rng rng;
  std::vector<Kept> corpus;
  Reached reached;
  StressRunSummary summary;
  std::uint64_t runs = 0;
  std::uint64_t kept_mutants = 0;
  std::uint64_t failures = 0;
  std::uint64_t first_failure_run = 0;
  double first_failure_seconds = 0;
  double start_seconds = 0;

  // Runs one input, judges it and keeps it when it reached new coverage; false when it failed.
  bool run(const Input& input) {
    ++runs;
    const std::string bundle_path =
        stress_bundle_path(options.bundle_dir, input.seed, "-guided-" + std::to_string(runs));
    const StressBundleContext context{command_line, bundle_path, "guided search"};
    stress_abort_arm(input.options, input.seed, &context);
    SeedReport report = stress_run_seed(input.options, input.seed);
    stress_summary_add_seed(summary, report);
    if (options.verbose) {
      stress_verbose_print(report);
    }
    if (!report.status.ok()) {
      stress_tail_fill(input.options, report);
      const std::string written = stress_bundle_write(input.options, report, context);
      std::printf("guided: run %llu failed\n", static_cast<ull>(runs));
      stress_failure_print(
          input.options, report, written,
          command_line.empty() ? std::string("readyport-stress") : command_line.front());
      stress_summary_add_failure(summary, stress_failure_record(report, "", written));
      if (failures++ == 0) {
        first_failure_run = runs;
        first_failure_seconds = cpu_seconds() - start_seconds;
      }
      return false;
    }
    Kept kept{input,           runs, tuples_of(report), {}, rows_of(report), report.fired_hits,
              report.sim.steps};
    for (const std::uint32_t t : kept.tuples) {
      kept.buckets.push_back(static_cast<std::uint8_t>(count_bucket(report.tuples.counts[t])));
    }
    if (reaches_new(reached, kept) && corpus.size() < kGuidedCorpusMax) {
      note_reached(reached, kept);
      corpus.push_back(std::move(kept));
      return true;
    }
    return true;
  }

  bool budget_left() const {
    if (options.guided_runs != 0) {
      return runs < options.guided_runs;
    }
    return cpu_seconds() - start_seconds < options.guided_seconds;
  }
};

void print_summary(const Search& search) {
  const SlotTupleCheck check = slot_tuple_check(search.summary.totals.tuples);
  std::size_t rows = 0;
  for (const auto& [name, count] : search.summary.totals.coverage) {
    rows += count != 0 ? 1 : 0;
  }
  std::printf(
      "\nreadyport-stress %s search: %llu runs in %.1f CPU-s, %zu inputs kept (%llu of them "
      "mutants)\n",
      search.options.unguided ? "unguided" : "guided", static_cast<ull>(search.runs),
      cpu_seconds() - search.start_seconds, search.corpus.size(),
      static_cast<ull>(search.kept_mutants));
  std::printf("  tuples reached         %u of %u allowed (%u listed unreachable, %u pending)\n",
              check.reached, check.allowed, check.listed - check.pending, check.pending);
  std::printf("  coverage rows reached  %zu of %zu\n", rows, search.summary.totals.coverage.size());
  if (search.failures == 0) {
    std::printf("  failures               0\n");
  } else {
    std::printf("  failures               %llu (the first at run %llu, after %.1f CPU-s)\n",
                static_cast<ull>(search.failures), static_cast<ull>(search.first_failure_run),
                search.first_failure_seconds);
  }
  // One line for scripts (ci/compare_search.sh).
  std::printf(
      "search: mode=%s runs=%llu tuples=%u allowed=%u rows=%zu failures=%llu "
      "first_failure_run=%llu first_failure_cpu_s=%.1f\n",
      search.options.unguided ? "unguided" : "guided", static_cast<ull>(search.runs), check.reached,
      check.allowed, rows, static_cast<ull>(search.failures),
      static_cast<ull>(search.first_failure_run), search.first_failure_seconds);
}

// The tuples seeds 1..kBaselineSeeds reach with `options`' defaults (the main job's seed range).
constexpr std::uint64_t kBaselineSeeds = 300;
std::vector<bool> baseline_tuples(const StressOptions& options) {
  StressOptions base;
  base.mechanism = options.mechanism;
  std::vector<bool> reached(kSlotTupleCount, false);
  for (std::uint64_t seed = 1; seed <= kBaselineSeeds; ++seed) {
    const SeedReport report = stress_run_seed(base, seed);
    for (const std::uint32_t t : tuples_of(report)) {
      reached[t] = true;
    }
  }
  return reached;
}

// --guided-corpus-out: the fewest kept inputs (greedy) that reach every tuple the search reached
// and seeds 1..300 do not, each written as a corpus entry (corpus.hpp) for the main job's
// default run to replay. Returns the entries written, or -1 when one could not be.
int write_corpus(const Search& search) {
  const std::vector<bool> baseline = baseline_tuples(search.options);
  std::set<std::uint32_t> wanted;
  for (const Kept& kept : search.corpus) {
    for (const std::uint32_t t : kept.tuples) {
      if (!baseline[t]) {
        wanted.insert(t);
      }
    }
  }
  int written = 0;
  while (!wanted.empty() && written < 64) {
    const Kept* best = nullptr;
    std::size_t best_count = 0;
    for (const Kept& kept : search.corpus) {
      std::size_t count = 0;
      for (const std::uint32_t t : kept.tuples) {
        count += wanted.count(t);
      }
      if (count > best_count) {
        best = &kept;
        best_count = count;
      }
    }
    if (best == nullptr) {
      break;
    }
    std::string names;
    for (const std::uint32_t t : best->tuples) {
      if (wanted.erase(t) != 0) {
        names += (names.empty() ? "" : ", ") + slot_tuple_name(t);
      }
    }
    StressCorpusEntry entry;
    entry.name = "guided-" + std::to_string(best->input.seed) + "-run-" +
                 std::to_string(best->run) + ".json";
    entry.seed = best->input.seed;
    entry.options = best->input.options;
    entry.why = "Kept by the guided search (--guided from seed " +
                std::to_string(search.options.first_seed) + ", run " + std::to_string(best->run) +
                "): it reaches what seeds 1.." + std::to_string(kBaselineSeeds) +
                " do not: " + names + ".";
    const std::string path = search.options.guided_corpus_out + "/" + entry.name;
    const Status status = stress_file_write(path, stress_corpus_entry_json(entry).dump(2) + "\n",
                                            StressWriteMode::kReplace);
    if (!status.ok()) {
      std::printf("guided: corpus entry not written: %s\n", status.message().c_str());
      return -1;
    }
    std::printf("guided: corpus entry %s: %s\n", path.c_str(), names.c_str());
    ++written;
  }
  return written;
}

// --guided-from DIR: its entries as inputs, in name order, the canaries' left out (they fail by
// design in their own build and pass in any other: nothing to start from).
Result<std::vector<Input>> inputs_from(const StressOptions& options) {
  std::vector<Input> inputs;
  if (options.guided_from.empty()) {
    return inputs;
  }
  Result<std::vector<StressCorpusEntry>> entries = stress_corpus_load(options.guided_from);
  if (!entries.ok()) {
    return entries.status();
  }
  for (const StressCorpusEntry& entry : entries.value()) {
    if (!entry.expect_canary.empty()) {
      continue;
    }
    Input input{entry.seed, entry.options};
    // The entry says what runs; the search says where its output goes.
    input.options.verbose = options.verbose;
    input.options.mechanism = options.mechanism;
    input.options.bundle_dir = options.bundle_dir;
    inputs.push_back(std::move(input));
  }
  return inputs;
}

// Where the search's inputs come from, in order: --guided-from's entries, then fresh seeds.
struct Feed {
  const std::vector<Input>& from;
  std::size_t from_next = 0;
  std::uint64_t seed_next = 0;
};

// The next input: the next entry of --guided-from, else the first kGuidedStartSeeds fresh seeds,
// then a fresh seed every other run (new worlds keep the corpus diverse), the rest mutants of a
// kept input (*mutant set).
Input next_input(Search& search, Feed& feed, bool* mutant) {
  if (feed.from_next < feed.from.size()) {
    return feed.from[feed.from_next++];
  }
  const std::uint64_t started = search.runs - feed.from_next;
  const bool fresh = search.options.unguided || started < kGuidedStartSeeds ||
                     search.corpus.empty() || search.runs % 2 == 0;
  if (!fresh) {
    *mutant = true;
    return mutate(search.rng, pick_kept(search.rng, search.reached, search.corpus));
  }
  Input input;
  input.seed = feed.seed_next++;
  input.options = search.options;
  return input;
}

}  // namespace

int stress_guided_main(const StressOptions& options, const std::vector<std::string>& command_line) {
  const Result<std::vector<Input>> from = inputs_from(options);
  if (!from.ok()) {
    std::printf("readyport-stress: --guided-from %s: %s\n", options.guided_from.c_str(),
                from.status().to_string().c_str());
    return 2;
  }
  Search search(options, command_line);
  search.summary = stress_summary_begin(options.guided_runs);
  search.start_seconds = cpu_seconds();
  stress_abort_install();
  std::printf("readyport-stress %s search from seed %llu, %s\n",
              options.unguided ? "unguided" : "guided", static_cast<ull>(options.first_seed),
              options.guided_runs != 0
                  ? (std::to_string(options.guided_runs) + " runs").c_str()
                  : (std::to_string(options.guided_seconds) + " CPU-seconds").c_str());
  Feed feed{from.value(), 0, options.first_seed};
  while (search.budget_left()) {
    bool mutant = false;
    const Input input = next_input(search, feed, &mutant);
    const std::size_t kept_before = search.corpus.size();
    const bool passed = search.run(input);
    if (mutant && search.corpus.size() > kept_before) {
      ++search.kept_mutants;
    }
    if (!passed && options.stop_on_failure) {
      break;
    }
  }
  print_summary(search);
  if (!options.guided_corpus_out.empty() && write_corpus(search) < 0) {
    return 1;
  }
  const SlotTupleCheck check = slot_tuple_check(search.summary.totals.tuples);
  int status = search.failures == 0 ? 0 : 1;
  if (options.require_coverage && !check.ok()) {
    std::printf("coverage: %zu tuple(s) never reached, listed yet reached, or stale\n",
                check.unreached.size() + check.listed_reached.size() + check.rules_stale.size());
    status = 1;
  }
  return status;
}

}  // namespace readyport
