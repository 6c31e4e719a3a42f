// A trace event's building, reading and rendering (trace_event.hpp).
#include "readyport/fake/trace_event.hpp"

#include <array>
#include <charconv>
#include <mutex>
#include <set>

#include "event_hash.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/fake/trace_parse.hpp"

namespace readyport {
namespace {

void append_decimal(std::string* text_out, std::uint64_t value) {
  char digits[24];
  const std::to_chars_result written = std::to_chars(digits, digits + sizeof(digits), value);
  READYPORT_ASSERT(written.ec == std::errc());
  text_out->append(digits, written.ptr);
}

void append_signed(std::string* text_out, std::int64_t value) {
  char digits[24];
  const std::to_chars_result written = std::to_chars(digits, digits + sizeof(digits), value);
  READYPORT_ASSERT(written.ec == std::errc());
  text_out->append(digits, written.ptr);
}

void append_hex(std::string* text_out, std::uint64_t value) {
  char digits[24];
  const std::to_chars_result written = std::to_chars(digits, digits + sizeof(digits), value, 16);
  READYPORT_ASSERT(written.ec == std::errc());
  text_out->append("0x");
  text_out->append(digits, written.ptr);
}

// The code's name, or error(<n>) when os_error_name does not know it.
void append_error(std::string* text_out, std::uint64_t code) {
  const std::string_view name = os_error_name(static_cast<std::uint32_t>(code));
  if (name != "error") {
    text_out->append(name);
    return;
  }
  text_out->append("error(");
  append_decimal(text_out, code);
  text_out->push_back(')');
}

void append_operation(std::string* text_out, std::uint8_t operation) {
  switch (operation) {
    case kSockNotifyOpNone:
      text_out->append("NONE");
      return;
    case kSockNotifyOpEnable:
      text_out->append("ENABLE");
      return;
    case kSockNotifyOpDisable:
      text_out->append("DISABLE");
      return;
    case kSockNotifyOpRemove:
      text_out->append("REMOVE");
      return;
    default:
      append_decimal(text_out, operation);
      return;
  }
}

void append_address(std::string* text_out, std::uint64_t packed) {
  const auto host = static_cast<std::uint32_t>(packed >> 16);
  for (int shift = 24; shift >= 0; shift -= 8) {
    append_decimal(text_out, (host >> shift) & 0xFF);
    text_out->push_back(shift == 0 ? ':' : '.');
  }
  append_decimal(text_out, packed & 0xFFFF);
}

void append_reg(std::string* text_out, const TraceReg& reg) {
  text_out->append("s=");
  append_decimal(text_out, static_cast<std::uint64_t>(reg.socket));
  text_out->append("/key=");
  append_decimal(text_out, reg.key);
  text_out->append("/filter=");
  append_hex(text_out, reg.filter);
  text_out->append("/op=");
  append_operation(text_out, reg.operation);
  text_out->append("/trig=");
  append_hex(text_out, reg.trigger);
  if (!reg.has_result) {
    return;
  }
  text_out->append("/res=");
  if (reg.applied) {
    text_out->push_back('0');
  } else {
    append_error(text_out, reg.result_code);
  }
}

void append_list(const TraceEvent& event, const TraceValue& value, std::string* text_out) {
  READYPORT_ASSERT(value.number + value.count <= event.numbers.size());
  text_out->push_back('[');
  for (std::uint32_t i = 0; i < value.count; ++i) {
    if (i > 0) {
      text_out->push_back(',');
    }
    if (value.element == TraceValueKind::kThread) {
      text_out->push_back('T');
    }
    append_decimal(text_out, event.numbers[value.number + i]);
  }
  text_out->push_back(']');
}

void append_regs(const TraceEvent& event, std::string* text_out) {
  text_out->push_back('[');
  for (std::size_t i = 0; i < event.regs.size(); ++i) {
    if (i > 0) {
      text_out->push_back(',');
    }
    append_reg(text_out, event.regs[i]);
  }
  text_out->push_back(']');
}

void append_entries(const TraceEvent& event, std::string* text_out) {
  text_out->push_back('[');
  for (std::size_t i = 0; i < event.entries.size(); ++i) {
    if (i > 0) {
      text_out->push_back(',');
    }
    text_out->append("key=");
    append_decimal(text_out, event.entries[i].key);
    text_out->append("/mask=");
    append_hex(text_out, event.entries[i].mask);
  }
  text_out->push_back(']');
}

void append_field(const TraceEvent& event, const TraceField& field, std::string* text_out) {
  text_out->push_back(' ');
  text_out->append(field.key);
  text_out->push_back('=');
  trace_value_append(event, field.value, text_out);
}

}  // namespace

// ---- Reading ------------------------------------------------------------------------------------

namespace {

// Whether a field's key is `key`. A recorded key and the reader's are mostly the same literal
// (the linker merges equal ones), so the same address settles it without a comparison call.
bool same_key(std::string_view field_key, std::string_view key) {
  return field_key.size() == key.size() &&
         (field_key.data() == key.data() ||
          std::char_traits<char>::compare(field_key.data(), key.data(), key.size()) == 0);
}

}  // namespace

const TraceValue* TraceEvent::find(std::string_view key) const {
  for (const TraceField& field : fields) {
    if (same_key(field.key, key)) {
      return &field.value;
    }
  }
  for (const TraceField& field : result_fields) {
    if (same_key(field.key, key)) {
      return &field.value;
    }
  }
  return nullptr;
}

bool TraceEvent::find_u64(std::string_view key, std::uint64_t* value_out) const {
  const TraceValue* found = find(key);
  return found != nullptr && trace_value_u64(*found, value_out);
}

bool TraceEvent::find_id(std::string_view key, std::uint32_t* slot_out,
                         std::uint32_t* generation_out) const {
  const TraceValue* found = find(key);
  if (found == nullptr) {
    return false;
  }
  if (found->kind == TraceValueKind::kId) {
    *slot_out = static_cast<std::uint32_t>(found->number >> 32);
    *generation_out = static_cast<std::uint32_t>(found->number);
    return true;
  }
  return found->kind == TraceValueKind::kText &&
         parse_trace_conn_id(found->text, slot_out, generation_out);
}

bool trace_value_u64(const TraceValue& value, std::uint64_t* number_out) {
  switch (value.kind) {
    case TraceValueKind::kText:
      return parse_trace_u64(value.text, number_out);
    case TraceValueKind::kDecimal:
    case TraceValueKind::kHex:
    case TraceValueKind::kThread:
      *number_out = value.number;
      return true;
    case TraceValueKind::kSigned:
      // A negative number is not one (as its text "-1" would not parse).
      if (static_cast<std::int64_t>(value.number) < 0) {
        return false;
      }
      *number_out = value.number;
      return true;
    default:
      return false;
  }
}

bool trace_value_is(const TraceEvent& event, const TraceValue& value, std::string_view text) {
  if (value.kind == TraceValueKind::kText) {
    return value.text == text;
  }
  std::string rendered;
  trace_value_append(event, value, &rendered);
  return rendered == text;
}

// ---- Building -----------------------------------------------------------------------------------

TraceEvent& TraceEvent::registrations(const SockNotifyRegistration* registrations,
                                      std::uint32_t count, bool with_results) {
  READYPORT_ASSERT(!has_regs);
  has_regs = true;
  if (registrations == nullptr) {
    return value("regs", TraceValue::of(TraceValueKind::kRegsNull, 0));
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    const SockNotifyRegistration& r = registrations[i];
    TraceReg reg{r.socket, r.completion_key, r.event_filter, r.operation, r.trigger_flags};
    reg.has_result = with_results;
    reg.applied = with_results && r.registration_result == 0;
    reg.result_code = with_results ? r.registration_result : 0;
    regs.push_back(reg);
  }
  return value("regs", TraceValue::of(TraceValueKind::kRegs, 0));
}

TraceEvent& TraceEvent::completions(const OverlappedEntry* completed, std::uint32_t count) {
  READYPORT_ASSERT(!has_entries);
  has_entries = true;
  for (std::uint32_t i = 0; i < count; ++i) {
    entries.push_back(TraceEntry{completed[i].completion_key, completed[i].bytes_transferred});
  }
  return value("entries", TraceValue::of(TraceValueKind::kEntries, 0));
}

// ---- Rendering ----------------------------------------------------------------------------------

void trace_value_append(const TraceEvent& event, const TraceValue& value, std::string* text_out) {
  switch (value.kind) {
    case TraceValueKind::kText:
      text_out->append(value.text);
      return;
    case TraceValueKind::kDecimal:
      return append_decimal(text_out, value.number);
    case TraceValueKind::kSigned:
      return append_signed(text_out, static_cast<std::int64_t>(value.number));
    case TraceValueKind::kHex:
      return append_hex(text_out, value.number);
    case TraceValueKind::kError:
      return append_error(text_out, value.number);
    case TraceValueKind::kId:
      append_decimal(text_out, value.number >> 32);
      text_out->push_back('/');
      return append_decimal(text_out, value.number & 0xFFFFFFFFU);
    case TraceValueKind::kAddress:
      return append_address(text_out, value.number);
    case TraceValueKind::kThread:
      text_out->push_back('T');
      return append_decimal(text_out, value.number);
    case TraceValueKind::kList:
      return append_list(event, value, text_out);
    case TraceValueKind::kRegs:
      return append_regs(event, text_out);
    case TraceValueKind::kRegsNull:
      text_out->append("null");
      return;
    case TraceValueKind::kEntries:
      return append_entries(event, text_out);
  }
  READYPORT_UNREACHABLE();
}

void trace_event_render(const TraceEvent& event, std::string* text_out) {
  append_decimal(text_out, event.seq);
  text_out->push_back(' ');
  append_decimal(text_out, event.time_ns);
  text_out->append(" T");
  append_decimal(text_out, event.thread);
  text_out->push_back(' ');
  text_out->append(event.name);
  for (const TraceValue& word : event.words) {
    text_out->push_back(' ');
    trace_value_append(event, word, text_out);
  }
  for (const TraceField& field : event.fields) {
    append_field(event, field, text_out);
  }
  if (event.has_result) {
    text_out->append(" -> ");
    trace_value_append(event, event.result, text_out);
    for (const TraceField& field : event.result_fields) {
      append_field(event, field, text_out);
    }
  }
  text_out->push_back('\n');
}

// ---- Hashing (event_hash.hpp) ------------------------------------------------------------------

std::uint64_t trace_event_hash(const TraceEvent& event, std::uint64_t basis) {
  return trace_internal::event_hash(event, basis);
}

std::uint64_t trace_text_hash(std::string_view event_text, std::uint64_t time_ns,
                              std::uint32_t thread, std::uint64_t basis) {
  // Its bytes, never the cache: the text is transient.
  const trace_internal::EventMixer mixer(basis, time_ns,
                                         std::uint64_t{thread} | (trace_internal::kTagText << 32),
                                         fnv1a64(event_text));
  return mixer.hash();
}

// ---- Interning ----------------------------------------------------------------------------------

std::string_view trace_intern(std::string_view text) {
  // Never freed: views handed out stay valid until the process ends. std::set's nodes do not
  // move, so neither do the strings in them.
  static std::mutex mutex;
  static std::set<std::string, std::less<>> texts;
  std::lock_guard<std::mutex> guard(mutex);
  const auto found = texts.find(text);
  if (found != texts.end()) {
    return *found;
  }
  READYPORT_ASSERT(texts.size() < kTraceInternedMax);
  return *texts.emplace(text).first;
}

}  // namespace readyport
