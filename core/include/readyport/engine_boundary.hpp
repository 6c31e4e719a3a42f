// readyport/engine_boundary.hpp: EngineBoundary, every crossing between an Engine and the code that
// embeds it: each public call as it begins and as it returns, and each callback (a handler's
// on_events and on_closed, a task's run) around the embedder's own code. It exists for a test kit
// that judges an embedder's server (readyport::testing's harness, docs/testing-your-server.md):
// from these crossings and the seam calls, it tells which thread was inside the embedder's code
// when it called the OS, and what the engine answered. Production code never implements it.
//
// How an engine finds one: its Os answers EngineOs::engine_boundary() (engine_os.hpp). WindowsOs,
// FakeOs and every decorator answer null, or what the Os they wrap answers; only a test world
// that asks for one gets one. An Engine reads it once, in its constructor; with none, each public
// call and each callback costs one branch more.
//
//   class Recorder final : public readyport::EngineBoundary { ... };  // the kit's:
// BoundaryRecorder
//
// Ownership: the Os that returns it owns it; it outlives every engine built on that Os.
// Threading: called from any thread the engine runs on, several at once, never with the engine's
// lock held; an implementation synchronises itself. Re-entrancy: handler_events, handler_closed
// and task_run call the embedder's code, which may call the engine (and so this boundary) again on
// the same thread. Errors: none; an implementation must not throw (the callbacks are noexcept).
#pragma once

#include <cstdint>

#include "readyport/engine.hpp"

namespace readyport {

// The engine's public calls that cross the boundary (start() and stats() do not: no handler can
// run inside them and they change no connection).
enum class EngineCall : std::uint8_t { kAdd, kClose, kNotify, kPost, kPoll, kRunWorker, kStop };

// One public call, as the embedder made it: only the fields of its call are set.
struct EngineCrossing {
  explicit EngineCrossing(EngineCall call_in) : call(call_in) {}

  EngineCall call;
  Socket socket = kInvalidSocket;   // add
  Interest interest = 0;            // add
  Mode mode = Mode::kOneshotLevel;  // add
  Handler* handler = nullptr;       // add
  ConnId id;                        // close, notify
  std::uint32_t events = 0;         // notify
  Task* task = nullptr;             // post
};

class EngineBoundary {
 public:
  virtual ~EngineBoundary() = default;

  // A public call was entered (before anything else it does) and is about to return `status`
  // (`added`: the new connection of an add() that returned ok, else generation 0).
  virtual void call_begin(const EngineCrossing& call) = 0;
  virtual void call_end(const EngineCrossing& call, const Status& status, ConnId added) = 0;

  // The engine's callbacks: the boundary runs the embedder's code itself (and returns what
  // on_events returned), so that it sees both sides of each call.
  virtual Interest handler_events(Handler& handler, ConnId id, Socket socket,
                                  std::uint32_t events) noexcept = 0;
  virtual void handler_closed(Handler& handler, ConnId id) noexcept = 0;
  virtual void task_run(Task& task) noexcept = 0;

  // stop() is about to return ok: the engine's counters at that moment (what the world's end
  // checks compare with the OS side).
  virtual void engine_stopped(const EngineStats& stats) = 0;

  // The observer of an engine built with none (EngineOptions::observer null): the kit's writes the
  // engine's lifetime events to the trace, for the oracle's cross-check. Null: none. Asked once,
  // by the engine's constructor.
  virtual EngineObserver* observer() { return nullptr; }

 protected:
  EngineBoundary() = default;
};

}  // namespace readyport
