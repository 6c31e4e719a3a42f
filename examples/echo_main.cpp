// readyport-echo: the multithreaded echo server (examples/echo_server.hpp) as a program.
//
//   readyport-echo                          # 256 clients x 64 KiB, 4 worker threads
//   readyport-echo --clients 500 --workers 8 --bytes 4096 --mode persistent_level
//
// On Windows it runs on WindowsOs: real loopback TCP sockets and ProcessSocketNotifications
// (Windows build 20348 or later; elsewhere it says so and exits with 77, "skipped"). On other
// systems it runs the same server, the same engine and the same worker threads on FakeOs under
// FreeRuntime: real threads, virtual time, the fake's loopback. Either way, clients on the same
// engine send seeded payloads and check every byte that comes back, and the program prints a
// short report: clients, bytes echoed, notifications, port calls per notification, time.
//
// The time is the wall-clock time of the run (the only clock read outside the Os: this is a
// program, not a simulation; FakeOs itself keeps virtual time).
// Exit status: 0 when every byte was echoed and every connection closed, 1 on a failure, 2 on a
// bad argument, 77 when the real backend is unavailable.
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "echo_server.hpp"
#include "readyport/engine.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"
#include "readyport/version.hpp"

#ifdef _WIN32
#include "readyport/windows_os.hpp"
#else
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#endif

namespace readyport {
namespace {

constexpr int kExitBadArgument = 2;
#ifdef _WIN32
constexpr int kExitUnavailable = 77;  // ctest's SKIP_RETURN_CODE for the smoke test
#endif

struct Arguments {
  EchoWorkload workload;
  bool help = false;
  bool version = false;  // --version: print the version and commit, run nothing
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: readyport-echo [--clients N] [--concurrent N] [--bytes N] [--workers N]\n"
               "                      [--mode oneshot_level|persistent_level|persistent_edge]\n"
               "                      [--seed N] | --version | --help\n"
               "  --clients N     client connections in all (default 256)\n"
               "  --concurrent N  clients connected at once at most (default 64)\n"
               "  --bytes N       bytes each client sends and expects back (default 65536)\n"
               "  --workers N     worker threads calling Engine::run_worker (default 4; 0: the\n"
               "                  main thread polls)\n"
               "  --mode M        the connections' trigger mode (default oneshot_level)\n"
               "  --seed N        payload bytes and chunk sizes (default 1)\n");
}

bool parse_u32(std::string_view text, std::uint32_t min, std::uint32_t max, std::uint32_t* out) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return false;
  }
  *out = value;
  return true;
}

bool parse_mode(std::string_view text, Mode* mode_out) {
  for (const Mode mode : {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge}) {
    if (text == mode_name(mode)) {
      *mode_out = mode;
      return true;
    }
  }
  return false;  // oneshot_edge is refused by the echo server (echo_server.hpp)
}

// Parses argv into `args_out`; prints the problem and returns false on a bad argument.
bool parse_arguments(int argc, char** argv, Arguments* args_out) {
  EchoWorkload& w = args_out->workload;
  w.clients = 256;
  w.clients_concurrent = 64;
  w.bytes_per_client = 64 * 1024;
  w.workers = 4;
  w.seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      args_out->help = true;
      return true;
    }
    if (flag == "--version") {
      args_out->version = true;
      return true;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "readyport-echo: %s needs a value (or unknown argument)\n", argv[i]);
      return false;
    }
    const std::string_view value = argv[++i];
    std::uint32_t seed = 0;
    bool ok = false;
    if (flag == "--clients") {
      ok = parse_u32(value, 1, 100'000, &w.clients);
    } else if (flag == "--concurrent") {
      ok = parse_u32(value, 1, 4096, &w.clients_concurrent);
    } else if (flag == "--bytes") {
      ok = parse_u32(value, 1, 64u << 20, &w.bytes_per_client);
    } else if (flag == "--workers") {
      ok = parse_u32(value, 0, 64, &w.workers);
    } else if (flag == "--mode") {
      ok = parse_mode(value, &w.mode);
    } else if (flag == "--seed") {
      ok = parse_u32(value, 0, 0xFFFFFFFF, &seed);
      w.seed = seed;
    } else {
      std::fprintf(stderr, "readyport-echo: unknown argument %s\n", argv[i - 1]);
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "readyport-echo: bad value '%s' for %s\n", argv[i], argv[i - 1]);
      return false;
    }
  }
  return true;
}

void print_report(const char* backend, const EchoWorkload& w, const EchoResult& result,
                  double seconds) {
  const EchoCounts& c = result.counts;
  const double calls_per_notification =
      c.engine.notifications == 0
          ? 0.0
          : static_cast<double>(c.engine.port_calls) / static_cast<double>(c.engine.notifications);
  std::printf("readyport-echo %s (commit %s): the echo server on %s\n", version_string(),
              version_commit(), backend);
  std::printf("  workers        %u thread(s), mode %s\n", w.workers, mode_name(w.mode));
  std::printf("  clients        %u echoed, %u failed (%u at once at most)\n", c.clients_done,
              c.clients_failed, w.clients_concurrent);
  std::printf("  bytes echoed   %llu (%u per client)\n",
              static_cast<unsigned long long>(c.server.bytes_echoed), w.bytes_per_client);
  std::printf("  notifications  %llu handler calls\n",
              static_cast<unsigned long long>(c.engine.notifications));
  std::printf("  port calls     %llu: %.3f per notification\n",
              static_cast<unsigned long long>(c.engine.port_calls), calls_per_notification);
  std::printf("  time           %.3f s\n", seconds);
  std::printf("  result         %s\n",
              result.status.ok() ? "ok" : result.status.to_string().c_str());
}

// Runs the workload on `os` (engine started here, stopped by run_echo_workload) and reports.
int run_on(Os& os, const char* backend, const EchoWorkload& w) {
  Engine engine(os, echo_engine_options(w));
  if (Status started = engine.start(); !started.ok()) {
    std::fprintf(stderr, "readyport-echo: %s\n", started.to_string().c_str());
    return 1;
  }
  const auto begin = std::chrono::steady_clock::now();
  const EchoResult result = run_echo_workload(os, engine, w);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - begin;
  print_report(backend, w, result, elapsed.count());
  return result.status.ok() ? 0 : 1;
}

int run(int argc, char** argv) {
  Arguments args;
  if (!parse_arguments(argc, argv, &args)) {
    print_usage(stderr);
    return kExitBadArgument;
  }
  if (args.help) {
    print_usage(stdout);
    return 0;
  }
  if (args.version) {
    std::printf("readyport-echo %s (commit %s)\n", version_string(), version_commit());
    return 0;
  }
#ifdef _WIN32
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
  if (!made.ok()) {
    std::fprintf(stderr, "readyport-echo: %s\n", made.status().to_string().c_str());
    return made.status().code() == StatusCode::kUnavailable ? kExitUnavailable : 1;
  }
  std::unique_ptr<WindowsOs> os = std::move(made).value();
  return run_on(*os, "WindowsOs (loopback TCP, ProcessSocketNotifications)", args.workload);
#else
  FreeRuntime runtime;  // must outlive the FakeOs and every worker thread
  FakeOs os(FakeOptions{}, runtime);
  int exit_code = 0;
  // This thread takes part: virtual time moves only when it and every worker wait.
  runtime.run([&] {
    exit_code = run_on(os, "FakeOs (FreeRuntime: real threads, virtual time)", args.workload);
  });
  return exit_code;
#endif
}

}  // namespace
}  // namespace readyport

int main(int argc, char** argv) { return readyport::run(argc, argv); }
