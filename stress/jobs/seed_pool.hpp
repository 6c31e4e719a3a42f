// stress/jobs/seed_pool.hpp: the main job's seeds on N threads (--jobs), handed back in order.
//
// Each task is one seed with its run options (a corpus entry's or the job's). A pool of `jobs`
// runner threads runs the tasks, each seed in its own world (stress_run_seed: its own
// SimScheduler, FakeOs, Trace and oracle; seeds share nothing), at most `window` tasks ahead of
// the consumer; next() hands the reports back in task order, so that everything the driver prints
// and adds up happens in seed order on its own thread, exactly as in a serial run. With jobs == 1
// no thread is started: next() runs the task on the calling thread (today's serial run).
//
//   SeedPool pool(count, [&](std::size_t i) { return SeedTask{...}; }, jobs);
//   while (pool.has_next()) {
//     SeedReport report = pool.next();
//     if (!report.status.ok() && stop_on_failure) { pool.stop(); break; }
//   }
//
// Before each seed, its runner arms the abort report (abort_report.hpp) with the task's options,
// seed and bundle context, as runner k (stress_runner_set; the calling thread is runner 0 when
// jobs == 1, thread k is runner k otherwise).
//
// Tasks are made when they start (task_at(i), on the runner's thread: it must be safe to call from
// several threads at once), so that a range of millions of seeds holds no list of them.
//
// Ownership: the pool owns its threads and keeps task_at, whose captures must outlive the pool; the
// destructor stops it and joins every runner (a seed already started runs to its end). Threading:
// one consumer thread calls next(), stop() and the destructor. Errors: none (a seed's failure is in
// its report).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cli/stress_options.hpp"
#include "files/bundle.hpp"
#include "jobs/abort_report.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// One seed to run: with these options, armed with this bundle context.
struct SeedTask {
  StressOptions options;
  std::uint64_t seed = 0;
  StressBundleContext context;
  std::size_t index = kStressTaskNone;  // its index in the main job's sweep (abort_report.hpp)
};

// Task `index` of [0, count): a pure function of the index.
using SeedTaskAt = std::function<SeedTask(std::size_t index)>;

class SeedPool {
 public:
  // `jobs` in [1, kStressRunnersMax].
  SeedPool(std::size_t count, SeedTaskAt task_at, std::uint32_t jobs);
  ~SeedPool();
  SeedPool(const SeedPool&) = delete;
  SeedPool& operator=(const SeedPool&) = delete;

  // How far past the next task to consume a runner may have started one, with `jobs` runners
  // (the ring of reports): what a crash of the process may have cut short besides it.
  static std::size_t window(std::uint32_t jobs);

  bool has_next() const { return consumed_ < count_; }
  // The report of the next task in order; blocks until its runner is done. Requires has_next().
  SeedReport next();
  // No further task starts; the ones running finish (their reports are dropped).
  void stop();

 private:
  void runner_main(std::uint32_t runner);

  const std::size_t count_;
  const SeedTaskAt task_at_;
  const std::uint32_t jobs_;
  // Tasks started at most this far ahead of the consumer: a ring of reports this long.
  const std::size_t window_;
  std::size_t consumed_ = 0;  // the consumer's thread only

  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t started_ = 0;   // guarded by mutex_: tasks handed to a runner
  std::size_t released_ = 0;  // guarded by mutex_: a copy of consumed_ for the runners
  bool stopping_ = false;     // guarded by mutex_
  std::vector<std::unique_ptr<SeedReport>> ring_;  // guarded by mutex_: [task % window_]
  std::vector<std::thread> runners_;               // last: started once the rest exists
};

}  // namespace readyport
