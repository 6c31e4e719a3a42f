#include "jobs/seed_pool.hpp"

#include <utility>

#include "jobs/abort_report.hpp"
#include "readyport/assert.hpp"

namespace readyport {
namespace {

// Tasks a runner may be ahead of the consumer, per runner: enough that a slow seed does not
// idle the others, few enough that the kept reports (with --trace, whole traces) stay small.
constexpr std::size_t kWindowPerJob = 4;

SeedReport run_task(const SeedTask& task) {
  stress_abort_arm(task.options, task.seed, &task.context, task.index);
  SeedReport report = stress_run_seed(task.options, task.seed);
  stress_tail_fill(task.options, report);  // a failure's tail, on this runner
  return report;
}

}  // namespace

std::size_t SeedPool::window(std::uint32_t jobs) { return kWindowPerJob * jobs; }

SeedPool::SeedPool(std::size_t count, SeedTaskAt task_at, std::uint32_t jobs)
    : count_(count), task_at_(std::move(task_at)), jobs_(jobs), window_(window(jobs)) {
  READYPORT_ASSERT(jobs_ >= 1 && jobs_ <= kStressRunnersMax);
  if (jobs_ == 1) {
    return;  // serial: next() runs each task itself
  }
  ring_.resize(window_);
  runners_.reserve(jobs_);
  for (std::uint32_t runner = 0; runner < jobs_; ++runner) {
    runners_.emplace_back([this, runner] { runner_main(runner); });
  }
}

SeedPool::~SeedPool() {
  stop();
  for (std::thread& runner : runners_) {
    runner.join();
  }
}

void SeedPool::stop() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void SeedPool::runner_main(std::uint32_t runner) {
  stress_runner_set(runner);
  for (;;) {
    std::size_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // The next task, once it fits in the window (its ring entry has been consumed).
      changed_.wait(lock, [this] {
        return stopping_ || started_ == count_ || started_ < released_ + window_;
      });
      if (stopping_ || started_ == count_) {
        return;
      }
      index = started_++;
    }
    auto report = std::make_unique<SeedReport>(run_task(task_at_(index)));
    {
      std::lock_guard<std::mutex> guard(mutex_);
      READYPORT_ASSERT(ring_[index % window_] == nullptr);
      ring_[index % window_] = std::move(report);
    }
    changed_.notify_all();
  }
}

SeedReport SeedPool::next() {
  READYPORT_ASSERT(has_next());
  const std::size_t index = consumed_++;
  if (jobs_ == 1) {
    return run_task(task_at_(index));
  }
  std::unique_ptr<SeedReport> report;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    READYPORT_ASSERT(!stopping_);
    changed_.wait(lock, [this, index] { return ring_[index % window_] != nullptr; });
    report = std::move(ring_[index % window_]);
    released_ = consumed_;
  }
  changed_.notify_all();
  return std::move(*report);
}

}  // namespace readyport
