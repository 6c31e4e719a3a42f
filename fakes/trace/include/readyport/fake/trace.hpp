// readyport/fake/trace.hpp: a run's events as stable text, and its 64-bit hash.
//
// A Trace is what a run did, one line per event: every seam call with its arguments and result
// (written by RecordingOs) and every scheduler decision (written by SimScheduler). Two runs of the
// same seed must give the same text byte for byte, on every OS and compiler; tests and
// ci/compare_traces.sh check it. The hash is FNV-1a 64 over the whole text, so two traces can be
// compared without keeping either.
//
//   readyport::Trace trace;                                  // keeps the full text
//   readyport::SimScheduler sim({.seed = 7, .trace = &trace});
//   ...
//   std::printf("%s\n%s", trace.hash_hex().c_str(), trace.text().c_str());
//
// ---- The text format (stable: changing it changes every recorded hash) --------------------------
//
// Each line is
//
//   <seq> <time_ns> T<thread> <event>\n
//
// - seq: the line's number, decimal, from 0, in the order lines were recorded.
// - time_ns: the virtual clock in nanoseconds when the event was recorded (after the call
//   returned), decimal. 0 for a context without a clock (a real backend).
// - thread: the logical thread, decimal: 0 for a thread the runtime did not start (a test's main
//   thread), 1 for SimScheduler::run's body, then 2, 3, ... in start order.
// - event: a name, then `key=value` fields separated by single spaces, then for calls ` -> `
//   and the result. Integers are decimal unless the field is a mask or a flag set (then `0x`
//   and lower-case hex); error codes are printed by name (`WAIT_TIMEOUT`) or, when unknown, as
//   `error(<decimal>)`. Lists are `[a,b,...]`. No addresses, no real times, no values that can
//   change between runs of the same seed appear anywhere.
//
// Events written by RecordingOs (see recording_os.hpp for the complete list), for example:
//   psn.begin port=2 regs=[s=256/key=7/filter=0x1/op=ENABLE/trig=0x5]
//                                           written before a PSN with registrations calls the OS
//   psn port=2 regs=[s=256/key=7/filter=0x1/op=ENABLE/trig=0x5/res=0] timeout=10 count=8
//       -> ERROR_SUCCESS n=1 entries=[key=7/mask=0x1]
//   gqcs port=2 count=4 timeout=4294967295 alertable=0 -> 1 n=1 entries=[key=99/mask=0x0]
//   post port=2 bytes=0x0 key=99 -> 1
//   socket af=2 type=1 proto=6 -> 256
//   m2.lock
// (shown wrapped here; a trace line never contains a newline).
//
// Events written by FaultyOs (faulty_os.hpp lists them) when a fault site fires, before it acts:
//   fault psn.remove_fails s=260 code=WSAEINVAL
//   fault recv.wouldblock s=260
//
// Events written by SimScheduler all begin with `sched.`:
//   sched.params seed=7 strategy=pct depth=3 estimate=400 change_points=[57,311] steps_max=..
//                                           the first line of a SimScheduler run (thread 0)
//   sched.start T3 name=worker-2            the line's thread started T3 (names are the
//                                           caller's; keep them free of spaces)
//   sched.pick T3 of=[T1,T3] at=now_ns      the strategy chose T3 among the runnable threads at
//                                           the line's thread's scheduling point `at` (written
//                                           only when there was a choice or a switch)
//   sched.park call=sleep_ms deadline=5000000    the line's thread parked in a seam call
//                                           (`call` as FakeOs names it; deadline virtual ns or
//                                           `none`)
//   sched.park call=Thread::join target=T3  the line's thread waits for T3 to finish
//   sched.wake T3                           the line's thread woke parked T3
//   sched.time to=5000000 ready=[T2,T4]     every thread was parked: virtual time jumped to the
//                                           earliest deadline; T2 and T4 timed out
//   sched.demote T2 change=1                a PCT priority change point
//   sched.finish                            the line's thread returned from its body
//   sched.deadlock [T1:Thread::join,T2:lock]   the run ended in a deadlock: each unfinished
//                                           thread with its last call
//   sched.limit steps=100000                the run ended at the step limit
//
// ---- Memory ------------------------------------------------------------------------------------
// With `keep_full` (the default) the whole text is kept. For long runs, set keep_full = false and
// tail_lines_max = K: the trace keeps only the hash, the line count and the last K lines.
//
// ---- Sinks --------------------------------------------------------------------------------------
// set_sink(sink) hands every later line, complete with its '\n', to `sink` as it is recorded, in
// order, under the trace's mutex (so a sink sees one line at a time). An online checker such as
// LifetimeOracle (lifetime_oracle.hpp) is a sink. A sink must not record into the same trace (that
// would deadlock) and must not block. The sink changes neither the text nor the hash.
//
// Ownership: a plain object; whoever records into it holds a pointer and must not outlive it.
// Threading: record() may be called from any thread (internally synchronised); readers may run
// concurrently with writers but see a consistent prefix only when writers are done.
// Errors: none; text() on a trace without the full text asserts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace readyport {

// FNV-1a, 64 bits: the hash of traces. Stable on every platform.
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
};

// Receives every line of a Trace as it is recorded (see "Sinks" above). Not owned by the trace.
class TraceSink {
 public:
  // `line` is "<seq> <time_ns> T<thread> <event>\n"; valid only during the call.
  virtual void on_trace_line(std::string_view line) = 0;

 protected:
  ~TraceSink() = default;
};

// Where a trace line's time and thread come from. RecordingOs asks its context for each line.
// Implementations must be cheap and callable from any thread that makes seam calls.
class TraceContext {
 public:
  virtual ~TraceContext() = default;
  virtual std::uint64_t trace_time_ns() const = 0;
  virtual std::uint32_t trace_thread() const = 0;
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

  // Appends the line "<seq> <time_ns> T<thread> <event>\n". `event` must not contain '\n'.
  void record(std::uint64_t time_ns, std::uint32_t thread, std::string_view event);
  // The same, stamped by `context`.
  void record(const TraceContext& context, std::string_view event) {
    record(context.trace_time_ns(), context.trace_thread(), event);
  }

  // FNV-1a 64 of the text so far (of every line ever recorded, kept or not).
  std::uint64_t hash() const;
  std::string hash_hex() const { return readyport::hash_hex(hash()); }
  std::uint64_t line_count() const;
  bool keeps_full() const { return options_.keep_full; }
  // The full text. Asserts keep_full.
  std::string text() const;
  // The full text if kept and no line is being recorded (never blocks): for a last report.
  bool try_text(std::string* text_out) const;
  // The last tail_lines_max lines (each with its '\n'), oldest first.
  std::vector<std::string> tail() const;
  // Forgets everything (hash back to the offset basis, seq back to 0). Keeps the sink.
  void clear();
  // Every line recorded from now on also goes to `sink` (null: none). The sink must outlive the
  // trace or be unset first. Threading: any thread; a line being recorded meanwhile goes to the
  // old or the new sink, never both.
  void set_sink(TraceSink* sink);

 private:
  const TraceOptions options_;
  mutable std::mutex mutex_;
  std::uint64_t hash_ = kFnv1a64OffsetBasis;  // guarded by mutex_
  std::uint64_t line_count_ = 0;              // guarded by mutex_
  std::string text_;                          // guarded by mutex_; only with keep_full
  std::deque<std::string> tail_;              // guarded by mutex_; at most tail_lines_max
  std::string line_;                          // guarded by mutex_; scratch, reused
  TraceSink* sink_ = nullptr;                 // guarded by mutex_; not owned
};

}  // namespace readyport
