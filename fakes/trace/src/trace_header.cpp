// The header line of a trace file. See trace_header.hpp.
#include "readyport/fake/trace_header.hpp"

namespace readyport {

std::string trace_header_line(const TraceHeader& header) {
  return std::string(kTraceHeaderPrefix) + "format=" + std::to_string(header.format) +
         " runtime=" + header.runtime + " os=" + header.os + " commit=" + header.commit +
         " canary=" + (header.canary.empty() ? "none" : header.canary) +
         (header.embedder ? " world=embedder" : "") +
         (header.fake.empty() ? std::string() : " fake=" + header.fake) +
         (header.cut ? " end=abort" : "") + "\n";
}

namespace {

// One `key=value` field of the header into `header`.
Status read_field(std::string_view key, const std::string& value, TraceHeader& header,
                  bool& format_seen) {
  if (key == "format") {
    if (value != "1" && value != "2" && value != "3") {
      return Status(StatusCode::kInvalidArgument,
                    "trace header: format " + value + " is not one this build reads (1, 2, 3)");
    }
    header.format = static_cast<std::uint32_t>(value[0] - '0');
    format_seen = true;
  } else if (key == "runtime") {
    if (value != "sim" && value != "free") {
      return Status(StatusCode::kInvalidArgument, "trace header: runtime '" + value + "'");
    }
    header.runtime = value;
  } else if (key == "os") {
    if (value != "fake" && value != "windows") {
      return Status(StatusCode::kInvalidArgument, "trace header: os '" + value + "'");
    }
    header.os = value;
  } else if (key == "commit") {
    header.commit = value;
  } else if (key == "canary") {
    header.canary = value == "none" ? "" : value;
  } else if (key == "world") {
    if (value != "embedder") {
      return Status(StatusCode::kInvalidArgument, "trace header: world '" + value + "'");
    }
    header.embedder = true;
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
  return Status();
}

}  // namespace

Result<TraceHeader> trace_header_parse(std::string_view text) {
  TraceHeader header;
  header.format = 0;
  if (text.substr(0, kTraceHeaderPrefix.size()) != kTraceHeaderPrefix) {
    return header;
  }
  const std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  header.has = true;
  header.length = end == std::string_view::npos ? text.size() : end + 1;
  line.remove_prefix(kTraceHeaderPrefix.size());
  bool format_seen = false;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    const std::string_view field = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    const std::size_t equals = field.find('=');
    const std::string_view key = field.substr(0, equals);
    const std::string value(equals == std::string_view::npos ? std::string_view()
                                                             : field.substr(equals + 1));
    if (Status status = read_field(key, value, header, format_seen); !status.ok()) {
      return status;
    }
  }
  if (!format_seen) {
    return Status(StatusCode::kInvalidArgument, "trace header: no format");
  }
  return header;
}

}  // namespace readyport
