#include "jobs/sweep_policy.hpp"

#include <algorithm>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {

const char* sweep_death_kind_name(SweepDeathKind kind) {
  switch (kind) {
    case SweepDeathKind::kAborted:
      return "aborted";
    case SweepDeathKind::kCrashed:
      return "crashed";
    case SweepDeathKind::kExited:
      return "exited";
    case SweepDeathKind::kHung:
      return "hung";
    case SweepDeathKind::kMemory:
      return "memory";
  }
  READYPORT_UNREACHABLE();
}

SweepPolicy::SweepPolicy(std::vector<std::size_t> tasks, std::uint32_t jobs,
                         std::size_t in_flight_max)
    : jobs_(jobs), in_flight_max_(in_flight_max), left_(tasks.begin(), tasks.end()) {
  READYPORT_ASSERT(jobs_ >= 1 && in_flight_max_ >= 1);
  READYPORT_ASSERT(std::is_sorted(tasks.begin(), tasks.end()));
  READYPORT_ASSERT(std::adjacent_find(tasks.begin(), tasks.end()) == tasks.end());
  account_.tasks = tasks.size();
}

SweepStep SweepPolicy::next() {
  READYPORT_ASSERT(!running_.has_value());
  SweepStep step;
  if (!unblamed_.empty()) {
    step.kind = SweepStep::Kind::kUnblamed;
    step.death = std::move(unblamed_.front());
    unblamed_.erase(unblamed_.begin());
    account_.unblamed++;
    return step;
  }
  if (left_.empty()) {
    return step;  // kDone
  }
  const std::size_t first = left_.front();
  if (auto dead = dead_.find(first); dead != dead_.end()) {
    step.kind = SweepStep::Kind::kDeath;
    step.death = std::move(dead->second);
    dead_.erase(dead);
    left_.pop_front();
    account_.died++;
    return step;
  }
  if (one_job_through_.has_value() && first > *one_job_through_) {
    one_job_through_.reset();  // the tasks that ran beside a death have run again
  }
  const bool one_job = one_job_through_.has_value();
  step.kind = SweepStep::Kind::kChild;
  step.segment.jobs = one_job ? 1 : jobs_;
  for (const std::size_t task : left_) {
    if (dead_.count(task) != 0 || (one_job && task > *one_job_through_)) {
      break;
    }
    step.segment.tasks.push_back(task);
  }
  running_ = step.segment;
  running_finished_ = 0;
  account_.children++;
  // Each child finishes a task, finds a death, or narrows a segment to one job: a bound.
  READYPORT_ASSERT(account_.children <= 4 + 3 * account_.tasks);
  return step;
}

Status SweepPolicy::on_record(std::size_t task) {
  READYPORT_ASSERT(running_.has_value());
  const std::vector<std::size_t>& tasks = running_->tasks;
  if (running_finished_ >= tasks.size() || tasks[running_finished_] != task) {
    return Status(StatusCode::kInternal,
                  "sweep: the child sent the record of task " + std::to_string(task) +
                      (running_finished_ < tasks.size()
                           ? ", not of task " + std::to_string(tasks[running_finished_]) +
                                 " (records come in task order)"
                           : ", after the records of every task it ran"));
  }
  READYPORT_ASSERT(!left_.empty() && left_.front() == task);  // a segment is a prefix of left_
  left_.pop_front();
  running_finished_++;
  account_.finished++;
  return Status();
}

SweepDeath SweepPolicy::death_of(const SweepChildEnd& end, std::size_t task,
                                 const Json& named) const {
  SweepDeath death;
  death.task = task;
  death.status = sweep_death_kind_name(end.kind);
  death.how = end.how;
  for (const std::string& line : end.assertions) {
    death.assertion += (death.assertion.empty() ? "" : " | ") + line;
  }
  death.named = named;
  return death;
}

Status SweepPolicy::take_names(const SweepChildEnd& end, const std::vector<std::size_t>& left) {
  std::size_t last_named = 0;
  for (const Json& record : end.named) {
    if (!record.is_object() || !record.contains("task") || !record["task"].is_number_unsigned()) {
      return Status(StatusCode::kInternal, "sweep: an \"aborted\" record without its task");
    }
    const auto task = record["task"].get<std::size_t>();
    if (!std::binary_search(left.begin(), left.end(), task)) {
      return Status(StatusCode::kInternal, "sweep: the abort handler named task " +
                                               std::to_string(task) +
                                               ", which the child had not left to run");
    }
    if (dead_.count(task) == 0) {
      dead_.emplace(task, death_of(end, task, record));
    }
    last_named = std::max(last_named, task);
  }
  // The unfinished tasks before the last one named were running beside it, or not started: they
  // run again, with one job, before the deaths after them are reported.
  std::optional<std::size_t> beside;
  for (const std::size_t task : left) {
    if (task >= last_named) {
      break;
    }
    if (dead_.count(task) == 0) {
      beside = task;
    }
  }
  if (beside.has_value()) {
    one_job_through_ = std::max(one_job_through_.value_or(0), *beside);
  }
  return Status();
}

std::string SweepPolicy::unnamed_death(const SweepChildEnd& end,
                                       const std::vector<std::size_t>& left, std::uint32_t jobs) {
  if (end.kind == SweepDeathKind::kHung || jobs == 1) {
    // Every later record waits for the first unfinished task's: it is the one that hung, or,
    // with one job, the one that was running.
    dead_.emplace(left.front(), death_of(end, left.front(), Json()));
    if (jobs == 1) {
      unreproduced_.reset();
    }
    return "";
  }
  const std::size_t count = std::min(in_flight_max_, left.size());
  one_job_through_ = left[count - 1];
  unreproduced_ = death_of(end, 0, Json());
  return "sweep: the process died (" + end.how + ") with " + std::to_string(jobs) +
         " jobs and named no task; the " + std::to_string(count) +
         " tasks that may have been running (" + std::to_string(left.front()) + " to " +
         std::to_string(left[count - 1]) + ") run again with one job";
}

Result<std::string> SweepPolicy::child_ended(const SweepChildEnd& end) {
  READYPORT_ASSERT(running_.has_value());
  const SweepSegment segment = std::move(*running_);
  running_.reset();
  const std::vector<std::size_t> left(segment.tasks.begin() + running_finished_,
                                      segment.tasks.end());
  if (end.stopped) {
    stop();
    return std::string();
  }
  if (end.ended && end.end_exit != 0) {
    stop();  // an output that cannot be written, say: the sweep ends there
    return std::string();
  }
  if (end.ended) {
    if (!left.empty()) {
      return Status(StatusCode::kInternal,
                    "sweep: the child ended without the records of " + std::to_string(left.size()) +
                        " task(s), the first " + std::to_string(left.front()));
    }
    if (unreproduced_.has_value() && segment.jobs == 1 && one_job_through_.has_value() &&
        segment.tasks.back() == *one_job_through_) {
      // Every task that may have been running passed on its own: the death does not come back.
      SweepDeath death = std::move(*unreproduced_);
      unreproduced_.reset();
      death.how += "; every task that may have been running passed when run again with one job";
      unblamed_.push_back(std::move(death));
    }
    return std::string();
  }
  if (left.empty()) {
    // After its last record: no task to blame (a crash in the process's exit, say).
    SweepDeath death = death_of(end, 0, Json());
    death.how += ", after the records of every task it ran";
    unblamed_.push_back(std::move(death));
    unreproduced_.reset();
    return std::string();
  }
  if (!end.named.empty()) {
    unreproduced_.reset();
    if (Status s = take_names(end, left); !s.ok()) {
      return s;
    }
    return std::string();
  }
  return unnamed_death(end, left, segment.jobs);
}

void SweepPolicy::stop() {
  READYPORT_ASSERT(!running_.has_value());
  account_.not_run += left_.size();
  left_.clear();
  dead_.clear();
  one_job_through_.reset();
  unreproduced_.reset();
}

}  // namespace readyport
