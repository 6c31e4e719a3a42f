// stress/workload/chaos_world.hpp: internals of the chaos workload (chaos_workload.hpp): the shared
// state and the handlers. Not a public API.
//
// Ownership: WorkloadState owns every handler object (pools allocated up front, reused after
// on_closed) and every task; it borrows the Os, the Engine and the hooks, which outlive it.
// Threading: handlers run on engine drivers; the director runs on the calling thread. Shared
// state is guarded by `mutex` (an Os mutex, so in simulation taking it is a scheduling point);
// the workload's random choices come from one Rng guarded by `rng_mutex` (a std::mutex, held
// only around the draw: never across a seam call). Errors: a broken expectation is kept as the
// first `failure` sentence.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "readyport/fake/payload.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/trace_lines.hpp"
#include "workload/chaos_workload.hpp"

namespace readyport::chaos {

struct WorkloadState;

// The payloads (readyport/fake/payload.hpp), shared with the harness's echo clients.
using readyport::payload_byte;
using readyport::payload_fill;
using readyport::payload_mismatches;

// A handler that writes `hnd.enter`/`hnd.leave`/`hnd.closed` around its body, naming the socket
// the workload added it for (`socket`), and the id and socket the engine passed.
class TracedHandler : public Handler {
 public:
  explicit TracedHandler(WorkloadState& world) : world_(world) {}
  Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept final;
  void on_closed(ConnId id) noexcept final;

  // The socket this handler serves; set before add(), read by the handler only.
  Socket socket = kInvalidSocket;

 protected:
  ~TracedHandler() = default;
  virtual Interest handle(ConnId id, std::uint32_t events) = 0;
  virtual void closed(ConnId id) = 0;
  WorkloadState& world_;
};

// A server connection: echoes what it reads; closes at random, and closes others at random.
class ServerConn final : public TracedHandler {
 public:
  ServerConn(WorkloadState& world, std::uint32_t buffer_bytes)
      : TracedHandler(world), buffer_(buffer_bytes) {}
  void reset() { offset_ = length_ = 0; }

 private:
  Interest handle(ConnId id, std::uint32_t events) override;
  void closed(ConnId id) override;
  std::vector<char> buffer_;
  std::uint32_t offset_ = 0;
  std::uint32_t length_ = 0;
};

// The listening socket: accepts until WSAEWOULDBLOCK and adopts each socket.
class Listener final : public TracedHandler {
 public:
  explicit Listener(WorkloadState& world) : TracedHandler(world) {}

 private:
  Interest handle(ConnId id, std::uint32_t events) override;
  void closed(ConnId id) override;
};

// An engine-registered echo client: sends its payload, checks every byte that comes back.
class ClientConn final : public TracedHandler {
 public:
  ClientConn(WorkloadState& world, std::uint32_t index, bool liveness)
      : TracedHandler(world), index_(index), liveness_(liveness) {}
  std::uint32_t index() const { return index_; }
  bool liveness() const { return liveness_; }
  std::uint32_t sent() const { return sent_; }
  std::uint32_t received() const { return received_; }

 private:
  Interest handle(ConnId id, std::uint32_t events) override;
  void closed(ConnId id) override;
  bool send_some();     // false: failed
  bool receive_some();  // false: failed or cut
  // The interest of a client that ended: close, or (ChaosWorkload::hold_clients, done, not yet
  // released) input only, held in WorkloadState::held until the director notifies it.
  Interest ended_interest(ConnId id, bool done);
  const std::uint32_t index_;
  const bool liveness_;
  std::uint32_t sent_ = 0;
  std::uint32_t received_ = 0;
  std::uint64_t chunk_state_ = 0;
  bool ended_ = false;  // done or cut: the handler asked to close (or to be held)
  bool held_ = false;   // in WorkloadState::held
};

// A racer's own connection (chaos_racers.cpp): an unconnected socket the racer adds, notifies and
// closes while other threads call the engine. Its handler closes it whenever it is entered.
class RacerConn final : public TracedHandler {
 public:
  explicit RacerConn(WorkloadState& world) : TracedHandler(world) {}

  // Guarded by WorkloadState::mutex.
  bool in_use = false;                   // being added, or added and on_closed not yet called
  bool added = false;                    // add() returned ok, on_closed not yet called
  bool ended = false;                    // on_closed was called: `added_id` names nothing now
  ConnId added_id;                       // the latest add()'s id (generation 0: none yet)
  Socket added_socket = kInvalidSocket;  // its socket

 private:
  Interest handle(ConnId id, std::uint32_t events) override;
  void closed(ConnId id) override;
};

class ChaosTask final : public Task {
 public:
  ChaosTask(WorkloadState& world, std::uint32_t index) : world_(world), index_(index) {}
  void run() noexcept override;

 private:
  WorkloadState& world_;
  const std::uint32_t index_;
};

// A connection the workload added, for close()/notify() by id (maybe long closed: stale ids
// exercise the generation check).
struct Known {
  ConnId id;
  Socket socket = kInvalidSocket;
  ServerConn* server = nullptr;  // non-null for server connections
};

struct WorkloadState {
  WorkloadState(Os& os_in, Engine& engine_in, const ChaosWorkload& workload_in,
                const ChaosHooks& hooks_in);

  void record(TraceEvent&& event) { hooks.record(event); }
  void fail(const std::string& sentence);  // keeps the first
  std::uint64_t draw_below(std::uint64_t bound);
  bool draw_percent(std::uint32_t percent);

  // Accepted `socket`: add it with a pooled ServerConn, or close it.
  void adopt(Socket socket);
  // Adds `socket` with `handler` (writing wl.adding / wl.add); the id, or an error.
  Result<ConnId> add(Socket socket, Interest interest, Mode mode, TracedHandler& handler);
  void remember(ConnId id, Socket socket, ServerConn* server);
  // engine.close / notify of a known connection (wl.begin, then wl.close / wl.notify).
  void close_known(const Known& known, bool in_handler);
  void notify(const Known& known, std::uint32_t events);
  // A status the contract allows once stop() was called (kFailedPrecondition), or never.
  bool stopped_answer(const Status& status);
  // engine.post() of the next unused task (wl.begin, wl.post); none once kTasksMax were posted.
  void post_task();
  // Closes `known`'s socket behind the engine's back (after the engine's close() when
  // `engine_close_first`), then tells the engine with close() (spec E4). Only where socket
  // values are never reused (chaos_workload.hpp).
  void close_behind(const Known& known, bool engine_close_first);
  // The notify after adding an edge connection, retried while the post fails.
  void notify_start(const Known& known, std::uint32_t events);
  // Before retry `attempt` (0-based) of a call that an injected fault refused: sleeps as an
  // embedder backs off, 1, 2, 4 ... ms up to kRetryPauseMaxMs (virtual time), so that the
  // kRetryAttempts tries of each retry loop outlast the longest drawn outage (5 s, 16 hits).
  void retry_pause(std::uint32_t attempt);
  // Retry pauses under way (retry_pause), and the listener's handler running (Listener::handle):
  // the liveness phase waits until neither is (wait_settled in chaos_workload.cpp). Atomics, not
  // under `mutex`: the trace records the mutex's calls, and counting adds nothing to it.
  std::atomic<std::uint32_t> pausing{0};
  std::atomic<std::uint32_t> accepting{0};
  // Streamers echoed once, or ended (a crowd at stop() waits for them before stop()).
  std::atomic<std::uint32_t> streamers_ready{0};
  static constexpr std::uint32_t kRetryPauseMaxMs = 1000;
  static constexpr std::uint32_t kRetryAttempts = 32;
  bool pick_known(Known* known_out);
  // One of the `newest` (1..kKnownMax) connections remembered last (fewer if fewer are known);
  // false when none is.
  bool pick_recent_known(std::uint32_t newest, Known* known_out);
  // The connection remembered `back` places before the newest (0: the newest); false if fewer
  // than back + 1 are known.
  bool recent_known(std::uint32_t back, Known* known_out);
  // known's entry `back` places before the newest (< known.size()); under `mutex`.
  const Known& known_back_locked(std::size_t back) const;
  // Opens the listener on `address` (port 0 the first time: the port is kept for reopens) and
  // adds it, retrying while the port refuses the registration (injected faults).
  Status open_listener();
  Ipv4Address server_address();
  // After the engine closed the listener: opens it again, or marks it down (table full).
  void reopen_listener();
  // Starts the next client of the current phase; false when none is left.
  bool launch_client(bool liveness);
  void client_finished(ClientConn& client, bool done);
  void server_closed(ServerConn& conn);
  // ChaosWorkload::hold_clients: from now on clients close when done; every held one is
  // notified (wl.notify) so that it closes now.
  void release_held();

  Os& os;
  Engine& engine;
  const ChaosWorkload workload;
  const ChaosHooks hooks;
  std::unique_ptr<Mutex> mutex;
  std::mutex rng_mutex;
  Rng rng;  // guarded by rng_mutex

  Listener listener;
  ConnId listener_id;
  Ipv4Address address;  // guarded by mutex: changes when the listener is opened again
  std::vector<std::unique_ptr<ServerConn>> server_pool;
  std::vector<std::unique_ptr<ClientConn>> clients;  // chaos clients, then liveness clients
  std::vector<std::unique_ptr<ChaosTask>> tasks;
  std::vector<std::unique_ptr<RacerConn>> racer_conns;  // kRacerConnsMax per racer

  // Guarded by mutex.
  std::vector<ServerConn*> server_free;
  std::vector<Known> known;  // a ring of kKnownMax
  std::vector<Known> held;   // hold_clients: done clients waiting for release_held()
  bool held_released = false;
  std::uint32_t known_next = 0;
  std::uint32_t chaos_launched = 0;
  std::uint32_t liveness_launched = 0;
  std::uint32_t clients_open = 0;  // added, on_closed not yet called
  std::uint32_t server_open = 0;
  std::uint32_t tasks_posted = 0;    // tasks[0..tasks_posted) were posted
  bool launching = true;             // clients start others as they finish (chaos phase)
  bool stopping = false;             // stop() was called: the listener is not reopened
  bool listener_down = false;        // closed, and not yet opened again (table full, an outage)
  bool faults_off = false;           // the liveness phase began: faults no longer fire
  bool stop_returned = false;        // a stop() returned: racers make their last calls and end
  std::uint32_t racer_stops_ok = 0;  // racers' stop() calls that returned ok
  ChaosCounts counts;
  std::string failure;

  static constexpr std::uint32_t kKnownMax = 64;
  static constexpr std::uint32_t kTasksMax = 64;
  static constexpr std::uint32_t kRacerConnsMax = 2;
  // A crowd at stop() (ChaosWorkload::crowd_at_stop): the racers and server handlers close one of
  // this many newest connections (the streamers' server ends, the listener, the last clients),
  // and a server handler does so, or closes its own, in this percent of its calls.
  static constexpr std::uint32_t kCrowdNewest = 6;
  static constexpr std::uint32_t kCrowdHandlerClosePercent = 25;
  // The notify() calls the director makes on each of those newest connections just before stop().
  static constexpr std::uint32_t kCrowdWakeNotifies = 4;
};

// Takes `mutex` for a scope.
class Guard {
 public:
  explicit Guard(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~Guard() { mutex_.unlock(); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  Mutex& mutex_;
};

// A racer (ChaosWorkload::racers): public calls of the engine on a thread of its own, from the
// chaos phase until stop() returned, then one call of each kind more (each must fail with
// kFailedPrecondition). Runs on a thread of the Os's runtime.
void racer_main(WorkloadState& world, std::uint32_t racer);

}  // namespace readyport::chaos
