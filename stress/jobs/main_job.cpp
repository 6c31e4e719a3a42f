#include "jobs/main_job.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/build_info.hpp"
#include "files/bundle.hpp"
#include "files/corpus.hpp"
#include "files/file_io.hpp"
#include "files/trace_out.hpp"
#include "jobs/abort_report.hpp"
#include "jobs/failure_report.hpp"
#include "jobs/run_figures.hpp"
#include "jobs/run_summary.hpp"
#include "jobs/seed_pool.hpp"
#include "jobs/summary_json.hpp"
#include "jobs/summary_markdown.hpp"
#include "jobs/sweep_record.hpp"
#include "jobs/sweep_supervisor.hpp"
#include "readyport/assert.hpp"
#include "runs/real_os_run.hpp"
#include "runs/stress_run.hpp"

namespace readyport {
namespace {

using ull = unsigned long long;
using Clock = std::chrono::steady_clock;

// Failures reported in full on stdout; the rest are counted (every one is in the summary and has
// its bundle).
constexpr std::size_t kFailuresPrintedMax = 20;
// --os windows: how long past --seconds-max a run may go (a seed that started in time finishing)
// before the watchdog ends the process.
constexpr std::uint32_t kOverrunGraceSeconds = 60;
// The exit status of a run that found ProcessSocketNotifications missing (ctest SKIP_RETURN_CODE).
constexpr int kExitSkipped = 77;

struct Job {
  const StressOptions& options;
  const std::vector<std::string>& command_line;
  StressRunSummary summary;
  Clock::time_point start = Clock::now();  // wall time for the summary only: no run reads it
  StressFigures figures{};                 // the seeds of the range, like summary.totals
  Os* real_os = nullptr;                   // --os windows: WindowsOs
  SeedPool* pool = nullptr;                // --os fake: runs the corpus and the seeds (--jobs)
  std::uint64_t connections_used = 0;      // --os windows: clients and peers opened so far
  // The tasks this process runs (the corpus entries, then the range's seeds), ascending: every
  // one, or in a child of the sweep supervisor those left.
  std::vector<std::size_t> plan{};
  int channel = -1;                // in a child of the sweep supervisor: where records go
  std::vector<Json> unsent{};      // in a child: records not yet sent (send_records)
  StressRecordNames names_sent{};  // in a child: what its records named so far (sweep_record.hpp)
  StressRecordNames names_seen{};  // in the parent: what the records of the running child named
  std::size_t printed = 0;         // failures printed in full so far (kFailuresPrintedMax)

  bool planned(std::size_t task) const {
    return std::binary_search(plan.begin(), plan.end(), task);
  }

  std::string program() const {
    return command_line.empty() ? std::string("readyport-stress") : command_line[0];
  }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
};

// The corpus this run replays (none: an empty list and a note), or an error (exit 2).
Result<std::vector<StressCorpusEntry>> corpus_for(const StressOptions& options,
                                                  StressCorpusSummary& corpus) {
  std::string dir;
  switch (options.corpus) {
    case StressOptions::Corpus::kNone:
      corpus.note = "--corpus none";
      return std::vector<StressCorpusEntry>();
    case StressOptions::Corpus::kDefault:
      if (options.seed_given) {
        corpus.note = "--seed runs one seed";
        return std::vector<StressCorpusEntry>();
      }
      dir = stress_corpus_default_dir();
      if (std::error_code error; !std::filesystem::is_directory(dir, error)) {
        corpus.note = "the default " + dir + " is not here";
        return std::vector<StressCorpusEntry>();
      }
      break;
    case StressOptions::Corpus::kDir:
      dir = options.corpus_dir;
      break;
  }
  Result<std::vector<StressCorpusEntry>> entries = stress_corpus_load(dir);
  if (entries.ok()) {
    corpus.dir = dir;
  }
  return entries;
}

// Real threads (--os windows, --runtime free): a failing seed's recorded trace, to be read and
// judged offline on any machine (its interleaving does not replay), beside its bundle
// (`seed-<S>.trace`; --trace-out, when given, also holds the first failing seed's).
void write_failure_trace(const StressOptions& options, const SeedReport& report,
                         const std::string& bundle_path) {
  if (report.trace_cut) {
    // Its prefix alone would be judged as if the run had ended there.
    std::printf(
        "trace: not written: the run's trace passed --trace-mb-max %u MiB, and only its first "
        "part was kept (the bundle has its last lines)\n",
        options.trace_mb_max);
    return;
  }
  const std::string path = std::filesystem::path(bundle_path).replace_extension(".trace").string();
  const Status written = stress_trace_write(path, StressTraceFormat::kText, report.trace_text,
                                            options, &report.parameters.fake);
  if (!written.ok()) {
    std::printf("trace: not written: %s\n", written.message().c_str());
    return;
  }
  std::printf("trace: %s (judge it offline on any machine: readyport-stress --check-trace %s)\n",
              path.c_str(), path.c_str());
}

// The bundle context of one seed: the job's command line, its bundle path, where it comes from.
StressBundleContext context_for(const Job& job, const std::string& entry,
                                const std::string& bundle_path) {
  return StressBundleContext{job.command_line, bundle_path,
                             entry.empty() ? std::string("seed range") : "corpus entry " + entry};
}

// A finished task's record: added to this process's summary and, in a child of the sweep
// supervisor, sent to the parent (send_records), which adds it to its own the same way.
void apply_record(Job& job, const StressTaskRecord& record) {
  stress_task_record_apply(record, job.summary, job.figures);
  if (record.printed) {
    job.printed++;
  }
  if (job.channel >= 0) {
    job.unsent.push_back(stress_task_record_json(record, &job.names_sent));
  }
}

// In a child of the sweep supervisor: the records of the tasks whose lines are printed, sent once
// those lines are out of stdio's buffer, so that a record the parent has means its seed's output
// is written, whenever the child dies.
void send_records(Job& job) {
  if (job.unsent.empty()) {
    return;
  }
  std::fflush(stdout);
  for (const Json& record : job.unsent) {
    stress_sweep_write(job.channel, record);
  }
  job.unsent.clear();
}

// Task `task`'s report with its failure handling, on the driver's thread, in task order; returns
// true when it passed. `trace_text_out` (may be null) receives the full trace when the options
// keep it.
bool take_report(Job& job, const StressOptions& run_options, SeedReport report, std::size_t task,
                 const std::string& entry, const std::string& bundle_path,
                 std::string* trace_text_out) {
  const StressBundleContext context = context_for(job, entry, bundle_path);
  if (job.options.verbose) {
    stress_verbose_print(report);
  }
  if (job.options.trace) {
    std::fputs(report.trace_text.c_str(), stdout);
  }
  if (report.status.ok()) {
    apply_record(job, stress_task_record(task, !entry.empty(), report, std::nullopt, false));
    if (trace_text_out != nullptr) {
      *trace_text_out = std::move(report.trace_text);
    }
    return true;
  }
  const std::string written = stress_bundle_write(run_options, report, context);
  // After the bundle: its directory exists now.
  if (job.real_os != nullptr || run_options.runtime == StressRuntime::kFree) {
    write_failure_trace(run_options, report, bundle_path);
  }
  const bool print = job.printed < kFailuresPrintedMax;
  if (print) {
    if (!entry.empty()) {
      std::printf("corpus entry %s failed:\n", entry.c_str());
    }
    stress_failure_print(run_options, report, written, job.program());
  }
  apply_record(job, stress_task_record(task, !entry.empty(), report,
                                       stress_failure_record(report, entry, written), print));
  if (trace_text_out != nullptr) {
    *trace_text_out = std::move(report.trace_text);
  }
  return false;
}

// One seed's report: the pool's next (in order), or with --os windows `run` on this thread.
SeedReport next_report(Job& job, const StressOptions& run_options, std::uint64_t seed,
                       const std::string& entry, const std::string& bundle_path,
                       const std::function<SeedReport()>& run) {
  if (!run) {
    READYPORT_ASSERT(job.pool != nullptr);
    SeedReport report = job.pool->next();
    // The pool's task order (pool_task) is the order the driver takes them in.
    READYPORT_ASSERT(report.parameters.seed == seed);
    return report;
  }
  const StressBundleContext context = context_for(job, entry, bundle_path);
  stress_abort_arm(run_options, seed, &context);
  return run();
}

// The corpus entry's run options: its own, with the job's outputs.
StressOptions entry_options(const Job& job, const StressCorpusEntry& entry) {
  StressOptions run_options = entry.options;
  run_options.verbose = job.options.verbose;
  run_options.mechanism = job.options.mechanism;  // how, not what: the entry does not say
  run_options.trace = job.options.trace;
  return run_options;
}

std::string entry_bundle(const Job& job, const StressCorpusEntry& entry) {
  const std::string stem = std::filesystem::path(entry.name).stem().string();
  return stress_bundle_path(job.options.bundle_dir, entry.seed, "-corpus-" + stem);
}

// Task `index` of the pool: the corpus entries first, then the seeds of the range (the order the
// driver takes them in). Safe from several threads: it reads the job's constant parts only.
SeedTask pool_task(const Job& job, const std::vector<StressCorpusEntry>& entries,
                   const std::vector<std::uint64_t>& seeds, std::size_t index) {
  if (index < entries.size()) {
    const StressCorpusEntry& entry = entries[index];
    return SeedTask{entry_options(job, entry), entry.seed,
                    context_for(job, entry.name, entry_bundle(job, entry)), index};
  }
  const std::uint64_t seed = seeds[index - entries.size()];
  return SeedTask{job.options, seed,
                  context_for(job, "", stress_bundle_path(job.options.bundle_dir, seed, "")),
                  index};
}

// --stop-on-failure stopped the run here: noted, and sent to the sweep supervisor's parent.
void stop_early(Job& job) {
  if (job.pool != nullptr) {
    job.pool->stop();
  }
  job.summary.stopped_early = true;
  send_records(job);
  if (job.channel >= 0) {
    stress_sweep_write(job.channel, Json::object({{"type", "stopped"}}));
  }
}

// The corpus, first. Returns false when --stop-on-failure stops the run.
bool run_corpus(Job& job, const std::vector<StressCorpusEntry>& entries) {
  const std::string canary = stress_build_info().canary;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!job.planned(i)) {
      continue;
    }
    const StressCorpusEntry& entry = entries[i];
    const StressOptions run_options = entry_options(job, entry);
    const std::string bundle = entry_bundle(job, entry);
    SeedReport report = next_report(job, run_options, entry.seed, entry.name, bundle, nullptr);
    const bool passed =
        take_report(job, run_options, std::move(report), i, entry.name, bundle, nullptr);
    std::printf("corpus %s: seed %llu %s\n", entry.name.c_str(), static_cast<ull>(entry.seed),
                passed ? "ok" : "FAILED");
    if (passed && !canary.empty() && entry.expect_canary == canary) {
      std::printf(
          "corpus %s: passed, but it is the minimal case of canary %s, planted in this "
          "build: regenerate it (stress/corpus/regenerate_canaries.sh)\n",
          entry.name.c_str(), canary.c_str());
    }
    std::fflush(stdout);
    send_records(job);
    if (!passed && job.options.stop_on_failure) {
      std::printf("first failure: corpus entry %s (seed %llu) after %zu entries and %.1f s\n",
                  entry.name.c_str(), static_cast<ull>(entry.seed), i + 1, job.seconds());
      stop_early(job);
      return false;
    }
  }
  return true;
}

// The seeds of this shard. Returns 2 when --trace-out's file cannot be written, else 0.
int run_seeds(Job& job, std::size_t entries, const std::vector<std::uint64_t>& seeds) {
  const StressOptions& options = job.options;
  const std::size_t progress_every = seeds.size() >= 10 ? seeds.size() / 10 : 1;
  bool failure_trace_written = false;  // --os windows: the first failing seed's trace
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    if (!job.planned(entries + i)) {
      continue;
    }
    const std::string bundle = stress_bundle_path(options.bundle_dir, seeds[i], "");
    std::function<SeedReport()> run;
    if (job.real_os != nullptr) {
      // --os windows: the seed's parameters within what is left of the bounds, or the end.
      const double seconds_left = static_cast<double>(options.seconds_max) - job.seconds();
      RealOsBudget budget;
      budget.ms_left = seconds_left <= 0 ? 0 : static_cast<std::uint32_t>(seconds_left * 1000);
      budget.connections_left =
          job.connections_used >= options.connections_max
              ? 0
              : static_cast<std::uint32_t>(options.connections_max - job.connections_used);
      Result<SeedParameters> parameters = stress_parameters_real(options, seeds[i], budget);
      if (!parameters.ok()) {
        std::printf(
            "budget: %s; the run ends after %zu of %zu seeds (--seconds-max %u, "
            "--connections-max %u)\n",
            parameters.status().message().c_str(), i, seeds.size(), options.seconds_max,
            options.connections_max);
        break;
      }
      run = [&job, &options, p = std::move(parameters).value()] {
        SeedReport report = stress_run_seed_real(options, p, *job.real_os);
        job.connections_used += report.counts.clients_started + report.counts.peers_started;
        return report;
      };
    }
    // --trace-out: the one seed's trace; with --os windows and several seeds, the first failing
    // seed's (stress_options_parse allows nothing else).
    std::string trace_text;
    SeedReport report = next_report(job, options, seeds[i], "", bundle, run);
    const FakeOptions trace_fake = report.parameters.fake;
    const bool passed = take_report(job, options, std::move(report), entries + i, "", bundle,
                                    options.trace_out.empty() ? nullptr : &trace_text);
    const bool trace_wanted = seeds.size() == 1 || (!passed && !failure_trace_written);
    if (!options.trace_out.empty() && trace_wanted) {
      failure_trace_written = !passed;
      const Status written = stress_trace_write(options.trace_out, options.trace_format, trace_text,
                                                options, &trace_fake);
      if (!written.ok()) {
        std::fprintf(stderr, "readyport-stress: --trace-out: %s\n", written.message().c_str());
        return 2;
      }
    }
    if ((i + 1) % progress_every == 0 || i + 1 == seeds.size()) {
      std::printf("progress: %zu/%zu seeds, %llu failures, %llu notifications\n", i + 1,
                  seeds.size(), static_cast<ull>(job.summary.totals.failures),
                  static_cast<ull>(job.summary.totals.notifications));
    }
    std::fflush(stdout);
    send_records(job);
    if (!passed && options.stop_on_failure) {
      std::printf("first failure: seed %llu after %zu seeds and %.1f s\n",
                  static_cast<ull>(seeds[i]), i + 1, job.seconds());
      stop_early(job);
      break;
    }
  }
  return 0;
}

// The corpus and the seeds of job.plan, on `jobs` runners (--os fake) or one at a time (--os
// windows). Returns 2 when --trace-out's file cannot be written, else 0.
int run_plan(Job& job, const std::vector<StressCorpusEntry>& entries,
             const std::vector<std::uint64_t>& seeds, std::uint32_t jobs) {
  std::unique_ptr<SeedPool> pool;
  if (job.real_os == nullptr) {
    pool = std::make_unique<SeedPool>(
        job.plan.size(),
        [&job, &entries, &seeds](std::size_t index) {
          return pool_task(job, entries, seeds, job.plan[index]);
        },
        jobs);
    job.pool = pool.get();
  }
  int status = 0;
  if (run_corpus(job, entries)) {
    status = run_seeds(job, entries.size(), seeds);
  }
  send_records(job);  // a run that ended early (--trace-out not written) has one left
  pool.reset();       // joins the runners (after --stop-on-failure, the seeds they had started)
  job.pool = nullptr;
  return status;
}

// The bundle of a task that died: the abort handler's, completed with the parent's account of
// the death, or a new one at the task's own path. Sets failure.bundle to the path written, or
// empty (printed) when it could not be written.
void write_death_bundle(const SeedTask& task, const SeedParameters& parameters,
                        const std::string& violation, StressFailure& failure) {
  Json bundle = stress_abort_bundle_json(task.options, parameters, violation, task.context);
  if (!failure.bundle.empty()) {
    Result<std::string> text = stress_file_read(failure.bundle, std::uint64_t{1} << 24);
    Result<Json> read =
        text.ok() ? json_parse_document(text.value(), failure.bundle) : Result<Json>(text.status());
    if (read.ok()) {
      bundle = std::move(read).value();
    }
  }
  bundle["failure"]["status"] = failure.status;
  bundle["failure"]["message"] = failure.message;
  bundle["failure"]["signature"] = failure.signature;
  const std::string path = failure.bundle.empty() ? task.context.path : failure.bundle;
  const Status written = stress_file_write(path, bundle.dump(2) + "\n", StressWriteMode::kReplace);
  failure.bundle = written.ok() ? path : std::string();
  if (!written.ok()) {
    std::fprintf(stderr, "readyport-stress: bundle of seed %llu not written: %s\n",
                 static_cast<ull>(task.seed), written.message().c_str());
  }
}

// A dead task's failure as the summary prints failures: what, the replay command, the bundle.
void print_death(const Job& job, const SeedTask& task, const SeedParameters& parameters,
                 const StressFailure& failure) {
  SeedReport report;
  report.parameters = parameters;
  if (failure.from_corpus) {
    std::printf("corpus entry %s failed:\n", failure.entry.c_str());
  }
  std::printf("FAIL seed %llu: %s: %s\n", static_cast<ull>(task.seed), failure.status.c_str(),
              failure.message.c_str());
  std::printf("  replay: %s\n", stress_replay_command(task.options, report, job.program()).c_str());
  if (!failure.bundle.empty()) {
    std::printf("  bundle: %s (%s --replay %s)\n", failure.bundle.c_str(), job.program().c_str(),
                failure.bundle.c_str());
  }
}

// The failure of a task whose process died (sweep_supervisor.hpp): its bundle (the one the abort
// handler wrote, completed with what the parent saw, or a new one), its report on stdout, its
// record. Returns false when --stop-on-failure ends the sweep here.
bool report_death(Job& job, const std::vector<StressCorpusEntry>& entries,
                  const std::vector<std::uint64_t>& seeds, const SweepDeath& death) {
  const SeedTask task = pool_task(job, entries, seeds, death.task);
  const bool entry = death.task < entries.size();
  StressFailure failure;
  failure.from_corpus = entry;
  failure.entry = entry ? entries[death.task].name : std::string();
  failure.seed = task.seed;
  failure.status = death.status;
  failure.message = death.how;
  if (!death.assertion.empty()) {
    failure.message += "; " + death.assertion;
  }
  failure.signature = death.status;
  std::string violation;
  if (death.named.is_object()) {
    violation = death.named.value("violation", std::string());
    failure.signature = death.named.value("signature", failure.signature);
    failure.bundle = death.named.value("bundle", std::string());
  }
  // A run on real threads past its bounds, or hung, asserts with a report (free_runtime.hpp).
  if (violation.empty() && death.assertion.find("FreeRuntime: no livelock") != std::string::npos) {
    failure.signature = "livelock";
  } else if (violation.empty() &&
             death.assertion.find("FreeRuntime: no hang") != std::string::npos) {
    failure.signature = "hang";
  }
  if (!violation.empty()) {
    failure.message += "; the oracle had found: " + violation;
  }
  const SeedParameters parameters = stress_parameters(task.options, task.seed);
  write_death_bundle(task, parameters, violation, failure);
  const bool print = job.printed < kFailuresPrintedMax;
  if (print) {
    print_death(job, task, parameters, failure);
  }
  if (entry) {
    std::printf("corpus %s: seed %llu FAILED\n", failure.entry.c_str(),
                static_cast<ull>(task.seed));
  }
  StressTaskRecord record;
  record.task = death.task;
  record.entry = entry;
  record.passed = false;
  record.printed = print;
  if (!entry) {
    record.share = stress_seed_share_lost(task.seed);
  }
  record.failure = std::move(failure);
  apply_record(job, record);
  if (job.options.stop_on_failure) {
    if (entry) {
      std::printf("first failure: corpus entry %s (seed %llu) after %zu entries and %.1f s\n",
                  entries[death.task].name.c_str(), static_cast<ull>(task.seed), death.task + 1,
                  job.seconds());
    } else {
      std::printf("first failure: seed %llu after %zu seeds and %.1f s\n",
                  static_cast<ull>(task.seed), death.task - entries.size() + 1, job.seconds());
    }
    job.summary.stopped_early = true;
    std::fflush(stdout);
    return false;
  }
  std::printf("sweep: a new process goes on after seed %llu\n", static_cast<ull>(task.seed));
  std::fflush(stdout);
  return true;
}

// The callbacks of the sweep's parent: a record applied to the summary as the child's own; a
// death reported as its task's failure; a death with no task to blame kept for the summary.
SweepCallbacks parent_callbacks(Job& job, const std::vector<StressCorpusEntry>& entries,
                                const std::vector<std::uint64_t>& seeds) {
  SweepCallbacks callbacks;
  callbacks.on_record = [&job](const Json& record) -> Status {
    if (record["type"] == "stopped") {
      job.summary.stopped_early = true;
      return Status();
    }
    Result<StressTaskRecord> parsed = stress_task_record_from_json(record, &job.names_seen);
    if (!parsed.ok()) {
      return parsed.status();
    }
    stress_task_record_apply(parsed.value(), job.summary, job.figures);
    if (parsed.value().printed) {
      job.printed++;
    }
    return Status();
  };
  callbacks.on_death = [&job, &entries, &seeds](const SweepDeath& death) {
    return report_death(job, entries, seeds, death);
  };
  callbacks.on_unblamed = [&job](const SweepDeath& death) {
    const std::string text =
        death.status + ": " + death.how + (death.assertion.empty() ? "" : "; " + death.assertion);
    std::printf("sweep: a process died and no seed is blamed (%s)\n", text.c_str());
    std::fflush(stdout);
    job.summary.unblamed_deaths.push_back(text);
  };
  return callbacks;
}

// The sweep in child processes (sweep_supervisor.hpp): a task that aborts, crashes, hangs or
// passes the memory limit is that task's failure, and the others run. Returns 2 when
// --trace-out's file cannot be written, else 0; the supervisor's own failure is kept in the
// summary (which is still written).
int run_supervised(Job& job, const std::vector<StressCorpusEntry>& entries,
                   const std::vector<std::uint64_t>& seeds) {
  SweepCallbacks callbacks = parent_callbacks(job, entries, seeds);
  callbacks.run = [&job, &entries, &seeds](const std::vector<std::size_t>& tasks,
                                           std::uint32_t jobs, int channel_fd) {
    job.plan = tasks;
    job.channel = channel_fd;
    job.names_sent = StressRecordNames();  // a child's first record names the coverage rows
    stress_abort_channel(channel_fd);
    const int status = run_plan(job, entries, seeds, jobs);
    stress_sweep_write(channel_fd, Json::object({{"type", "end"}, {"exit", status}}));
    return status;
  };
  SweepLimits limits;
  limits.hang_seconds = job.options.hang_seconds;
  limits.memory_bytes = std::uint64_t{job.options.memory_mb_max} << 20;
  // The pool's runners start tasks up to its window past the next one it hands back, and that
  // one's record may not be sent yet: one more.
  limits.in_flight_max = SeedPool::window(job.options.jobs) + 1;
  Result<SweepOutcome> outcome =
      stress_sweep_supervise(job.plan, job.options.jobs, limits, callbacks);
  if (!outcome.ok()) {
    std::fprintf(stderr, "readyport-stress: %s\n", outcome.status().to_string().c_str());
    job.summary.sweep_error = outcome.status().to_string();
    return 0;
  }
  return outcome.value().exit_status == 2 ? 2 : 0;
}

// --json and --markdown. Returns 2 when one cannot be written, else 0.
int write_outputs(Job& job) {
  const StressOptions& options = job.options;
  int status = 0;
  if (!options.json_out.empty()) {
    const Json document = stress_summary_json(options, job.summary, job.figures);
    const Status written =
        stress_file_write(options.json_out, document.dump(2) + "\n", StressWriteMode::kReplace);
    if (!written.ok()) {
      std::fprintf(stderr, "readyport-stress: --json: %s\n", written.message().c_str());
      status = 2;
    }
  }
  if (!options.markdown_out.empty()) {
    const Status written =
        stress_file_write(options.markdown_out, stress_summary_markdown(options, job.summary),
                          StressWriteMode::kAppend);
    if (!written.ok()) {
      std::fprintf(stderr, "readyport-stress: --markdown: %s\n", written.message().c_str());
      status = 2;
    }
  }
  return status;
}

// --os windows: ends the process when the run overruns --seconds-max by kOverrunGraceSeconds
// (an engine or OS call that never returns), so that the whole run always ends. Joined by the
// destructor once the run is over.
class Watchdog {
 public:
  explicit Watchdog(std::uint32_t seconds_max)
      : thread_([this, seconds_max] {
          std::unique_lock<std::mutex> lock(mutex_);
          const auto limit =
              std::chrono::seconds(std::uint64_t{seconds_max} + kOverrunGraceSeconds);
          if (done_condition_.wait_for(lock, limit, [this] { return done_; })) {
            return;
          }
          std::printf(
              "\nreadyport-stress: --os windows: the run is still going %u s after "
              "--seconds-max %u; ending the process (a call that never returned)\n",
              kOverrunGraceSeconds, seconds_max);
          std::fflush(stdout);
          std::_Exit(1);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      done_ = true;
    }
    done_condition_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_condition_;
  bool done_ = false;   // guarded by mutex_
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace

// Whether `path` can be written, checked before the run so that an unwritable --json or
// --markdown is reported at once, not after every seed ran. Leaves no file it made.
Status check_writable(const std::string& path, const char* option) {
  std::error_code error;
  const bool existed = std::filesystem::exists(path, error);
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(option) + " '" + path + "': cannot be written");
  }
  std::fclose(file);
  if (!existed) {
    std::filesystem::remove(path, error);
  }
  return Status();
}

bool stress_main_job_supervised(const StressOptions& options) {
  return options.os == StressOs::kFake && !options.in_process &&
         stress_sweep_supervisor_available();
}

namespace {

// Exit 2 (printed) when --json or --markdown names a file that cannot be written; else 0.
int check_outputs_writable(const StressOptions& options) {
  for (const auto& [path, option] :
       {std::pair<const std::string&, const char*>{options.json_out, "--json"},
        {options.markdown_out, "--markdown"}}) {
    if (path.empty()) {
      continue;
    }
    if (const Status writable = check_writable(path, option); !writable.ok()) {
      std::fprintf(stderr, "readyport-stress: %s\n", writable.message().c_str());
      return 2;
    }
  }
  return 0;
}

// --os windows: the real Os (exit kExitSkipped where ProcessSocketNotifications is missing, 1 on
// another failure, both printed), else null and 0.
int open_real_os(const StressOptions& options, std::unique_ptr<Os>* os_out) {
  if (options.os != StressOs::kWindows) {
    return 0;
  }
  Result<std::unique_ptr<Os>> made = stress_windows_os_create();
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kUnavailable) {
      std::printf("skipped: %s\n", made.status().to_string().c_str());
      return kExitSkipped;
    }
    std::fprintf(stderr, "readyport-stress: --os windows: %s\n", made.status().to_string().c_str());
    return 1;
  }
  *os_out = std::move(made).value();
  return 0;
}

// The header lines: what runs, the corpus, the isolation.
void print_job_header(const Job& job, std::size_t seed_count, std::size_t corpus_count) {
  const StressOptions& options = job.options;
  if (job.real_os != nullptr) {
    std::printf(
        "readyport-stress: %zu seeds from %llu (shard %u/%u), os windows: WindowsOs, "
        "real loopback sockets and threads; the OS schedules the threads, so a seed "
        "reproduces the workload and the faults, not the interleaving; at most %u s and "
        "%u connections\n",
        seed_count, static_cast<ull>(options.first_seed), options.shard_index + 1,
        options.shard_count, options.seconds_max, options.connections_max);
  } else {
    std::printf(
        "readyport-stress: %zu seeds from %llu (shard %u/%u), runtime %s, strategy %s, "
        "jobs %u\n",
        seed_count, static_cast<ull>(options.first_seed), options.shard_index + 1,
        options.shard_count, stress_runtime_name(options.runtime),
        stress_strategy_name(options.strategy), options.jobs);
  }
  if (job.summary.corpus.dir.empty()) {
    std::printf("corpus: none (%s)\n", job.summary.corpus.note.c_str());
  } else {
    std::printf("corpus: %zu entries from %s, first\n", corpus_count,
                job.summary.corpus.dir.c_str());
  }
  if (stress_main_job_supervised(options)) {
    std::printf(
        "isolation: the seeds run in a child process; an abort, a crash or a hang "
        "(--hang-seconds %u) is that seed's failure and a new process goes on\n",
        options.hang_seconds);
  } else if (options.os == StressOs::kFake) {
    std::printf("isolation: none (%s): an engine assertion or a crash ends the sweep\n",
                options.in_process ? "--in-process" : "no fork on this platform");
  }
  std::fflush(stdout);
}

// The bounds each seed and child process run under (run_summary.hpp).
StressLimits limits_of(const StressOptions& options) {
  StressLimits limits;
  limits.steps_max = options.steps_max;
  if (options.runtime == StressRuntime::kFree && options.os == StressOs::kFake) {
    limits.trace_mb_max = options.trace_mb_max;
  }
  if (stress_main_job_supervised(options)) {
    limits.hang_seconds = options.hang_seconds;
    limits.memory_mb_max = options.memory_mb_max;
    limits.memory_data_limit = options.memory_mb_max != 0 && stress_sweep_data_limit_available();
  }
  return limits;
}

// After the run: the summary, the figures, the coverage check, the files. The exit status.
int finish_job(Job& job) {
  const StressOptions& options = job.options;
  job.summary.seconds = job.seconds();
  const std::size_t zero_rows = stress_summary_print(options, job.summary);
  stress_figures_print(options, job.figures);
  if (job.summary.failures.size() > job.printed) {
    std::printf(
        "  (%zu failures beyond the first %zu were not printed in full; each has its "
        "bundle)\n",
        job.summary.failures.size() - job.printed, job.printed);
  }
  int exit_status = job.summary.failures.empty() && job.summary.unblamed_deaths.empty() &&
                            job.summary.sweep_error.empty()
                        ? 0
                        : 1;
  if (options.require_coverage && zero_rows != 0) {
    std::printf("coverage: %zu row(s) never reached (--require-coverage)\n", zero_rows);
    exit_status = 1;
  }
  if (options.require_coverage && job.summary.tuple_problems != 0) {
    std::printf(
        "coverage: %zu tuple(s) of states in context never reached, listed yet reached, or a "
        "stale reason (--require-coverage)\n",
        job.summary.tuple_problems);
    exit_status = 1;
  }
  // A bound hit or an unjudged event is judgement lost: the coverage check asks for none.
  if (options.require_coverage && job.summary.oracle_not_judged != 0) {
    std::printf(
        "coverage: the oracle left %llu event(s) unjudged or hit a bound (--require-coverage)\n",
        static_cast<unsigned long long>(job.summary.oracle_not_judged));
    exit_status = 1;
  }
  job.summary.exit_status = exit_status;
  const int output_status = write_outputs(job);
  return output_status != 0 ? output_status : exit_status;
}

}  // namespace

int stress_main_job(const StressOptions& options, const std::vector<std::string>& command_line) {
  if (const int status = check_outputs_writable(options); status != 0) {
    return status;
  }
  std::unique_ptr<Os> real_os;
  if (const int status = open_real_os(options, &real_os); status != 0) {
    return status;
  }
  std::unique_ptr<Watchdog> watchdog;
  if (real_os != nullptr) {
    watchdog = std::make_unique<Watchdog>(options.seconds_max);
  }
  // The seeds of this shard: first_seed + k for k in [0, seeds) with k % count == index.
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t k = options.shard_index; k < options.seeds; k += options.shard_count) {
    seeds.push_back(options.first_seed + k);
  }
  Job job{options, command_line, stress_summary_begin(seeds.size())};
  job.real_os = real_os.get();
  Result<std::vector<StressCorpusEntry>> corpus = corpus_for(options, job.summary.corpus);
  if (corpus.ok() && job.real_os != nullptr && !corpus.value().empty()) {
    // The corpus's entries are simulated seeds: they replay under --os fake.
    corpus = std::vector<StressCorpusEntry>();
    job.summary.corpus.dir.clear();
    job.summary.corpus.note = "--os windows runs no corpus (its entries are simulated seeds)";
  }
  if (!corpus.ok()) {
    std::fprintf(stderr, "readyport-stress: --corpus: %s\n", corpus.status().to_string().c_str());
    return 2;
  }
  print_job_header(job, seeds.size(), corpus.value().size());

  stress_abort_install();
  // --os fake: the corpus and the seeds on options.jobs runners (seed_pool.hpp), taken in order,
  // in child processes unless --in-process (or where there is no fork).
  const std::vector<StressCorpusEntry>& entries = corpus.value();
  for (std::size_t task = 0; task < entries.size() + seeds.size(); ++task) {
    job.plan.push_back(task);
  }
  job.summary.jobs = job.real_os == nullptr ? options.jobs : 1;
  job.summary.limits = limits_of(options);
  const int run_status = stress_main_job_supervised(options)
                             ? run_supervised(job, entries, seeds)
                             : run_plan(job, entries, seeds, job.summary.jobs);
  if (run_status != 0) {
    return run_status;
  }
  return finish_job(job);
}

}  // namespace readyport
