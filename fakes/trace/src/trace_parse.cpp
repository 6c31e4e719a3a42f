// Parsing of one trace line (trace_parse.hpp).
#include "readyport/fake/trace_parse.hpp"

#include <charconv>
#include <string>

namespace readyport {
namespace {

Status malformed(const std::string& what) { return Status(StatusCode::kInvalidArgument, what); }

// Splits `text` at the first `separator`: `head` before it, `rest` after it (empty when absent).
void split_first(std::string_view text, char separator, std::string_view* head,
                 std::string_view* rest) {
  const std::size_t at = text.find(separator);
  if (at == std::string_view::npos) {
    *head = text;
    *rest = std::string_view();
    return;
  }
  *head = text.substr(0, at);
  *rest = text.substr(at + 1);
}

template <typename T>
bool parse_narrow(std::string_view text, T* value_out) {
  std::uint64_t value = 0;
  if (!parse_trace_u64(text, &value) || value > static_cast<std::uint64_t>(T(~T{0}))) {
    return false;
  }
  *value_out = static_cast<T>(value);
  return true;
}

bool parse_operation(std::string_view text, std::uint8_t* operation_out) {
  if (text == "NONE") {
    *operation_out = kSockNotifyOpNone;
  } else if (text == "ENABLE") {
    *operation_out = kSockNotifyOpEnable;
  } else if (text == "DISABLE") {
    *operation_out = kSockNotifyOpDisable;
  } else if (text == "REMOVE") {
    *operation_out = kSockNotifyOpRemove;
  } else {
    return parse_narrow(text, operation_out);
  }
  return true;
}

// The inside of a list field: "[a,b,...]" -> "a,b,...". False when not bracketed.
bool list_body(std::string_view value, std::string_view* body_out) {
  if (value.size() < 2 || value.front() != '[' || value.back() != ']') {
    return false;
  }
  *body_out = value.substr(1, value.size() - 2);
  return true;
}

// One element "s=../key=../filter=../op=../trig=..[/res=..]".
bool parse_reg(std::string_view element, TraceReg* reg_out) {
  TraceReg reg;
  bool seen_socket = false;
  bool seen_key = false;
  bool seen_operation = false;
  while (!element.empty()) {
    std::string_view part;
    split_first(element, '/', &part, &element);
    std::string_view key;
    std::string_view value;
    split_first(part, '=', &key, &value);
    bool ok = true;
    if (key == "s") {
      ok = parse_narrow(value, &reg.socket);
      seen_socket = true;
    } else if (key == "key") {
      ok = parse_narrow(value, &reg.key);
      seen_key = true;
    } else if (key == "filter") {
      ok = parse_narrow(value, &reg.filter);
    } else if (key == "op") {
      ok = parse_operation(value, &reg.operation);
      seen_operation = true;
    } else if (key == "trig") {
      ok = parse_narrow(value, &reg.trigger);
    } else if (key == "res") {
      ok = !value.empty();
      reg.has_result = true;
      reg.applied = value == "0";
    }
    // Other keys are ignored: the recorder may add fields without breaking old checkers.
    if (!ok) {
      return false;
    }
  }
  if (!seen_socket || !seen_key || !seen_operation) {
    return false;
  }
  *reg_out = reg;
  return true;
}

bool parse_entry(std::string_view element, TraceEntry* entry_out) {
  TraceEntry entry;
  bool seen_key = false;
  bool seen_mask = false;
  while (!element.empty()) {
    std::string_view part;
    split_first(element, '/', &part, &element);
    std::string_view key;
    std::string_view value;
    split_first(part, '=', &key, &value);
    if (key == "key") {
      if (!parse_narrow(value, &entry.key)) {
        return false;
      }
      seen_key = true;
    } else if (key == "mask") {
      if (!parse_narrow(value, &entry.mask)) {
        return false;
      }
      seen_mask = true;
    }
  }
  if (!seen_key || !seen_mask) {
    return false;
  }
  *entry_out = entry;
  return true;
}

Status parse_regs(std::string_view value, std::vector<TraceReg>* regs_out) {
  if (value == "null") {
    return Status();
  }
  std::string_view body;
  if (!list_body(value, &body)) {
    return malformed("regs= is not a [list]");
  }
  while (!body.empty()) {
    std::string_view element;
    split_first(body, ',', &element, &body);
    TraceReg reg;
    if (!parse_reg(element, &reg)) {
      return malformed("bad registration element '" + std::string(element) + "'");
    }
    regs_out->push_back(reg);
  }
  return Status();
}

Status parse_entries(std::string_view value, std::vector<TraceEntry>* entries_out) {
  std::string_view body;
  if (!list_body(value, &body)) {
    return malformed("entries= is not a [list]");
  }
  while (!body.empty()) {
    std::string_view element;
    split_first(body, ',', &element, &body);
    TraceEntry entry;
    if (!parse_entry(element, &entry)) {
      return malformed("bad entry element '" + std::string(element) + "'");
    }
    entries_out->push_back(entry);
  }
  return Status();
}

// The list fields of `fields`, parsed into the line.
template <typename Fields>
Status parse_lists(const Fields& fields, TraceEvent* line) {
  for (const TraceField& field : fields) {
    if (field.key == "regs") {
      if (line->has_regs) {
        return malformed("two regs= fields");
      }
      line->has_regs = true;
      if (Status status = parse_regs(field.value.text, &line->regs); !status.ok()) {
        return status;
      }
    } else if (field.key == "entries") {
      if (line->has_entries) {
        return malformed("two entries= fields");
      }
      line->has_entries = true;
      if (Status status = parse_entries(field.value.text, &line->entries); !status.ok()) {
        return status;
      }
    }
  }
  return Status();
}

// The event's tokens after its name.
Status parse_tokens(std::string_view rest, TraceEvent* line) {
  bool after_arrow = false;
  while (!rest.empty()) {
    std::string_view token;
    split_first(rest, ' ', &token, &rest);
    if (token.empty()) {
      return malformed("two spaces in a row");
    }
    if (token == "->") {
      if (after_arrow) {
        return malformed("two '->'");
      }
      after_arrow = true;
      continue;
    }
    if (after_arrow && !line->has_result) {
      line->has_result = true;
      line->result = TraceValue::of_text(token);
      continue;
    }
    const std::size_t equals = token.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      // A bare word, also after the result ("-> FAIL invalid_argument").
      if (!line->words.push_back(TraceValue::of_text(token))) {
        return malformed("more than " + std::to_string(kTraceWordsMax) + " bare words");
      }
      continue;
    }
    const std::string_view key = token.substr(0, equals);
    const TraceField field{key, TraceValue::of_text(token.substr(equals + 1)),
                           trace_text_word(key)};
    if (!(after_arrow ? line->result_fields.push_back(field) : line->fields.push_back(field))) {
      return malformed("more than " +
                       std::to_string(after_arrow ? kTraceResultFieldsMax : kTraceFieldsMax) +
                       " fields " + (after_arrow ? "after" : "before") + " '->'");
    }
  }
  if (after_arrow && !line->has_result) {
    return malformed("'->' without a result");
  }
  if (Status status = parse_lists(line->fields, line); !status.ok()) {
    return status;
  }
  return parse_lists(line->result_fields, line);
}

}  // namespace

bool parse_trace_u64(std::string_view text, std::uint64_t* value_out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) {
    return false;
  }
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const std::from_chars_result parsed = std::from_chars(text.data(), end, value, base);
  if (parsed.ec != std::errc() || parsed.ptr != end) {
    return false;
  }
  *value_out = value;
  return true;
}

bool parse_trace_conn_id(std::string_view text, std::uint32_t* slot_out,
                         std::uint32_t* generation_out) {
  std::string_view slot;
  std::string_view generation;
  split_first(text, '/', &slot, &generation);
  std::uint32_t slot_value = 0;
  std::uint32_t generation_value = 0;
  if (!parse_narrow(slot, &slot_value) || !parse_narrow(generation, &generation_value)) {
    return false;
  }
  *slot_out = slot_value;
  *generation_out = generation_value;
  return true;
}

Status parse_trace_line(std::string_view text, TraceEvent* line_out) {
  line_out->clear();
  if (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  if (!text.empty() && text.back() == '\r') {
    text.remove_suffix(1);
  }
  if (text.find('\n') != std::string_view::npos) {
    return malformed("a newline inside the line");
  }
  std::string_view seq;
  std::string_view time;
  std::string_view thread;
  std::string_view rest;
  split_first(text, ' ', &seq, &rest);
  if (!parse_trace_u64(seq, &line_out->seq)) {
    return malformed("no sequence number");
  }
  split_first(rest, ' ', &time, &rest);
  if (!parse_trace_u64(time, &line_out->time_ns)) {
    return malformed("no time");
  }
  split_first(rest, ' ', &thread, &rest);
  if (thread.size() < 2 || thread[0] != 'T' || !parse_narrow(thread.substr(1), &line_out->thread)) {
    return malformed("no T<thread>");
  }
  split_first(rest, ' ', &line_out->name, &rest);
  line_out->name_word = trace_text_word(line_out->name);
  if (line_out->name.empty()) {
    return malformed("no event name");
  }
  return parse_tokens(rest, line_out);
}

}  // namespace readyport
