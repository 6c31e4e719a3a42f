// readyport/fake/trace.hpp: a run's events, their 64-bit hash, and their text when asked for.
//
// A Trace is what a run did, one event per line: every seam call with its arguments and result
// (written by RecordingOs), every fault (FaultyOs), every scheduler decision (SimScheduler) and the
// workload's and the engine's own lines. Recorders append events as values (trace_event.hpp); the
// text is rendered only when kept (keep_full), asked for (tail) or wanted by a text sink. Two runs
// of the same seed must give the same events, so the same hash and the same text, byte for byte,
// on every OS and compiler; tests and ci/compare_traces.sh check it. The hash covers each event's
// canonical encoding (trace_event_hash: numbers as numbers), never its text, so two traces can be
// compared without keeping or rendering either.
//
//   readyport::Trace trace;                                  // keeps the full text
//   readyport::SimScheduler sim({.seed = 7, .trace = &trace});
//   ...
//   std::printf("%s\n%s", trace.hash_hex().c_str(), trace.text().c_str());
//
// Each line is `<seq> <time_ns> T<thread> <event>\n`. The format is stable (changing it changes
// every recorded text); its fields and every event: docs/simulation.md#reading-a-trace. Bounded
// memory (keep_full = false, tail_lines_max = K) and sinks:
// docs/simulation.md#the-hash-bounded-traces-and-sinks.
//
// Ownership: a plain object; whoever records into it holds a pointer and must not outlive it. An
// event's views must outlive the trace (trace_event.hpp: literals or interned text).
// Threading: record() may be called from any thread (internally synchronised, unless
// TraceOptions::serialized: then the owner keeps records apart); readers may run concurrently
// with writers but see a consistent prefix only when writers are done. A sink gets each event
// under the trace's mutex (or the owner's serialisation): it must not block nor record into the
// same trace.
// Errors: none; text() on a trace without the full text asserts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "readyport/fake/trace_event.hpp"

namespace readyport {

// FNV-1a, 64 bits, over bytes: the basis of trace hashes (kFnv1a64OffsetBasis) and of the hashes
// built from them. Stable on every platform.
inline constexpr std::uint64_t kFnv1a64OffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnv1a64Prime = 0x100000001b3ULL;
// Continues a hash `basis` over `bytes` (fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b)).
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t basis = kFnv1a64OffsetBasis);
// 16 lower-case hex digits.
std::string hash_hex(std::uint64_t hash);

struct TraceOptions {
  // Keep the whole text (text() works). false: keep only the hash, the count and the tail.
  bool keep_full = true;
  // Keep the last this many lines for tail() (0: none). Bounded memory when keep_full is false.
  std::uint32_t tail_lines_max = 64;
  // Keep projection_hash() (one more hash of each line).
  bool projections = false;
  // The owner promises that records never overlap one another nor a reader: a SimScheduler run,
  // where one logical thread runs at a time and each hand-off synchronises. record() then takes
  // no lock (readers still do). Never for real threads.
  bool serialized = false;
  // With keep_full: the text kept holds at most about this many bytes (0: no bound). Past it the
  // text stops growing (full_cut() says so): the hash, the count, the tail and the sink go on, so
  // a long run is still judged whole, only its text is a prefix. Last, so that initialisations
  // that name the fields above in order keep their meaning.
  std::uint64_t full_bytes_max = 0;
};

// Receives every event of a Trace as it is recorded
// (docs/simulation.md#the-hash-bounded-traces-and-sinks). Not owned by the trace.
class TraceSink {
 public:
  // An event recorded as values (stamped with its seq, time and thread); valid only during the
  // call. By default rendered and passed to on_trace_line: a sink that reads values overrides it.
  virtual void on_trace_event(const TraceEvent& event);
  // A line recorded as text, or an event rendered: "<seq> <time_ns> T<thread> <event>\n"; valid
  // only during the call.
  virtual void on_trace_line(std::string_view line) = 0;

 protected:
  ~TraceSink() = default;
};

// Where a trace line's time and thread come from. RecordingOs asks its context for each line.
// Implementations must be cheap and callable from any thread that makes seam calls.
struct TraceStamp {
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
};

class TraceContext {
 public:
  virtual ~TraceContext() = default;
  virtual std::uint64_t trace_time_ns() const = 0;
  virtual std::uint32_t trace_thread() const = 0;
  // Both at once (what record() asks for every line): one call where a context can do better.
  virtual TraceStamp trace_stamp() const { return TraceStamp{trace_time_ns(), trace_thread()}; }
};

// For real backends, whose clocks and thread ids change from run to run: time is always 0 (the
// sequence number orders events) and threads are numbered 1, 2, ... in the order they first
// record; threads beyond kThreadsMax all share the number kThreadsMax + 1.
class CountingTraceContext final : public TraceContext {
 public:
  static constexpr std::uint32_t kThreadsMax = 256;
  std::uint64_t trace_time_ns() const override { return 0; }
  // 1-based first-use order; a thread beyond kThreadsMax gets kThreadsMax + 1.
  std::uint32_t trace_thread() const override;

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::thread::id> threads_;  // guarded by mutex_, at most kThreadsMax
};

class Trace {
 public:
  explicit Trace(TraceOptions options = {});
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Appends `event`, stamped with the next seq, `time_ns` and `thread` (written into it).
  void record(std::uint64_t time_ns, std::uint32_t thread, TraceEvent& event);
  void record(const TraceContext& context, TraceEvent& event) {
    const TraceStamp stamp = context.trace_stamp();
    record(stamp.time_ns, stamp.thread, event);
  }
  // Appends the line "<seq> <time_ns> T<thread> <event>\n" given as text (for lines no recorder
  // builds as values: tests, rare free-form lines). `event` must not contain '\n'. It is hashed
  // as its bytes (trace_text_hash) and reaches the sink as text.
  void record(std::uint64_t time_ns, std::uint32_t thread, std::string_view event);
  void record(const TraceContext& context, std::string_view event) {
    record(context.trace_time_ns(), context.trace_thread(), event);
  }

  // The hash of every event so far (recorded, kept or not): trace_event_hash (or trace_text_hash
  // for a line given as text) chained from kFnv1a64OffsetBasis, in seq order.
  std::uint64_t hash() const;
  std::string hash_hex() const { return readyport::hash_hex(hash()); }
  // A hash of each thread's own events in its own order (time and event, without the seq and the
  // scheduler's sched.* lines), combined in thread order: two runs that differ only in the order
  // of commuting steps of different threads have the same one (a run's class, for SimExplorer's
  // pruning checks), where their hash() differs. TraceOptions::projections must be set.
  std::uint64_t projection_hash() const;
  std::uint64_t line_count() const;
  bool keeps_full() const { return options_.keep_full; }
  // The memory the kept text holds, in bytes (0 without keep_full): for a bound on a run's trace.
  std::uint64_t text_bytes() const;
  // Whether the kept text stopped at TraceOptions::full_bytes_max (text() is then a prefix).
  bool full_cut() const;
  // The full text. Asserts keep_full, and that take_text() was not called.
  std::string text() const;
  // The full text, moved out (no copy of a large text): for a run's owner once the run is over.
  // Nothing may be recorded after it, and text() asserts. Asserts keep_full.
  std::string take_text();
  // The full text if kept whole (not cut at full_bytes_max) and no line is being recorded (never
  // blocks): for a last report.
  bool try_text(std::string* text_out) const;
  // The last tail_lines_max lines (each with its '\n'), oldest first, rendered now.
  std::vector<std::string> tail() const;
  // Forgets everything (hash back to the offset basis, seq back to 0). Keeps the sink.
  void clear();
  // Every line recorded from now on also goes to `sink` (null: none). The sink must outlive the
  // trace or be unset first. Threading: any thread; a line being recorded meanwhile goes to the
  // old or the new sink, never both.
  void set_sink(TraceSink* sink);

 private:
  // One event of the tail: kept as values, or as its line when it was recorded as text.
  struct TailEntry {
    TraceEvent event;
    std::string line;  // the rendered line of a text record; empty for an event
  };
  // The projection hash of `thread`'s events, made on first use.
  std::uint64_t& projection_locked(std::uint32_t thread);
  // The tail's entry to write next: a new one, or the oldest once the ring is full.
  TailEntry& tail_next_locked();
  // Whether the next line goes into the kept text (keep_full, within full_bytes_max).
  bool keep_text_locked();

  const TraceOptions options_;
  mutable std::mutex mutex_;
  std::uint64_t hash_ = kFnv1a64OffsetBasis;  // guarded by mutex_
  std::uint64_t line_count_ = 0;              // guarded by mutex_
  std::vector<std::uint64_t> thread_hashes_;  // guarded by mutex_; index: the thread
  std::string text_;                          // guarded by mutex_; only with keep_full
  bool full_cut_ = false;                     // guarded by mutex_; text_ stopped growing
  bool taken_ = false;                        // guarded by mutex_; take_text() moved text_ out
  std::vector<TailEntry> tail_;               // guarded by mutex_; a ring of tail_lines_max
  std::size_t tail_oldest_ = 0;               // guarded by mutex_; tail_'s oldest, once full
  std::string line_;                          // guarded by mutex_; scratch, reused
  TraceSink* sink_ = nullptr;                 // guarded by mutex_; not owned
};

}  // namespace readyport
