// Counts of (slot state, event, engine context) tuples (readyport/fake/slot_tuples.hpp).
#include "readyport/fake/slot_tuples.hpp"

#include "readyport/assert.hpp"

namespace readyport {

SlotTuple slot_tuple_at(std::uint32_t index) {
  READYPORT_ASSERT(index < kSlotTupleCount);
  SlotTuple tuple;
  tuple.context = index % kEngineContextCount;
  tuple.state = (index / kEngineContextCount) % kSlotStatesCovered;
  tuple.event = index / (kEngineContextCount * kSlotStatesCovered);
  return tuple;
}

std::string slot_tuple_name(std::uint32_t index) {
  const SlotTuple t = slot_tuple_at(index);
  return std::string(slot_state_name_at(t.state)) + " " + slot_event_name(t.event) + " " +
         engine_context_name(t.context);
}

bool slot_tuple_allowed(std::uint32_t index) {
  const SlotTuple t = slot_tuple_at(index);
  return slot_event_allowed(t.event, t.state);
}

std::uint32_t slot_tuples_allowed() {
  std::uint32_t allowed = 0;
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    allowed += slot_tuple_allowed(i) ? 1 : 0;
  }
  return allowed;
}

void SlotTuples::add(const SlotEventPoint& point) {
  const auto event = static_cast<std::uint32_t>(point.event);
  READYPORT_ASSERT(event < kSlotEventCount && point.state < kSlotStatesCovered);
  for (std::uint32_t context = 0; context < kEngineContextCount; ++context) {
    if ((point.contexts & (1u << context)) != 0) {
      ++counts[slot_tuple_index(event, point.state, context)];
    }
  }
}

void SlotTuples::add(const SlotTuples& other) {
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    counts[i] += other.counts[i];
  }
  slot_last += other.slot_last;
  last_free_taken += other.last_free_taken;
}

std::uint32_t SlotTuples::reached() const {
  std::uint32_t reached = 0;
  for (const std::uint64_t count : counts) {
    reached += count != 0 ? 1 : 0;
  }
  return reached;
}

}  // namespace readyport
