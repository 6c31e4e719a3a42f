#include "cli/stress_options.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/cli_number.hpp"
#include "explore/small_worlds.hpp"
#include "readyport/fake/fault_plan.hpp"

namespace readyport {
namespace {

constexpr std::uint64_t kSeedsMax = 100'000'000;
constexpr std::uint32_t kShardsMax = 4096;
constexpr std::uint32_t kDepthMax = 64;
constexpr std::uint64_t kStepsMin = 1000;
constexpr std::uint64_t kStepsMax = 1'000'000'000;
constexpr std::uint32_t kCapMax = 1'000'000;
constexpr std::uint32_t kSecondsMax = 86'400;
constexpr std::uint32_t kConnectionsMax = 100'000;
constexpr std::uint64_t kSchedulesMax = 1'000'000'000;

const char* const kExamples =
    "Examples:\n"
    "  readyport-stress                               the main job: corpus, then seeds 1..300\n"
    "  readyport-stress --seeds 8000 --shard 2/4 --json s2.json --markdown "
    "\"$GITHUB_STEP_SUMMARY\"\n"
    "  readyport-stress --jobs 2 --seeds 1000          seeds two at a time, output as --jobs 1\n"
    "  readyport-stress --scale                       10,000 connections, 8 workers, one seed\n"
    "  readyport-stress --scale --runtime free --connections 1000 --workers 4   (TSan build)\n"
    "  readyport-stress --seed 1234 --verbose --trace one seed, its parameters and its trace\n"
    "  readyport-stress --seed 5 --trace-out s5.json --trace-format chrome   (open in Perfetto)\n"
    "  readyport-stress --replay stress-failures/seed-1234.json   a failure bundle, exactly\n"
    "  readyport-stress --seed 28 --shrink            a failing seed's minimal case\n"
    "  readyport-stress --check-trace s5.trace        the oracle's verdict on a recorded trace\n"
    "  readyport-stress --os windows --seeds 4 --seconds-max 60   on the real API (Windows)\n"
    "  readyport-stress --engine-case 'seed=3 workers=2 batch=4; add(oneshot_level IN); run(5 "
    "ms)'\n"
    "  readyport-stress --explore all --preemptions 2   every schedule of the small worlds\n"
    "\n"
    "Refused together: --seed with --seeds, --first-seed or --shard; --replay, --check-trace and\n"
    "--engine-case with any option that chooses or shapes a run (--check-trace takes --runtime,\n"
    "checked against the trace's header); an option given twice.\n"
    "Numbers are whole decimals in the range each option states.\n"
    "Every failing seed writes a bundle (--bundle-dir) and prints the command that replays it.\n"
    "Exit status: 0 when everything passed, 1 on any failure, 2 on a bad command line, 77 when\n"
    "--os windows finds no ProcessSocketNotifications (Wine, Windows before build 20348).\n"
    "A seed that aborts (an engine assertion), crashes or hangs (--hang-seconds) is a failing\n"
    "seed like any other: the sweep goes on in a new process, the summary, --json and\n"
    "--markdown are written, and the exit status is 1 (--in-process: the process dies with the\n"
    "seed, e.g. exit 134 on an assertion, and writes only the seed's bundle).\n"
    "--replay of a bundle: 0 the same verdict and trace hash, 3 the same verdict with another\n"
    "trace, 4 not reproduced (another verdict); of a corpus entry: 0 it passes, 1 it fails.\n"
    "--explore: 0 every schedule passed (complete to the bound, or cut by --schedules-max: said\n"
    "so), 1 a schedule failed (the one with the fewest preemptions, with its --schedule; its\n"
    "bundle explore-<world>.json in --bundle-dir replays with --replay).\n"
    "--shrink: 0 a failing seed was shrunk (its minimal case printed and written), 1 the seed\n"
    "passes (nothing to shrink), 2 an output could not be written. --check-trace: 0 the trace\n"
    "holds, 1 a violation, 2 an unreadable trace or a --runtime that contradicts its header.\n"
    "An unwritable --json or --markdown path is refused (exit 2) before any seed runs.\n";

// "I/N" with 1 <= I <= N <= kShardsMax.
bool parse_shard(std::string_view text, std::uint32_t* index_out, std::uint32_t* count_out) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return false;
  }
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  if (!cli_number_parse(text.substr(0, slash), 1, kShardsMax, &index)) {
    return false;
  }
  if (!cli_number_parse(text.substr(slash + 1), 1, kShardsMax, &count)) {
    return false;
  }
  if (index > count) {
    return false;
  }
  *index_out = static_cast<std::uint32_t>(index - 1);
  *count_out = static_cast<std::uint32_t>(count);
  return true;
}

// A non-empty text value (a file or directory name, a line).
CLI::Validator non_empty(const char* what) {
  return CLI::Validator(
      [what](std::string& text) { return text.empty() ? std::string(what) + " is empty" : ""; }, "",
      "non_empty");
}

// Help lines with the value's form only: CLI11's own lists every option an option excludes, which
// for --replay is most of them (the footer says which options go together instead).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    const std::string type = option->get_type_name();
    return type.empty() ? std::string() : " " + type;
  }
};

// The parser: one CLI::App bound to an options value. Built anew for each parse and for --help.
struct Parser {
  CLI::App app{
      "readyport-stress: the echo workload on the engine over FakeOs, one world per seed "
      "(docs/faults.md, docs/replay.md).",
      "readyport-stress"};
  StressOptions options;
  std::uint64_t seed = 0;
  std::string strategy_text;
  std::string runtime_text;
  std::string mechanism_text;
  std::string faults_text;
  std::string shard_text;
  std::string corpus_text;
  std::string trace_format_text;
  std::string os_text;
  std::string stalls_text;
  // The options the groups below add, for the rules between them (exclude_incompatible).
  struct Handles {
    CLI::Option* seeds = nullptr;
    CLI::Option* first = nullptr;
    CLI::Option* one = nullptr;
    CLI::Option* shard = nullptr;
    CLI::Option* strategy = nullptr;
    CLI::Option* depth = nullptr;
    CLI::Option* runtime = nullptr;
    CLI::Option* os = nullptr;
    CLI::Option* seconds_max = nullptr;
    CLI::Option* connections_max = nullptr;
    CLI::Option* steps = nullptr;
    CLI::Option* faults = nullptr;
    CLI::Option* actions = nullptr;
    CLI::Option* clients = nullptr;
    CLI::Option* peers = nullptr;
    CLI::Option* coverage = nullptr;
    CLI::Option* stop = nullptr;
    CLI::Option* corpus = nullptr;
    CLI::Option* bundle_dir = nullptr;
    CLI::Option* json = nullptr;
    CLI::Option* markdown = nullptr;
    CLI::Option* jobs = nullptr;
    CLI::Option* in_process = nullptr;
    CLI::Option* hang_seconds = nullptr;
    CLI::Option* memory = nullptr;
    CLI::Option* trace_memory = nullptr;
    CLI::Option* scale = nullptr;
    CLI::Option* scale_connections = nullptr;
    CLI::Option* scale_workers = nullptr;
    CLI::Option* shrink = nullptr;
    CLI::Option* corpus_entry = nullptr;
    CLI::Option* trace = nullptr;
    CLI::Option* verbose = nullptr;
    CLI::Option* trace_out = nullptr;
    CLI::Option* trace_format = nullptr;
    CLI::Option* replay = nullptr;
    CLI::Option* check = nullptr;
    CLI::Option* engine_case = nullptr;
    CLI::Option* explore = nullptr;
    CLI::Option* preemptions = nullptr;
    CLI::Option* schedules_max = nullptr;
    CLI::Option* schedule = nullptr;
    CLI::Option* schedule_seed = nullptr;
    CLI::Option* stalls = nullptr;
    CLI::Option* guided = nullptr;
    CLI::Option* guided_seconds = nullptr;
    CLI::Option* unguided = nullptr;
    CLI::Option* guided_corpus = nullptr;
    CLI::Option* guided_from = nullptr;
  } h;

  Parser() {
    app.set_help_flag();  // ours below: --help sets options.help instead of throwing
    app.footer(kExamples);
    app.formatter(std::make_shared<HelpFormatter>());
    app.get_formatter()->column_width(36);
    add_seed_options();
    add_seed_run_options();
    add_main_job_options();
    add_scale_and_shrink_options();
    add_output_options();
    add_mode_options();
    add_explore_options();
    exclude_incompatible();
  }

  // Which seeds.
  void add_seed_options() {
    StressOptions& o = options;
    h.seeds = cli_add_number(app, "--seeds", &o.seeds, 1, kSeedsMax, "seeds to run (default 300)");
    h.first = cli_add_number(app, "--first-seed", &o.first_seed, 0, kCliNumberMax,
                             "the first seed (default 1); seeds are S, S+1, ...");
    h.one = cli_add_number(app, "--seed", &seed, 0, kCliNumberMax,
                           "run exactly seed S (no corpus unless --corpus is given)");
    h.shard =
        app.add_option("--shard", shard_text,
                       "run only the I-th of N interleaved shards of the seeds (I/N, N <= 4096)")
            ->type_name("I/N")
            ->check(CLI::Validator(
                [](std::string& text) {
                  std::uint32_t index = 0;
                  std::uint32_t count = 0;
                  return parse_shard(text, &index, &count)
                             ? std::string()
                             : "'" + text + "' is not I/N with 1 <= I <= N <= 4096";
                },
                "", "shard"));
    h.one->excludes(h.seeds)->excludes(h.first)->excludes(h.shard);
    h.schedule_seed = cli_add_number(
        app, "--schedule-seed", &o.schedule_seed, 1, kCliNumberMax,
        "the scheduler's seed for every seed run (default: each seed's own; the workload, its "
        "draws and the fault plan still come from the seed)");
    h.stalls = app.add_option("--stalls", stalls_text,
                              "threads kept off the CPU in every seed's schedule: at step S the "
                              "thread that took it is not picked for N steps while another can "
                              "run (simulation only; at most 16)")
                   ->type_name("S:N,...");
    h.guided = cli_add_number(app, "--guided", &o.guided_runs, 1, kSeedsMax,
                              "the guided search: N inputs, starting from seeds S.. "
                              "(--first-seed), then mutations of those that reached new coverage");
    h.guided_seconds = cli_add_number(
        app, "--guided-seconds", &o.guided_seconds, 1, 7 * 24 * 3600,
        "the guided search for S seconds of CPU time (not deterministic: comparisons, nightly)");
    h.unguided = app.add_flag("--unguided", o.unguided,
                              "with --guided or --guided-seconds: seeds S, S+1, ... with no "
                              "mutation (the baseline the search is compared with)");
    h.guided_corpus = app.add_option(
        "--guided-corpus-out", o.guided_corpus_out,
        "with --guided: write the fewest kept inputs that reach tuples seeds 1..300 do not, as "
        "corpus entries, to DIR");
    h.guided_from =
        app.add_option("--guided-from", o.guided_from,
                       "with --guided: the corpus entries of DIR (not the canaries') are the "
                       "search's first inputs, before its fresh seeds")
            ->type_name("DIR")
            ->check(non_empty("--guided-from"));
    h.guided->excludes(h.guided_seconds)->excludes(h.one)->excludes(h.seeds)->excludes(h.shard);
    h.guided_seconds->excludes(h.one)->excludes(h.seeds)->excludes(h.shard);
  }

  // How each seed runs.
  void add_seed_run_options() {
    StressOptions& o = options;
    h.strategy =
        app.add_option("--strategy", strategy_text,
                       "random | pct | delay_bounded | fair | mixed (even seeds random, odd pct) | "
                       "portfolio (seed % 4: random, pct, delay_bounded, fair; default)")
            ->check(
                CLI::IsMember({"random", "pct", "delay_bounded", "fair", "mixed", "portfolio"}));
    h.depth = cli_add_number(app, "--depth", &o.pct_depth, 1, kDepthMax,
                             "PCT depth d (d - 1 change points; delay_bounded: d - 1 "
                             "delays; default 3)");
    h.runtime = app.add_option("--runtime", runtime_text,
                               "sim (SimScheduler, replayable; default) | free (real threads)")
                    ->check(CLI::IsMember({"sim", "free"}));
    app.add_option("--mechanism", mechanism_text,
                   "threads | fibers: how the simulation runs its logical threads (default: "
                   "fibers where available); the traces are the same")
        ->check(CLI::IsMember({"threads", "fibers"}));
    h.os = app.add_option("--os", os_text,
                          "fake (FakeOs; default) | windows (WindowsOs: real loopback sockets and "
                          "threads; Windows builds; exit 77 where ProcessSocketNotifications is "
                          "missing)")
               ->check(CLI::IsMember({"fake", "windows"}));
    h.seconds_max =
        cli_add_number(app, "--seconds-max", &o.seconds_max, 1, kSecondsMax,
                       "with --os windows: wall-clock budget of the whole run (default 60)");
    h.connections_max =
        cli_add_number(app, "--connections-max", &o.connections_max, 1, kConnectionsMax,
                       "with --os windows: connections all seeds may open (default 300)");
    h.steps = cli_add_number(
        app, "--steps-max", &o.steps_max, kStepsMin, kStepsMax,
        "a seed's scheduler steps (simulated) or seam calls (real threads: past it, a livelock "
        "report) at most (default 50000000)");
    h.faults =
        app.add_option("--faults", faults_text,
                       "drawn (default: a plan drawn from each seed) | off | a plan "
                       "SITE[@PERCENT],... and SITE#HIT pins (docs/faults.md); with "
                       "--explore, the faults a schedule may fire (default 0)")
            ->type_name("X")
            ->check(CLI::Validator(
                [](std::string& text) {
                  // A number is --explore's fault bound (checked with it in finish()).
                  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
                    return std::string();
                  }
                  StressOptions scratch;
                  const Status status = stress_faults_set(text, &scratch);
                  return status.ok() ? std::string() : status.message();
                },
                "", "faults"));
    h.actions = cli_add_number(app, "--actions-max", &o.actions_max, 0, kCapMax,
                               "cap the drawn director actions");
    h.clients =
        cli_add_number(app, "--clients-max", &o.clients_max, 0, kCapMax, "cap the drawn clients");
    h.peers =
        cli_add_number(app, "--peers-max", &o.peers_max, 0, kCapMax, "cap the drawn raw peers");
  }

  // What the main job does around the seeds.
  void add_main_job_options() {
    StressOptions& o = options;
    h.coverage = app.add_flag("--require-coverage", o.require_coverage,
                              "exit 1 when a row of the coverage table is zero or the "
                              "oracle hit a bound");
    h.stop = app.add_flag("--stop-on-failure", o.stop_on_failure,
                          "stop at the first failing seed (or corpus entry)");
    h.corpus = app.add_option("--corpus", corpus_text,
                              "the regression corpus replayed first: a directory, or none "
                              "(default: the source tree's stress/corpus)")
                   ->type_name("DIR|none")
                   ->check(non_empty("--corpus"));
    h.bundle_dir =
        app.add_option("--bundle-dir", o.bundle_dir,
                       "each failing seed writes DIR/seed-<S>.json (default stress-failures)")
            ->type_name("DIR")
            ->check(non_empty("--bundle-dir"));
    h.json = app.add_option("--json", o.json_out, "write the run's summary as JSON")
                 ->type_name("FILE")
                 ->check(non_empty("--json"));
    h.markdown = app.add_option("--markdown", o.markdown_out,
                                "append a Markdown summary table (e.g. $GITHUB_STEP_SUMMARY)")
                     ->type_name("FILE")
                     ->check(non_empty("--markdown"));
    h.jobs = cli_add_number(
        app, "--jobs", &o.jobs, 1, kStressJobsMax,
        "run N seeds (and corpus entries) at once, each in its own world; results and output in "
        "seed order, the same as --jobs 1 (default: the online CPUs, at most 64; --os windows, "
        "--seed, --shrink and --replay run one seed at a time)");
    h.in_process =
        app.add_flag("--in-process", o.in_process,
                     "run the sweep in this process (a debugger's choice): an engine assertion, "
                     "a crash or a hang then ends the whole run; by default the seeds run in a "
                     "child process and a seed that aborts, crashes or hangs is that seed's "
                     "failure while a new process runs the rest (POSIX)");
    h.hang_seconds = cli_add_number(
        app, "--hang-seconds", &o.hang_seconds, 1, kStressHangSecondsMax,
        "a child process that finishes no seed for S wall-clock seconds is killed, and its "
        "seed reported as hung (default 300)");
    h.hang_seconds->excludes(h.in_process);
    h.memory = cli_add_number(
        app, "--memory-mb-max", &o.memory_mb_max, 0, kStressMemoryMbMax,
        "a child process of the sweep holding more memory than M MiB (resident, and its data "
        "segment where no sanitizer runs) is killed, and its seed reported (default 4096; 0: no "
        "limit)");
    h.memory->excludes(h.in_process);
    h.trace_memory = cli_add_number(
        app, "--trace-mb-max", &o.trace_mb_max, 1, kStressMemoryMbMax,
        "--runtime free: a seed keeps at most T MiB of its recorded trace (past it, the prefix; "
        "the run is judged whole, and a failure writes no trace file) (default 64)");
  }

  // Scale mode, and --shrink.
  void add_scale_and_shrink_options() {
    StressOptions& o = options;
    h.scale = app.add_flag(
        "--scale", o.scale,
        "the engine at scale instead of the main job: --connections client and server ends on "
        "--workers workers, judged by the oracle; prints its figures (one seed unless --seeds)");
    h.scale_connections =
        cli_add_number(app, "--connections", &o.scale_connections, kStressScaleConnectionsMin,
                       kStressScaleConnectionsMax,
                       "with --scale: connections, client and server ends together (default 10000; "
                       "8..20000, even)");
    h.scale_workers = cli_add_number(app, "--workers", &o.scale_workers, 1, kStressScaleWorkersMax,
                                     "with --scale: engine workers (default 8; 1..64)");
    h.scale_connections->needs(h.scale);
    h.scale_workers->needs(h.scale);

    h.shrink = app.add_flag("--shrink", o.shrink,
                            "with one seed: shrink its failure (fault sites, PCT depth, "
                            "workload) while it fails with the same rule");
    h.corpus_entry = app.add_option("--corpus-entry", o.corpus_entry_out,
                                    "with --shrink: also write the minimal case as a corpus entry")
                         ->type_name("FILE")
                         ->check(non_empty("--corpus-entry"));
    h.corpus_entry->needs(h.shrink);
  }

  // Output of a run.
  void add_output_options() {
    StressOptions& o = options;
    h.trace = app.add_flag("--trace", o.trace, "print each seed's full trace (with --seed)");
    h.verbose =
        app.add_flag("--verbose", o.verbose, "print each seed's drawn parameters and result");
    h.trace_out =
        app.add_option("--trace-out", o.trace_out, "write the one seed's full trace to FILE")
            ->type_name("FILE")
            ->check(non_empty("--trace-out"));
    h.trace_format =
        app.add_option("--trace-format", trace_format_text,
                       "--trace-out's format: text (default; --check-trace reads it) | chrome "
                       "(trace-event JSON for Perfetto, one track per thread)")
            ->check(CLI::IsMember({"text", "chrome"}));
    h.trace_format->needs(h.trace_out);
  }

  // The other modes, --help and --version.
  void add_mode_options() {
    StressOptions& o = options;
    h.replay =
        app.add_option("--replay", o.replay,
                       "run a failure bundle's (or corpus entry's) seed with its options exactly; "
                       "compare the trace hash")
            ->type_name("FILE")
            ->check(non_empty("--replay"));
    h.check = app.add_option("--check-trace", o.check_trace,
                             "judge a recorded text trace with the lifetime oracle (no run): every "
                             "rule, whatever recorded it; a --runtime that contradicts its header "
                             "line is refused")
                  ->type_name("FILE")
                  ->check(non_empty("--check-trace"));
    h.engine_case = app.add_option("--engine-case", o.engine_case,
                                   "replay one engine-property case, the line its failure printed")
                        ->type_name("LINE");
    app.add_flag("-h,--help", o.help, "print this help and exit");
    app.add_flag("--version", o.version, "print the version and git commit and exit");
  }

  // --explore and its bounds (explore/explore_main.hpp).
  void add_explore_options() {
    StressOptions& o = options;
    std::vector<std::string> names = {"all"};
    for (const SmallWorld& world : small_worlds()) {
      names.push_back(world.name);
    }
    h.explore = app.add_option("--explore", o.explore,
                               "run every schedule of a pinned small world (or all of them) up "
                               "to --preemptions, each judged as a seed")
                    ->type_name("NAME")
                    ->check(CLI::IsMember(names));
    h.preemptions = cli_add_number(app, "--preemptions", &o.preemptions, 0, kStressExploreBoundMax,
                                   "with --explore: preemptions a schedule may have (default 2)");
    h.schedules_max = cli_add_number(app, "--schedules-max", &o.schedules_max, 1, kSchedulesMax,
                                     "with --explore: schedules a world may run (default 1000000)");
    h.schedule = app.add_option("--schedule", o.explore_schedule,
                                "with --explore NAME: run the one schedule LIST names (the thread "
                                "picked at each decision, as a failure prints it)")
                     ->type_name("LIST");
    h.preemptions->needs(h.explore);
    h.schedules_max->needs(h.explore);
    h.schedule->needs(h.explore)->excludes(h.preemptions)->excludes(h.schedules_max);
  }

  // Options that choose or shape a run go with no other mode; --shrink and --scale with
  // fewer of the main job's.
  void exclude_incompatible() {
    // None goes with --replay (the bundle holds them), --check-trace (nothing runs) or
    // --engine-case (another world).
    const std::vector<CLI::Option*> run_options = {
        h.seeds,         h.first,           h.one,          h.shard,         h.strategy,
        h.depth,         h.steps,           h.faults,       h.actions,       h.clients,
        h.peers,         h.coverage,        h.stop,         h.corpus,        h.bundle_dir,
        h.json,          h.markdown,        h.shrink,       h.corpus_entry,  h.os,
        h.seconds_max,   h.connections_max, h.jobs,         h.scale,         h.scale_connections,
        h.scale_workers, h.in_process,      h.hang_seconds, h.memory,        h.trace_memory,
        h.schedule_seed, h.stalls,          h.guided,       h.guided_seconds};
    for (CLI::Option* option : run_options) {
      h.replay->excludes(option);
      h.check->excludes(option);
      h.engine_case->excludes(option);
      // --faults F: the faults a schedule may fire; --stop-on-failure: no world after a failure;
      // --bundle-dir: where a failing schedule's bundle goes.
      if (option != h.faults && option != h.stop && option != h.bundle_dir) {
        h.explore->excludes(option);
      }
    }
    for (CLI::Option* option : {h.replay, h.check, h.engine_case, h.runtime, h.trace_out}) {
      h.explore->excludes(option);
    }
    h.replay->excludes(h.runtime)->excludes(h.check)->excludes(h.engine_case);
    h.check->excludes(h.trace)->excludes(h.verbose)->excludes(h.trace_out)->excludes(h.engine_case);
    h.engine_case->excludes(h.runtime)->excludes(h.trace)->excludes(h.verbose)->excludes(
        h.trace_out);
    // --shrink reports one seed: the main job's outputs do not apply.
    for (CLI::Option* option : {h.shard, h.coverage, h.stop, h.corpus, h.json, h.markdown, h.jobs,
                                h.in_process, h.hang_seconds, h.memory}) {
      h.shrink->excludes(option);
    }
    // --scale is its own run: one workload of its own size, not the main job's.
    for (CLI::Option* option :
         {h.one,          h.shard,         h.faults,       h.actions,      h.clients,
          h.peers,        h.coverage,      h.stop,         h.corpus,       h.json,
          h.markdown,     h.shrink,        h.corpus_entry, h.os,           h.jobs,
          h.trace,        h.trace_out,     h.in_process,   h.hang_seconds, h.memory,
          h.trace_memory, h.schedule_seed, h.stalls,       h.guided,       h.guided_seconds}) {
      h.scale->excludes(option);
    }
    // The guided search runs its inputs one at a time in its own process: no shard, no child
    // processes, no corpus of the main job's, no shrink.
    for (CLI::Option* option : {h.corpus, h.jobs, h.hang_seconds, h.memory, h.shrink,
                                h.corpus_entry, h.os, h.schedule_seed, h.stalls, h.trace_out}) {
      h.guided->excludes(option);
      h.guided_seconds->excludes(option);
    }
  }

  // --os and the options that go with it only. Errors: kInvalidArgument with the message.
  Status finish_os() {
    StressOptions& o = options;
    const bool bounds_given =
        app.count("--seconds-max") != 0 || app.count("--connections-max") != 0;
    if (os_text != "windows") {
      if (bounds_given) {
        return Status(StatusCode::kInvalidArgument,
                      "--seconds-max and --connections-max bound a run with --os windows only");
      }
      return Status();
    }
    if (!stress_windows_build()) {
      return Status(StatusCode::kInvalidArgument,
                    "--os windows needs a Windows build (WindowsOs exists only there; this build "
                    "has --os fake only)");
    }
    if (runtime_text == "sim") {
      return Status(StatusCode::kInvalidArgument,
                    "--os windows runs on real threads: --runtime sim does not apply");
    }
    if (o.shrink) {
      return Status(StatusCode::kInvalidArgument,
                    "--shrink works on simulated seeds: shrink a --os windows failure's seed "
                    "with --os fake");
    }
    if (app.count("--jobs") != 0 && o.jobs != 1) {
      return Status(StatusCode::kInvalidArgument,
                    "--os windows runs one seed at a time (each seed's budget is what the ones "
                    "before it left): --jobs does not apply");
    }
    o.jobs = 1;
    o.os = StressOs::kWindows;
    o.runtime = StressRuntime::kFree;
    return Status();
  }

  // --faults: a plan (or drawn, off) for a run, a number with --explore. A message, "" when fine.
  std::string finish_faults() {
    StressOptions& o = options;
    if (!faults_text.empty() && !o.explore.empty()) {
      const auto [end, error] = std::from_chars(
          faults_text.data(), faults_text.data() + faults_text.size(), o.explore_faults);
      if (error != std::errc() || end != faults_text.data() + faults_text.size() ||
          faults_text.find_first_not_of("0123456789") != std::string::npos ||
          o.explore_faults > kStressExploreBoundMax) {
        return "--faults with --explore: a number of faults a schedule may fire, 0 to " +
               std::to_string(kStressExploreBoundMax) + " (got '" + faults_text + "')";
      }
    } else if (!faults_text.empty() &&
               faults_text.find_first_not_of("0123456789") == std::string::npos) {
      return "--faults " + faults_text +
             ": a number bounds the faults of --explore; a run takes drawn, off or a plan";
    } else if (!faults_text.empty()) {
      const Status status = stress_faults_set(faults_text, &o);
      if (!status.ok()) {
        return "--faults: " + status.message();
      }
    }
    return "";
  }

  // --os, then --stalls (once --runtime and --os chose the runtime). A message, "" when fine.
  std::string finish_runtime() {
    if (Status status = finish_os(); !status.ok()) {
      return status.message();
    }
    StressOptions& o = options;
    if (!stalls_text.empty()) {
      Result<std::vector<SimStall>> stalls = sim_stalls_parse(stalls_text);
      if (!stalls.ok()) {
        return "--stalls: " + stalls.status().message();
      }
      if (o.runtime == StressRuntime::kFree) {
        return "--stalls: the simulation's schedule only (real threads, --runtime free or --os "
               "windows, have no steps to stall)";
      }
      o.stalls = std::move(stalls).value();
    }
    return "";
  }

  // After a successful CLI11 parse: the values that need more than one option, and the checks
  // across options. Errors: a message, "" when fine.
  std::string finish() {
    StressOptions& o = options;
    if (!strategy_text.empty()) {
      (void)stress_strategy_parse(strategy_text, &o.strategy);
    }
    if (!runtime_text.empty()) {
      (void)stress_runtime_parse(runtime_text, &o.runtime);
    }
    o.runtime_given = !runtime_text.empty();
    if (!mechanism_text.empty()) {
      (void)sim_mechanism_parse(mechanism_text, &o.mechanism);
    }
    if (std::string why = finish_faults(); !why.empty()) {
      return why;
    }
    if (!shard_text.empty()) {
      (void)parse_shard(shard_text, &o.shard_index, &o.shard_count);
    }
    if (trace_format_text == "chrome") {
      o.trace_format = StressTraceFormat::kChrome;
    }
    if (!corpus_text.empty()) {
      o.corpus = corpus_text == "none" ? StressOptions::Corpus::kNone : StressOptions::Corpus::kDir;
      if (o.corpus == StressOptions::Corpus::kDir) {
        o.corpus_dir = corpus_text;
      }
    }
    o.engine_case_given = app.count("--engine-case") != 0;
    if (app.count("--jobs") == 0) {
      o.jobs = stress_jobs_default();
    }
    if (app.count("--seed") != 0) {
      o.seed_given = true;
      o.first_seed = seed;
      o.seeds = 1;
    }
    if (o.unguided && o.guided_runs == 0 && o.guided_seconds == 0) {
      return "--unguided: goes with --guided N or --guided-seconds S only";
    }
    if (!o.guided_corpus_out.empty() && (o.guided_runs == 0 && o.guided_seconds == 0)) {
      return "--guided-corpus-out: goes with --guided N or --guided-seconds S only";
    }
    if (!o.guided_from.empty() && (o.guided_runs == 0 && o.guided_seconds == 0)) {
      return "--guided-from: goes with --guided N or --guided-seconds S only";
    }
    if (!o.guided_from.empty() && o.unguided) {
      return "--guided-from: the unguided baseline runs fresh seeds only";
    }
    if (o.scale && app.count("--seeds") == 0) {
      o.seeds = 1;
    }
    if (o.scale && o.scale_connections % 2 != 0) {
      return "--connections: " + std::to_string(o.scale_connections) +
             " is odd; each connection is a client and its server end";
    }
    if (std::string why = finish_runtime(); !why.empty()) {
      return why;
    }
    if (o.shrink && o.seeds != 1) {
      return "--shrink works on one failing seed: use it with --seed";
    }
    if (!o.trace_out.empty() && o.seeds != 1 && o.replay.empty() && o.os != StressOs::kWindows) {
      return "--trace-out writes one seed's trace: use it with --seed or --replay (or with "
             "--os windows: the first failing seed's)";
    }
    if (o.seeds - 1 > ~std::uint64_t{0} - o.first_seed) {
      return "--first-seed: the seed range wraps around";
    }
    return "";
  }
};

Status bad(std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                "bad argument: " + std::string(why) + " (readyport-stress --help)");
}

}  // namespace

std::uint32_t stress_jobs_default() {
  const unsigned online = std::thread::hardware_concurrency();  // 0 when unknown
  if (online == 0) {
    return 1;
  }
  return online > kStressJobsMax ? kStressJobsMax : static_cast<std::uint32_t>(online);
}

std::string stress_usage() {
  Parser parser;
  return parser.app.help();
}

const char* stress_strategy_name(StressStrategy strategy) {
  switch (strategy) {
    case StressStrategy::kRandom:
      return "random";
    case StressStrategy::kPct:
      return "pct";
    case StressStrategy::kMixed:
      return "mixed";
    case StressStrategy::kDelayBounded:
      return "delay_bounded";
    case StressStrategy::kFair:
      return "fair";
    case StressStrategy::kPortfolio:
      return "portfolio";
  }
  READYPORT_UNREACHABLE();
}

bool stress_windows_build() {
#if defined(_WIN32)
  return true;
#else
  return false;
#endif
}

const char* stress_os_name(StressOs os) {
  switch (os) {
    case StressOs::kFake:
      return "fake";
    case StressOs::kWindows:
      return "windows";
  }
  READYPORT_UNREACHABLE();
}

const char* stress_runtime_name(StressRuntime runtime) {
  switch (runtime) {
    case StressRuntime::kSim:
      return "sim";
    case StressRuntime::kFree:
      return "free";
  }
  READYPORT_UNREACHABLE();
}

const char* stress_trace_format_name(StressTraceFormat format) {
  switch (format) {
    case StressTraceFormat::kText:
      return "text";
    case StressTraceFormat::kChrome:
      return "chrome";
  }
  READYPORT_UNREACHABLE();
}

bool stress_strategy_parse(std::string_view text, StressStrategy* strategy_out) {
  for (StressStrategy s :
       {StressStrategy::kRandom, StressStrategy::kPct, StressStrategy::kMixed,
        StressStrategy::kDelayBounded, StressStrategy::kFair, StressStrategy::kPortfolio}) {
    if (text == stress_strategy_name(s)) {
      *strategy_out = s;
      return true;
    }
  }
  return false;
}

bool stress_runtime_parse(std::string_view text, StressRuntime* runtime_out) {
  for (StressRuntime r : {StressRuntime::kSim, StressRuntime::kFree}) {
    if (text == stress_runtime_name(r)) {
      *runtime_out = r;
      return true;
    }
  }
  return false;
}

std::string stress_faults_text(const StressOptions& options) {
  switch (options.faults) {
    case StressOptions::Faults::kDrawn:
      return "drawn";
    case StressOptions::Faults::kOff:
      return "off";
    case StressOptions::Faults::kPlan:
      return options.fault_plan;
  }
  READYPORT_UNREACHABLE();
}

Status stress_faults_set(std::string_view text, StressOptions* options) {
  if (text == "drawn") {
    options->faults = StressOptions::Faults::kDrawn;
    options->fault_plan.clear();
    return Status();
  }
  if (text == "off" || text == "none") {
    options->faults = StressOptions::Faults::kOff;
    options->fault_plan.clear();
    return Status();
  }
  // The text is checked by FaultPlan::parse and kept as given (its syntax, its errors; the run
  // parses it again).
  Result<FaultPlan> plan = FaultPlan::parse(text);
  if (!plan.ok()) {
    return plan.status();
  }
  options->faults = StressOptions::Faults::kPlan;
  options->fault_plan = std::string(text);
  return Status();
}

Result<StressOptions> stress_options_parse(int argc, const char* const* argv) {
  // CLI11 reports through exceptions; they stop here and become a Status.
  try {
    Parser parser;
    parser.app.parse(argc, argv);
    const std::string error = parser.finish();
    if (!error.empty()) {
      return bad(error);
    }
    return parser.options;
  } catch (const CLI::ParseError& error) {
    return bad(error.what());
  }
}

}  // namespace readyport
