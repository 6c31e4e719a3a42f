// The harness's failure report and bundle. See harness_report.hpp.
#include "harness_report.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "readyport/fake/trace_header.hpp"
#include "readyport/version.hpp"
#if defined(__linux__)
#include <unistd.h>
#endif

namespace readyport::harness_internal {
namespace {

// `text` as a JSON string, quotes included.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A shell word: as is when it needs no quotes, else in single quotes.
std::string shell_word(std::string_view text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-./:=@#,+%") == std::string_view::npos) {
    return std::string(text);
  }
  std::string out = "'";
  for (const char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

std::string plan_text(const FaultPlan& plan) {
  return plan.active_count() == 0 ? "none" : plan.to_string();
}

// The seq at the start of a trace line, or 0.
std::uint64_t line_seq(std::string_view line) {
  std::uint64_t seq = 0;
  for (const char c : line) {
    if (c < '0' || c > '9') {
      break;
    }
    seq = seq * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return seq;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

std::string case_json(const HarnessCase& run_case) {
  return std::string("{\"seed\": ") + std::to_string(run_case.seed) +
         ", \"strategy\": " + json_string(sim_strategy_name(run_case.strategy)) +
         ", \"depth\": " + std::to_string(run_case.depth) +
         ", \"fault_plan\": " + json_string(plan_text(run_case.plan)) +
         ", \"faults_at_start\": " + (run_case.faults_at_start ? "true" : "false") +
         ", \"faults_at_stop\": " + (run_case.faults_at_stop ? "true" : "false") + "}";
}

std::string shrunk_json(const HarnessOptions& options, const Shrunk& shrunk) {
  if (!shrunk.done) {
    return "null";
  }
  return "{\"case\": " + case_json(shrunk.minimal) +
         ", \"trace_hash\": " + json_string(shrunk.minimal_seed.trace_hash) +
         ", \"faults_fired\": " + std::to_string(shrunk.minimal_seed.faults_fired) +
         ", \"runs\": " + std::to_string(shrunk.outcome.runs) +
         ", \"one_minimal\": " + (shrunk.outcome.one_minimal ? "true" : "false") +
         ", \"replay\": " +
         json_string(replay_command(options, shrunk.minimal, shrunk.minimal_seed.trace_hash)) + "}";
}

}  // namespace

std::string case_text(const HarnessCase& run_case) {
  return "seed=" + std::to_string(run_case.seed) +
         " strategy=" + sim_strategy_name(run_case.strategy) +
         " depth=" + std::to_string(run_case.depth) + " faults=" + plan_text(run_case.plan) +
         " faults_at_start=" + (run_case.faults_at_start ? "1" : "0") +
         " faults_at_stop=" + (run_case.faults_at_stop ? "1" : "0");
}

std::string replay_command(const HarnessOptions& options, const HarnessCase& run_case,
                           const std::string& trace_hash) {
  std::string command =
      "READYPORT_TEST_SEED=" + std::to_string(run_case.seed) +
      " READYPORT_TEST_SEEDS=1 READYPORT_TEST_STRATEGY=" + sim_strategy_name(run_case.strategy) +
      " READYPORT_TEST_DEPTH=" + std::to_string(run_case.depth) +
      " READYPORT_TEST_FAULTS=" + shell_word(plan_text(run_case.plan));
  if (options.steps_max != HarnessOptions{}.steps_max) {
    command += " READYPORT_TEST_STEPS_MAX=" + std::to_string(options.steps_max);
  }
  if (!trace_hash.empty()) {
    command += " READYPORT_TEST_EXPECT_HASH=" + trace_hash;
  }
  command += " READYPORT_TEST_SHRINK=0";  // printed with the shrunk case already
  const std::string binary = options.binary.empty() ? executable_path() : options.binary;
  command += ' ';  // appended: g++ 12 -O3 warns -Wrestrict on " " + ... (GCC bug 105651)
  command += shell_word(binary.empty() ? "<your test binary>" : binary);
  if (!options.test_name.empty()) {
    command += " --gtest_filter=";
    command += shell_word(options.test_name);
  }
  return command;
}

std::uint64_t violation_line(const Status& status) {
  const std::string& message = status.message();
  const std::size_t at = message.find(" at line ");
  if (at == std::string::npos || at > 8) {
    return 0;
  }
  return line_seq(std::string_view(message).substr(at + 9));
}

std::vector<std::string> trace_window(std::string_view text, std::uint64_t seq,
                                      std::uint32_t before, std::uint32_t after) {
  const std::vector<std::string_view> lines = split_lines(text);
  std::size_t at = lines.size();
  for (std::size_t i = 0; seq != 0 && i < lines.size(); ++i) {
    if (line_seq(lines[i]) == seq) {
      at = i;
      break;
    }
  }
  std::size_t first = 0;
  std::size_t end = lines.size();
  if (at == lines.size()) {
    first = lines.size() > before + after ? lines.size() - before - after : 0;
  } else {
    first = at > before ? at - before : 0;
    end = std::min(lines.size(), at + after + 1);
  }
  std::vector<std::string> window;
  for (std::size_t i = first; i < end; ++i) {
    window.emplace_back((i == at ? ">> " : "   ") + std::string(lines[i]));
  }
  return window;
}

std::uint64_t first_difference(std::string_view a, std::string_view b, std::string* line_a_out,
                               std::string* line_b_out) {
  const std::vector<std::string_view> lines_a = split_lines(a);
  const std::vector<std::string_view> lines_b = split_lines(b);
  const std::size_t count = std::max(lines_a.size(), lines_b.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view one = i < lines_a.size() ? lines_a[i] : std::string_view();
    const std::string_view two = i < lines_b.size() ? lines_b[i] : std::string_view();
    if (one != two) {
      *line_a_out = std::string(one);
      *line_b_out = std::string(two);
      return i + 1;
    }
  }
  return 0;
}

Result<std::string> write_bundle(const HarnessOptions& options, const HarnessSeed& seed,
                                 std::optional<std::string_view> trace_text,
                                 const std::vector<std::string>& window, const Shrunk& shrunk) {
  const std::filesystem::path dir = std::filesystem::path(options.bundle_dir) /
                                    (options.test_name.empty() ? "harness" : options.test_name);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return Status(StatusCode::kInvalidArgument,
                  "cannot create '" + dir.string() + "': " + error.message());
  }
  const std::string stem = "seed-" + std::to_string(seed.run_case.seed);
  const Status trace =
      trace_text.has_value()
          ? write_trace_file(options, (dir / (stem + ".trace")).string(), *trace_text)
          : Status();
  std::string tail = "[";
  for (std::size_t i = 0; i < window.size(); ++i) {
    tail += (i == 0 ? "" : ", ") + json_string(window[i]);
  }
  tail += "]";
  const std::string json =
      "{\n  \"format\": \"readyport-harness-bundle\",\n  \"format_version\": 1,\n"
      "  \"readyport\": {\"version\": " +
      json_string(version_string()) + ", \"commit\": " + json_string(version_commit()) + "},\n" +
      "  \"origin\": \"harness\",\n  \"test\": " + json_string(options.test_name) + ",\n" +
      "  \"runtime\": " + json_string(harness_runtime_name(options.runtime)) + ",\n" +
      "  \"seed\": " + std::to_string(seed.run_case.seed) +
      ",\n  \"case\": " + case_json(seed.run_case) +
      ",\n  \"failure\": {\"status\": " + json_string(status_code_name(seed.status.code())) +
      ", \"message\": " + json_string(seed.status.message()) +
      ", \"signature\": " + json_string(seed.signature) +
      "},\n  \"trace\": {\"hash\": " + json_string(seed.trace_hash) +
      ", \"lines\": " + std::to_string(seed.trace_lines) +
      ", \"file\": " + (trace_text.has_value() ? json_string(stem + ".trace") : "null") +
      ", \"cut\": " + (trace_text.has_value() ? "false" : "true") + ", \"tail\": " + tail + "},\n" +
      "  \"fired_hits\": " + json_string(seed.fired_hits) +
      ",\n  \"replay\": " + json_string(replay_command(options, seed.run_case, seed.trace_hash)) +
      ",\n  \"shrunk\": " + shrunk_json(options, shrunk) + "\n}\n";
  const std::filesystem::path path = dir / (stem + ".json");
  std::ofstream file(path, std::ios::binary);
  file << json;
  if (!file || !trace.ok()) {
    return Status(StatusCode::kInvalidArgument, "cannot write the bundle '" + path.string() + "'");
  }
  return path.string();
}

Status write_trace_file(const HarnessOptions& options, const std::string& path,
                        std::string_view trace_text) {
  TraceHeader header;
  header.runtime = options.runtime == HarnessRuntime::kFree ? "free" : "sim";
  header.os = options.runtime == HarnessRuntime::kWindows ? "windows" : "fake";
  header.commit = version_commit();
  header.embedder = true;
  std::ofstream trace(path, std::ios::binary);
  trace << trace_header_line(header) << trace_text;
  return trace ? Status()
               : Status(StatusCode::kInvalidArgument, "cannot write the trace '" + path + "'");
}

std::string executable_path() {
#if defined(__linux__)
  char buffer[4096];
  const ssize_t size = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (size > 0) {
    return std::string(buffer, static_cast<std::size_t>(size));
  }
#endif
  return std::string();
}

}  // namespace readyport::harness_internal
