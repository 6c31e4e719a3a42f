// A recorded trace as Chrome trace-event JSON (chrome_trace.hpp).
#include "chrome_trace.hpp"

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {
namespace {

using Json = nlohmann::ordered_json;  // keys in insertion order: name, cat, ph, ts, ... args

// What a trace line becomes (docs/simulation.md#reading-a-trace-in-perfetto).
enum class LineKind : std::uint8_t {
  kCall,       // a seam call, recorded when it returned: a complete slice
  kCallBegin,  // psn.begin, recorded before its call: an instant in "call"
  kFault,      // fault <site> ...: an instant in "fault"
  kSched,      // sched.*: an instant in "sched"
  kOther,      // wl.*, hnd.*, obs.*, phase, anything else: an instant in "other"
};

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// True for `<letters><digits>.<suffix>` such as m12.lock or th3.join.
bool is_numbered_call(std::string_view name, std::string_view letters, std::string_view suffix) {
  if (!starts_with(name, letters) || name.size() <= letters.size() + suffix.size() + 1) {
    return false;
  }
  const std::string_view number =
      name.substr(letters.size(), name.size() - letters.size() - suffix.size() - 1);
  if (name.substr(name.size() - suffix.size() - 1) != "." + std::string(suffix)) {
    return false;
  }
  for (const char c : number) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

LineKind classify(const TraceEvent& line) {
  const std::string_view name = line.name;
  // Prefixes first: the workload's lines may carry ` -> ` too (`wl.add s=256 -> ok id=0/1`) and
  // are still not seam calls.
  if (starts_with(name, "sched.")) {
    return LineKind::kSched;
  }
  if (name == "fault") {
    return LineKind::kFault;
  }
  if (starts_with(name, "wl.") || starts_with(name, "hnd.") || starts_with(name, "obs.") ||
      name == "phase") {
    return LineKind::kOther;
  }
  if (name == "psn.begin") {
    return LineKind::kCallBegin;
  }
  if (line.has_result) {
    return LineKind::kCall;
  }
  // RecordingOs's calls without a result (recording_os.hpp's list).
  if (name == "sleep_ms" || is_numbered_call(name, "m", "lock") ||
      is_numbered_call(name, "m", "unlock") || is_numbered_call(name, "th", "join")) {
    return LineKind::kCall;
  }
  return LineKind::kOther;
}

const char* category(LineKind kind) {
  switch (kind) {
    case LineKind::kCall:       // a slice
    case LineKind::kCallBegin:  // the instant before a PSN's slice
      return "call";
    case LineKind::kFault:
      return "fault";
    case LineKind::kSched:
      return "sched";
    case LineKind::kOther:
      return "other";
  }
  READYPORT_UNREACHABLE();
}

// The offset of the first byte that is not part of valid UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF are invalid), or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1Fu;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0Fu;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07u;
    } else {
      return i;  // a continuation byte or 0xF8..0xFF where a character must start
    }
    if (text.size() - i < length) {
      return i;
    }
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) {
        return i;
      }
      code_point = (code_point << 6) | (next & 0x3Fu);
    }
    const std::uint32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (code_point < smallest || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// A short, printable quote of a bad line for an error message.
std::string quote(std::string_view line) {
  constexpr std::size_t kQuoteMax = 120;
  std::string quoted = "'";
  for (std::size_t i = 0; i < line.size() && i < kQuoteMax; ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    quoted += c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?';
  }
  quoted += line.size() > kQuoteMax ? "...'" : "'";
  return quoted;
}

std::string thread_label(std::uint32_t thread) { return "T" + std::to_string(thread); }

// Never throws: every string was checked to be UTF-8, and `replace` covers the options' own
// strings (process_name) that were not.
std::string dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char* clock_note(ChromeTraceClock clock) {
  return clock == ChromeTraceClock::kSequence
             ? "ts is the line's seq number in microseconds (one line = 1 us): the trace's times "
               "were all 0 (a real-thread trace) or the caller chose the sequence clock"
             : "ts is the virtual clock (time_ns / 1000); a call's slice runs from its thread's "
               "previous line to the call's return";
}

}  // namespace

const char* chrome_trace_clock_name(ChromeTraceClock clock) {
  switch (clock) {
    case ChromeTraceClock::kAuto:
      return "auto";
    case ChromeTraceClock::kVirtual:
      return "virtual";
    case ChromeTraceClock::kSequence:
      return "sequence";
  }
  return "unknown";  // a value cast from outside the enum: named, not asserted
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, ChromeTraceOptions options)
    : out_(out), options_(std::move(options)) {
  READYPORT_ASSERT(options_.clock == ChromeTraceClock::kVirtual ||
                   options_.clock == ChromeTraceClock::kSequence);
  READYPORT_ASSERT(options_.line_bytes_max > 0 && options_.lines_max > 0 &&
                   options_.threads_max > 0);
}

Status ChromeTraceWriter::fail(Status status) {
  READYPORT_ASSERT(!status.ok());
  error_ = status;
  return status;
}

void ChromeTraceWriter::begin_document() {
  if (begun_) {
    return;
  }
  begun_ = true;
  out_ << "{\"traceEvents\":[";
}

void ChromeTraceWriter::write_event(const std::string& json_text) {
  begin_document();
  out_ << (event_count_ == 0 ? "\n" : ",\n") << json_text;
  event_count_ += 1;
}

Status ChromeTraceWriter::note_thread(std::uint32_t thread) {
  if (threads_.count(thread) != 0) {
    return Status();
  }
  if (threads_.size() >= options_.threads_max) {
    return Status(StatusCode::kResourceExhausted, "more than " +
                                                      std::to_string(options_.threads_max) +
                                                      " threads (at " + thread_label(thread) + ")");
  }
  threads_.emplace(thread, ThreadTrack{});
  return Status();
}

Status ChromeTraceWriter::check_limits_and_order(const TraceEvent& line) {
  if (have_seq_ && line.seq <= last_seq_) {
    return Status(StatusCode::kInvalidArgument,
                  "seq " + std::to_string(line.seq) + " does not follow seq " +
                      std::to_string(last_seq_) + " (one run's trace per document)");
  }
  if (Status status = note_thread(line.thread); !status.ok()) {
    return status;
  }
  const ThreadTrack& track = threads_.at(line.thread);
  if (options_.clock == ChromeTraceClock::kVirtual && track.has_time &&
      line.time_ns < track.time_ns) {
    return Status(StatusCode::kInvalidArgument,
                  thread_label(line.thread) + "'s time " + std::to_string(line.time_ns) +
                      " is before its previous time " + std::to_string(track.time_ns));
  }
  return Status();
}

Status ChromeTraceWriter::add_line(std::string_view text) {
  READYPORT_ASSERT(!finished_);
  if (!error_.ok()) {
    return error_;
  }
  const std::uint64_t number = line_count_ + 1;  // 1-based, for messages
  const std::string where = "line " + std::to_string(number) + ": ";
  if (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  if (!text.empty() && text.back() == '\r') {
    text.remove_suffix(1);
  }
  if (line_count_ >= options_.lines_max) {
    return fail(Status(StatusCode::kResourceExhausted,
                       where + "more than " + std::to_string(options_.lines_max) + " lines"));
  }
  if (text.size() > options_.line_bytes_max) {
    return fail(Status(StatusCode::kResourceExhausted,
                       where + std::to_string(text.size()) + " bytes, more than the limit of " +
                           std::to_string(options_.line_bytes_max) + " " + quote(text)));
  }
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    return fail(Status(StatusCode::kInvalidArgument,
                       where + "not UTF-8 at byte " + std::to_string(bad + 1) + " " + quote(text)));
  }
  if (Status status = parse_trace_line(text, &parsed_); !status.ok()) {
    return fail(
        Status(StatusCode::kInvalidArgument, where + status.message() + " in " + quote(text)));
  }
  if (Status status = check_limits_and_order(parsed_); !status.ok()) {
    return fail(Status(status.code(), where + status.message() + " in " + quote(text)));
  }
  if (!out_) {
    return fail(Status(StatusCode::kOsError, where + "the output stream failed"));
  }
  if (Status status = convert_line(text); !status.ok()) {
    return fail(Status(status.code(), where + status.message() + " in " + quote(text)));
  }
  have_seq_ = true;
  last_seq_ = parsed_.seq;
  line_count_ += 1;
  return Status();
}

// Writes the event of the line in parsed_ (checked by check_limits_and_order) and updates its
// thread's track; a sched.start also names and starts the new thread's track.
Status ChromeTraceWriter::convert_line(std::string_view text) {
  const TraceEvent& line = parsed_;
  const bool sequence = options_.clock == ChromeTraceClock::kSequence;
  const std::uint64_t now = sequence ? line.seq : line.time_ns;  // ns, or lines
  const double unit_us = sequence ? 1.0 : 1000.0;                // clock units per ts unit
  ThreadTrack& track = threads_.at(line.thread);
  const LineKind kind = classify(line);

  Json event;
  event["name"] = kind == LineKind::kFault && !line.words.empty()
                      ? "fault " + std::string(line.words.front().text)
                      : std::string(line.name);
  event["cat"] = category(kind);
  if (kind == LineKind::kCall) {
    // The slice ends at the return and starts at the thread's previous line (see the header).
    const std::uint64_t start = track.has_time ? track.time_ns : now;
    event["ph"] = "X";
    event["ts"] = static_cast<double>(start) / unit_us;
    event["dur"] = static_cast<double>(now - start) / unit_us;
  } else {
    event["ph"] = "i";
    event["s"] = "t";
    event["ts"] = static_cast<double>(now) / unit_us;
  }
  event["pid"] = 1;
  event["tid"] = line.thread;
  event["args"] = Json::object({{"line", std::string(text)}});
  write_event(dump(event));
  track.has_time = true;
  track.time_ns = now;

  if (line.name == "sched.start") {
    return start_thread(line, now);
  }
  return Status();
}

// `sched.start T<n> name=<name>`: thread n exists from now, under that name.
Status ChromeTraceWriter::start_thread(const TraceEvent& line, std::uint64_t now) {
  std::uint64_t started = 0;
  // A parsed line: every value is text.
  const std::string_view first = line.words.empty() ? std::string_view() : line.words.front().text;
  if (first.size() < 2 || first[0] != 'T' || !parse_trace_u64(first.substr(1), &started) ||
      started > std::numeric_limits<std::uint32_t>::max()) {
    return Status(StatusCode::kInvalidArgument, "sched.start names no T<thread>");
  }
  const auto thread = static_cast<std::uint32_t>(started);
  if (Status status = note_thread(thread); !status.ok()) {
    return status;
  }
  ThreadTrack& track = threads_.at(thread);
  const TraceValue* name = line.find("name");
  if (track.name.empty() && name != nullptr) {
    track.name = std::string(name->text);
  }
  if (!track.has_time) {
    track.has_time = true;
    track.time_ns = now;
  }
  return Status();
}

Status ChromeTraceWriter::add_text(std::string_view chunk) {
  READYPORT_ASSERT(!finished_);
  if (!error_.ok()) {
    return error_;
  }
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, newline);
    // A line may end in "\r\n": one byte more than line_bytes_max before it is stripped.
    if (partial_.size() + piece.size() > options_.line_bytes_max + 1) {
      return fail(Status(StatusCode::kResourceExhausted,
                         "line " + std::to_string(line_count_ + 1) + ": more than " +
                             std::to_string(options_.line_bytes_max) + " bytes " +
                             quote(partial_.empty() ? piece : std::string_view(partial_))));
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return Status();
    }
    Status status;
    if (partial_.empty()) {
      status = add_line(piece);
    } else {
      partial_.append(piece);
      status = add_line(partial_);
      partial_.clear();
    }
    if (!status.ok()) {
      return status;
    }
    chunk.remove_prefix(newline + 1);
  }
  return Status();
}

Status ChromeTraceWriter::finish() {
  READYPORT_ASSERT(!finished_);
  if (!error_.ok()) {
    return error_;
  }
  if (!partial_.empty()) {
    const std::string last = std::move(partial_);
    partial_.clear();
    if (Status status = add_line(last); !status.ok()) {
      return status;
    }
  }
  finished_ = true;
  write_event(dump(Json{{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", 1},
                        {"args", Json{{"name", options_.process_name}}}}));
  for (const auto& [thread, track] : threads_) {
    const std::string label =
        track.name.empty() ? thread_label(thread) : thread_label(thread) + " " + track.name;
    write_event(dump(Json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", thread},
                          {"args", Json{{"name", label}}}}));
    write_event(dump(Json{{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", thread},
                          {"args", Json{{"sort_index", thread}}}}));
  }
  const Json other{{"format", "readyport-trace"},
                   {"clock", chrome_trace_clock_name(options_.clock)},
                   {"clock_note", clock_note(options_.clock)},
                   {"lines", line_count_},
                   {"threads", threads_.size()}};
  out_ << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":" << dump(other) << "}\n";
  out_.flush();
  if (!out_) {
    return fail(Status(StatusCode::kOsError, "writing the Chrome trace failed"));
  }
  return Status();
}

ChromeTraceClock chrome_trace_clock_detect(std::string_view text) {
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    // "<seq> <time_ns> ...": the second word.
    const std::size_t first_space = line.find(' ');
    if (first_space == std::string_view::npos) {
      continue;
    }
    line.remove_prefix(first_space + 1);
    std::uint64_t time_ns = 0;
    if (parse_trace_u64(line.substr(0, line.find(' ')), &time_ns) && time_ns != 0) {
      return ChromeTraceClock::kVirtual;
    }
  }
  return ChromeTraceClock::kSequence;
}

Status chrome_trace_write(std::string_view text, std::ostream& out,
                          const ChromeTraceOptions& options) {
  ChromeTraceOptions resolved = options;
  if (resolved.clock == ChromeTraceClock::kAuto) {
    resolved.clock = chrome_trace_clock_detect(text);
  }
  ChromeTraceWriter writer(out, std::move(resolved));
  if (Status status = writer.add_text(text); !status.ok()) {
    return status;
  }
  return writer.finish();
}

Result<std::string> chrome_trace_json(std::string_view text, const ChromeTraceOptions& options) {
  std::ostringstream out;
  if (Status status = chrome_trace_write(text, out, options); !status.ok()) {
    return status;
  }
  return out.str();
}

}  // namespace readyport
