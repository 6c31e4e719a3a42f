// readyport/fake/fake_options.hpp: the switches of FakeOs.
//
// Every question that docs/rules.md leaves open ("Fake defaults for what the record leaves
// open") is a field here. The defaults are the spec's defaults: the harder reading for the
// engine. A test that wants the other reading sets the field. Plus the fake's limits
// (everything is bounded).
//
//   readyport::FakeOptions options;
//   options.remove_separate_packet = true;  // REMOVE never OR-ed into a queued packet
//   readyport::FakeOs os(options);
//
// Ownership: a plain value, copied into the FakeOs at construction; later changes have no effect.
#pragma once

#include <cstdint>

#include "readyport/os.hpp"

namespace readyport {

// When a one-shot registration disarms (spec C2; table row "ONESHOT disarm").
enum class OneshotDisarm : std::uint8_t {
  kAtDequeue,  // default: disarmed when its packet is dequeued
  kAtQueue,    // disarmed when its packet is queued
};

struct FakeOptions {
  // ---- spec "Fake defaults" table, one field per row ----------------------------------------

  // Trigger flags without exactly one of ONESHOT/PERSISTENT (spec C1). false (default): the
  // registration fails with WSAEINVAL. true (lenient): missing ONESHOT/PERSISTENT means PERSISTENT.
  // A missing or doubled LEVEL/EDGE fails in both modes.
  bool trigger_lenient = false;
  // ENABLE with a new key on a live registration (spec B3). false (default): the old key is kept
  // and the registration succeeds. true (strict): fails with WSAEINVAL, nothing changes.
  bool key_change_strict = false;
  // Registration with a second port while registered with a first (spec B8): this code, first
  // registration unchanged.
  std::uint32_t second_port_error = kWsaEinval;
  // REMOVE or DISABLE of a socket that is not registered (spec B6): this code.
  std::uint32_t unregistered_error = kWsaEinval;
  // A registration whose socket value is not an open socket (spec B9): this code.
  std::uint32_t not_socket_error = kWsaEnotsock;
  // A packet already queued when DISABLE or closesocket happens (spec B4, E2). false (default):
  // still delivered. true: dropped.
  bool queued_dropped_on_disable = false;
  // REMOVE while a packet of the registration is queued (spec D4). false (default): REMOVE is
  // OR-ed into that packet and the registration is destroyed when it is delivered. true: the
  // REMOVE packet is queued separately, after it.
  bool remove_separate_packet = false;
  // closesocket after REMOVE, before its packet was dequeued. false (default): the REMOVE packet
  // is still delivered. true: dropped.
  bool remove_dropped_on_close = false;
  // When a ONESHOT registration disarms (spec C2).
  OneshotDisarm oneshot_disarm = OneshotDisarm::kAtDequeue;
  // lpOverlapped/Internal of socket packets. true (default): overlapped is poisoned with
  // kOverlappedPoison and internal is 0. false: both 0.
  bool overlapped_poison = true;
  // A timed wait may end up to this many virtual ms before its deadline (spec A5); 0 (default):
  // never early. The amount is drawn from `seed`, so it is reproducible.
  std::uint32_t early_wake_ms_max = 0;
  // SOCKET value reuse (spec E5). true (default): the lowest free value, reused at once.
  // false: never reused.
  bool socket_reuse = true;

  // ---- the port's concurrency value (spec F7) ---------------------------------------------------

  // true: a port lets at most its concurrency value of its threads run at once (the value given
  // to create_io_completion_port, 0 meaning `processors`): a waiting thread is released, and a
  // calling thread dequeues, only while fewer run; a thread runs from its release (or its call's
  // return) until it calls a port again, blocks in a seam call the fake knows blocks (a port
  // wait, sleep_ms, a contended Mutex, a blocking socket call) or ends. false (default): the
  // value limits nothing, as before the switch existed (so older traces replay).
  bool concurrency_limited = false;
  // What concurrency 0 means when limited: the processors Windows would count. 1..64.
  std::uint32_t processors = 2;

  // ---- determinism and limits -------------------------------------------------------------------

  // Seeds every choice the fake makes itself (early wakes). Never read from a clock.
  std::uint64_t seed = 0;
  // Open sockets at most; socket() fails with WSAEMFILE past it.
  std::uint32_t sockets_max = 4096;
  // Open ports at most; create_io_completion_port fails with ERROR_NOT_ENOUGH_MEMORY past it.
  std::uint32_t ports_max = 16;
  // A stream socket's receive buffer in bytes: send() moves at most the free space of the peer's
  // receive buffer, so OUT is false while it is full. Also the datagram queue's byte limit.
  std::uint32_t receive_buffer_bytes = 64 * 1024;
  // listen() backlogs are clamped to this (kSomaxconn included).
  std::uint32_t backlog_max = 128;
  // registration_count and completion_count of one call at most; more fails with WSAEINVAL.
  std::uint32_t batch_max = 4096;
};

// The swarm over the open questions (spec "Fake defaults"): each read one way or the other, drawn
// from SeedStreams(seed)'s swarm stream, so that a run is shown correct under every reading Windows
// may take (the main job's and the harness's worlds). A pure function of its arguments; `seed` is
// also the fake's own seed (FakeOptions::seed).
FakeOptions fake_options_swarm(std::uint64_t seed, std::uint32_t receive_buffer_bytes);

// The value a poisoned socket packet carries in lpOverlapped (spec table "lpOverlapped").
inline constexpr std::uintptr_t kOverlappedPoison = 0xDEAD0000;

// First SOCKET value the fake hands out; values step by kSocketValueStep, like Windows handles.
// The first and last ephemeral port bind() hands out for port 0 (the IANA range, as Windows):
// the fake's clients of one run fit in this many (lowest free first).
inline constexpr std::uint16_t kFakeEphemeralPortFirst = 49152;
inline constexpr std::uint16_t kFakeEphemeralPortLast = 65535;
inline constexpr Socket kFakeSocketFirst = 0x100;
inline constexpr Socket kFakeSocketValueStep = 4;

}  // namespace readyport
