// readyport/fake/faulty_os.hpp: FaultyOs, an Os decorator that injects faults by a seeded plan.
//
// FaultyOs forwards every seam call to the Os it wraps and, at the named fault sites of a
// FaultPlan (fault_plan.hpp), makes the call fail or behave as the spec allows in a way the engine
// must survive. Each hit is decided from the seed, each firing is written to the trace before it
// acts, and the run replays from its seed.
//
//   readyport::FakeOs fake(fake_options, sim);
//   readyport::RecordingOs recording(fake, trace, context);
//   readyport::FaultyOs os(recording, readyport::FaultPlan::draw(seed), seed, &trace, &context);
//   readyport::Engine engine(os, engine_options);  // Engine(FaultyOs(RecordingOs(FakeOs)))
//   ...
//   os.set_enabled(false);                          // the liveness phase: nothing fires
//
// What fires at each site, the fault lines, the injected last error and why a run replays:
// docs/faults.md#faultyos.
//
// Ownership: borrows `inner`, `trace` and `context`, which must outlive it; mutexes and threads
// are the inner Os's. Holds one scratch array of kRegistrationsMax elements per thread inside a
// faulted PSN at once (one allocated in the constructor, more on first need).
// Lifetime: destroy it after the other threads that used it have ended (as os.hpp requires).
// Threading: every method, the controls too, from any thread (as os.hpp); its mutex is never held
// across a call into the inner Os. A run is a pure function of the seed in simulation only.
// Re-entrancy: none beyond the inner Os's. Errors: the inner Os's, plus the injected ones.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
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
  // Every hit of an active site asks `chooser` whether it fires (outages and rates are not drawn;
  // armed hits still fire): a systematic exploration's branch point (SimScheduler::choose). Set
  // it before the first hit; called under this FaultyOs's mutex, from the hitting thread.
  using FaultChooser = std::function<bool(FaultSite site)>;
  void set_chooser(FaultChooser chooser);
  // Sockets on which a stale WSAEWOULDBLOCK is no OS's behaviour: `veto(s)` true, and the
  // recv.wouldblock and send.wouldblock sites pass over that call (its hit is not counted).
  // A level registration shrugs a stale one off (the condition still holds); an edge-triggered one
  // would never hear of that data or room again (the harness vetoes its edge-registered sockets;
  // the main job draws neither site for an edge workload). Called from the calling thread, with no
  // lock held; it must not make seam calls. Set it before the first call.
  using SocketVeto = std::function<bool(Socket s)>;
  void set_stale_veto(SocketVeto veto) { stale_veto_ = std::move(veto); }
  FaultCounts counts() const;
  const FaultPlan& plan() const { return plan_; }
  // The hits that fired by the plan (armed ones excluded), in firing order: at most
  // kFiredHitsMax; fired_hits_complete() is false when more fired than that were kept.
  static constexpr std::size_t kFiredHitsMax = FaultPlan::kHitsMax;
  std::vector<FaultHit> fired_hits() const;
  bool fired_hits_complete() const;

  // ---- Os: the intercepted calls (docs/faults.md#faultyos); the rest is ForwardingOs's. ----
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
  // Ends this thread's injected last error (docs/faults.md#the-injected-last-error).
  void before_call() override;

 private:
  struct Scratch;

  // Draws `site` once: counts the hit and decides. When it fires and `choices` > 0, also draws
  // *choice_out uniformly in [0, choices). Takes mutex_.
  bool hit(FaultSite site, std::uint64_t choices = 0, std::uint64_t* choice_out = nullptr);
  // Draws `sites` in turn, as hit() would one after another, until one fires (a call's
  // alternative failures): one lock and one clock reading for them all. Returns the site that
  // fired, or FaultSite::kCount when none did. Takes mutex_.
  FaultSite hit_first(std::initializer_list<FaultSite> sites);
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
  // Records a `fault <site> ...` event (site_event) when there is a trace.
  void record_fault(TraceEvent& event);
  void record_fault(TraceEvent&& event) { record_fault(event); }
  // Records `fault <site> s=<s>`, sets the injected last error, returns kSocketError.
  int fail_socket_call(FaultSite site, Socket s, std::uint32_t code);
  void inject_last_error(std::uint32_t code);

  const FaultPlan plan_;
  const bool time_outages_;  // plan_.has_time_outage(), asked at every hit
  Trace* const trace_;
  const TraceContext* const context_;
  const TraceContext* const clock_;  // time outages' clock: `clock`, else context_

  mutable std::mutex mutex_;
  const std::uint64_t decision_seed_;
  bool enabled_ = true;                                 // guarded by mutex_
  FaultChooser chooser_;                                // set before the first hit
  std::array<std::uint32_t, kFaultSiteCount> armed_{};  // guarded by mutex_
  // The current outage of each site: down through this hit, or until this virtual time (0: none).
  std::array<std::uint64_t, kFaultSiteCount> down_through_hit_{};  // guarded by mutex_
  std::array<std::uint64_t, kFaultSiteCount> down_until_ns_{};     // guarded by mutex_
  // Each followed thread's current run of failures, per kind.
  std::array<std::array<std::uint32_t, static_cast<std::size_t>(Run::kCount)>, kRunThreadsMax>
      runs_{};                                          // guarded by mutex_
  FaultCounts counts_;                                  // guarded by mutex_
  SocketVeto stale_veto_;                               // set before the first call
  std::vector<FaultHit> fired_hits_;                    // guarded by mutex_
  bool fired_hits_complete_ = true;                     // guarded by mutex_
  std::set<Socket> connected_;                          // guarded by mutex_: close.abortive's
  std::vector<std::unique_ptr<Scratch>> scratch_free_;  // guarded by mutex_
};

}  // namespace readyport
