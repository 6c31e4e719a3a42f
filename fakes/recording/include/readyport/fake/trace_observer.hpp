// readyport/fake/trace_observer.hpp: the engine's observer events as trace lines.
//
// TraceObserver is an EngineObserver that writes each lifetime event the engine reports about
// itself as one `obs.` line into a Trace, stamped by a TraceContext, so that the events sit in
// the same total order as the seam calls RecordingOs writes. The OS-side LifetimeOracle
// (lifetime_oracle.hpp) uses them as a cross-check only (its rule O12): it judges the engine from
// what the OS saw, and an engine that misreports its own events is caught there.
//
//   readyport::Trace trace;
//   readyport::RuntimeTraceContext context(sim);
//   readyport::TraceObserver observer(trace, context);
//   readyport::EngineOptions options;
//   options.observer = &observer;
//
// Lines (ids are `<slot>/<generation>`, masks lower-case hex with 0x):
//   obs.acquired id=<id> s=<s>          obs.freed id=<id>
//   obs.handler_enter id=<id> ev=0x<e>  obs.handler_leave id=<id> ret=0x<r>
//   obs.remove_seen id=<id>             obs.quarantined id=<id>
//   obs.socket_closed id=<id> s=<s>     obs.stale key=<k> ev=0x<e>
//   obs.dropped id=<id> ev=0x<e>
// The slot machine's events (on_slot_event) write no line: they are counted in `tuples`, when
// given, for coverage of states in context (slot_tuples.hpp).
//
// Ownership: borrows `trace`, `context` and `tuples`, which must outlive it; it must outlive the
// engine.
// Threading: any thread (the engine calls some methods under its lock: recording takes only the
// trace's mutex and makes no seam call, so it never blocks on the engine). Errors: none.
#pragma once

#include <cstdint>
#include <string_view>

#include "readyport/engine.hpp"
#include "readyport/fake/slot_tuples.hpp"
#include "readyport/fake/trace.hpp"

namespace readyport {

class TraceObserver final : public EngineObserver {
 public:
  TraceObserver(Trace& trace, const TraceContext& context, SlotTuples* tuples = nullptr)
      : trace_(trace), context_(context), tuples_(tuples) {}
  TraceObserver(const TraceObserver&) = delete;
  TraceObserver& operator=(const TraceObserver&) = delete;

  void on_slot_acquired(ConnId id, Socket socket) override;
  void on_slot_freed(ConnId id) override;
  void on_handler_enter(ConnId id, std::uint32_t events) override;
  void on_handler_leave(ConnId id, Interest result) override;
  void on_remove_seen(ConnId id) override;
  void on_quarantined(ConnId id) override;
  void on_socket_closed(ConnId id, Socket socket) override;
  void on_packet_stale(std::uintptr_t key, std::uint32_t events) override;
  void on_packet_dropped(ConnId id, std::uint32_t events) override;
  void on_slot_event(ConnId id, SlotEventPoint point) override;
  // The engine's EngineOptions::connections_max, for the table's edges in `tuples` (0: unknown,
  // not counted).
  void set_table_slots(std::uint32_t slots) { table_slots_ = slots; }

 private:
  void record(TraceEvent& event) { trace_.record(context_, event); }

  Trace& trace_;
  const TraceContext& context_;
  SlotTuples* const tuples_;
  std::uint32_t table_slots_ = 0;
  std::uint32_t slots_live_ = 0;  // acquired and not freed (under the engine's lock)
};

}  // namespace readyport
