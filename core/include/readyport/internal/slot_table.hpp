// readyport/internal/slot_table.hpp: the engine's fixed table of connections. Internal.
//
// A slot holds one connection's state and its state machine (slot_machine.hpp). Slots live in a
// table of fixed capacity allocated by the constructor; nothing is allocated afterwards. A slot is
// named by (index, generation); the completion key packs both, so a packet whose generation does
// not match is stale and is never dereferenced. The generation changes when a slot is freed.
//
// Key layout (uintptr_t): (generation << slot_bits) | index, with slot_bits >= 3 and generation
// never 0, so keys below 8 are free for the engine's sentinel packets (exit, task, drain, wake).
// The generation keeps (pointer width - slot_bits) bits and skips 0 when it wraps.
//
// The socket index maps each registered socket value to its slot (open addressing, linear
// probing, backward-shift deletion; capacity a power of two >= 2 x slots), so add() can refuse
// a socket that is already registered (re-registering would overwrite it, spec B2/B3).
//
// Ownership: owned by the Engine. Threading: not synchronised; the engine holds its lock around
// every use.
#pragma once

#include <cstdint>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/engine_os.hpp"
#include "readyport/internal/slot_machine.hpp"

namespace readyport::internal {

inline constexpr std::uint32_t kSlotNone = ~std::uint32_t{0};

// A slot: its state machine (slot_machine.hpp) and what the engine keeps beside it.
struct Slot : SlotMachine {
  std::uint32_t generation = 1;    // never 0; changes when the slot is freed
  Socket socket = kInvalidSocket;  // kInvalidSocket once the quarantine closed it early
  Handler* handler = nullptr;
  std::uint64_t grace_epoch = 0;   // the quarantine's grace period (engine epoch)
  std::uint64_t remove_call = 0;   // remove_applied: EngineStats::port_calls when it was applied
  std::uint32_t link = kSlotNone;  // free, deferred, quarantine, grace or dispose list
  // dispose() calls on_closed now or called it: close() and notify() of the id answer kNotFound
  // (engine.hpp), though the slot is released only after on_closed returned.
  bool closed_told = false;
};

// Sentinel completion keys (posted packets, spec F2). Keys of slots are >= 8.
inline constexpr std::uintptr_t kExitKey = 1;    // chained exit packet (stop)
inline constexpr std::uintptr_t kTaskKey = 2;    // overlapped = Task*
inline constexpr std::uintptr_t kDrainKey = 3;   // overlapped = the quarantined slot's key
inline constexpr std::uintptr_t kWakeKey = 4;    // ends a waiting driver's call (grace periods)
inline constexpr std::uintptr_t kNotifyKey = 5;  // overlapped = a slot's key, bytes = events
inline constexpr std::uintptr_t kSentinelKeyEnd = 8;

// The completion key of `id` in a table of `capacity` slots (tests and traces compute keys
// with it; the engine uses SlotTable::key_of).
std::uintptr_t completion_key_for(ConnId id, std::uint32_t capacity);

class SlotTable {
 public:
  // Allocates `capacity` slots (all free) and the socket index. capacity >= 1.
  explicit SlotTable(std::uint32_t capacity);

  std::uint32_t capacity() const { return capacity_; }
  Slot& at(std::uint32_t index) {
    READYPORT_ASSERT(index < capacity_);
    return slots_[index];
  }
  const Slot& at(std::uint32_t index) const {
    READYPORT_ASSERT(index < capacity_);
    return slots_[index];
  }
  std::uint32_t live_count() const { return live_count_; }

  // Keys (inline: once or twice per notification). A generation is never 0 and fits its bits:
  // release(), its only writer, makes it so (the constructor asserts the mask has a bit).
  std::uintptr_t key_of(std::uint32_t index) const {
    return (static_cast<std::uintptr_t>(at(index).generation) << slot_bits_) | index;
  }
  // The slot a socket packet's key names if its generation is current; else kSlotNone (a stale
  // key, a sentinel, or an index past capacity).
  std::uint32_t find_key(std::uintptr_t key) const {
    const std::uintptr_t generation = key >> slot_bits_;
    const std::uintptr_t index = key & ((std::uintptr_t{1} << slot_bits_) - 1);
    // Generation 0 is never a slot's: the key is a sentinel (or garbage).
    if (generation == 0 || generation > generation_mask_) {
      return kSlotNone;
    }
    if (index >= capacity_ || slots_[index].generation != generation) {
      return kSlotNone;
    }
    return static_cast<std::uint32_t>(index);
  }
  ConnId id_of(std::uint32_t index) const { return ConnId{index, slots_[index].generation}; }
  // The slot `id` names if its generation is current and it is not free; else kSlotNone.
  std::uint32_t find(ConnId id) const;

  // The free list. acquire() returns kSlotNone when every slot is taken; the slot is still
  // kFree and the caller moves it on. release() expects a slot that was acquired and moved back
  // to kFree by its machine; it changes the generation, poisons the slot and returns it to the
  // free list.
  std::uint32_t acquire();
  void release(std::uint32_t index);

  // The engine's lists (free, deferred, quarantine, grace, dispose) run through Slot::link, with
  // kSlotNone as their end. list_push() puts a slot that is on no list at the head; list_pop()
  // takes the head off (kSlotNone when the list is empty).
  void list_push(std::uint32_t& head, std::uint32_t index);
  std::uint32_t list_pop(std::uint32_t& head);

  // The socket index.
  std::uint32_t socket_find(Socket socket) const;
  void socket_insert(Socket socket, std::uint32_t index);
  void socket_erase(Socket socket);

 private:
  std::size_t socket_home(Socket socket) const;
  // Where `socket` is in the index, or the empty place where its probe ends.
  std::size_t socket_place(Socket socket) const;

  std::vector<Slot> slots_;
  std::uint32_t capacity_ = 0;  // slots_.size(), kept to bound indexes without a division
  std::uint32_t free_head_ = kSlotNone;
  std::uint32_t live_count_ = 0;
  unsigned slot_bits_ = 3;
  std::uintptr_t generation_mask_ = 0;
  struct IndexEntry {
    Socket socket = kInvalidSocket;
    std::uint32_t slot = kSlotNone;
  };
  std::vector<IndexEntry> index_;  // power-of-two size
};

}  // namespace readyport::internal
