// fuzz/trace_line_fuzz.cpp: the trace line parser (readyport/fake/trace_parse.hpp), on any bytes.
//
// Contract: parse_trace_line() gives ok or a kInvalidArgument Status with a message, never a crash,
// a sanitizer report or a hang; the number readers parse_trace_u64 and parse_trace_conn_id answer
// true or false. Beyond that, checked here:
// - a parsed line, rendered (trace_event_render) and parsed again, parses, and renders the same
//   (the parser and the renderer agree on every line the parser accepts; a line with a '\r'
//   inside its last token is left out: the parser strips one '\r' at the end, as it must for a
//   file written on Windows, so the renderer's text of such a token cannot come back);
// - the parsed event's lookups (find, find_u64, find_id) read any field it holds;
// - a decimal parse_trace_u64 accepted without a leading zero prints back as its text.
// Input: one line's bytes (a '\n' inside is refused by the parser). Corpus: lines of the traces
// readyport-stress writes (fuzz/corpus/trace_line/); dictionary fuzz/dict/trace.dict.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "readyport/fake/trace_event.hpp"
#include "readyport/fake/trace_parse.hpp"

namespace readyport::fuzz {
namespace {

// Every field lookup on the parsed line (their results are not the contract, only their safety).
void read_fields(const TraceEvent& event) {
  std::uint64_t number = 0;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  for (const TraceField& field : event.fields) {
    fuzz_require(event.find(field.key) != nullptr, "TraceEvent::find of a field it holds");
    (void)event.find_u64(field.key, &number);
    (void)event.find_id(field.key, &slot, &generation);
  }
  for (const TraceField& field : event.result_fields) {
    (void)event.find_u64(field.key, &number);
    (void)event.find_id(field.key, &slot, &generation);
  }
  (void)trace_value_u64(event.result, &number);
}

// render(parse(text)) parses, and renders the same again.
void check_round_trip(const TraceEvent& event, std::string_view text) {
  std::string_view line = text;
  if (!line.empty() && line.back() == '\n') {
    line.remove_suffix(1);
  }
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.find('\r') != std::string_view::npos) {
    return;  // see the header: a '\r' of the text's own cannot survive the trip
  }
  std::string rendered;
  trace_event_render(event, &rendered);
  TraceEvent again;
  const Status status = parse_trace_line(rendered, &again);
  fuzz_require(status.ok(), "a rendered parsed line parses again", status.message());
  std::string rendered_again;
  trace_event_render(again, &rendered_again);
  fuzz_require(rendered_again == rendered, "a rendered parsed line renders the same again",
               rendered + " vs " + rendered_again);
}

void check_numbers(std::string_view text) {
  std::uint64_t number = 0;
  if (parse_trace_u64(text, &number) && !text.empty() && text.front() != '0') {
    fuzz_require(std::to_string(number) == text, "parse_trace_u64 reads its decimal text back");
  }
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  (void)parse_trace_conn_id(text, &slot, &generation);
}

}  // namespace
}  // namespace readyport::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  TraceEvent event;
  const Status status = parse_trace_line(text, &event);
  fuzz::fuzz_require_error(status, "parse_trace_line");
  if (status.ok()) {
    fuzz::fuzz_require(!event.name.empty(), "a parsed line has a name");
    fuzz::read_fields(event);
    fuzz::check_round_trip(event, text);
  } else {
    fuzz::fuzz_require(status.code() == StatusCode::kInvalidArgument,
                       "parse_trace_line refuses with kInvalidArgument", status.to_string());
  }
  fuzz::check_numbers(text);
  return 0;
}
