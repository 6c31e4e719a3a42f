// readyport/engine.hpp: a multi-threaded readiness engine on ProcessSocketNotifications.
//
// An Engine owns one I/O completion port and a fixed table of connections. You add non-blocking
// sockets with a Handler; worker threads that you start call run_worker() (or one thread calls
// poll() in its own loop); the engine calls your handler with the events that fired and re-arms
// the registration from the interest the handler returns. Its promise is about lifetimes: a
// connection's state is never freed while the port may still hand out its key, its socket is
// closed only after the REMOVE packet was seen, and on_closed is the last call a handler gets
// (docs/rules.md B5, D4, E1-E4).
//
//   readyport::Engine engine(os, readyport::EngineOptions{});     // allocates everything
//   if (readyport::Status s = engine.start(); !s.ok()) return s;  // creates the port
//   // threads that call engine.run_worker(); then, from any thread:
//   auto id = engine.add(sock, readyport::kInterestIn, readyport::Mode::kOneshotLevel, echo);
//   (void)engine.stop();  // closes everything, releases the workers; then join them
//
// A connection's life, Quarantine (spec E4) and A lost REMOVE (the probe): docs/engine.md.
//
// Ownership: the caller owns the Engine, its Os and its handlers; the engine owns the port.
// Lifetime: the Os outlives the engine; a handler lives until its on_closed() returned.
// Threading: any thread may call any method; one Os mutex guards all state (no atomics, no
// thread_local), handlers run on the threads in run_worker(), poll() or stop(), never two at once
// for one connection. Errors: a failing call returns a Status naming the problem and changes
// nothing; broken contracts assert (assertions are on in every build).
// Allocation: the constructor allocates every table; nothing is allocated afterwards.
// Testing an embedder's code: when the Os answers an EngineBoundary (engine_os.hpp, only a test
// kit's world does), every public call and every callback is reported to it
// (engine_boundary.hpp); with none, that costs one branch per call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "readyport/engine_coverage.hpp"
#include "readyport/engine_os.hpp"
#include "readyport/internal/engine_lock.hpp"
#include "readyport/internal/thread_annotations.hpp"
#include "readyport/status.hpp"

namespace readyport {

class EngineBoundary;  // engine_boundary.hpp
struct EngineCrossing;

namespace internal {
class SlotTable;
struct Driver;
struct RegSink;
struct RegRef;
}  // namespace internal

// ---- Interest, modes, identities -------------------------------------------------------------

// What a connection wants to hear about: the registration's event filter
// (SOCK_NOTIFY_REGISTER_EVENT_*). ERR and REMOVE are reported whatever the filter (spec D1).
using Interest = std::uint16_t;
inline constexpr Interest kInterestNone = kSockNotifyRegisterEventNone;
inline constexpr Interest kInterestIn = kSockNotifyRegisterEventIn;
inline constexpr Interest kInterestOut = kSockNotifyRegisterEventOut;
inline constexpr Interest kInterestHangup = kSockNotifyRegisterEventHangup;
inline constexpr Interest kInterestAll = kSockNotifyRegisterEventsAll;
// Returned by Handler::on_events only: close the connection (as close(id) would).
inline constexpr Interest kInterestClose = 0x8000;

// The trigger of a registration (spec C1-C6). The default is the one Microsoft recommends for
// several threads. In the one-shot modes the packet disarms the whole registration and the engine
// re-arms it from the handler's return value after every call; in the persistent modes it stays
// armed and the engine issues an ENABLE only when the returned interest differs.
enum class Mode : std::uint8_t {
  kOneshotLevel = 0,  // ONESHOT | LEVEL (default)
  kPersistentLevel,   // PERSISTENT | LEVEL: comes back while the condition holds
  kPersistentEdge,    // PERSISTENT | EDGE: read/write until WSAEWOULDBLOCK to see the next edge
  kOneshotEdge,       // ONESHOT | EDGE (discouraged by Microsoft, spec C6; supported)
};

// Names one connection: its slot in the table and the slot's generation. The completion key of
// the registration packs both (spec: keys are values, never pointers), so a packet for a closed
// connection is recognised as stale by its generation. Generation 0 never names a connection.
struct ConnId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  friend bool operator==(ConnId a, ConnId b) {
    return a.slot == b.slot && a.generation == b.generation;
  }
};

// ---- What the embedder implements -----------------------------------------------------------

// A connection's callbacks. The caller owns the handler; it must outlive the connection until
// on_closed() has returned (one handler may serve many connections). Neither method allocates
// on the engine's behalf; both run on a driver thread (run_worker, poll or stop) with no engine
// lock held, and never concurrently for one connection. Errors: both are noexcept, a contract the
// compiler checks on every override: an exception escaping one ends the process
// (std::terminate), because the engine cannot unwind a claimed driver and a dispatching slot.
// Catch inside and return kInterestClose to end a connection whose handler failed.
class Handler {
 public:
  // `events` is the packet's mask without REMOVE (SOCK_NOTIFY_EVENT_IN/OUT/HANGUP/ERR; test bits
  // with &, several may be set, and one may be stale: recv/send can answer WSAEWOULDBLOCK, spec
  // D5; in one-shot modes bits from notify() or merged packets may lie outside the interest; in
  // persistent modes a packet with no bit of the current interest and no ERR is not delivered).
  // Returns the new interest (bits of kInterestAll) for the whole registration, or kInterestClose.
  // Re-entrancy: may call any Engine method except stop() (close() of this or any connection,
  // add(), post()). May be entered before add() returned on the adding thread.
  virtual Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept = 0;
  // The last call for `id`: exactly once per successful add(), after the socket was closed. The
  // handler may be destroyed from here. Re-entrancy as on_events. A connection can end without
  // anyone asking: when the port refuses its re-arm (spec A8), or its port calls keep failing
  // (A3), the engine closes it and on_closed is the only word of it; a listener must then be
  // opened again (docs/testing-your-server.md).
  virtual void on_closed(ConnId id) noexcept = 0;

 protected:
  ~Handler() = default;
};

// A unit of work for post(). The caller owns it; it must outlive its run() (a task may be
// posted again from its own run()). run() is called once per successful post(), on a driver
// thread, with no engine lock held; re-entrancy and errors (noexcept) as Handler::on_events.
class Task {
 public:
  virtual void run() noexcept = 0;

 protected:
  ~Task() = default;
};

// Lifetime events for oracles and traces. Every method has an empty default. The acquired,
// freed, remove-seen, quarantined and dropped/stale methods are called with the engine's lock
// held: they must not call the Engine (or block); the others are called without it. With no
// observer the cost is one branch per event.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void on_slot_acquired(ConnId /*id*/, Socket /*socket*/) {}
  // The slot returned to the free list (after on_closed, or after add() failed).
  virtual void on_slot_freed(ConnId /*id*/) {}
  virtual void on_handler_enter(ConnId /*id*/, std::uint32_t /*events*/) {}
  virtual void on_handler_leave(ConnId /*id*/, Interest /*result*/) {}
  virtual void on_remove_seen(ConnId /*id*/) {}
  // REMOVE failed (spec E4): the socket will be closed and the slot held until drained.
  virtual void on_quarantined(ConnId /*id*/) {}
  // Called just before the engine's closesocket: the value may be reused as soon as it returns
  // (spec E5), so this comes first.
  virtual void on_socket_closed(ConnId /*id*/, Socket /*socket*/) {}
  // A packet whose key names no live generation (dropped, never dereferenced).
  virtual void on_packet_stale(std::uintptr_t /*key*/, std::uint32_t /*events*/) {}
  // A packet for a connection that is being closed (dropped).
  virtual void on_packet_dropped(ConnId /*id*/, std::uint32_t /*events*/) {}
  // An event of the connection's state machine, its state before it and the engine's contexts
  // then (engine_coverage.hpp), under the lock: for coverage of states in context.
  virtual void on_slot_event(ConnId /*id*/, SlotEventPoint /*point*/) {}
};

// ---- Options and counters ---------------------------------------------------------------------

struct EngineOptions {
  // Connections open at once at most (slots in the table, allocated by the constructor).
  std::uint32_t connections_max = 1024;
  // Entries dequeued per port call, and registrations carried per port call at most (more wait
  // for the next call of some driver). 1..4096.
  std::uint32_t batch_count = 64;
  // Threads inside run_worker() or poll() at once at most (stop() has a driver of its own).
  std::uint32_t workers_max = 16;
  // Tasks posted and not yet run, at most.
  std::uint32_t tasks_max = 1024;
  // A port call that fails as a whole (spec A3) is tried this many times in all, with a capped
  // doubling backoff between tries (Os::sleep_ms: virtual in tests); then its registrations
  // count as failed one by one (spec A8).
  std::uint32_t call_retry_max = 8;
  // How long run_worker() waits in one port call. Finite so that a drain marker's grace period
  // (spec E4 quarantine) ends even if no packet wakes a waiting worker; an idle worker makes one
  // port call per this interval.
  std::uint32_t wait_timeout_ms = 1000;
  // The retry backoff, stop()'s poll interval and the spin guard (a driver that dequeues only
  // packets it must drop sleeps briefly so that the driver applying the transition runs) are
  // fixed: readyport/internal/engine_tuning.hpp.
  // Receives lifetime events; not owned; must outlive the engine. May be null.
  EngineObserver* observer = nullptr;
};

// Counters since start(). A snapshot, taken under the engine's lock.
struct EngineStats {
  std::uint64_t port_calls = 0;             // ProcessSocketNotifications calls (all threads)
  std::uint64_t posts = 0;                  // PostQueuedCompletionStatus calls
  std::uint64_t packets = 0;                // entries dequeued
  std::uint64_t notifications = 0;          // handler calls (on_events)
  std::uint64_t stale_dropped = 0;          // packets whose generation did not match
  std::uint64_t closing_dropped = 0;        // non-REMOVE packets for a closing connection
  std::uint64_t pending_merged = 0;         // packets merged into a running dispatch
  std::uint64_t unwanted_dropped = 0;       // persistent: packets outside the current interest
  std::uint64_t call_failures = 0;          // whole-call failures (spec A3), each try
  std::uint64_t registration_failures = 0;  // per-registration failures (spec A8)
  std::uint64_t timeouts = 0;               // WAIT_TIMEOUT returns (spec A2)
  std::uint64_t quarantined = 0;            // REMOVE failures handled by drain markers (spec E4)
  std::uint64_t removes_probed = 0;         // applied REMOVEs asked after by a marker (a probe)
  std::uint64_t removes_lost = 0;           // of those, the ones that never came
  std::uint64_t tasks_run = 0;
  std::uint64_t notifies = 0;     // notify() packets dequeued
  std::uint64_t spin_sleeps = 0;  // spin guard sleeps (internal/engine_tuning.hpp)
  std::uint64_t connections_added = 0;
  std::uint64_t connections_closed = 0;  // on_closed calls
  std::uint32_t connections_live = 0;    // slots not free now
};

// ---- The engine -------------------------------------------------------------------------------

class Engine final {
 public:
  // Allocates the slot table and every per-driver buffer; starts no thread and makes no OS call
  // except Os::mutex_create(). `os` must outlive the engine. Invalid options are reported by
  // start(). Threading: construct on any thread.
  Engine(EngineOs& os, EngineOptions options);
  // Stops the engine if it is running (as stop(); the workers must still be able to return).
  // Must not run while another thread is inside a method of this engine, nor from a handler.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates the options and creates the completion port. Call once, before anything else.
  // Errors: kInvalidArgument (a zero capacity, batch or worker count), kFailedPrecondition
  // (called twice), kOsError (the port could not be created).
  Status start();

  // Registers `socket` with `interest` in `mode`; on success the engine owns the socket and
  // closes it (closesocket, under the engine's lock: a socket with SO_LINGER that makes
  // closesocket block stalls every driver meanwhile) before on_closed; until then add() of it
  // gets kAlreadyExists, even while it is being closed. Issues one registration call on the
  // calling thread (the ENABLE's result decides the answer). `handler` must outlive the
  // connection until on_closed returned; it may be entered on a driver thread before add()
  // returns.
  // Threading: any thread, also from a handler or task. Errors, the socket stays the caller's:
  // kInvalidArgument (kInvalidSocket, interest bits outside IN/OUT/HANGUP, a bad mode, not a
  // socket: WSAENOTSOCK), kAlreadyExists (the socket is already added; or the port refused it
  // with WSAEINVAL, which is what a socket registered with another port gets, spec B8),
  // kResourceExhausted (connections_max open), kFailedPrecondition (not started, or stopping),
  // kOsError (the call kept failing, spec A3, or another registration error).
  Result<ConnId> add(Socket socket, Interest interest, Mode mode, Handler& handler);

  // Closes the connection: its registration is removed, and after the REMOVE packet the socket
  // is closed and on_closed called (on some driver thread). After close() returns the handler is
  // not entered again, except by a call another driver had already taken up (running, or its
  // packet dequeued before close() returned: it may still be entered once). Idempotent while the
  // connection is closing (returns ok). Threading: any thread, also from its own or another
  // connection's handler (then the REMOVE rides the driver's next port call). Errors:
  // kNotFound (never added, or on_closed runs or ran: from the moment the engine calls it, even
  // before the slot is released), kFailedPrecondition (not started or stopped). A REMOVE that
  // the port refuses is handled, not returned (spec E4).
  Status close(ConnId id);

  // Delivers `events` (bits of IN, OUT, HANGUP, ERR) to the connection's handler as if the port
  // had reported them: one posted packet (spec F2) that goes through the same path as the
  // connection's real packets, so it is serialised with them (merged into a running dispatch,
  // dropped once the connection is closing). Edge-triggered embedders call it after add(): an
  // edge that happened before the registration is never reported (spec C5), so the handler must
  // try its I/O once. Threading: any thread, also from a handler. Errors: kInvalidArgument
  // (other bits), kNotFound (unknown connection, or its on_closed runs or ran),
  // kFailedPrecondition (not running), kOsError (the post failed).
  Status notify(ConnId id, std::uint32_t events);

  // Runs `task` once on a driver thread: a posted packet (spec F2) that carries the task's
  // address, so nothing is allocated. Tasks posted before stop() run before it returns.
  // Threading: any thread, also from a handler or task. Errors: kResourceExhausted (tasks_max
  // outstanding), kFailedPrecondition (not started, or stopping), kOsError (the post failed).
  Status post(Task& task);

  // The worker loop: dequeues batches and runs handlers and tasks until stop() releases it (the
  // exit packet, passed on to the next worker). Call from each worker thread; blocks. Returns ok
  // after stop(); kFailedPrecondition if the engine is not running or already stopped;
  // kResourceExhausted past workers_max threads. Re-entrancy: not from a handler.
  // The port's concurrency value (spec F7): the engine creates its port with 0, so at most as
  // many workers as processors run handlers at once; more workers wait in the port until one
  // blocks (a lock, a sleep, blocking I/O) or returns to it, which suits handlers that block now
  // and then. A handler must never wait without blocking (spinning) for another handler to run:
  // the packet that would run it is not released while the spinner counts as running.
  Status run_worker();

  // Handles one batch on the calling thread: one port call that applies the registrations left
  // by the previous batch and waits up to `timeout_ms` for packets, then their handlers, tasks
  // and disposals. For embedders without worker threads, and for single-threaded tests (on the
  // inline FakeOs a timed wait only advances virtual time). May run beside run_worker() threads.
  // Returns the number of entries dequeued (0: timed out). Errors: kFailedPrecondition (not
  // running, or the exit packet was seen: the engine stopped), kResourceExhausted (workers_max
  // drivers), kOsError (the port call kept failing; its registrations were handled as failed).
  // Re-entrancy: not from a handler.
  Result<std::uint32_t> poll(std::uint32_t timeout_ms);

  // Closes every connection, drives the port on the calling thread until every REMOVE packet was
  // seen (and every quarantined slot drained) and every posted task ran, releases every worker
  // with one exit packet that each worker passes on (Microsoft's multithreaded sample), waits
  // until every run_worker()/poll() returned, then closes the port (a poll() or run_worker() that
  // begins from then on fails: it never touches the closed port). Handlers and on_closed may
  // run on the calling thread meanwhile. Afterwards every method but stats() fails with
  // kFailedPrecondition. Threading: any one thread that is not a driver; not from a handler or
  // task (returns kFailedPrecondition). Errors: kFailedPrecondition (not started, already
  // stopped or stopping, or called from a driver thread).
  // Not bounded in time: stop() returns only once every REMOVE was seen or found lost (a probe,
  // docs/engine.md, when its polls find the port idle or a REMOVE was awaited for 256 port
  // calls) and every handler returned. A handler
  // that never returns, or a port whose every call fails for good (spec A3 without end), keeps it
  // retrying with the capped backoff; it never closes a socket or frees a slot on a guess.
  Status stop();

  EngineStats stats() const;

 private:
  enum class RunState : std::uint8_t { kCreated, kRunning, kStopping, kExiting, kStopped };

  // The public calls' bodies; each public call is its body, reported to boundary_ around it when
  // the Os answered one (engine_boundary.hpp).
  Result<ConnId> add_inner(Socket socket, Interest interest, Mode mode, Handler& handler);
  Status close_inner(ConnId id);
  Status notify_inner(ConnId id, std::uint32_t events);
  Status post_inner(Task& task);
  Status run_worker_inner();
  Result<std::uint32_t> poll_inner(std::uint32_t timeout_ms);
  Status stop_inner();
  enum class BatchEnd : std::uint8_t { kDone, kExit, kCallFailed };
  struct BatchOutcome {
    BatchEnd end = BatchEnd::kDone;
    std::uint32_t received = 0;
    std::uint32_t error = 0;
  };
  // What the quiescent point leaves to do after the batch's last section.
  struct QuietPoint {
    std::uint32_t wakes = 0;   // wake packets to post (grace periods)
    bool quarantined = false;  // the quarantine has slots to service
    bool released = false;     // the driver was released
  };

  // Drivers (dequeuing threads) and one batch. READYPORT_REQUIRES(mutex_): called with the
  // engine's lock held; READYPORT_EXCLUDES(mutex_): takes it (clang checks both).
  internal::Driver* claim_driver(bool for_stop, std::uint64_t thread) READYPORT_REQUIRES(mutex_);
  void release_locked(internal::Driver& d) READYPORT_REQUIRES(mutex_);
  // begun: begin_call() ran already, in the section that claimed the driver. release: the caller
  // (poll, stop) drives this one batch and the driver is released after it, in its last section
  // when nothing is left for it to dispose and no exit packet to pass on; a worker's is released
  // after the exit packet's batch, once the packet is passed on.
  BatchOutcome drive_once(internal::Driver& d, std::uint32_t timeout_ms, bool begun, bool release)
      READYPORT_EXCLUDES(mutex_);
  void begin_call(internal::Driver& d) READYPORT_REQUIRES(mutex_);
  std::uint32_t call_port(internal::Driver& d, std::uint32_t timeout_ms, std::uint32_t* received,
                          bool begun) READYPORT_EXCLUDES(mutex_);
  void classify_entries(internal::Driver& d, std::uint32_t received) READYPORT_REQUIRES(mutex_);
  // The driver's full batch (coverage's kBatchFull) is over: its next call, or its release.
  void batch_over(internal::Driver& d) READYPORT_REQUIRES(mutex_);
  // Inline (once per packet): defined in, and used by, engine_drivers.cpp only.
  inline void classify_socket_packet(internal::Driver& d, std::uintptr_t key, std::uint32_t mask)
      READYPORT_REQUIRES(mutex_);
  void classify_marker(internal::Driver& d, std::uintptr_t key) READYPORT_REQUIRES(mutex_);
  void run_dispatches(internal::Driver& d) READYPORT_EXCLUDES(mutex_);
  void run_tasks(internal::Driver& d) READYPORT_EXCLUDES(mutex_);
  // The quiescent point, in the batch's last section; releases the driver if `release` and it
  // has nothing left to dispose.
  QuietPoint quiesce(internal::Driver& d, bool release) READYPORT_REQUIRES(mutex_);
  void finish_dispatches(internal::Driver& d) READYPORT_REQUIRES(mutex_);
  void dispose(internal::Driver& d) READYPORT_EXCLUDES(mutex_);
  void check_grace(internal::Driver& d) READYPORT_REQUIRES(mutex_);
  // Whether the batch was only wasted packets often enough to sleep after it (spin guard).
  void spin_check(internal::Driver& d, std::uint32_t received) READYPORT_REQUIRES(mutex_);
  void repost_exit() READYPORT_EXCLUDES(mutex_);
  Result<internal::Driver*> enter_driver(const char* call) READYPORT_EXCLUDES(mutex_);

  Status reserve_slot(Socket socket, Interest interest, Mode mode, Handler& handler,
                      internal::RegSink& first) READYPORT_EXCLUDES(mutex_);
  // The driver that thread `thread` (EngineOs::thread_id) has claimed, or null.
  internal::Driver* driver_of(std::uint64_t thread) READYPORT_REQUIRES(mutex_);

  // Registrations: decisions under the lock, calls outside it.
  // Inline (once per re-arm): defined in engine_internal.hpp, which every engine source includes.
  inline void settle(std::uint32_t slot, internal::RegSink& sink) READYPORT_REQUIRES(mutex_);
  void pause(std::uint32_t slot, internal::RegSink& sink) READYPORT_REQUIRES(mutex_);
  void apply_results(const internal::RegSink& done, internal::RegSink& follow_ups)
      READYPORT_REQUIRES(mutex_);
  void apply_remove_failed(internal::RegRef ref) READYPORT_REQUIRES(mutex_);
  void note_remove_applied(internal::RegRef ref) READYPORT_REQUIRES(mutex_);
  // A lost REMOVE (docs/engine.md): one slot's probe, and the probes of every awaited one.
  void probe(std::uint32_t slot) READYPORT_REQUIRES(mutex_);
  // Those applied at least `calls_min` port calls ago (0: every one).
  void probe_awaited(internal::Driver& d, std::uint64_t calls_min) READYPORT_REQUIRES(mutex_);
  // One port call retried while it fails as a whole (spec A3); `d` null: registrations only.
  std::uint32_t call_retrying(SockNotifyRegistration* regs, std::uint32_t count,
                              internal::Driver* d, std::uint32_t timeout_ms,
                              std::uint32_t* received, std::uint32_t* attempts_out)
      READYPORT_EXCLUDES(mutex_);
  void count_calls(std::uint32_t error, std::uint32_t attempts) READYPORT_REQUIRES(mutex_);
  std::uint32_t call_registrations(SockNotifyRegistration* regs, std::uint32_t count)
      READYPORT_EXCLUDES(mutex_);
  Status post_packet(const char* call, std::uintptr_t key, std::uintptr_t overlapped,
                     std::uint32_t bytes) READYPORT_EXCLUDES(mutex_);
  void issue_direct(SockNotifyRegistration reg, internal::RegRef ref) READYPORT_EXCLUDES(mutex_);
  void service_quarantine() READYPORT_EXCLUDES(mutex_);
  void close_for_stop() READYPORT_EXCLUDES(mutex_);
  void backoff(std::uint32_t attempt);

  // Reports slot `slot`'s event to the observer with the contexts that hold now (no observer:
  // one branch). Called just before the slot machine handles the event.
  inline void note(SlotEvent event, std::uint32_t slot) READYPORT_REQUIRES(mutex_);
  std::uint16_t contexts_locked() const READYPORT_REQUIRES(mutex_);

  // The slot leaves the table.
  void move_to_closing(std::uint32_t slot, internal::Driver& d) READYPORT_REQUIRES(mutex_);
  void release_slot(std::uint32_t slot) READYPORT_REQUIRES(mutex_);
  // Out of the socket index and closed in one lock section (close_socket_locked's comment).
  void close_socket_locked(ConnId id, Socket socket) READYPORT_REQUIRES(mutex_);
  Status check_running(const char* call) const READYPORT_REQUIRES(mutex_);

  EngineOs& os_;
  const EngineOptions options_;
  EngineBoundary* const boundary_;  // os_.engine_boundary(): null but in a test kit's world
  internal::EngineMutex mutex_;     // guards everything below but the drivers' batch buffers
  Port port_ = kInvalidPort;        // written by start() before any other thread uses it
  RunState run_state_ READYPORT_GUARDED_BY(mutex_) = RunState::kCreated;
  std::unique_ptr<internal::SlotTable> slots_ READYPORT_PT_GUARDED_BY(mutex_);
  // workers_max + 1 (the last is stop()'s). A driver's claim, epoch and lists are read and
  // written under the lock; its batch buffers (entries, sent) only by the thread that claimed it.
  std::vector<internal::Driver> drivers_;
  std::uint32_t drivers_claimed_ READYPORT_GUARDED_BY(mutex_) = 0;
  std::uint32_t tasks_outstanding_ READYPORT_GUARDED_BY(mutex_) = 0;
  std::uint64_t epoch_ READYPORT_GUARDED_BY(mutex_) = 1;  // grace periods (spec E4)
  // Slots in kRemoving whose REMOVE was applied (a probe's candidates).
  std::uint32_t removes_awaited_ READYPORT_GUARDED_BY(mutex_) = 0;
  // Coverage of states in context (engine_coverage.hpp): stop() is sweeping; probes whose
  // answer has not come; slots quarantined, draining or in grace; drivers handling a full batch.
  bool stop_sweeping_ READYPORT_GUARDED_BY(mutex_) = false;
  std::uint32_t probes_out_ READYPORT_GUARDED_BY(mutex_) = 0;
  std::uint32_t quarantine_open_ READYPORT_GUARDED_BY(mutex_) = 0;
  std::uint32_t full_batches_ READYPORT_GUARDED_BY(mutex_) = 0;
  // Drivers' port calls with REMOVEs awaited since the last scan for old ones (probe_awaited).
  std::uint32_t calls_since_scan_ READYPORT_GUARDED_BY(mutex_) = 0;
  // Slots whose next registration waits for a driver.
  std::uint32_t deferred_head_ READYPORT_GUARDED_BY(mutex_);
  // Quarantined slots whose marker is not posted yet.
  std::uint32_t quarantine_head_ READYPORT_GUARDED_BY(mutex_);
  // Quarantined slots whose marker was dequeued.
  std::uint32_t grace_head_ READYPORT_GUARDED_BY(mutex_);
  EngineStats stats_ READYPORT_GUARDED_BY(mutex_);
};

// A readable name for a mode ("oneshot_level", ...). Never null.
const char* mode_name(Mode mode);

}  // namespace readyport
