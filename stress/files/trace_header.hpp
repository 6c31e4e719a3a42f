// stress/files/trace_header.hpp: the header line of a trace file (readyport/fake/trace_header.hpp,
// the kit's format, which the harness's bundles write too) from the stress driver's options, and
// read back into them, so that --check-trace judges a trace as what it is:
//
//   # readyport-trace format=2 runtime=free os=fake commit=85d8eff992c9 canary=none
//       fake=key_strict=1,drop_on_disable=0,... [end=abort]
//
// It is written by readyport-stress with the text (--trace-out, a failure's seed-<S>.trace).
//
//   std::string text = stress_trace_header_line(options, &parameters.fake) + report.trace_text;
//   Result<StressTraceHeader> header = stress_trace_header_parse(text);   // has == false: none
//
// Ownership: values. Threading: reentrant. Errors: a header line that does not parse is
// kInvalidArgument naming the field.
#pragma once

#include <string>
#include <string_view>

#include "cli/stress_options.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/trace_header.hpp"
#include "readyport/status.hpp"

namespace readyport {

inline constexpr std::string_view kStressTraceHeaderPrefix = kTraceHeaderPrefix;

struct StressTraceHeader {
  bool has = false;  // the text began with a header line
  StressRuntime runtime = StressRuntime::kSim;
  StressOs os = StressOs::kFake;
  std::string commit;
  std::string canary;
  std::string fake;       // the fake's options as written, or empty
  bool cut = false;       // end=abort: the run was cut there (an engine assertion)
  bool embedder = false;  // world=embedder: an embedder's scenario under the harness
  std::uint32_t format = 0;
  std::size_t length = 0;  // the header line's bytes, '\n' included: the trace starts after them
};

// The header line of a trace recorded under `options` by this build, '\n' included; `fake` the
// seed's fake options (null: none, e.g. --os windows); `cut`: the run ended in an abort there.
std::string stress_trace_header_line(const StressOptions& options, const FakeOptions* fake,
                                     bool cut = false);
// The header at the start of `text`, if any.
Result<StressTraceHeader> stress_trace_header_parse(std::string_view text);
// Whether a trace with this header comes from real threads.
inline bool stress_trace_header_real_threads(const StressTraceHeader& header) {
  return header.runtime == StressRuntime::kFree || header.os == StressOs::kWindows;
}

}  // namespace readyport
