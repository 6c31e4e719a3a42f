// readyport/fake/trace_event.hpp: one trace event as values, the form the recorder appends and the
// oracle reads; text is rendered from it only where a person or a file needs it.
//
// An event is a name, bare words, `key=value` fields, and after ` -> ` a result and more fields,
// the same parts as its text line (trace.hpp's format, docs/simulation.md#reading-a-trace). A value
// is typed: a number (decimal, signed, hex), an OS error code, a connection id, an address, a
// thread, a list, or text. The recorder builds events with the builder calls below and never
// formats; the oracle reads the numbers as numbers. parse_trace_line (trace_parse.hpp) fills the
// same struct from a text line, with every value as text: the oracle reads both alike.
//
//   TraceEvent event("psn");
//   event.num("port", port).regs(registrations, count, true).num("timeout", timeout_ms);
//   event.arrow_error(code).num("n", received);
//   trace.record(context, event);            // hashed as values; rendered only if kept as text
//
// Limits: at most kTraceWordsMax words, kTraceFieldsMax fields before the arrow and
// kTraceResultFieldsMax after it (the builder asserts; the parser reports a malformed line).
// Every text a builder call is given (names, keys, words, text values) must outlive the trace:
// a string literal, or trace_intern()'s copy. Words come before fields (the text's order).
//
// Ownership: a value; its views point at static or interned text, or, for a parsed line, into
// that line's text. Threading: plain values; trace_intern is thread-safe. Errors: the builder
// asserts its limits (a recorder's bug); the parser returns a Status.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/os.hpp"

namespace readyport {

inline constexpr std::size_t kTraceWordsMax = 4;
inline constexpr std::size_t kTraceFieldsMax = 8;
inline constexpr std::size_t kTraceResultFieldsMax = 4;

// A vector of at most N elements stored inline (no allocation): an event's words and fields. Its
// storage is left uninitialised (only [0, size()) is ever read) and copies copy only the elements
// in use: an event is built for every recorded call and copied into a trace's tail.
template <typename T, std::size_t N>
class TraceInlineVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  TraceInlineVector() {}  // NOLINT(modernize-use-equals-default): leaves items_ uninitialised
  TraceInlineVector(const TraceInlineVector& other) { *this = other; }
  TraceInlineVector& operator=(const TraceInlineVector& other) {
    for (std::size_t i = 0; i < other.size_; ++i) {
      items_[i] = other.items_[i];
    }
    size_ = other.size_;
    return *this;
  }
  ~TraceInlineVector() = default;

  bool push_back(const T& value) {
    if (size_ == N) {
      return false;
    }
    items_[size_++] = value;
    return true;
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& front() const {
    READYPORT_ASSERT(size_ > 0);
    return items_[0];
  }
  const T& operator[](std::size_t i) const {
    READYPORT_ASSERT(i < size_);
    return items_[i];
  }
  const T* begin() const { return items_; }
  const T* end() const { return items_ + size_; }

 private:
  union {
    T items_[N];  // [0, size_) in use
  };
  std::size_t size_ = 0;
};

// FNV-1a 64 of `text`: what a name or key stands for in the hash (constexpr: a literal's is
// computed by the compiler).
constexpr std::uint64_t trace_text_word(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// An event's name or a field's key, with its hash word. From a string literal, the word is
// computed when the recorder is compiled (the constructor is consteval); at_run_time() for a text
// known only when running (an interned "m3.lock"), which must outlive the trace as well.
class TraceText {
 public:
  template <std::size_t N>
  consteval TraceText(const char (&literal)[N])  // NOLINT(google-explicit-constructor): "psn"
      : text_(literal, N - 1), word_(trace_text_word(std::string_view(literal, N - 1))) {}
  static TraceText at_run_time(std::string_view text) { return TraceText(text); }
  std::string_view text() const { return text_; }
  std::uint64_t word() const { return word_; }

 private:
  explicit TraceText(std::string_view text) : text_(text), word_(trace_text_word(text)) {}
  std::string_view text_;
  std::uint64_t word_ = 0;
};

enum class TraceValueKind : std::uint8_t {
  kText,     // `text` as is (a name: ok, ERROR_SUCCESS, worker; or any value of a parsed line)
  kDecimal,  // `number` in decimal
  kSigned,   // `number` as a two's-complement int64, in decimal
  kHex,      // `number` as 0x<lower-case hex>
  kError,    // `number` an OS error code, by its name (os_error_name) or error(<n>)
  kId,       // <slot>/<generation>: `number` = slot << 32 | generation
  kAddress,  // a.b.c.d:port: `number` = host << 16 | port
  kThread,   // T<number>
  kList,  // [e,e,...]: `count` elements of kind `element` from the event's `numbers`, at `number`
  kRegs,  // the event's `regs`, as [s=../key=../filter=../op=../trig=..[/res=..],...]
  kRegsNull,  // null (a registration array that was a null pointer)
  kEntries,   // the event's `entries`, as [key=../mask=..,...]
};

struct TraceValue {
  std::string_view text;  // kText only
  std::uint64_t number = 0;
  TraceValueKind kind = TraceValueKind::kText;
  TraceValueKind element = TraceValueKind::kDecimal;  // kList: its elements' kind
  std::uint32_t count = 0;                            // kList: its elements' number

  static TraceValue of_text(std::string_view text) { return TraceValue{text}; }
  static TraceValue of(TraceValueKind kind, std::uint64_t number) {
    return TraceValue{std::string_view(), number, kind};
  }
};

struct TraceField {
  std::string_view key;
  TraceValue value;
  std::uint64_t key_word = 0;  // trace_text_word(key)
};

// One element of `regs=[s=<s>/key=<k>/filter=0x<f>/op=<OP>/trig=0x<t>[/res=<0|error>],...]`.
struct TraceReg {
  Socket socket = kInvalidSocket;
  std::uintptr_t key = 0;
  std::uint16_t filter = 0;
  std::uint8_t operation = 0;  // kSockNotifyOp*; a number the recorder did not name stays as is
  std::uint8_t trigger = 0;
  bool has_result = false;        // psn lines have res=, psn.begin lines do not
  bool applied = false;           // res=0 (only meaningful with has_result)
  std::uint32_t result_code = 0;  // the error when not applied (recorded events; parsed: 0)
};

// One element of `entries=[key=<k>/mask=0x<m>,...]`.
struct TraceEntry {
  std::uintptr_t key = 0;
  std::uint32_t mask = 0;
};

// (A new member must be copied by trace.cpp's tail_copy too.)
struct TraceEvent {
  // Stamped by Trace::record (a parsed line: read from its prefix).
  std::uint64_t seq = 0;
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
  std::string_view name;        // the event's first word: "psn", "hnd.enter", ...
  std::uint64_t name_word = 0;  // trace_text_word(name)
  TraceInlineVector<TraceValue, kTraceWordsMax> words;    // bare words ("fault <site>")
  TraceInlineVector<TraceField, kTraceFieldsMax> fields;  // key=value before `->`
  bool has_result = false;
  TraceValue result;  // the first value after `->`
  TraceInlineVector<TraceField, kTraceResultFieldsMax> result_fields;
  bool has_regs = false;  // a regs= field was present (`regs=null`: empty)
  std::vector<TraceReg> regs;
  bool has_entries = false;
  std::vector<TraceEntry> entries;
  std::vector<std::uint64_t> numbers;  // the elements of kList values

  TraceEvent() = default;
  explicit TraceEvent(TraceText event_name)
      : name(event_name.text()), name_word(event_name.word()) {}

  // ---- Reading (recorded or parsed alike) ----
  // The value of field `key` before or after `->` (the first one). Null when absent.
  const TraceValue* find(std::string_view key) const;
  // The same, as a number (numeric kinds; text: decimal or 0x hex). False when absent or not one.
  bool find_u64(std::string_view key, std::uint64_t* value_out) const;
  // The same, as a connection id (kId, or text "<slot>/<generation>").
  bool find_id(std::string_view key, std::uint32_t* slot_out, std::uint32_t* generation_out) const;

  // ---- Building (asserts the limits above; returns *this) ----
  // The builder calls are defined here, inline: every recorded call makes one event of a few of
  // them, and a call each cost as much as the work.
  TraceEvent& word(std::string_view text) { return add_word(TraceValue::of_text(text)); }
  TraceEvent& word_thread(std::uint32_t thread_id) {
    return add_word(TraceValue::of(TraceValueKind::kThread, thread_id));
  }
  TraceEvent& value(TraceText key, const TraceValue& value) {
    const TraceField field{key.text(), value, key.word()};
    const bool added = has_result ? result_fields.push_back(field) : fields.push_back(field);
    READYPORT_ASSERT(added);
    return *this;
  }
  TraceEvent& num(TraceText key, std::uint64_t number) {
    return value(key, TraceValue::of(TraceValueKind::kDecimal, number));
  }
  TraceEvent& num_signed(TraceText key, std::int64_t number) {
    return value(key, TraceValue::of(TraceValueKind::kSigned, static_cast<std::uint64_t>(number)));
  }
  TraceEvent& hex(TraceText key, std::uint64_t number) {
    return value(key, TraceValue::of(TraceValueKind::kHex, number));
  }
  TraceEvent& error(TraceText key, std::uint32_t code) {
    return value(key, TraceValue::of(TraceValueKind::kError, code));
  }
  TraceEvent& id(TraceText key, std::uint32_t slot, std::uint32_t generation) {
    return value(key, TraceValue::of(TraceValueKind::kId,
                                     (std::uint64_t{slot} << 32) | std::uint64_t{generation}));
  }
  TraceEvent& address(TraceText key, const Ipv4Address& address) {
    return value(key, TraceValue::of(TraceValueKind::kAddress,
                                     (std::uint64_t{address.host} << 16) | address.port));
  }
  TraceEvent& thread_ref(TraceText key, std::uint32_t thread_id) {
    return value(key, TraceValue::of(TraceValueKind::kThread, thread_id));
  }
  TraceEvent& text(TraceText key, std::string_view text) {
    return value(key, TraceValue::of_text(text));
  }
  // A list of `count` numbers shown as `element` (kDecimal or kThread).
  TraceEvent& list(const TraceText& key, TraceValueKind element, const std::uint64_t* items,
                   std::size_t count) {
    TraceValue listed = TraceValue::of(TraceValueKind::kList, numbers.size());
    listed.element = element;
    listed.count = static_cast<std::uint32_t>(count);
    numbers.insert(numbers.end(), items, items + count);
    return value(key, listed);
  }
  TraceEvent& registrations(const SockNotifyRegistration* registrations, std::uint32_t count,
                            bool with_results);
  TraceEvent& completions(const OverlappedEntry* entries, std::uint32_t count);
  // ` -> ` and the result; fields added afterwards are result fields.
  TraceEvent& arrow(const TraceValue& value) {
    READYPORT_ASSERT(!has_result);
    has_result = true;
    result = value;
    return *this;
  }
  TraceEvent& arrow_text(std::string_view text) { return arrow(TraceValue::of_text(text)); }
  TraceEvent& arrow_num(std::int64_t number) {
    return arrow(TraceValue::of(TraceValueKind::kSigned, static_cast<std::uint64_t>(number)));
  }
  TraceEvent& arrow_error(std::uint32_t code) {
    return arrow(TraceValue::of(TraceValueKind::kError, code));
  }

  // Names the event `event_name` (e.g. a begin line made from its call's line).
  void rename(TraceText event_name) {
    name = event_name.text();
    name_word = event_name.word();
  }
  // Forgets everything (keeps the vectors' capacity).
  void clear() {
    seq = 0;
    time_ns = 0;
    thread = 0;
    name = std::string_view();
    name_word = 0;
    words.clear();
    fields.clear();
    has_result = false;
    result = TraceValue();
    result_fields.clear();
    has_regs = false;
    regs.clear();
    has_entries = false;
    entries.clear();
    numbers.clear();
  }

 private:
  TraceEvent& add_word(const TraceValue& value) {
    READYPORT_ASSERT(fields.empty() && !has_result);  // words come first
    const bool added = words.push_back(value);
    READYPORT_ASSERT(added);
    return *this;
  }
};

// `value` as its text is or would be written, e.g. for a comparison or a message. `event` is the
// one the value belongs to (lists and regs read it).
void trace_value_append(const TraceEvent& event, const TraceValue& value, std::string* text_out);
// Whether `value` reads as `text` (compares text values directly, renders the others).
bool trace_value_is(const TraceEvent& event, const TraceValue& value, std::string_view text);
// `value` as a number: numeric kinds directly, text as decimal or 0x hex. False otherwise.
bool trace_value_u64(const TraceValue& value, std::uint64_t* number_out);

// Appends the event's line "<seq> <time_ns> T<thread> <event>\n".
void trace_event_render(const TraceEvent& event, std::string* text_out);

// Continues the hash `basis` over the event's canonical encoding: its time, thread and name, and
// each word, field and result as its kind and its number, or its bytes for text; never its
// rendered text (docs/simulation.md#the-hash-bounded-traces-and-sinks). Not its seq: a trace's
// hash covers its events in order, so the seq is implied.
std::uint64_t trace_event_hash(const TraceEvent& event, std::uint64_t basis);
// The same for a line recorded as text (Trace::record's text form): its bytes.
std::uint64_t trace_text_hash(std::string_view event_text, std::uint64_t time_ns,
                              std::uint32_t thread, std::uint64_t basis);

// A copy of `text` that lives until the process ends, shared by equal texts: for a builder's
// text that is not a literal (a mutex's "m3.lock"). At most kTraceInternedMax distinct texts.
inline constexpr std::size_t kTraceInternedMax = 1 << 16;
std::string_view trace_intern(std::string_view text);

}  // namespace readyport
