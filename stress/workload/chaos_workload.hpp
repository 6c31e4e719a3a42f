// stress/workload/chaos_workload.hpp: the main job's workload. An echo service on the engine,
// driven so that every Engine call runs concurrently with closes and slot reuse, in two phases.
//
// The chaos phase (faults on): a director thread starts engine-registered echo clients, drives
// raw peers (plain sockets the engine does not know: they connect, send, read, shut down, reset
// abortively or go silent), closes connections from outside (engine.close on another thread
// than the handler's), notifies and posts racing with those closes, closes a registered socket
// behind the engine's back and then tells the engine (spec E4). Closing a socket the engine owns
// breaks the embedder's side of the contract, so it is drawn only where an engine can still keep
// its own: where socket values are never reused (otherwise the engine's later closesocket would
// close a stranger's socket). Where the close drops a REMOVE already applied (spec "Fake
// defaults") the engine must find it lost (engine.hpp) or stop() would wait for ever. And it
// adds while others close. Handlers close themselves (kInterestClose) and other connections from
// inside. The engine's table is small, so slots and socket values are reused within a run.
//
// The liveness phase (faults off, `set_faults_enabled(false)`): peers are closed, and within a
// bounded virtual time every connection must close, then fresh clients must be echoed in full,
// then stop() must return with every on_closed called once. What does not converge is reported
// by name (which client, which server connection, what the engine still holds).
//
// Racers (ChaosWorkload::racers) call every public call of the engine from threads of their own
// in both phases and while stop() runs, and the workload writes each public call as an interval
// (wl.begin to its end line) for the oracle's race coverage and rule O13.
//
// Every handler call, close, notify, post and add is written to the run's trace as the lines the
// OS-side oracle reads (fakes/oracle/include/readyport/fake/lifetime_oracle.hpp): `wl.*` for the
// workload's calls and `hnd.*` for handler entries, written by the handlers themselves from what
// the workload knows (which socket it added for which handler object), never from what the
// engine reports about itself.
//
//   readyport::ChaosWorkload workload = ...;              // drawn by the stress driver
//   readyport::ChaosResult result = readyport::run_chaos_workload(os, engine, workload, hooks);
//
// Ownership: borrows everything; the engine must be started and hold no connection. Threading:
// call from one thread of the Os's runtime that may start threads (in simulation: inside
// SimScheduler::run). Errors: the result's status names the first broken expectation; the engine
// is stopped in every case.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "readyport/engine.hpp"
#include "readyport/fake/trace_event.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

struct ChaosWorkload {
  std::uint32_t clients = 8;              // engine-registered echo clients of the chaos phase
  std::uint32_t clients_concurrent = 4;   // at once at most
  std::uint32_t peers = 3;                // raw peers the director drives
  std::uint32_t liveness_clients = 2;     // clients that must be echoed in full at the end
  std::uint32_t bytes_per_client = 2048;  // each client (and peer) sends this many
  std::uint32_t chunk_bytes_max = 512;    // each send is 1..this many bytes
  std::uint32_t buffer_bytes = 1024;      // server connection buffer
  Mode mode = Mode::kOneshotLevel;        // clients' and server connections' mode
  std::uint32_t workers = 2;              // run_worker() threads (0: the pollers drive it alone)
  std::uint32_t pollers = 0;              // threads calling poll() beside them until it fails
  // Faults fire again while stop() runs (the listener's REMOVE, stop()'s own port calls, the exit
  // packet's posts): the paths behind a failure during stop().
  bool faults_at_stop = false;
  // A streamer: a raw peer on a thread of its own that keeps sending (and reading its echo) from
  // just before stop() until stop() returned, so that packets for live, dispatching and closing
  // connections meet stop()'s sweep and its drain (coverage of states in context).
  bool traffic_at_stop = false;
  // A crowd at stop() (with traffic_at_stop): three streamers instead of one, stop() called once
  // the first two were echoed (the third connects as it begins), and the racers and server
  // handlers close (racers also notify) the workload's newest connections, a handler its own
  // too, while stop() runs: stop()'s sweep and its drain meet slots deferred for room in a full
  // batch, live with a registration in flight, dispatching, or being added (coverage of states
  // in context).
  bool crowd_at_stop = false;
  // In a crowd, just before stop(), the director wakes the newest connections with notify()
  // calls, several each, as a server that asks its connections to flush before it stops: their
  // packets, handlers and re-arms are under way as the sweep begins (slots deferred for room in
  // a full batch, then dispatched). A draw of its own: a crowd without it meets stop() with its
  // connections idle or streaming, which opens other windows (handlers and pauses in the sweep).
  bool crowd_wakes = false;
  // The engine's limits at their edge (boundary values): tasks_max of 2 (posts beyond it are
  // refused, resource_exhausted), and workers_max one short of the threads that drive (a poll()
  // or run_worker() is refused while the others hold every driver; a worker tries again).
  bool tasks_tight = false;
  bool drivers_tight = false;
  // Racer threads (chaos_world.hpp, racer_main): each calls add(), close() (also twice, and of
  // ids that just ended), notify(), post(), poll() and, while stop() runs, stop() itself, beside
  // everything else, in every phase and while stop() runs. Their connections are their own
  // (unconnected sockets); in the chaos phase they also close and notify the workload's. Each
  // holds at most 2 connections, which the engine's table holds beside connections_max.
  std::uint32_t racers = 0;
  std::uint32_t connections_max = 16;  // the engine's table (small: slots are reused)
  std::uint32_t actions = 40;          // director actions in the chaos phase
  // Director action weights in percent (the rest of 100 sleeps). close: engine.close of a known
  // connection (maybe already closed); notify; post; peer: one step of a raw peer; client: start
  // another client; behind: close a server socket behind the engine's back (needs no reuse).
  std::uint32_t weight_close = 12;
  std::uint32_t weight_notify = 10;
  std::uint32_t weight_post = 8;
  std::uint32_t weight_peer = 30;
  std::uint32_t weight_client = 15;
  std::uint32_t weight_behind = 0;
  // Percent of server handler calls that return kInterestClose, and that close another
  // connection from inside the handler.
  std::uint32_t handler_close_percent = 2;
  std::uint32_t handler_close_other_percent = 2;
  // Bounds, in virtual (Os) milliseconds.
  std::uint32_t action_gap_ms_max = 3;
  std::uint32_t quiet_ms = 1'000;            // liveness: faults off, nothing started
  std::uint32_t settle_limit_ms = 30'000;    // liveness: every chaos connection closed
  std::uint32_t liveness_limit_ms = 30'000;  // liveness: fresh clients echoed in full
  std::uint64_t seed = 0;                    // payloads and every choice of the workload
  // Chaos clients echoed in full stay open (interested in input only) until the director has
  // started every chaos client, then it notifies each to close: all of them are open at once
  // (readyport-stress --scale). Needs clients_concurrent == clients.
  bool hold_clients = false;
};

struct ChaosCounts {
  std::uint32_t clients_started = 0;  // chaos and liveness clients added
  std::uint32_t clients_done = 0;     // every byte came back
  std::uint32_t clients_cut = 0;      // ended early by chaos (allowed in the chaos phase)
  std::uint32_t clients_refused = 0;  // add() refused (table full, injected failure)
  std::uint32_t server_accepted = 0;  // server connections added
  std::uint32_t server_refused = 0;   // accepted but not added
  std::uint32_t server_closed = 0;
  std::uint32_t peers_started = 0;
  std::uint32_t closes = 0;  // engine.close calls by the workload
  std::uint32_t closes_in_handler = 0;
  std::uint32_t notifies = 0;
  std::uint32_t posts = 0;  // successful posts
  std::uint32_t tasks_run = 0;
  std::uint32_t behind_closes = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_mismatched = 0;  // never allowed
  std::uint32_t start_retries = 0;     // engine.start() or thread_start() retried after a failure
  // The listener's add() refused through every retry while faults fired (an outage): left down
  // until the director could open it.
  std::uint32_t listener_retries_exhausted = 0;
  // An edge connection's starting notify() refused through every retry while faults fired: the
  // connection was closed instead.
  std::uint32_t notify_retries_exhausted = 0;
  // engine.start(), or every worker thread, refused through every retry while faults fired (an
  // outage that kept starting again as it ended): the chaos phase was skipped, and the run went
  // on with faults off (the liveness phase).
  std::uint32_t start_outlasted = 0;
  std::uint32_t listener_reopens = 0;  // the engine closed the listener (a refused re-arm)
  // Client and server connections open at once at most (added, on_closed not yet called; the
  // listener not included): the engine slots the workload held at its peak.
  std::uint32_t connections_open_peak = 0;
};

struct ChaosResult {
  Status status;  // ok: every check of the workload held (the oracle judges the trace apart)
  ChaosCounts counts;
  EngineStats engine;  // after stop()
};

// What the driver lends the workload.
struct ChaosHooks {
  // Records one event for the oracle (`wl.*`, `hnd.*`, `phase *`; trace_lines.hpp). Required.
  std::function<void(TraceEvent&)> record;
  // Turns fault injection on or off (the liveness phase turns it off). May be empty.
  std::function<void(bool)> set_faults_enabled;
};

// Engine options that fit `workload`: its small table, workers_max, short waits.
EngineOptions chaos_engine_options(const ChaosWorkload& workload);

// Checks the workload's fields; kInvalidArgument naming the field.
Status chaos_workload_check(const ChaosWorkload& workload);

// Runs both phases as described above on `engine` (constructed, not started: this calls start(),
// retrying a failed port creation), stops the engine and joins its workers.
ChaosResult run_chaos_workload(Os& os, Engine& engine, const ChaosWorkload& workload,
                               const ChaosHooks& hooks);

}  // namespace readyport
