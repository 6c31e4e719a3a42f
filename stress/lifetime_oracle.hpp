// stress/lifetime_oracle.hpp: checks the engine's lifetime promise from its observer events.
//
// The engine promises (DESIGN.md "The engine", spec E1-E4): a slot is freed only after its
// REMOVE packet was seen (or, quarantined, drained) and its socket closed; the socket is closed
// only after that; REMOVE is seen at most once; no handler runs for a connection after its socket
// was closed, and never two at once for one connection; every acquired slot is freed by the end.
// LifetimeOracle is an EngineObserver that checks each event against that promise and keeps the
// first violation as a sentence; the driver reports it with the seed that replays it.
//
//   readyport::LifetimeOracle oracle;
//   options.observer = &oracle;            // EngineOptions
//   ... run ...
//   oracle.finish();                       // leak check: every acquired slot freed
//   if (!oracle.status().ok()) report(oracle.status());
//
// Ownership: a plain object; it must outlive the engine that reports to it.
// Threading: every method may be called from any thread (a std::mutex guards the state; it is
// never held across a call into anything else, so it cannot deadlock the simulation).
// Errors: violations are recorded, never asserted, so a failing seed is reported, not aborted.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "readyport/engine.hpp"
#include "readyport/status.hpp"

namespace readyport {

struct OracleCounts {
  std::uint64_t acquired = 0;
  std::uint64_t freed = 0;
  std::uint64_t handler_calls = 0;
  std::uint64_t removes_seen = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t sockets_closed = 0;
  std::uint64_t stale_packets = 0;
  std::uint64_t dropped_packets = 0;
};

class LifetimeOracle final : public EngineObserver {
 public:
  LifetimeOracle() = default;

  void on_slot_acquired(ConnId id, Socket socket) override;
  void on_slot_freed(ConnId id) override;
  void on_handler_enter(ConnId id, std::uint32_t events) override;
  void on_handler_leave(ConnId id, Interest result) override;
  void on_remove_seen(ConnId id) override;
  void on_quarantined(ConnId id) override;
  void on_socket_closed(ConnId id, Socket socket) override;
  void on_packet_stale(std::uintptr_t key, std::uint32_t events) override;
  void on_packet_dropped(ConnId id, std::uint32_t events) override;

  // The end of a run: every acquired slot must have been freed.
  void finish();
  // ok, or the first violation ("lifetime: ...").
  Status status() const;
  OracleCounts counts() const;

 private:
  // One live connection, keyed by slot. Only the current generation of a slot is live.
  struct Record {
    std::uint32_t generation = 0;
    Socket socket = kInvalidSocket;
    bool in_handler = false;
    bool remove_seen = false;
    bool quarantined = false;
    bool socket_closed = false;
    std::uint64_t handler_calls = 0;
  };

  // Finds the live record of `id` or records a violation naming `event`; null then.
  Record* find(ConnId id, const char* event);
  void violate(const std::string& sentence);

  mutable std::mutex mutex_;
  std::map<std::uint32_t, Record> live_;  // by slot; ordered, so reports are deterministic
  std::map<Socket, std::uint32_t> sockets_;  // socket -> slot, for the one-connection-per-socket check
  OracleCounts counts_;
  std::string violation_;  // the first one; empty while none
};

}  // namespace readyport
