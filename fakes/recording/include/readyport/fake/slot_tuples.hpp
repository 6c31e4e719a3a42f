// readyport/fake/slot_tuples.hpp: counts of the tuples (slot state, event, engine context) the
// engine reported to its observer (readyport/engine_coverage.hpp), for coverage of states in
// context.
//
// A tuple is one event of the slot machine, the slot's state before it, and one context that held
// then: an event with its phase and two conditions true counts in three tuples. The tuples the
// code allows are the events' allowed states (slot_event_allowed) in every context; a run reports
// how many of those it reached (stress/runs/slot_tuple_reasons.hpp lists the ones no run can).
//
//   SlotTuples tuples;
//   TraceObserver observer(trace, context, &tuples);   // counts every on_slot_event
//   ... run ...
//   for (std::uint32_t i = 0; i < kSlotTupleCount; ++i)
//     if (slot_tuple_allowed(i) && tuples.counts[i] == 0) puts(slot_tuple_name(i).c_str());
//
// Ownership: a value. Threading: none (the engine reports under its lock, one engine per table).
// Errors: an index out of range asserts.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "readyport/engine_coverage.hpp"

namespace readyport {

inline constexpr std::uint32_t kSlotTupleCount =
    kSlotEventCount * kSlotStatesCovered * kEngineContextCount;

// Index of (event, state, context), and back.
constexpr std::uint32_t slot_tuple_index(std::uint32_t event, std::uint32_t state,
                                         std::uint32_t context) {
  return (event * kSlotStatesCovered + state) * kEngineContextCount + context;
}
struct SlotTuple {
  std::uint32_t event = 0;
  std::uint32_t state = 0;
  std::uint32_t context = 0;
};
SlotTuple slot_tuple_at(std::uint32_t index);

// "<state> <event> <context>", e.g. "dispatching packet stop_drain".
std::string slot_tuple_name(std::uint32_t index);
// The slot machine accepts the tuple's event in its state (any context).
bool slot_tuple_allowed(std::uint32_t index);
// How many tuples are allowed.
std::uint32_t slot_tuples_allowed();

struct SlotTuples {
  std::array<std::uint64_t, kSlotTupleCount> counts{};
  // The table's edges (boundary values): events on its last slot, and add()s that took its last
  // free slot (counted by TraceObserver when it knows the table's size).
  std::uint64_t slot_last = 0;
  std::uint64_t last_free_taken = 0;

  // Counts `point` in each of its contexts' tuples.
  void add(const SlotEventPoint& point);
  void add(const SlotTuples& other);
  // Tuples with a non-zero count.
  std::uint32_t reached() const;
};

}  // namespace readyport
