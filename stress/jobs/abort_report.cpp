#include "jobs/abort_report.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "files/file_io.hpp"
#include "files/trace_header.hpp"
#include "jobs/stress_shrink.hpp"
#include "jobs/sweep_supervisor.hpp"
#include "readyport/assert.hpp"
#include "runs/stress_run.hpp"

#ifdef _WIN32
#include <io.h>
#define READYPORT_WRITE_STDERR(text, size) _write(2, text, static_cast<unsigned>(size))
#else
#include <unistd.h>
#define READYPORT_WRITE_STDERR(text, size) ::write(2, text, size)
#endif

namespace readyport {
namespace {

// Each runner's note, written first (write(2) only), prepared before its seed runs.
char g_abort_notes[kStressRunnersMax][1024] = {};

// What the bundle needs; read by the handler only.
struct ArmedSeed {
  bool armed = false;
  bool bundle = false;
  StressOptions options;
  std::uint64_t seed = 0;
  std::size_t task = kStressTaskNone;
  StressBundleContext context;
};

// The sweep supervisor's channel in its child, or -1.
int g_channel_fd = -1;

// Names the aborting task to the sweep supervisor (one short line: a pipe write of it is whole),
// with the bundle the handler is about to write.
void write_channel(const ArmedSeed& armed, std::string_view violation, bool bundle_planned) {
  if (g_channel_fd < 0 || armed.task == kStressTaskNone) {
    return;
  }
  constexpr std::size_t kViolationMax = 1000;
  Json record = Json::object();
  record["type"] = "aborted";
  record["task"] = armed.task;
  record["bundle"] = bundle_planned ? armed.context.path : std::string();
  record["signature"] =
      violation.empty()
          ? std::string("abort")
          : stress_failure_signature(Status(StatusCode::kInternal, std::string(violation)));
  record["violation"] = std::string(violation.substr(0, kViolationMax));
  stress_sweep_write(g_channel_fd, record);
}

ArmedSeed& armed_seed(std::uint32_t runner) {
  READYPORT_ASSERT(runner < kStressRunnersMax);
  static ArmedSeed* armed = new ArmedSeed[kStressRunnersMax];  // never destroyed: read on abort
  return armed[runner];
}

// The binary the replay commands name: argv[0] when known.
std::string program_of(const StressBundleContext* context) {
  if (context == nullptr || context->command_line.empty()) {
    return "readyport-stress";
  }
  return context->command_line[0];
}

void write_stderr(const std::string& text) {
  (void)READYPORT_WRITE_STDERR(text.data(), text.size());
}

// The armed seed's bundle, and on real threads its whole trace beside it.
void write_abort_files(std::uint32_t runner, const ArmedSeed& armed, const std::string& violation) {
  const SeedParameters parameters = stress_parameters(armed.options, armed.seed);
  const Json bundle = stress_abort_bundle_json(armed.options, parameters, violation, armed.context);
  const Status written =
      stress_file_write(armed.context.path, bundle.dump(2) + "\n", StressWriteMode::kReplace);
  if (written.ok()) {
    write_stderr("  bundle: " + armed.context.path +
                 "\n  replay: " + bundle["replay"].get<std::string>() + "\n");
  } else {
    write_stderr("  bundle not written: " + written.message() + "\n");
  }
  // Real threads keep the whole trace: beside the bundle, to be read and judged offline.
  std::string trace;
  if (!stress_abort_trace(runner, &trace)) {
    return;
  }
  const std::string trace_path =
      std::filesystem::path(armed.context.path).replace_extension(".trace").string();
  const Status traced = stress_file_write(
      trace_path, stress_trace_header_line(armed.options, &parameters.fake, /*cut=*/true) + trace,
      StressWriteMode::kReplace);
  write_stderr(traced.ok() ? "  trace: " + trace_path + "\n"
                           : "  trace not written: " + traced.message() + "\n");
}

// The last words of the aborting thread's seed: its note, what the oracle had found, its record
// on the sweep's channel (first: the process may end before the files are written, and the
// parent then writes the bundle itself), its files.
void report_abort() {
  // The seed of the aborting thread's runner (with --jobs, other runners' seeds are running too).
  const std::uint32_t runner = stress_runner_of_thread();
  if (runner >= kStressRunnersMax) {
    return;
  }
  const char* note = g_abort_notes[runner];
  const std::size_t size = std::strlen(note);
  if (size != 0) {
    (void)READYPORT_WRITE_STDERR(note, size);
  }
  // What the oracle had found before the engine's own assertion fired, if anything (read only if
  // no thread is inside the oracle).
  const std::string violation = stress_abort_violation(runner);
  if (!violation.empty()) {
    write_stderr("  the oracle had found: " + violation + "\n");
  }
  const ArmedSeed& armed = armed_seed(runner);
  if (!armed.armed) {
    return;
  }
  write_channel(armed, violation, armed.bundle);
  if (armed.bundle) {
    write_abort_files(runner, armed, violation);
  }
}

// Handlers running now: several threads may assert at once, each for its own seed.
std::atomic<int> g_aborting{0};
// How long a handler that is done waits for the others before its return ends the process.
constexpr int kOthersWaitMs = 2000;

extern "C" void on_abort(int signal_number) {
  (void)signal_number;
  g_aborting.fetch_add(1);
  report_abort();
  g_aborting.fetch_sub(1);
  // Returning ends the process (abort() raises again): first let the other threads that abort
  // name their seeds too, so that no death goes unreported.
  for (int waited_ms = 0; waited_ms < kOthersWaitMs && g_aborting.load() > 0; ++waited_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

void stress_abort_install() { std::signal(SIGABRT, on_abort); }

void stress_abort_channel(int fd) { g_channel_fd = fd; }

void stress_abort_arm(const StressOptions& options, std::uint64_t seed,
                      const StressBundleContext* context, std::size_t task) {
  SeedReport report;
  report.parameters = stress_parameters(options, seed);
  const std::uint32_t runner = stress_runner_current();
  READYPORT_ASSERT(runner < kStressRunnersMax);
  std::snprintf(g_abort_notes[runner], sizeof(g_abort_notes[runner]),
                "\nreadyport-stress: aborted during seed %llu (%s)\n  replay: %s\n",
                static_cast<unsigned long long>(seed),
                stress_parameters_line(report.parameters).c_str(),
                stress_replay_command(options, report, program_of(context)).c_str());
  ArmedSeed& armed = armed_seed(runner);
  armed.armed = true;
  armed.options = options;
  armed.seed = seed;
  armed.task = task;
  armed.bundle = context != nullptr && !context->path.empty();
  if (context != nullptr) {
    armed.context = *context;
  }
}

}  // namespace readyport
