// readyport/fake/trace_parse.hpp: one trace line (trace.hpp's format) split into its parts.
//
// A trace is text so that the same checker can judge a simulated run and a run recorded on
// Windows. parse_trace_line() turns one line back into values: the sequence number, the time, the
// thread, the event name, the bare words and `key=value` fields before ` -> `, the result word and
// the fields after it, and, for the seam's list fields, the registration elements of `regs=[...]`
// and the entries of `entries=[...]` (docs/simulation.md#call-lines gives their syntax).
//
//   readyport::TraceLine line;
//   if (readyport::Status s = readyport::parse_trace_line(text, &line); !s.ok()) return s;
//   std::string_view port;
//   if (line.name == "psn" && line.find("port", &port)) ...
//   for (const readyport::TraceReg& reg : line.regs) ...
//
// Syntax accepted: `<seq> <time_ns> T<thread> <name>[ <token>]*`, tokens separated by one space,
// an optional trailing "\n" (and "\r"). A token is `key=value` (split at the first '='), `->`
// (once: what follows is the result), or a bare word (kept in `words`, wherever it stands). The
// first token after `->` is the result word even when it holds a '='. Numbers are decimal, or hex
// with `0x`.
//
// Ownership: every string_view in a TraceLine points into the text passed to parse_trace_line,
// which must outlive the TraceLine's use. A TraceLine may be reused for the next line (its vectors
// keep their capacity). Threading: plain functions and values. Errors: a malformed line gives a
// kInvalidArgument Status saying what is wrong; nothing asserts on input.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

struct TraceField {
  std::string_view key;
  std::string_view value;
};

// One element of `regs=[s=<s>/key=<k>/filter=0x<f>/op=<OP>/trig=0x<t>[/res=<0|error>],...]`.
struct TraceReg {
  Socket socket = kInvalidSocket;
  std::uintptr_t key = 0;
  std::uint16_t filter = 0;
  std::uint8_t operation = 0;  // kSockNotifyOp*; a number the recorder did not name stays as is
  std::uint8_t trigger = 0;
  bool has_result = false;  // psn lines have res=, psn.begin lines do not
  bool applied = false;     // res=0 (only meaningful with has_result)
};

// One element of `entries=[key=<k>/mask=0x<m>,...]`.
struct TraceEntry {
  std::uintptr_t key = 0;
  std::uint32_t mask = 0;
};

struct TraceLine {
  std::uint64_t seq = 0;
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
  std::string_view name;                // the event's first word: "psn", "hnd.enter", ...
  std::vector<std::string_view> words;  // bare words ("fault <site>", "phase <p>")
  std::vector<TraceField> fields;       // key=value before `->`
  bool has_result = false;
  std::string_view result;                // the first word after `->`
  std::vector<TraceField> result_fields;  // key=value after the result word
  bool has_regs = false;                  // a regs= field was present (`regs=null`: empty)
  std::vector<TraceReg> regs;
  bool has_entries = false;
  std::vector<TraceEntry> entries;

  // The value of field `key` before or after `->` (the first one). False when absent.
  bool find(std::string_view key, std::string_view* value_out) const;
  // The same, as a number (decimal or 0x hex). False when absent or not a number.
  bool find_u64(std::string_view key, std::uint64_t* value_out) const;
};

// Parses `text` (one line, with or without its '\n') into `line_out`. On failure `line_out` holds
// what was parsed so far (seq is set when the prefix was readable).
Status parse_trace_line(std::string_view text, TraceLine* line_out);

// Decimal, or hex with a `0x` prefix; the whole text must be the number and fit in 64 bits.
bool parse_trace_u64(std::string_view text, std::uint64_t* value_out);

// "<slot>/<generation>", both decimal and 32-bit.
bool parse_trace_conn_id(std::string_view text, std::uint32_t* slot_out,
                         std::uint32_t* generation_out);

}  // namespace readyport
