// The engine's slot table: fixed slots, generations, completion keys, the socket index.
#include "readyport/internal/slot_table.hpp"

#include <limits>

namespace readyport::internal {

namespace {

constexpr unsigned kPointerBits = std::numeric_limits<std::uintptr_t>::digits;

// Poison written into a freed slot's socket field: visible in a debugger, never a real handle.
constexpr Socket kSocketPoison = static_cast<Socket>(0xDEADDEADu);

unsigned bits_for(std::uint32_t capacity) {
  unsigned bits = 3;  // keys below 8 are sentinels (see slot_table.hpp)
  while (bits < 32 && (std::uint64_t{1} << bits) < capacity) {
    ++bits;
  }
  return bits;
}

}  // namespace

std::uintptr_t completion_key_for(ConnId id, std::uint32_t capacity) {
  return (static_cast<std::uintptr_t>(id.generation) << bits_for(capacity)) | id.slot;
}

SlotTable::SlotTable(std::uint32_t capacity) : slots_(capacity), capacity_(capacity) {
  READYPORT_ASSERT(capacity >= 1);
  slot_bits_ = bits_for(capacity);
  READYPORT_ASSERT(slot_bits_ < kPointerBits);
  const unsigned generation_bits = kPointerBits - slot_bits_;
  generation_mask_ = generation_bits >= 32 ? std::uintptr_t{0xFFFFFFFFu}
                                           : (std::uintptr_t{1} << generation_bits) - 1;
  // Free list in index order, so a run's slot choices depend only on its history.
  for (std::uint32_t i = capacity; i-- > 0;) {
    list_push(free_head_, i);
  }
  std::size_t index_size = 16;
  while (index_size < std::size_t{capacity} * 2) {
    index_size *= 2;
  }
  index_.resize(index_size);
}

std::uint32_t SlotTable::find(ConnId id) const {
  if (id.slot >= capacity_) {
    return kSlotNone;
  }
  const Slot& slot = slots_[id.slot];
  if (slot.generation != id.generation || slot.state() == SlotState::kFree) {
    return kSlotNone;
  }
  return id.slot;
}

std::uint32_t SlotTable::acquire() {
  const std::uint32_t index = list_pop(free_head_);
  if (index == kSlotNone) {
    return kSlotNone;
  }
  READYPORT_ASSERT(slots_[index].state() == SlotState::kFree);
  ++live_count_;
  return index;
}

void SlotTable::release(std::uint32_t index) {
  Slot& slot = at(index);
  READYPORT_ASSERT(slot.state() == SlotState::kFree);  // the machine's kClosing/kLive -> kFree
  READYPORT_ASSERT(!slot.op_in_flight);
  READYPORT_ASSERT(!slot.deferred);
  READYPORT_ASSERT(slot.link == kSlotNone);
  READYPORT_ASSERT(live_count_ > 0);
  const std::uint32_t generation = slot.generation;
  slot = Slot{};  // poison: every field back to a value no live slot has
  slot.socket = kSocketPoison;
  slot.generation = static_cast<std::uint32_t>((generation + 1) & generation_mask_);
  if (slot.generation == 0) {
    slot.generation = 1;  // 0 marks sentinel keys; key_of() relies on it
  }
  list_push(free_head_, index);
  --live_count_;
}

void SlotTable::list_push(std::uint32_t& head, std::uint32_t index) {
  Slot& slot = at(index);
  READYPORT_ASSERT(slot.link == kSlotNone);  // on no list, or the last of one
  slot.link = head;
  head = index;
}

std::uint32_t SlotTable::list_pop(std::uint32_t& head) {
  const std::uint32_t index = head;
  if (index == kSlotNone) {
    return kSlotNone;
  }
  Slot& slot = at(index);
  head = slot.link;
  slot.link = kSlotNone;
  return index;
}

std::size_t SlotTable::socket_home(Socket socket) const {
  // SplitMix64's finaliser: SOCKET values step by 4, so spread them over the table.
  std::uint64_t z = static_cast<std::uint64_t>(socket) + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<std::size_t>(z) & (index_.size() - 1);
}

std::size_t SlotTable::socket_place(Socket socket) const {
  const std::size_t mask = index_.size() - 1;
  std::size_t i = socket_home(socket);
  // The table holds at most capacity entries in 2 x capacity places: an empty place exists.
  while (index_[i].socket != socket && index_[i].socket != kInvalidSocket) {
    i = (i + 1) & mask;
  }
  return i;
}

std::uint32_t SlotTable::socket_find(Socket socket) const {
  return index_[socket_place(socket)].slot;  // an empty place holds kSlotNone
}

void SlotTable::socket_insert(Socket socket, std::uint32_t index) {
  READYPORT_ASSERT(socket != kInvalidSocket);
  const std::size_t i = socket_place(socket);
  READYPORT_ASSERT(index_[i].socket == kInvalidSocket);  // not in the index yet
  index_[i] = IndexEntry{socket, index};
}

void SlotTable::socket_erase(Socket socket) {
  const std::size_t mask = index_.size() - 1;
  std::size_t hole = socket_place(socket);
  READYPORT_ASSERT(index_[hole].socket == socket);  // erasing a socket not in the index
  // Backward-shift deletion: move later entries of the run into the hole when their home
  // position allows it, so lookups never need tombstones.
  for (std::size_t j = (hole + 1) & mask; index_[j].socket != kInvalidSocket; j = (j + 1) & mask) {
    const std::size_t home = socket_home(index_[j].socket);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = IndexEntry{};
}

}  // namespace readyport::internal
