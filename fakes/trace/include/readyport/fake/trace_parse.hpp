// readyport/fake/trace_parse.hpp: one trace line (trace.hpp's format) split into its parts.
//
// A trace file is text so that the same checker can judge a simulated run and a run recorded on
// Windows. parse_trace_line() turns one line back into an event (trace_event.hpp): the sequence
// number, the time, the thread, the event name, the bare words and `key=value` fields before
// ` -> `, the result and the fields after it, each value as text; and, for the seam's list fields,
// the registration elements of `regs=[...]` and the entries of `entries=[...]`, as values
// (docs/simulation.md#call-lines gives their syntax). The oracle reads a parsed event as it reads
// a recorded one.
//
//   readyport::TraceEvent line;
//   if (readyport::Status s = readyport::parse_trace_line(text, &line); !s.ok()) return s;
//   std::uint64_t port = 0;
//   if (line.name == "psn" && line.find_u64("port", &port)) ...
//   for (const readyport::TraceReg& reg : line.regs) ...
//
// Syntax accepted: `<seq> <time_ns> T<thread> <name>[ <token>]*`, tokens separated by one space,
// an optional trailing "\n" (and "\r"). A token is `key=value` (split at the first '='), `->`
// (once: what follows is the result), or a bare word (kept in `words`, wherever it stands). The
// first token after `->` is the result word even when it holds a '='. Numbers are decimal, or hex
// with `0x`.
//
// More than trace_event.hpp's limits of words or fields is a malformed line.
//
// Ownership: every string_view in the event points into the text passed to parse_trace_line,
// which must outlive the event's use. An event may be reused for the next line (its vectors
// keep their capacity). Threading: plain functions and values. Errors: a malformed line gives a
// kInvalidArgument Status saying what is wrong; nothing asserts on input.
#pragma once

#include <cstdint>
#include <string_view>

#include "readyport/fake/trace_event.hpp"
#include "readyport/status.hpp"

namespace readyport {

// Parses `text` (one line, with or without its '\n') into `line_out`. On failure `line_out` holds
// what was parsed so far (seq is set when the prefix was readable).
Status parse_trace_line(std::string_view text, TraceEvent* line_out);

// Decimal, or hex with a `0x` prefix; the whole text must be the number and fit in 64 bits.
bool parse_trace_u64(std::string_view text, std::uint64_t* value_out);

// "<slot>/<generation>", both decimal and 32-bit.
bool parse_trace_conn_id(std::string_view text, std::uint32_t* slot_out,
                         std::uint32_t* generation_out);

}  // namespace readyport
