#include "main_job.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "abort_report.hpp"
#include "build_info.hpp"
#include "bundle.hpp"
#include "corpus.hpp"
#include "failure_report.hpp"
#include "file_io.hpp"
#include "readyport/assert.hpp"
#include "real_os_run.hpp"
#include "run_figures.hpp"
#include "run_summary.hpp"
#include "seed_pool.hpp"
#include "stress_run.hpp"
#include "summary_json.hpp"
#include "summary_markdown.hpp"
#include "trace_out.hpp"

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
  std::uint64_t steps_all = 0;             // scheduler steps of every seed run, corpus included
  std::uint64_t connections_used = 0;      // --os windows: clients and peers opened so far

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
  if (entries.ok()) corpus.dir = dir;
  return entries;
}

// Real threads (--os windows, --runtime free): a failing seed's recorded trace, to be read and
// judged offline on any machine (its interleaving does not replay), beside its bundle
// (`seed-<S>.trace`; --trace-out, when given, also holds the first failing seed's).
void write_failure_trace(const StressOptions& options, const SeedReport& report,
                         const std::string& bundle_path) {
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

// One seed's report with its failure handling, on the driver's thread, in seed order; returns
// true when it passed. `trace_text_out` (may be null) receives the full trace when the options
// keep it.
bool take_report(Job& job, const StressOptions& run_options, SeedReport report,
                 const std::string& entry, const std::string& bundle_path, std::size_t* printed,
                 std::string* trace_text_out) {
  const StressBundleContext context = context_for(job, entry, bundle_path);
  job.steps_all += report.sim.steps;
  if (entry.empty()) {
    stress_summary_add_seed(job.summary, report);
    stress_figures_add(job.figures, report);
  }
  if (job.options.verbose) stress_verbose_print(report);
  if (job.options.trace) std::fputs(report.trace_text.c_str(), stdout);
  if (report.status.ok()) {
    if (trace_text_out != nullptr) *trace_text_out = std::move(report.trace_text);
    return true;
  }
  const std::string written = stress_bundle_write(run_options, report, context);
  // After the bundle: its directory exists now.
  if (job.real_os != nullptr || run_options.runtime == StressRuntime::kFree)
    write_failure_trace(run_options, report, bundle_path);
  if (trace_text_out != nullptr) *trace_text_out = std::move(report.trace_text);
  if (*printed < kFailuresPrintedMax) {
    if (!entry.empty()) std::printf("corpus entry %s failed:\n", entry.c_str());
    stress_failure_print(run_options, report, written, job.program());
    ++*printed;
  }
  stress_summary_add_failure(job.summary, stress_failure_record(report, entry, written));
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
                    context_for(job, entry.name, entry_bundle(job, entry))};
  }
  const std::uint64_t seed = seeds[index - entries.size()];
  return SeedTask{job.options, seed,
                  context_for(job, "", stress_bundle_path(job.options.bundle_dir, seed, ""))};
}

// The corpus, first. Returns false when --stop-on-failure stops the run.
bool run_corpus(Job& job, const std::vector<StressCorpusEntry>& entries, std::size_t* printed) {
  const std::string canary = stress_build_info().canary;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const StressCorpusEntry& entry = entries[i];
    const StressOptions run_options = entry_options(job, entry);
    const std::string bundle = entry_bundle(job, entry);
    SeedReport report = next_report(job, run_options, entry.seed, entry.name, bundle, nullptr);
    const bool passed =
        take_report(job, run_options, std::move(report), entry.name, bundle, printed, nullptr);
    job.summary.corpus.entries++;
    if (passed) job.summary.corpus.passed++;
    std::printf("corpus %s: seed %llu %s\n", entry.name.c_str(), static_cast<ull>(entry.seed),
                passed ? "ok" : "FAILED");
    if (passed && !canary.empty() && entry.expect_canary == canary) {
      std::printf(
          "corpus %s: passed, but it is the minimal case of canary %s, planted in this "
          "build: regenerate it (stress/corpus/regenerate_canaries.sh)\n",
          entry.name.c_str(), canary.c_str());
    }
    std::fflush(stdout);
    if (!passed && job.options.stop_on_failure) {
      if (job.pool != nullptr) job.pool->stop();
      std::printf("first failure: corpus entry %s (seed %llu) after %zu entries and %.1f s\n",
                  entry.name.c_str(), static_cast<ull>(entry.seed), i + 1, job.seconds());
      return false;
    }
  }
  return true;
}

// The seeds of this shard. Returns 2 when --trace-out's file cannot be written, else 0.
int run_seeds(Job& job, const std::vector<std::uint64_t>& seeds, std::size_t* printed) {
  const StressOptions& options = job.options;
  const std::size_t progress_every = seeds.size() >= 10 ? seeds.size() / 10 : 1;
  bool failure_trace_written = false;  // --os windows: the first failing seed's trace
  for (std::size_t i = 0; i < seeds.size(); ++i) {
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
    const bool passed = take_report(job, options, std::move(report), "", bundle, printed,
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
    if (!passed && options.stop_on_failure) {
      if (job.pool != nullptr) job.pool->stop();
      std::printf("first failure: seed %llu after %zu seeds and %.1f s\n",
                  static_cast<ull>(seeds[i]), i + 1, job.seconds());
      job.summary.stopped_early = true;
      break;
    }
  }
  return 0;
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
          if (done_condition_.wait_for(lock, limit, [this] { return done_; })) return;
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
  if (!existed) std::filesystem::remove(path, error);
  return Status();
}

int stress_main_job(const StressOptions& options, const std::vector<std::string>& command_line) {
  for (const auto& [path, option] :
       {std::pair<const std::string&, const char*>{options.json_out, "--json"},
        {options.markdown_out, "--markdown"}}) {
    if (path.empty()) continue;
    if (const Status writable = check_writable(path, option); !writable.ok()) {
      std::fprintf(stderr, "readyport-stress: %s\n", writable.message().c_str());
      return 2;
    }
  }
  // --os windows: the real Os first (a skip where ProcessSocketNotifications is missing).
  std::unique_ptr<Os> real_os;
  std::unique_ptr<Watchdog> watchdog;
  if (options.os == StressOs::kWindows) {
    Result<std::unique_ptr<Os>> made = stress_windows_os_create();
    if (!made.ok()) {
      if (made.status().code() == StatusCode::kUnavailable) {
        std::printf("skipped: %s\n", made.status().to_string().c_str());
        return kExitSkipped;
      }
      std::fprintf(stderr, "readyport-stress: --os windows: %s\n",
                   made.status().to_string().c_str());
      return 1;
    }
    real_os = std::move(made).value();
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
  if (job.real_os != nullptr) {
    std::printf(
        "readyport-stress: %zu seeds from %llu (shard %u/%u), os windows: WindowsOs, "
        "real loopback sockets and threads; the OS schedules the threads, so a seed "
        "reproduces the workload and the faults, not the interleaving; at most %u s and "
        "%u connections\n",
        seeds.size(), static_cast<ull>(options.first_seed), options.shard_index + 1,
        options.shard_count, options.seconds_max, options.connections_max);
  } else {
    std::printf(
        "readyport-stress: %zu seeds from %llu (shard %u/%u), runtime %s, strategy %s, "
        "jobs %u\n",
        seeds.size(), static_cast<ull>(options.first_seed), options.shard_index + 1,
        options.shard_count, stress_runtime_name(options.runtime),
        stress_strategy_name(options.strategy), options.jobs);
  }
  if (job.summary.corpus.dir.empty()) {
    std::printf("corpus: none (%s)\n", job.summary.corpus.note.c_str());
  } else {
    std::printf("corpus: %zu entries from %s, first\n", corpus.value().size(),
                job.summary.corpus.dir.c_str());
  }
  std::fflush(stdout);

  stress_abort_install();
  // --os fake: the corpus and the seeds on options.jobs runners (seed_pool.hpp), taken in order.
  std::unique_ptr<SeedPool> pool;
  if (job.real_os == nullptr) {
    const std::vector<StressCorpusEntry>& entries = corpus.value();
    pool = std::make_unique<SeedPool>(
        entries.size() + seeds.size(),
        [&job, &entries, &seeds](std::size_t index) {
          return pool_task(job, entries, seeds, index);
        },
        options.jobs);
    job.pool = pool.get();
  }
  job.summary.jobs = job.real_os == nullptr ? options.jobs : 1;
  std::size_t printed = 0;
  if (!run_corpus(job, corpus.value(), &printed)) {
    job.summary.stopped_early = true;
  } else if (run_seeds(job, seeds, &printed) != 0) {
    return 2;
  }
  pool.reset();  // joins the runners (after --stop-on-failure, the seeds they had started)
  job.summary.seconds = job.seconds();
  job.summary.steps_all = job.steps_all;
  const std::size_t zero_rows = stress_summary_print(options, job.summary);
  stress_figures_print(options, job.figures);
  if (job.summary.failures.size() > printed) {
    std::printf(
        "  (%zu failures beyond the first %zu were not printed in full; each has its "
        "bundle)\n",
        job.summary.failures.size() - printed, printed);
  }
  int exit_status = job.summary.failures.empty() ? 0 : 1;
  if (options.require_coverage && zero_rows != 0) {
    std::printf("coverage: %zu row(s) never reached (--require-coverage)\n", zero_rows);
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

}  // namespace readyport
