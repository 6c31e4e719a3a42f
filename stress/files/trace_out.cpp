#include "files/trace_out.hpp"

#include "chrome_trace.hpp"
#include "files/file_io.hpp"
#include "files/trace_header.hpp"

namespace readyport {

Status stress_trace_write(const std::string& path, StressTraceFormat format, std::string_view text,
                          const StressOptions& recorded_under, const FakeOptions* fake) {
  switch (format) {
    case StressTraceFormat::kText:
      return stress_file_write(path,
                               stress_trace_header_line(recorded_under, fake) + std::string(text),
                               StressWriteMode::kReplace);
    case StressTraceFormat::kChrome: {
      // The whole document first: a malformed line leaves no half-written file behind.
      Result<std::string> json = chrome_trace_json(text);
      if (!json.ok()) {
        return Status(json.status().code(),
                      "'" + path + "': the trace does not convert: " + json.status().message());
      }
      return stress_file_write(path, json.value(), StressWriteMode::kReplace);
    }
  }
  READYPORT_UNREACHABLE();
}

}  // namespace readyport
