// The header line of a trace file. See trace_header.hpp.
#include "files/trace_header.hpp"

#include <vector>

#include "cli/build_info.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

std::string stress_trace_header_line(const StressOptions& options, const FakeOptions* fake,
                                     bool cut) {
  const StressBuildInfo build = stress_build_info();
  return std::string(kStressTraceHeaderPrefix) + "format=" + std::to_string(kTraceFormat) +
         " runtime=" + stress_runtime_name(options.runtime) + " os=" + stress_os_name(options.os) +
         " commit=" + build.commit + " canary=" + (build.canary.empty() ? "none" : build.canary) +
         (fake == nullptr || options.os != StressOs::kFake
              ? std::string()
              : " fake=" + stress_fake_options_text(*fake, ',')) +
         (cut ? " end=abort" : "") + "\n";
}

Result<StressTraceHeader> stress_trace_header_parse(std::string_view text) {
  StressTraceHeader header;
  if (text.substr(0, kStressTraceHeaderPrefix.size()) != kStressTraceHeaderPrefix) {
    return header;
  }
  const std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  header.has = true;
  header.length = end == std::string_view::npos ? text.size() : end + 1;
  line.remove_prefix(kStressTraceHeaderPrefix.size());
  bool format_seen = false;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    const std::string_view field = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    const std::size_t equals = field.find('=');
    const std::string_view key = field.substr(0, equals);
    const std::string value(equals == std::string_view::npos ? std::string_view()
                                                             : field.substr(equals + 1));
    if (key == "format") {
      if (value != "1" && value != "2" && value != "3") {
        return Status(StatusCode::kInvalidArgument,
                      "trace header: format " + value + " is not one this build reads (1, 2, 3)");
      }
      header.format = static_cast<std::uint32_t>(value[0] - '0');
      format_seen = true;
    } else if (key == "runtime") {
      if (!stress_runtime_parse(value, &header.runtime)) {
        return Status(StatusCode::kInvalidArgument, "trace header: runtime '" + value + "'");
      }
    } else if (key == "os") {
      if (value == "fake") {
        header.os = StressOs::kFake;
      } else if (value == "windows") {
        header.os = StressOs::kWindows;
      } else {
        return Status(StatusCode::kInvalidArgument, "trace header: os '" + value + "'");
      }
    } else if (key == "commit") {
      header.commit = value;
    } else if (key == "canary") {
      header.canary = value;
    } else if (key == "fake") {
      header.fake = value;
    } else if (key == "end") {
      if (value != "abort") {
        return Status(StatusCode::kInvalidArgument, "trace header: end '" + value + "'");
      }
      header.cut = true;
    } else {
      return Status(StatusCode::kInvalidArgument,
                    "trace header: unknown field '" + std::string(key) + "'");
    }
  }
  if (!format_seen) {
    return Status(StatusCode::kInvalidArgument, "trace header: no format");
  }
  return header;
}

}  // namespace readyport
