// readyport/fake/trace_header.hpp: the first line of a trace file says how the trace was made, so
// that a reader (readyport-stress --check-trace) judges it as what it is, never by a flag the
// reader must remember:
//
//   # readyport-trace format=3 runtime=free os=fake commit=85d8eff992c9 canary=none
//       [world=embedder] fake=key_strict=1,drop_on_disable=0,... [end=abort]
// (one line; fake= only over the fake; world=embedder for an embedder's scenario under the harness,
// whose trace the EmbedderOracle judges too; end=abort when the run was cut there by an assertion)
//
// format 2 records ordering calls as intervals (recording_os.hpp), 1 as points; 3 is 2's text
// under a new trace hash (of events, not text); runtime: sim (SimScheduler) or free (real
// threads); os: fake or windows (WindowsOs). The header is not part of the trace hash, which
// covers the lines only. Both writers of trace files (the stress driver's files, the harness's
// bundles) write it with trace_header_line; the readers read it with trace_header_parse.
//
//   std::string text = trace_header_line(header) + trace.text();
//   Result<TraceHeader> read = trace_header_parse(text);   // has == false: no header
//
// Ownership: values. Threading: reentrant. Errors: a header line that does not parse is
// kInvalidArgument naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "readyport/status.hpp"

namespace readyport {

inline constexpr std::string_view kTraceHeaderPrefix = "# readyport-trace ";
// The trace's format: 2 since ordering calls are intervals; 3 since the trace hash covers the
// recorded events' values, not their text (a reader reads 2 and 3 alike).
inline constexpr std::uint32_t kTraceFormat = 3;

struct TraceHeader {
  bool has = false;  // the text began with a header line (parse)
  std::uint32_t format = kTraceFormat;
  std::string runtime = "sim";  // "sim" or "free"
  std::string os = "fake";      // "fake" or "windows"
  std::string commit;
  std::string canary;      // "" written as "none"
  bool embedder = false;   // world=embedder
  std::string fake;        // the fake's options as written, or empty
  bool cut = false;        // end=abort
  std::size_t length = 0;  // parse: the header line's bytes, '\n' included
};

// The header line, '\n' included.
std::string trace_header_line(const TraceHeader& header);
// The header at the start of `text`, if any (has == false when there is none).
Result<TraceHeader> trace_header_parse(std::string_view text);
// Whether a trace with this header comes from real threads.
inline bool trace_header_real_threads(const TraceHeader& header) {
  return header.runtime == "free" || header.os == "windows";
}

}  // namespace readyport
