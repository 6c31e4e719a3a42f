// FaultyOs: seeded fault sites over any Os. What fires and when: docs/faults.md#faultyos.
#include "readyport/fake/faulty_os.hpp"

#include <string>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/internal/logical_locals.hpp"
#include "readyport/fake/recording_os.hpp"

namespace readyport {

namespace {

// psn.call_fails draws its code from these (spec A3: transient failures under memory pressure).
constexpr std::array<std::uint32_t, 3> kCallFailCodes = {kErrorNotEnoughMemory,
                                                         kErrorNoSystemResources, kWsaEnobufs};
constexpr std::uint32_t kEnableFailCode = kWsaEnobufs;
constexpr std::uint32_t kRemoveFailCode = kWsaEinval;

// The salt that separates the per-hit decisions from FaultPlan::draw's stream (SeedStream::
// kFaults).
constexpr std::uint64_t kDecisionSalt = 0x6A09E667F3BCC909ULL;

std::uint64_t decision_seed(std::uint64_t seed) {
  Rng mixer(seed ^ kDecisionSalt);
  mixer.next();
  return mixer.next();
}

// The random numbers of one hit: a pure function of (decision seed, site, hit number, purpose),
// so that a hit's decision never depends on any other hit (docs/faults.md#why-a-run-replays).
enum class Purpose : std::uint64_t { kFire = 1, kChoice = 2 };
Rng hit_rng(std::uint64_t seed, std::size_t site, std::uint64_t hit, Purpose purpose) {
  Rng mixer(seed ^ ((static_cast<std::uint64_t>(site) + 1) * 0x9E3779B97F4A7C15ULL) ^
            (hit * 0xD1B54A32D192ED03ULL) ^ (static_cast<std::uint64_t>(purpose) << 56));
  mixer.next();
  return Rng(mixer.next());
}

// The calling logical thread's injected last error (docs/faults.md#the-injected-last-error):
// the FaultyOs that injected it and the code, in the thread's LogicalLocals slot.
using fake_internal::logical_locals;
void injected_clear_if(const FaultyOs* owner) {
  fake_internal::LogicalLocals& locals = logical_locals();
  if (locals.injected_owner != owner) {
    return;
  }
  locals.injected_owner = nullptr;
  locals.injected_code = 0;
}

std::size_t index_of(FaultSite site) { return static_cast<std::size_t>(site); }

// A `fault <site>` event, to which the call adds its fields.
TraceEvent site_event(FaultSite site) {
  TraceEvent event("fault");
  event.word(fault_site_name(site));
  return event;
}

}  // namespace

// Room for one faulted PSN call's kept elements and every element's injected code.
// Sized by the calls (at most kRegistrationsMax entries), and kept: a world is built for every
// run, and filling kRegistrationsMax entries up front showed in a small world's profile.
struct FaultyOs::Scratch {
  std::vector<SockNotifyRegistration> kept;
  std::vector<std::uint32_t> codes;
};

FaultyOs::FaultyOs(Os& inner, FaultPlan plan, std::uint64_t seed, Trace* trace,
                   const TraceContext* context, const TraceContext* clock)
    : ForwardingOs(inner),
      plan_(plan),
      time_outages_(plan.has_time_outage()),
      trace_(trace),
      context_(context),
      clock_(clock != nullptr ? clock : context),
      decision_seed_(decision_seed(seed)) {
  READYPORT_ASSERT(trace_ == nullptr || context_ != nullptr);
  READYPORT_ASSERT(!plan_.has_time_outage() || clock_ != nullptr);
  scratch_free_.push_back(std::make_unique<Scratch>());
}

FaultyOs::~FaultyOs() {
  // A thread's slot must not name a destroyed FaultyOs (a new one could reuse the address).
  injected_clear_if(this);
}

// ---- Controls ---------------------------------------------------------------------------------

void FaultyOs::set_enabled(bool enabled) {
  const std::uint64_t now_ns = clock_now_ns();  // before the lock: the clock may be an Os call
  std::lock_guard<std::mutex> lock(mutex_);
  enabled_ = enabled;
  if (enabled) {
    return;
  }
  // Disabling ends every outage (the liveness phase is fault-free); one still going is counted.
  for (std::size_t i = 0; i < kFaultSiteCount; ++i) {
    const bool down = counts_.hits[i] < down_through_hit_[i] || now_ns < down_until_ns_[i];
    if (down) {
      ++counts_.outages_cut[i];
    }
    down_through_hit_[i] = 0;
    down_until_ns_[i] = 0;
  }
}

void FaultyOs::set_chooser(FaultChooser chooser) {
  std::lock_guard<std::mutex> lock(mutex_);
  chooser_ = std::move(chooser);
}

bool FaultyOs::enabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled_;
}

void FaultyOs::arm_next(FaultSite site) {
  READYPORT_ASSERT(index_of(site) < kFaultSiteCount);
  std::lock_guard<std::mutex> lock(mutex_);
  ++armed_[index_of(site)];
}

std::vector<FaultHit> FaultyOs::fired_hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_hits_;
}

bool FaultyOs::fired_hits_complete() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_hits_complete_;
}

FaultCounts FaultyOs::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

// ---- Drawing ----------------------------------------------------------------------------------

std::uint64_t FaultyOs::clock_now_ns() const { return time_outages_ ? clock_->trace_time_ns() : 0; }

bool FaultyOs::outage_holds(std::size_t i, std::uint64_t hit, std::uint64_t now_ns) const {
  if (hit <= down_through_hit_[i]) {
    return true;
  }
  return down_until_ns_[i] != 0 && now_ns < down_until_ns_[i];
}

void FaultyOs::start_outage(FaultSite site, std::uint64_t hit, std::uint64_t now_ns) {
  const std::size_t i = index_of(site);
  if (!plan_.has_outage(site)) {
    return;
  }
  ++counts_.outages[i];
  if (plan_.outage_hits(site) != 0) {
    down_through_hit_[i] = hit + plan_.outage_hits(site) - 1;
  }
  if (plan_.outage_ms(site) != 0) {
    down_until_ns_[i] = now_ns + std::uint64_t{plan_.outage_ms(site)} * 1'000'000;
  }
}

void FaultyOs::note_run(Run run, bool failed) {
  if (context_ == nullptr) {
    return;
  }
  const std::uint32_t thread = context_->trace_thread();
  if (thread >= kRunThreadsMax) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint32_t& length = runs_[thread][static_cast<std::size_t>(run)];
  if (!failed) {
    length = 0;
    return;
  }
  ++length;
  const bool psn = run == Run::kPsnRegs || run == Run::kPsnDequeue;
  if (length != (psn ? kRunLongPsn : kRunLongOther)) {
    return;
  }
  switch (run) {
    case Run::kPsnRegs:
      ++counts_.psn_regs_runs;
      break;
    case Run::kPsnDequeue:
      ++counts_.psn_dequeue_runs;
      break;
    case Run::kPost:
      ++counts_.post_runs;
      break;
    case Run::kThreadStart:
      ++counts_.thread_start_runs;
      break;
    case Run::kCount:
      READYPORT_UNREACHABLE();
  }
}

bool FaultyOs::hit(FaultSite site, std::uint64_t choices, std::uint64_t* choice_out) {
  const std::uint64_t now_ns = clock_now_ns();  // before the lock: the clock may be an Os call
  std::lock_guard<std::mutex> lock(mutex_);
  return hit_locked(site, choices, choice_out, now_ns);
}

FaultSite FaultyOs::hit_first(std::initializer_list<FaultSite> sites) {
  const std::uint64_t now_ns = clock_now_ns();  // before the lock: the clock may be an Os call
  std::lock_guard<std::mutex> lock(mutex_);
  for (const FaultSite site : sites) {
    if (hit_locked(site, 0, nullptr, now_ns)) {
      return site;
    }
  }
  return FaultSite::kCount;
}

bool FaultyOs::hit_locked(FaultSite site, std::uint64_t choices, std::uint64_t* choice_out,
                          std::uint64_t now_ns) {
  const std::size_t i = index_of(site);
  READYPORT_ASSERT(i < kFaultSiteCount);
  const std::uint64_t hit = ++counts_.hits[i];
  ++counts_.hits_total;
  bool fire = false;
  bool armed = false;
  if (armed_[i] > 0) {
    // Armed by a test: fires whatever the plan and the switch say.
    --armed_[i];
    fire = true;
    armed = true;
  } else if (enabled_ && chooser_ && plan_.active(site)) {
    fire = chooser_(site);
  } else if (enabled_ && plan_.pinned(site)) {
    fire = plan_.fires_at(site, hit);
  } else if (enabled_ && plan_.active(site)) {
    fire = outage_holds(i, hit, now_ns);
    if (fire) {
      ++counts_.outage_fired[i];
    } else {
      fire = hit_rng(decision_seed_, i, hit, Purpose::kFire).chance(plan_.rate_percent(site), 100);
      if (fire) {
        start_outage(site, hit, now_ns);
      }
    }
  }
  if (!fire) {
    return false;
  }
  ++counts_.fired[i];
  ++counts_.fired_total;
  if (!armed && fired_hits_.size() < kFiredHitsMax) {
    fired_hits_.push_back(FaultHit{site, hit});
  } else if (!armed) {
    fired_hits_complete_ = false;
  }
  if (choices > 0) {
    READYPORT_ASSERT(choice_out != nullptr);
    *choice_out = hit_rng(decision_seed_, i, hit, Purpose::kChoice).below(choices);
  }
  return true;
}

std::uint32_t FaultyOs::draw_elements(const SockNotifyRegistration* registrations,
                                      std::uint32_t count, std::uint32_t* codes_out) {
  std::uint32_t stripped = 0;
  const std::uint64_t now_ns = clock_now_ns();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint8_t operation = registrations[i].operation;
      codes_out[i] = 0;
      if (operation == kSockNotifyOpEnable || operation == kSockNotifyOpDisable) {
        if (hit_locked(FaultSite::kPsnEnableFails, 0, nullptr, now_ns)) {
          codes_out[i] = kEnableFailCode;
        }
      } else if (operation == kSockNotifyOpRemove) {
        if (hit_locked(FaultSite::kPsnRemoveFails, 0, nullptr, now_ns)) {
          codes_out[i] = kRemoveFailCode;
        }
      }
      // OP_NONE and unknown operations: no site (the OS treats them on its own).
      if (codes_out[i] != 0) {
        ++stripped;
      }
    }
  }
  // The lines, in array order, outside the lock.
  for (std::uint32_t i = 0; i < count && stripped > 0; ++i) {
    const SockNotifyRegistration& r = registrations[i];
    if (codes_out[i] == 0) {
      continue;
    }
    if (r.operation == kSockNotifyOpRemove) {
      record_fault(
          site_event(FaultSite::kPsnRemoveFails).num("s", r.socket).error("code", codes_out[i]));
    } else {
      record_fault(site_event(FaultSite::kPsnEnableFails)
                       .num("s", r.socket)
                       .text("op", r.operation == kSockNotifyOpEnable ? "ENABLE" : "DISABLE")
                       .error("code", codes_out[i]));
    }
  }
  return stripped;
}

std::unique_ptr<FaultyOs::Scratch> FaultyOs::scratch_take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!scratch_free_.empty()) {
      std::unique_ptr<Scratch> scratch = std::move(scratch_free_.back());
      scratch_free_.pop_back();
      return scratch;
    }
  }
  // Another thread holds every scratch (it is inside a PSN): one more, kept afterwards.
  return std::make_unique<Scratch>();
}

void FaultyOs::scratch_give(std::unique_ptr<Scratch> scratch) {
  READYPORT_ASSERT(scratch != nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  scratch_free_.push_back(std::move(scratch));
}

// ---- Trace and last error ---------------------------------------------------------------------

void FaultyOs::record_fault(TraceEvent& event) {
  if (trace_ == nullptr) {
    return;
  }
  trace_->record(*context_, event);
}

void FaultyOs::inject_last_error(std::uint32_t code) {
  READYPORT_ASSERT(code != 0);
  logical_locals().injected_owner = this;
  logical_locals().injected_code = code;
}

void FaultyOs::before_call() { injected_clear_if(this); }

std::uint32_t FaultyOs::last_error() {
  // Not a clearing call: reading the last error twice gives the same value, as on Windows.
  const fake_internal::LogicalLocals& locals = logical_locals();
  if (locals.injected_owner == this) {
    return locals.injected_code;
  }
  return inner().last_error();
}

int FaultyOs::fail_socket_call(FaultSite site, Socket s, std::uint32_t code) {
  record_fault(site_event(site).num("s", s));
  inject_last_error(code);
  return kSocketError;
}

// ---- The completion port ----------------------------------------------------------------------

Port FaultyOs::create_io_completion_port(std::uint32_t concurrency) {
  before_call();
  if (hit(FaultSite::kPortCreateFails)) {
    record_fault(site_event(FaultSite::kPortCreateFails).error("code", kErrorNotEnoughMemory));
    inject_last_error(kErrorNotEnoughMemory);
    return kInvalidPort;
  }
  return inner().create_io_completion_port(concurrency);
}

std::uint32_t FaultyOs::process_socket_notifications(Port port, std::uint32_t registration_count,
                                                     SockNotifyRegistration* registrations,
                                                     std::uint32_t timeout_ms,
                                                     std::uint32_t completion_count,
                                                     OverlappedEntry* entries,
                                                     std::uint32_t* received_out) {
  before_call();
  std::uint64_t choice = 0;
  const bool call_fails = hit(FaultSite::kPsnCallFails, kCallFailCodes.size(), &choice);
  note_run(registration_count > 0 ? Run::kPsnRegs : Run::kPsnDequeue, call_fails);
  if (call_fails) {
    // Spec A3: the whole call fails before anything is applied or dequeued.
    const std::uint32_t code = kCallFailCodes[choice];
    TraceEvent event = site_event(FaultSite::kPsnCallFails);
    event.error("code", code);
    if (registration_count > 0) {
      event.registrations(registrations, registration_count, false);
    }
    record_fault(event);
    if (received_out != nullptr) {
      *received_out = 0;
    }
    return code;
  }
  std::unique_ptr<Scratch> scratch;
  std::uint32_t stripped = 0;
  if (registrations != nullptr && registration_count > 0 &&
      registration_count <= kRegistrationsMax) {
    scratch = scratch_take();
    scratch->kept.resize(registration_count);
    scratch->codes.resize(registration_count);
    stripped = draw_elements(registrations, registration_count, scratch->codes.data());
  }
  std::uint32_t inner_timeout_ms = timeout_ms;
  if (timeout_ms > 0 && completion_count > 0 && hit(FaultSite::kPsnWaitShort)) {
    record_fault(site_event(FaultSite::kPsnWaitShort).num("timeout", timeout_ms));
    inner_timeout_ms = 0;
  }
  std::uint32_t inner_count = completion_count;
  if (completion_count >= 2 && hit(FaultSite::kPsnDequeueFewer, completion_count - 1, &choice)) {
    inner_count = 1 + static_cast<std::uint32_t>(choice);  // in [1, completion_count - 1]
    record_fault(site_event(FaultSite::kPsnDequeueFewer)
                     .num("count", completion_count)
                     .num("to", inner_count));
  }
  if (stripped == 0) {
    if (scratch != nullptr) {
      scratch_give(std::move(scratch));
    }
    return inner().process_socket_notifications(port, registration_count, registrations,
                                                inner_timeout_ms, inner_count, entries,
                                                received_out);
  }
  const std::uint32_t result = call_stripped(*scratch, port, registration_count, registrations,
                                             inner_timeout_ms, inner_count, entries, received_out);
  scratch_give(std::move(scratch));
  return result;
}

std::uint32_t FaultyOs::call_stripped(Scratch& scratch, Port port, std::uint32_t registration_count,
                                      SockNotifyRegistration* registrations,
                                      std::uint32_t timeout_ms, std::uint32_t completion_count,
                                      OverlappedEntry* entries, std::uint32_t* received_out) {
  READYPORT_ASSERT(registration_count <= kRegistrationsMax);
  READYPORT_ASSERT(scratch.kept.size() >= registration_count &&
                   scratch.codes.size() >= registration_count);
  SockNotifyRegistration* kept = scratch.kept.data();
  const std::uint32_t* codes = scratch.codes.data();
  std::uint32_t kept_count = 0;
  for (std::uint32_t i = 0; i < registration_count; ++i) {
    if (codes[i] == 0) {
      kept[kept_count++] = registrations[i];
    }
  }
  READYPORT_ASSERT(kept_count < registration_count);  // at least one element was left out
  // Spec A4: registration count 0 requires a null array.
  const std::uint32_t result =
      inner().process_socket_notifications(port, kept_count, kept_count > 0 ? kept : nullptr,
                                           timeout_ms, completion_count, entries, received_out);
  // Spec A2/A3: only these two results mean the registrations were processed. On any other the
  // whole call failed and nothing changed, so the left-out elements' results stay untouched too.
  const bool processed = result == kErrorSuccess || result == kWaitTimeout;
  std::uint32_t k = 0;
  for (std::uint32_t i = 0; i < registration_count; ++i) {
    if (codes[i] == 0) {
      registrations[i].registration_result = kept[k++].registration_result;
    } else if (processed) {
      registrations[i].registration_result = codes[i];
    }
  }
  READYPORT_ASSERT(k == kept_count);
  return result;
}

bool FaultyOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                             std::uintptr_t completion_key,
                                             std::uintptr_t overlapped) {
  before_call();
  const bool post_fails = hit(FaultSite::kPostFails);
  note_run(Run::kPost, post_fails);
  if (post_fails) {
    record_fault(site_event(FaultSite::kPostFails).error("code", kErrorNotEnoughMemory));
    inject_last_error(kErrorNotEnoughMemory);
    return false;
  }
  return inner().post_queued_completion_status(port, bytes_transferred, completion_key, overlapped);
}

// ---- Sockets ----------------------------------------------------------------------------------

Socket FaultyOs::accept(Socket s, Ipv4Address* peer_out) {
  before_call();
  if (hit(FaultSite::kAcceptEmfile)) {
    fail_socket_call(FaultSite::kAcceptEmfile, s, kWsaEmfile);
    return kInvalidSocket;
  }
  if (hit(FaultSite::kAcceptConnreset)) {
    fail_socket_call(FaultSite::kAcceptConnreset, s, kWsaEconnreset);
    return kInvalidSocket;
  }
  const Socket accepted = inner().accept(s, peer_out);
  if (accepted != kInvalidSocket) {
    std::lock_guard<std::mutex> lock(mutex_);
    connected_.insert(accepted);
  }
  return accepted;
}

int FaultyOs::connect(Socket s, const Ipv4Address& address) {
  before_call();
  const int result = inner().connect(s, address);
  // Whatever the result (a non-blocking connect says WSAEWOULDBLOCK): a refused socket has no
  // peer, and an abortive close of it changes nothing.
  std::lock_guard<std::mutex> lock(mutex_);
  connected_.insert(s);
  return result;
}

int FaultyOs::send(Socket s, const void* data, int length, int flags) {
  before_call();
  const bool stale_vetoed = stale_veto_ && stale_veto_(s);
  switch (stale_vetoed ? hit_first({FaultSite::kSendConnreset, FaultSite::kSendNobufs})
                       : hit_first({FaultSite::kSendWouldblock, FaultSite::kSendConnreset,
                                    FaultSite::kSendNobufs})) {
    case FaultSite::kSendWouldblock:
      return fail_socket_call(FaultSite::kSendWouldblock, s, kWsaEwouldblock);
    case FaultSite::kSendConnreset:
      return fail_socket_call(FaultSite::kSendConnreset, s, kWsaEconnreset);
    case FaultSite::kSendNobufs:
      return fail_socket_call(FaultSite::kSendNobufs, s, kWsaEnobufs);
    default:
      return inner().send(s, data, length, flags);
  }
}

int FaultyOs::recv(Socket s, void* data, int length, int flags) {
  before_call();
  const bool stale_vetoed = stale_veto_ && stale_veto_(s);
  switch (stale_vetoed ? hit_first({FaultSite::kRecvConnreset})
                       : hit_first({FaultSite::kRecvWouldblock, FaultSite::kRecvConnreset})) {
    case FaultSite::kRecvWouldblock:
      return fail_socket_call(FaultSite::kRecvWouldblock, s, kWsaEwouldblock);
    case FaultSite::kRecvConnreset:
      return fail_socket_call(FaultSite::kRecvConnreset, s, kWsaEconnreset);
    default:
      return inner().recv(s, data, length, flags);
  }
}

int FaultyOs::closesocket(Socket s) {
  before_call();
  bool eligible = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    eligible = connected_.erase(s) > 0;
  }
  if (eligible && hit(FaultSite::kCloseAbortive)) {
    // SO_LINGER {on, 0}: the close becomes a reset (spec D2: the peer sees ERR).
    record_fault(site_event(FaultSite::kCloseAbortive).num("s", s));
    (void)inner().set_linger(s, true, 0);
  }
  return inner().closesocket(s);
}

// ---- Threads ----------------------------------------------------------------------------------

Result<std::unique_ptr<Thread>> FaultyOs::thread_start(std::string_view name,
                                                       std::function<void()> body) {
  before_call();
  const bool start_fails = hit(FaultSite::kThreadStartFails);
  note_run(Run::kThreadStart, start_fails);
  if (start_fails) {
    record_fault(site_event(FaultSite::kThreadStartFails).text("name", trace_intern(name)));
    return Status(StatusCode::kOsError, "injected: thread_start failed");
  }
  return inner().thread_start(name, std::move(body));
}

}  // namespace readyport
