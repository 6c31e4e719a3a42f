// stress/files/trace_header.hpp: the first line of a trace file says how the trace was made, so
// that --check-trace judges it as what it is, never by a flag the reader must remember:
//
//   # readyport-trace format=2 runtime=free os=fake commit=85d8eff992c9 canary=none
//       fake=key_strict=1,drop_on_disable=0,... [end=abort]
// (one line; fake= only over the fake; end=abort when the run was cut there by an assertion)
//
// format 2 records ordering calls as intervals (recording_os.hpp), 1 as points; 3 is 2's text
// under a new trace hash (of events, not text); runtime: sim
// (SimScheduler) or free (real threads); os: fake or windows (WindowsOs); fake: the seed's drawn
// FakeOptions. The oracle judges every trace the same way (its intervals say what may lag); the
// header says what the trace is. It is written by readyport-stress with the text (--trace-out, a
// failure's seed-<S>.trace); it is not part of the trace hash, which covers the lines only.
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
#include "readyport/status.hpp"

namespace readyport {

inline constexpr std::string_view kStressTraceHeaderPrefix = "# readyport-trace ";
// The trace's format: 2 since ordering calls are intervals (CHANGELOG, 0.2.0); 3 since the trace
// hash covers the recorded events' values, not their text (trace_event.hpp; the text itself is
// format 2's, so a reader reads 2 and 3 alike).
inline constexpr std::uint32_t kTraceFormat = 3;

struct StressTraceHeader {
  bool has = false;  // the text began with a header line
  StressRuntime runtime = StressRuntime::kSim;
  StressOs os = StressOs::kFake;
  std::string commit;
  std::string canary;
  std::string fake;  // the fake's options as written, or empty
  bool cut = false;  // end=abort: the run was cut there (an engine assertion)
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
