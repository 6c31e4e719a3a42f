// fakes/trace/src/event_hash.hpp: the trace hash's encoding of one event (trace_event.hpp's
// trace_event_hash and trace_text_hash), inline: Trace::record() hashes every event it records, and
// a call per event cost more than most events' hashing. Internal to fakes/trace.
//
// Ownership: none (functions). Threading: text_word()'s cache is per OS thread; the rest is
// reentrant. Errors: a recorded text that changed under its address is a READYPORT_ASSERT failure
// (text_word()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "readyport/assert.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/fake/trace_event.hpp"
#include "readyport/internal/force_inline.hpp"

namespace readyport::trace_internal {

// FNV-1a 64 of a text's bytes: one word for the hasher. Recorded texts are literals or
// interned (trace_event.hpp), so one address always holds the same bytes: a small cache per
// thread, keyed by address and size, computes each name's word once. It only saves the work;
// every word is the bytes' own hash, so the result never depends on the cache or on addresses.
struct CachedWord {
  const char* data = nullptr;
  std::size_t size = 0;
  std::uint64_t word = 0;
};
constexpr std::size_t kCachedWordsMax = 256;
inline thread_local std::array<CachedWord, kCachedWordsMax> cached_words;
inline thread_local std::uint32_t cached_word_hits = 0;

// text_word()'s rare path: a miss (the word computed and kept), or every 64th hit, which checks
// the contract: a text that changed under its address (a recorder that passed a transient string,
// not a literal nor trace_intern()'s text) would otherwise give a wrong hash silently.
READYPORT_NOINLINE inline std::uint64_t text_word_slow(CachedWord& slot, std::string_view text) {
  if (slot.data != text.data() || slot.size != text.size()) {
    slot = CachedWord{text.data(), text.size(), fnv1a64(text)};
    return slot.word;
  }
  const bool recorded_text_is_stable = slot.word == fnv1a64(text);
  READYPORT_ASSERT(recorded_text_is_stable);
  return slot.word;
}

inline std::uint64_t text_word(std::string_view text) {
  const auto address = reinterpret_cast<std::uintptr_t>(text.data());
  CachedWord& slot = cached_words[(address * 0x9E3779B97F4A7C15ULL) >> 56];  // Fibonacci, 8 bits
  static_assert(kCachedWordsMax == 256);
  if (slot.data != text.data() || slot.size != text.size() || ++cached_word_hits % 64 == 0) {
    return text_word_slow(slot, text);
  }
  return slot.word;
}

// A part's tag in the encoding.
enum : std::uint64_t { kTagWord = 1, kTagField, kTagResult, kTagResultField, kTagName, kTagText };

// Words are mixed as FNV-1a mixes bytes: xor, then an odd multiplier. Each step is a bijection of
// the lane, so two encodings that differ in one word always differ there.
constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ULL;
constexpr std::uint64_t kLaneSeed = 0x6A09E667F3BCC909ULL;
inline std::uint64_t mix(std::uint64_t lane, std::uint64_t word) {
  return (lane ^ word) * kMultiplier;
}

// A list, the registrations or the entries: their words mixed into one word of their own.
inline std::uint64_t list_word(const TraceEvent& event, const TraceValue& value) {
  std::uint64_t lane = kLaneSeed;
  switch (value.kind) {
    case TraceValueKind::kList:
      for (std::uint32_t i = 0; i < value.count; ++i) {
        lane = mix(lane, event.numbers[value.number + i]);
      }
      return lane;
    case TraceValueKind::kRegs:
      lane = mix(lane, event.regs.size());
      for (const TraceReg& reg : event.regs) {
        lane = mix(lane, static_cast<std::uint64_t>(reg.socket));
        lane = mix(lane, reg.key);
        lane = mix(lane, std::uint64_t{reg.filter} | (std::uint64_t{reg.operation} << 16) |
                             (std::uint64_t{reg.trigger} << 24) |
                             (std::uint64_t{reg.has_result} << 32) |
                             (std::uint64_t{reg.applied} << 33));
        lane = mix(lane, reg.result_code);
      }
      return lane;
    case TraceValueKind::kEntries:
      lane = mix(lane, event.entries.size());
      for (const TraceEntry& entry : event.entries) {
        lane = mix(mix(lane, entry.key), entry.mask);
      }
      return lane;
    default:
      READYPORT_UNREACHABLE();
  }
}

// An event's words, mixed as they come in two lanes (two chains of multiplications side by side),
// then the lanes mixed into one. The words alternate between the lanes: the time, thread and name
// go to a, b, a; then each value's two words go to b, a.
class EventMixer {
 public:
  EventMixer(std::uint64_t basis, std::uint64_t time_ns, std::uint64_t thread_word,
             std::uint64_t name_word)
      : a_(mix(mix(basis, time_ns), name_word)), b_(mix(basis ^ kLaneSeed, thread_word)) {}

  // A value's two words: its part (`tag`) and kind, xor-ed with its key's word (0 for a bare word
  // or the result: for one key, distinct kinds stay distinct); then its number, or the word that
  // stands for its text or its list.
  void add_value(const TraceEvent& event, std::uint64_t tag, std::uint64_t key_word,
                 const TraceValue& value) {
    b_ = mix(b_, key_word ^ (tag | (static_cast<std::uint64_t>(value.kind) << 8) |
                             (static_cast<std::uint64_t>(value.element) << 16) |
                             (static_cast<std::uint64_t>(value.count) << 24)));
    switch (value.kind) {
      case TraceValueKind::kText:
        a_ = mix(a_, text_word(value.text));
        return;
      case TraceValueKind::kList:
      case TraceValueKind::kRegs:
      case TraceValueKind::kEntries:
        a_ = mix(a_, list_word(event, value));
        return;
      default:
        a_ = mix(a_, value.number);
        return;
    }
  }

  std::uint64_t hash() const { return mix(a_, (b_ << 32) | (b_ >> 32)); }

 private:
  std::uint64_t a_;
  std::uint64_t b_;
};

// trace_event_hash(), inline.
READYPORT_FORCE_INLINE std::uint64_t event_hash(const TraceEvent& event, std::uint64_t basis) {
  EventMixer mixer(basis, event.time_ns, std::uint64_t{event.thread} | (kTagName << 32),
                   event.name_word);
  for (const TraceValue& word : event.words) {
    mixer.add_value(event, kTagWord, 0, word);
  }
  for (const TraceField& field : event.fields) {
    mixer.add_value(event, kTagField, field.key_word, field.value);
  }
  if (event.has_result) {
    mixer.add_value(event, kTagResult, 0, event.result);
    for (const TraceField& field : event.result_fields) {
      mixer.add_value(event, kTagResultField, field.key_word, field.value);
    }
  }
  return mixer.hash();
}

}  // namespace readyport::trace_internal
