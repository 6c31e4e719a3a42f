// The header line of a trace file, from and to the stress driver's options: the kit's format
// (readyport/fake/trace_header.hpp). See trace_header.hpp.
#include "files/trace_header.hpp"

#include "cli/build_info.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

std::string stress_trace_header_line(const StressOptions& options, const FakeOptions* fake,
                                     bool cut) {
  const StressBuildInfo build = stress_build_info();
  TraceHeader header;
  header.runtime = stress_runtime_name(options.runtime);
  header.os = stress_os_name(options.os);
  header.commit = build.commit;
  header.canary = build.canary;
  if (fake != nullptr && options.os == StressOs::kFake) {
    header.fake = stress_fake_options_text(*fake, ',');
  }
  header.cut = cut;
  return trace_header_line(header);
}

Result<StressTraceHeader> stress_trace_header_parse(std::string_view text) {
  Result<TraceHeader> read = trace_header_parse(text);
  if (!read.ok()) {
    return read.status();
  }
  const TraceHeader& kit = read.value();
  StressTraceHeader header;
  header.has = kit.has;
  if (!kit.has) {
    return header;
  }
  if (!stress_runtime_parse(kit.runtime, &header.runtime)) {
    return Status(StatusCode::kInvalidArgument, "trace header: runtime '" + kit.runtime + "'");
  }
  header.os = kit.os == "windows" ? StressOs::kWindows : StressOs::kFake;
  header.commit = kit.commit;
  header.canary = kit.canary.empty() ? "none" : kit.canary;
  header.fake = kit.fake;
  header.cut = kit.cut;
  header.embedder = kit.embedder;
  header.format = kit.format;
  header.length = kit.length;
  return header;
}

}  // namespace readyport
