// readyport/internal/engine_tuning.hpp: the engine's fixed tuning (once EngineOptions knobs that
// only the simulator ever turned). Internal; tests read them to predict the calls they pin.
// Ownership, lifetime, threading, errors: none (constants).
#pragma once

#include <cstdint>

namespace readyport::internal {

// A port call that fails as a whole (spec A3) is retried after kRetryBackoffMs, doubling per
// failed try (the shift is capped at kRetryBackoffShiftMax), at most kRetryBackoffMaxMs.
inline constexpr std::uint32_t kRetryBackoffMs = 1;
inline constexpr std::uint32_t kRetryBackoffMaxMs = 64;
inline constexpr std::uint32_t kRetryBackoffShiftMax = 16;
static_assert(kRetryBackoffMs >= 1, "a retry must give the port time");
static_assert(kRetryBackoffMs <= kRetryBackoffMaxMs, "the first delay is within the cap");
static_assert((std::uint64_t{kRetryBackoffMs} << kRetryBackoffShiftMax) >= kRetryBackoffMaxMs,
              "doubling reaches the cap before the shift is capped");

// How long stop() waits in one port call while it drives the port itself: short, since stop()
// loops until every slot is free.
inline constexpr std::uint32_t kStopPollMs = 10;
static_assert(kStopPollMs >= 1, "a zero wait would make stop() spin on an empty port");
static_assert(kStopPollMs <= kRetryBackoffMaxMs, "stop() polls at least as often as it retries");
// A driver's port calls in a row that dequeue nothing before it probes the REMOVEs the engine
// awaits (a lost REMOVE, engine.hpp). An applied REMOVE is in the port or on another driver: a
// probe after one idle call would mostly ask after REMOVEs on their way (harmless, a marker each).
inline constexpr std::uint32_t kIdleCallsToProbe = 2;
static_assert(kIdleCallsToProbe >= 1, "an idle engine must probe at some point, or stop() hangs");
// A port that is never idle (other connections' packets keep coming) must not hide a lost REMOVE
// for ever: a REMOVE still awaited after this many port calls of the engine's drivers since it
// was applied is probed too. Checked every kAwaitedScanCalls calls (a scan of the table).
inline constexpr std::uint64_t kAwaitedCallsToProbe = 256;
inline constexpr std::uint64_t kAwaitedScanCalls = 64;
static_assert(kAwaitedScanCalls <= kAwaitedCallsToProbe, "a scan between two probe ages");

// Spin guard. A persistent level registration re-queues its packet while its condition holds
// (spec C4); while another driver is about to apply its DISABLE, ENABLE or REMOVE, a driver can
// dequeue nothing but packets it must drop (stale, closing, merged, outside the interest). After
// kSpinBatchesMax such batches in a row it sleeps kSpinSleepMs (Os::sleep_ms) so that the other
// driver runs (a fair scheduler runs it at once; the simulation may not pick it).
inline constexpr std::uint32_t kSpinBatchesMax = 8;
inline constexpr std::uint32_t kSpinSleepMs = 1;
static_assert(kSpinBatchesMax >= 2, "one wasted batch is normal (a merge, a stale packet)");
static_assert(kSpinSleepMs >= 1, "a zero sleep may not yield in the simulation");
static_assert(kSpinSleepMs <= kStopPollMs, "the guard delays a driver less than a stop poll");

}  // namespace readyport::internal
