// readyport/fake/faulty_os.hpp: FaultyOs, an Os decorator that injects faults by a seeded plan.
//
// FaultyOs forwards every seam call to the Os it wraps (ForwardingOs) and, at the named fault
// sites of a FaultPlan (fault_plan.hpp), makes the call fail or behave as the spec allows in a
// way the engine must survive: a transient whole-call PSN failure (A3), a registration element
// not applied (A8, B6), a wait that ends early (A5), a short batch (A1), a stale readiness mask
// (D5), a reset connection (D2), exhausted resources. Faults are first class: which sites are
// active is the plan, each hit is decided by a seeded Rng, each firing is written to the trace
// before it acts, and the run replays from its seed.
//
//   readyport::FakeOs fake(fake_options, sim);
//   readyport::RecordingOs recording(fake, trace, context);
//   readyport::FaultyOs os(recording, readyport::FaultPlan::draw(seed), seed, &trace, &context);
//   readyport::Engine engine(os, engine_options);  // Engine(FaultyOs(RecordingOs(FakeOs)))
//   ...
//   os.set_enabled(false);                          // the liveness phase: nothing fires
//
// WHAT FIRES (per hit of an active site, with the site's rate; sites and names in fault_plan.hpp):
// - process_socket_notifications, in this order:
//   psn.call_fails (once per call): returns ERROR_NOT_ENOUGH_MEMORY, ERROR_NO_SYSTEM_RESOURCES or
//     WSAENOBUFS (drawn); the inner Os is not called, nothing is written to the registrations,
//     *received_out = 0 when received_out is non-null. No later site is drawn for that call.
//   psn.enable_fails / psn.remove_fails (once per ENABLE or DISABLE / REMOVE element, in array
//     order; OP_NONE and unknown operations are not drawn): the element is left out of the
//     array passed to the inner call and gets registration_result WSAENOBUFS / WSAEINVAL.
//     The kept elements are copied, in order, to a scratch array (nullptr and count 0 when none
//     is kept, spec A4); their results are copied back afterwards. When the inner call fails as
//     a whole (any result but ERROR_SUCCESS and WAIT_TIMEOUT: spec A3, nothing changed), the
//     left-out elements' registration_result is NOT written either: the caller sees a whole-call
//     failure, as the OS would report it. A call with more than kRegistrationsMax elements is
//     not drawn for these two sites.
//   psn.wait_short (when timeout_ms > 0 and completion_count > 0): the inner call gets
//     timeout_ms 0.
//   psn.dequeue_fewer (when completion_count >= 2): the inner call gets a completion_count drawn
//     uniformly in [1, completion_count - 1].
// - post_queued_completion_status: post.fails: returns false, last error ERROR_NOT_ENOUGH_MEMORY,
//   nothing queued.
// - create_io_completion_port: port.create_fails: returns kInvalidPort, last error
//   ERROR_NOT_ENOUGH_MEMORY.
// - thread_start: thread.start_fails: a kOsError Status "injected: thread_start failed", nothing
//   started.
// - recv: recv.wouldblock, then recv.connreset: kSocketError with WSAEWOULDBLOCK / WSAECONNRESET,
//   nothing read.
// - send: send.wouldblock, then send.connreset, then send.nobufs: kSocketError with
//   WSAEWOULDBLOCK / WSAECONNRESET / WSAENOBUFS, nothing sent.
// - accept: accept.emfile, then accept.connreset: kInvalidSocket with WSAEMFILE / WSAECONNRESET;
//   the pending connection stays pending.
// - closesocket of a socket that was returned by accept or passed to connect through this
//   FaultyOs (a connected stream socket; a refused one has no peer and is unaffected): close.
//   abortive: inner set_linger(s, true, 0), then closesocket: the peer sees ERR and
//   WSAECONNRESET (spec D2). Other sockets are not drawn.
// Within one call the sites are drawn in the order listed and the first that fires ends the
// draw (except the PSN sites, which combine). A site "hits" when it is drawn; counts() reports
// hits and firings per site.
//
// TRACE: when a site fires and `trace` is non-null, one line through trace->record(*context,
// ...) BEFORE acting (so before the inner call's own lines):
//   fault psn.call_fails code=<code>[ regs=[s=<s>/key=<k>/filter=0x<f>/op=<OP>/trig=0x<t>,...]]
//                                        (regs, as psn.begin's, when registration_count > 0)
//   fault psn.enable_fails s=<s> op=<ENABLE|DISABLE> code=WSAENOBUFS
//   fault psn.remove_fails s=<s> code=WSAEINVAL
//   fault psn.wait_short timeout=<ms>
//   fault psn.dequeue_fewer count=<n> to=<m>
//   fault post.fails code=ERROR_NOT_ENOUGH_MEMORY
//   fault port.create_fails code=ERROR_NOT_ENOUGH_MEMORY
//   fault thread.start_fails name=<name>
//   fault <recv|send>.<wouldblock|connreset> s=<s>     fault send.nobufs s=<s>
//   fault accept.<emfile|connreset> s=<listening s>    fault close.abortive s=<s>
// Codes by os_error_name(). No addresses, no times: the text is stable.
//
// LAST ERROR: an injected failure of a call that reports through last_error() (post, create
// port, recv, send, accept) is held in a per-logical-thread slot (logical_locals.hpp: the
// owning FaultyOs and the code; per OS thread with real threads, per fiber under SimScheduler's
// fiber mechanism). last_error() on that thread returns it, without calling the inner Os, until
// that thread's next call through this FaultyOs, which clears it first (every method does,
// through ForwardingOs::before_call). A thread with no injected error gets the inner last_error().
// The destructor clears the destroying thread's slot only: destroy a FaultyOs after the other
// threads that used it have ended (as os.hpp requires anyway), or a new FaultyOs at the same
// address could see their stale slots.
//
// DETERMINISM: each site counts its hits from 1. The decision at a site's n-th hit (fire or not,
// and the drawn code or count) is a pure function of (seed mixed with a salt of its own, so it
// never equals the stream FaultPlan::draw reads, the site, n): a hit's decision never depends on
// another hit's. So the plan made of exactly the hits that fired (fired_hits(), as
// FaultPlan::of_hits) replays the run, and leaving one hit out of it changes that one fault and
// what follows from it, nothing else (the shrinker's per-fault step, stress_shrink.hpp). A
// pinned site (`site#n`) fires at its listed hits only; an armed hit fires whatever the plan.
// OUTAGES (fault_plan.hpp, `site@rate!k` and `site@rate~tms`): a rated site that fires by its rate
// starts an outage when its plan gives one; the site then fires at every hit until k hits (the
// first included) or t ms of virtual time (the trace context's clock) have passed.
// set_enabled(false) ends every outage (the liveness phase is fault-free; one cut short is
// counted in FaultCounts::outages_cut). Every hit an outage fires is a fired hit like any other,
// so fired_hits() still replays the run exactly.
// The state is guarded by a std::mutex that is never held across a call into the inner Os (nor
// while recording). In simulation one logical thread runs at a time, so the order of hits, and
// hence the run, is a pure function of the seed. With real threads (FreeRuntime) it is not.
//
// Ownership: borrows `inner`, `trace` and `context`, which must outlive it. Mutexes and threads
// are the inner Os's. Holds up to one scratch array of kRegistrationsMax elements per thread that
// is inside a faulted PSN at once (one allocated in the constructor, more on first need).
// Threading: every method may be called from any thread (as os.hpp); the controls too.
// Re-entrancy: none beyond the inner Os's. Errors: the inner Os's, plus the injected ones above.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/forwarding_os.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/os.hpp"

namespace readyport {

// What FaultyOs did, per site (indexed by FaultSite) and in total.
struct FaultCounts {
  std::array<std::uint64_t, kFaultSiteCount> hits{};     // times the site was drawn
  std::array<std::uint64_t, kFaultSiteCount> fired{};    // times it fired (hits include these)
  std::array<std::uint64_t, kFaultSiteCount> outages{};  // outages started (each fired first)
  // Hits an outage fired after the one that started it (fired includes them).
  std::array<std::uint64_t, kFaultSiteCount> outage_fired{};
  // Outages still going when set_enabled(false) ended them (the liveness boundary).
  std::array<std::uint64_t, kFaultSiteCount> outages_cut{};
  // Failures in a row on one thread (the trace context's thread; none without a context): each
  // counts once when a thread's run of failures reaches its length, so that the paths behind a
  // spent retry budget show. kRunLongPsn is EngineOptions::call_retry_max's default.
  std::uint64_t psn_regs_runs = 0;      // PSN calls carrying registrations, kRunLongPsn in a row
  std::uint64_t psn_dequeue_runs = 0;   // PSN calls with none (dequeue only), kRunLongPsn in a row
  std::uint64_t post_runs = 0;          // posts, kRunLongOther in a row
  std::uint64_t thread_start_runs = 0;  // thread starts, kRunLongOther in a row
  std::uint64_t hits_total = 0;
  std::uint64_t fired_total = 0;

  std::uint64_t hits_of(FaultSite site) const { return hits[static_cast<std::size_t>(site)]; }
  std::uint64_t fired_of(FaultSite site) const { return fired[static_cast<std::size_t>(site)]; }
};

class FaultyOs final : public ForwardingOs {
 public:
  // The lengths of a run of failures that FaultCounts counts (see there), and the threads (by
  // trace context thread number, below this) whose runs are followed.
  static constexpr std::uint32_t kRunLongPsn = 8;
  static constexpr std::uint32_t kRunLongOther = 3;
  static constexpr std::uint32_t kRunThreadsMax = 256;
  // The most registration elements a PSN call may carry to be drawn for psn.enable_fails and
  // psn.remove_fails (FakeOptions::batch_max's default; larger calls are forwarded unstripped).
  static constexpr std::uint32_t kRegistrationsMax = 4096;

  // `trace` may be null (no fault lines); when it is not, `context` must not be null. Time
  // outages are measured on `clock`'s trace_time_ns() (null: `context`'s; a recorder whose lines
  // carry no time, such as CountingTraceContext, needs a clock of its own); a plan with a time
  // outage needs one (asserted).
  FaultyOs(Os& inner, FaultPlan plan, std::uint64_t seed, Trace* trace, const TraceContext* context,
           const TraceContext* clock = nullptr);
  ~FaultyOs() override;

  // ---- Controls: any thread, any time; take effect at the next hit. ----
  // false: no site fires (armed ones still do), and every outage ends; hits are still counted.
  // Initially true.
  void set_enabled(bool enabled);
  bool enabled() const;
  // The next hit of `site` fires, once, even if the site is inactive or firing is disabled. Each
  // call arms one more firing. For property tests.
  void arm_next(FaultSite site);
  FaultCounts counts() const;
  const FaultPlan& plan() const { return plan_; }
  // The hits that fired by the plan (armed ones excluded), in firing order: at most
  // kFiredHitsMax; fired_hits_complete() is false when more fired than that were kept.
  static constexpr std::size_t kFiredHitsMax = FaultPlan::kHitsMax;
  std::vector<FaultHit> fired_hits() const;
  bool fired_hits_complete() const;

  // ---- Os: the intercepted calls (see WHAT FIRES); the rest is ForwardingOs's. ----
  Port create_io_completion_port(std::uint32_t concurrency) override;
  std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                             SockNotifyRegistration* registrations,
                                             std::uint32_t timeout_ms,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received_out) override;
  bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                     std::uintptr_t completion_key,
                                     std::uintptr_t overlapped) override;
  Socket accept(Socket s, Ipv4Address* peer_out) override;
  int connect(Socket s, const Ipv4Address& address) override;
  int send(Socket s, const void* data, int length, int flags) override;
  int recv(Socket s, void* data, int length, int flags) override;
  int closesocket(Socket s) override;
  std::uint32_t last_error() override;
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;

 protected:
  // Ends this thread's injected last error (see LAST ERROR).
  void before_call() override;

 private:
  struct Scratch;

  // Draws `site` once: counts the hit and decides. When it fires and `choices` > 0, also draws
  // *choice_out uniformly in [0, choices). Takes mutex_.
  bool hit(FaultSite site, std::uint64_t choices = 0, std::uint64_t* choice_out = nullptr);
  // `now_ns`: clock_now_ns(), read before mutex_ was taken.
  bool hit_locked(FaultSite site, std::uint64_t choices, std::uint64_t* choice_out,
                  std::uint64_t now_ns);
  // The time outages' clock (0 when the plan has none). Called without mutex_: a clock may call
  // into an Os.
  std::uint64_t clock_now_ns() const;
  // Whether site index `i` is inside an outage at its hit `hit`; starting one after a firing.
  // Both with mutex_ held.
  bool outage_holds(std::size_t i, std::uint64_t hit, std::uint64_t now_ns) const;
  void start_outage(FaultSite site, std::uint64_t hit, std::uint64_t now_ns);
  // One call of kind `run` on the calling thread failed (true) or not: its run of failures, and
  // `counted` when the run reaches `length`. Takes mutex_.
  enum class Run : std::uint8_t { kPsnRegs, kPsnDequeue, kPost, kThreadStart, kCount };
  void note_run(Run run, bool failed);
  // Draws every element's site; writes each element's injected code (0: kept) to codes_out.
  // Returns how many are left out.
  std::uint32_t draw_elements(const SockNotifyRegistration* registrations, std::uint32_t count,
                              std::uint32_t* codes_out);
  // The inner PSN call with the elements whose code is 0, then the results written back.
  std::uint32_t call_stripped(Scratch& scratch, Port port, std::uint32_t registration_count,
                              SockNotifyRegistration* registrations, std::uint32_t timeout_ms,
                              std::uint32_t completion_count, OverlappedEntry* entries,
                              std::uint32_t* received_out);
  std::unique_ptr<Scratch> scratch_take();
  void scratch_give(std::unique_ptr<Scratch> scratch);
  // Records "fault <event>" when there is a trace.
  void record_fault(std::string_view event);
  // Records `fault <site> s=<s>`, sets the injected last error, returns kSocketError.
  int fail_socket_call(FaultSite site, Socket s, std::uint32_t code);
  void inject_last_error(std::uint32_t code);

  const FaultPlan plan_;
  Trace* const trace_;
  const TraceContext* const context_;
  const TraceContext* const clock_;  // time outages' clock: `clock`, else context_

  mutable std::mutex mutex_;
  const std::uint64_t decision_seed_;
  bool enabled_ = true;                                 // guarded by mutex_
  std::array<std::uint32_t, kFaultSiteCount> armed_{};  // guarded by mutex_
  // The current outage of each site: down through this hit, or until this virtual time (0: none).
  std::array<std::uint64_t, kFaultSiteCount> down_through_hit_{};  // guarded by mutex_
  std::array<std::uint64_t, kFaultSiteCount> down_until_ns_{};     // guarded by mutex_
  // Each followed thread's current run of failures, per kind.
  std::array<std::array<std::uint32_t, static_cast<std::size_t>(Run::kCount)>, kRunThreadsMax>
      runs_{};                                          // guarded by mutex_
  FaultCounts counts_;                                  // guarded by mutex_
  std::vector<FaultHit> fired_hits_;                    // guarded by mutex_
  bool fired_hits_complete_ = true;                     // guarded by mutex_
  std::set<Socket> connected_;                          // guarded by mutex_: close.abortive's
  std::vector<std::unique_ptr<Scratch>> scratch_free_;  // guarded by mutex_
};

}  // namespace readyport
