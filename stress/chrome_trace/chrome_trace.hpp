// stress/chrome_trace/chrome_trace.hpp: a recorded trace as Chrome trace-event JSON (Perfetto).
//
// Converts a readyport trace (readyport/fake/trace.hpp), line by line, into the JSON Object Format
// of the Chrome trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing open:
// one track per logical thread, seam calls as slices, faults and scheduler lines as instants.
//
//   // The whole text at once (readyport-stress --trace-out FILE --trace-format chrome):
//   std::ofstream file(path, std::ios::binary);
//   readyport::Status status = readyport::chrome_trace_write(report.trace_text, file);
//   // Or streamed, a chunk or a line at a time (no second copy of the trace is kept):
//   readyport::ChromeTraceWriter writer(file, {.clock = readyport::ChromeTraceClock::kVirtual});
//   for (...) if (Status s = writer.add_text(chunk); !s.ok()) return s;
//   return writer.finish();
//
// What each line becomes, the clocks and the input rules:
// docs/simulation.md#reading-a-trace-in-perfetto.
//
// Ownership: ChromeTraceWriter borrows `out`, which must outlive it; it keeps per-thread state
// only (no copy of the input). Threading: a writer is not synchronised: one thread at a time;
// the free functions are reentrant. Errors: Status values (a broken input rule names its line; a
// failing stream, disk full, is a kOsError from finish()); nothing throws, nothing asserts on
// input. After an error the writer refuses further input and `out` holds an incomplete document:
// write to a temporary file or a string (chrome_trace_json) and keep it only when the Status is ok.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "readyport/fake/trace_parse.hpp"
#include "readyport/status.hpp"

namespace readyport {

enum class ChromeTraceClock : std::uint8_t {
  kAuto,      // chrome_trace_write/_json only: kSequence when every time is 0, else kVirtual
  kVirtual,   // ts = time_ns / 1000
  kSequence,  // ts = seq (one line = 1 us); the times are ignored (and may all be 0)
};
// "auto", "virtual", "sequence". Never null.
const char* chrome_trace_clock_name(ChromeTraceClock clock);

struct ChromeTraceOptions {
  ChromeTraceClock clock = ChromeTraceClock::kAuto;
  std::uint64_t lines_max = 20'000'000;    // lines per document
  std::size_t line_bytes_max = 1u << 20;   // bytes per line, without its '\n'
  std::uint32_t threads_max = 4096;        // distinct T<n> per document
  std::string process_name = "readyport";  // pid 1's process_name
};

// Converts one trace to one JSON document, streamed to `out` as lines arrive.
class ChromeTraceWriter {
 public:
  // `options.clock` must be kVirtual or kSequence (asserted): a streaming writer cannot look
  // ahead to see whether every time is 0. `out` must outlive the writer. Nothing is written
  // before the first add_* or finish().
  ChromeTraceWriter(std::ostream& out, ChromeTraceOptions options);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // One line, with or without its '\n' (it must hold no other '\n').
  Status add_line(std::string_view line);
  // Any piece of the text: split at '\n'; a partial last line is kept (at most line_bytes_max
  // bytes) until the next piece or finish().
  Status add_text(std::string_view chunk);
  // Converts a pending partial line, writes the thread metadata and closes the document. Call
  // once; nothing may be added afterwards. kOsError when `out` failed at any point.
  Status finish();

  std::uint64_t line_count() const { return line_count_; }    // lines converted so far
  std::uint64_t event_count() const { return event_count_; }  // events written, metadata included

 private:
  struct ThreadTrack {
    bool has_time = false;      // time_ns is the time of the thread's last line (or its start)
    std::uint64_t time_ns = 0;  // in the clock's unit: ns, or seq for kSequence
    std::string name;           // from sched.start; empty: "T<n>"
  };

  Status fail(Status status);
  Status check_limits_and_order(const TraceEvent& line);
  Status convert_line(std::string_view text);
  Status start_thread(const TraceEvent& line, std::uint64_t now);
  Status note_thread(std::uint32_t thread);
  void write_event(const std::string& json_text);
  void begin_document();

  std::ostream& out_;
  const ChromeTraceOptions options_;
  Status error_;        // the first error; the writer refuses input after it
  bool begun_ = false;  // the document's opening was written
  bool finished_ = false;
  bool have_seq_ = false;
  std::uint64_t last_seq_ = 0;
  std::uint64_t line_count_ = 0;
  std::uint64_t event_count_ = 0;
  std::string partial_;                           // add_text's unfinished line, < line_bytes_max
  TraceEvent parsed_;                             // reused for every line
  std::map<std::uint32_t, ThreadTrack> threads_;  // ordered: the metadata's order is stable
};

// kSequence when every line's time field is 0 (or the text is empty), else kVirtual. Lines whose
// time cannot be read are skipped here (the writer reports them).
ChromeTraceClock chrome_trace_clock_detect(std::string_view text);

// Converts the whole `text` to `out` (kAuto resolved by chrome_trace_clock_detect). Errors as
// ChromeTraceWriter's; after an error `out` holds an incomplete document.
Status chrome_trace_write(std::string_view text, std::ostream& out,
                          const ChromeTraceOptions& options = {});

// The same, into a string: the document, or the error (nothing partial is returned).
Result<std::string> chrome_trace_json(std::string_view text,
                                      const ChromeTraceOptions& options = {});

}  // namespace readyport
