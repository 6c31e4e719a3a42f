#include "jobs/sweep_record.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace readyport {
namespace {

std::vector<std::uint64_t StressFigures::*> figures_fields() {
  return {&StressFigures::notifications, &StressFigures::port_calls,
          &StressFigures::remove_ored_with_in, &StressFigures::remove_separate,
          &StressFigures::stale_packets};
}

template <typename Array>
Json array_json(const Array& values) {
  Json array = Json::array();
  for (const std::uint64_t value : values) {
    array.push_back(value);
  }
  return array;
}

// `object[key]`: an array of exactly `size` whole numbers.
Status numbers_from_json(const Json& object, const char* key, std::size_t size,
                         std::vector<std::uint64_t>* out) {
  const std::string where = std::string("sweep record.") + key;
  if (!object.contains(key) || !object[key].is_array() || object[key].size() != size) {
    return Status(StatusCode::kInvalidArgument,
                  where + ": expected an array of " + std::to_string(size) + " numbers");
  }
  out->clear();
  for (const Json& value : object[key]) {
    if (!value.is_number_unsigned()) {
      return Status(StatusCode::kInvalidArgument, where + ": expected whole numbers");
    }
    out->push_back(value.get<std::uint64_t>());
  }
  return Status();
}

template <std::size_t N>
Status array_from_json(const Json& object, const char* key, std::array<std::uint64_t, N>* out) {
  std::vector<std::uint64_t> values;
  if (Status s = numbers_from_json(object, key, N, &values); !s.ok()) {
    return s;
  }
  for (std::size_t i = 0; i < N; ++i) {
    (*out)[i] = values[i];
  }
  return Status();
}

// "tuples": [index, count, ...]: each index below kSlotTupleCount.
Status tuples_from_json(const Json& object, SlotTuples* tuples) {
  const char* what = "sweep record.share.tuples";
  if (!object.contains("tuples") || !object["tuples"].is_array() ||
      object["tuples"].size() % 2 != 0) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": expected an array of index and count pairs");
  }
  const Json& pairs = object["tuples"];
  for (std::size_t i = 0; i < pairs.size(); i += 2) {
    if (!pairs[i].is_number_unsigned() || !pairs[i + 1].is_number_unsigned() ||
        pairs[i].get<std::uint64_t>() >= kSlotTupleCount) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(what) + ": pair " + std::to_string(i / 2) +
                        " is not an index below " + std::to_string(kSlotTupleCount) +
                        " and a count");
    }
    tuples->counts[pairs[i].get<std::size_t>()] += pairs[i + 1].get<std::uint64_t>();
  }
  return Status();
}

// The tuples reached, as index and count pairs (one binary on both ends: the same indices), then
// the table's edges.
Json tuples_json(const SlotTuples& tuples) {
  Json pairs = Json::array();
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (tuples.counts[i] != 0) {
      pairs.push_back(i);
      pairs.push_back(tuples.counts[i]);
    }
  }
  return pairs;
}

Json share_json(const StressSeedShare& share, StressRecordNames* sent) {
  Json object = Json::object();
  object["seed"] = share.seed;
  object["hash"] = share.trace_hash;
  Json totals = Json::array();
  for (const auto field : stress_totals_counters()) {
    totals.push_back(share.totals.*field);
  }
  object["totals"] = std::move(totals);
  const auto& rows = share.totals.coverage;
  bool same_names = sent->coverage.size() == rows.size();
  Json counts = Json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    same_names = same_names && sent->coverage[i] == rows[i].first;
    counts.push_back(rows[i].second);
  }
  if (!same_names) {
    sent->coverage.clear();
    for (const auto& row : rows) {
      sent->coverage.push_back(row.first);
    }
    object["coverage_names"] = sent->coverage;
  }
  object["coverage"] = std::move(counts);
  object["tuples"] = tuples_json(share.totals.tuples);
  const OracleJudgement& judgement = share.totals.judgement;
  object["judged"] = array_json(judgement.judged);
  object["violated"] = array_json(judgement.violated);
  object["ambiguous"] = array_json(judgement.ambiguous);
  object["unjudged"] = array_json(judgement.unjudged);
  object["bounds_hit"] = array_json(judgement.bounds_hit);
  return object;
}

Status share_from_json(const Json& object, StressSeedShare* share, StressRecordNames* seen) {
  const char* where = "sweep record.share";
  if (Status s = json_field_u64(object, where, "seed", 0, kJsonU64Max, &share->seed); !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(object, where, "hash", &share->trace_hash); !s.ok()) {
    return s;
  }
  std::vector<std::uint64_t> totals;
  const auto fields = stress_totals_counters();
  if (Status s = numbers_from_json(object, "totals", fields.size(), &totals); !s.ok()) {
    return s;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    share->totals.*fields[i] = totals[i];
  }
  if (object.contains("coverage_names")) {
    const Json& names = object["coverage_names"];
    if (!names.is_array() || !std::all_of(names.begin(), names.end(),
                                          [](const Json& name) { return name.is_string(); })) {
      return Status(StatusCode::kInvalidArgument,
                    "sweep record.share.coverage_names: expected an array of names");
    }
    seen->coverage = names.get<std::vector<std::string>>();
  }
  std::vector<std::uint64_t> counts;
  if (Status s = numbers_from_json(object, "coverage", seen->coverage.size(), &counts); !s.ok()) {
    return Status(StatusCode::kInvalidArgument,
                  s.message() + " (one count per coverage row named by this record or an " +
                      "earlier one of the channel: " + std::to_string(seen->coverage.size()) +
                      " named)");
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    share->totals.coverage.emplace_back(seen->coverage[i], counts[i]);
  }
  if (Status s = tuples_from_json(object, &share->totals.tuples); !s.ok()) {
    return s;
  }
  OracleJudgement& judgement = share->totals.judgement;
  if (Status s = array_from_json(object, "judged", &judgement.judged); !s.ok()) {
    return s;
  }
  if (Status s = array_from_json(object, "violated", &judgement.violated); !s.ok()) {
    return s;
  }
  if (Status s = array_from_json(object, "ambiguous", &judgement.ambiguous); !s.ok()) {
    return s;
  }
  if (Status s = array_from_json(object, "unjudged", &judgement.unjudged); !s.ok()) {
    return s;
  }
  return array_from_json(object, "bounds_hit", &judgement.bounds_hit);
}

Json failure_json(const StressFailure& failure) {
  Json object = Json::object();
  object["from_corpus"] = failure.from_corpus;
  object["entry"] = failure.entry;
  object["seed"] = failure.seed;
  object["status"] = failure.status;
  object["message"] = failure.message;
  object["signature"] = failure.signature;
  object["bundle"] = failure.bundle;
  return object;
}

Status failure_from_json(const Json& object, StressFailure* failure) {
  const char* where = "sweep record.failure";
  if (Status s = json_field_bool(object, where, "from_corpus", &failure->from_corpus); !s.ok()) {
    return s;
  }
  if (Status s = json_field_u64(object, where, "seed", 0, kJsonU64Max, &failure->seed); !s.ok()) {
    return s;
  }
  for (const auto& [key, field] : {std::pair<const char*, std::string*>{"entry", &failure->entry},
                                   {"status", &failure->status},
                                   {"message", &failure->message},
                                   {"signature", &failure->signature},
                                   {"bundle", &failure->bundle}}) {
    if (Status s = json_field_string(object, where, key, field); !s.ok()) {
      return s;
    }
  }
  return Status();
}

}  // namespace

StressTaskRecord stress_task_record(std::size_t task, bool entry, const SeedReport& report,
                                    std::optional<StressFailure> failure, bool printed) {
  StressTaskRecord record;
  record.task = task;
  record.entry = entry;
  record.passed = report.status.ok();
  record.steps = report.sim.steps;
  record.printed = printed;
  if (!entry) {
    record.share = stress_seed_share(report);
    stress_figures_add(record.figures, report);
  } else {
    record.entry_tuples = report.tuples;
  }
  record.failure = std::move(failure);
  return record;
}

void stress_task_record_apply(const StressTaskRecord& record, StressRunSummary& summary,
                              StressFigures& figures) {
  summary.steps_all += record.steps;
  if (record.share.has_value()) {
    stress_summary_add_share(summary, *record.share);
    for (const auto field : figures_fields()) {
      figures.*field += record.figures.*field;
    }
  }
  if (record.entry) {
    summary.corpus_tuples.add(record.entry_tuples);
    summary.corpus.entries++;
    if (record.passed) {
      summary.corpus.passed++;
    }
  }
  if (record.failure.has_value()) {
    stress_summary_add_failure(summary, *record.failure);
  }
}

Json stress_task_record_json(const StressTaskRecord& record, StressRecordNames* sent) {
  Json object = Json::object();
  object["type"] = "task";
  object["task"] = record.task;
  object["entry"] = record.entry;
  object["passed"] = record.passed;
  object["steps"] = record.steps;
  object["printed"] = record.printed;
  object["share"] = record.share.has_value() ? share_json(*record.share, sent) : Json();
  Json figures = Json::array();
  for (const auto field : figures_fields()) {
    figures.push_back(record.figures.*field);
  }
  object["figures"] = std::move(figures);
  object["failure"] = record.failure.has_value() ? failure_json(*record.failure) : Json();
  if (record.entry) {
    object["tuples"] = tuples_json(record.entry_tuples);
  }
  return object;
}

Result<StressTaskRecord> stress_task_record_from_json(const Json& object, StressRecordNames* seen) {
  const char* where = "sweep record";
  StressTaskRecord record;
  std::uint64_t task = 0;
  if (Status s = json_field_u64(object, where, "task", 0, kJsonU64Max, &task); !s.ok()) {
    return s;
  }
  record.task = static_cast<std::size_t>(task);
  if (Status s = json_field_bool(object, where, "entry", &record.entry); !s.ok()) {
    return s;
  }
  if (Status s = json_field_bool(object, where, "passed", &record.passed); !s.ok()) {
    return s;
  }
  if (Status s = json_field_u64(object, where, "steps", 0, kJsonU64Max, &record.steps); !s.ok()) {
    return s;
  }
  if (Status s = json_field_bool(object, where, "printed", &record.printed); !s.ok()) {
    return s;
  }
  if (object.contains("share") && !object["share"].is_null()) {
    StressSeedShare share;
    if (Status s = share_from_json(object["share"], &share, seen); !s.ok()) {
      return s;
    }
    record.share = std::move(share);
  }
  std::vector<std::uint64_t> figures;
  const auto fields = figures_fields();
  if (Status s = numbers_from_json(object, "figures", fields.size(), &figures); !s.ok()) {
    return s;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    record.figures.*fields[i] = figures[i];
  }
  if (object.contains("failure") && !object["failure"].is_null()) {
    StressFailure failure;
    if (Status s = failure_from_json(object["failure"], &failure); !s.ok()) {
      return s;
    }
    record.failure = std::move(failure);
  }
  if (record.entry) {
    if (Status s = tuples_from_json(object, &record.entry_tuples); !s.ok()) {
      return s;
    }
  }
  return record;
}

}  // namespace readyport
