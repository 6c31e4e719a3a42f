// LifetimeOracle: the model: socket lives, registrations, connections, drains, tombstones, ended
// keys, pending closes and O5 debts. See oracle_state.hpp.
#include "oracle_state.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace readyport {
namespace lifetime_oracle_internal {

const char* reg_state_name(RegState state) {
  switch (state) {
    case RegState::kTentative:
      return "being created";
    case RegState::kLive:
      return "live";
    case RegState::kRemovePending:
      return "remove-pending";
    case RegState::kClosedUnremoved:
      return "closed-unremoved";
  }
  return "?";
}

}  // namespace lifetime_oracle_internal

// ==== The model ==================================================================================

Life& LifetimeOracle::State::life_of(Socket socket) {
  auto it = lives.find(socket);
  if (it != lives.end()) {
    return it->second;
  }
  // A socket the trace did not show being made (made before the trace began): a life from here.
  return lives.emplace(socket, Life{++lives_made, 0}).first->second;
}

Life* LifetimeOracle::State::find_life(Socket socket) {
  auto it = lives.find(socket);
  return it == lives.end() ? nullptr : &it->second;
}

Reg* LifetimeOracle::State::find_reg(std::uint64_t number) {
  if (number == 0) {
    return nullptr;
  }
  auto it = regs.find(number);
  return it == regs.end() ? nullptr : &it->second;
}

// The registration of the socket's current life that is not closed-unremoved, if any.
Reg* LifetimeOracle::State::active_reg(Socket socket) {
  Life* life = find_life(socket);
  return life == nullptr ? nullptr : find_reg(life->reg);
}

std::uint64_t LifetimeOracle::State::create_reg(Socket socket, Life& life, std::uintptr_t port,
                                                const TraceReg& element) {
  Reg reg;
  reg.number = ++regs_made;
  reg.socket = socket;
  reg.life = life.number;
  life.removed = false;
  reg.port = port;
  reg.key = element.key;
  reg.filter = element.filter;
  reg.trigger = element.trigger;
  reg.state = RegState::kTentative;
  // From wl.adding on, the ENABLE of that socket creates the connection's registration.
  Conn* conn = linkable_conn(socket);
  if (conn != nullptr) {
    conn->reg = reg.number;
    reg.conn = conn->number;
  }
  regs_by_key[reg.key].push_back(reg.number);
  life.reg = reg.number;
  regs.emplace(reg.number, std::move(reg));
  return life.reg;
}

void LifetimeOracle::State::destroy_reg(Reg& reg) {
  const std::uint64_t number = reg.number;
  auto keyed = regs_by_key.find(reg.key);
  if (keyed != regs_by_key.end()) {
    std::vector<std::uint64_t>& list = keyed->second;
    list.erase(std::remove(list.begin(), list.end(), number), list.end());
    if (list.empty()) {
      regs_by_key.erase(keyed);
    }
  }
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == number) {
    life->reg = 0;
  }
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr && conn->reg == number) {
    conn->reg = 0;
  }
  closed_unremoved.erase(number);
  regs.erase(number);
}

void LifetimeOracle::State::end_by_remove(ThreadState& t, Reg& reg) {
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == reg.number) {
    life->removed = true;
    life->removed_key = reg.key;
  }
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr) {
    conn->remove_dequeued = true;
    t.removed.push_back(conn->number);
  }
  remember_ended_key(reg.key, true);
  destroy_reg(reg);
}

void LifetimeOracle::State::close_unremoved(Reg& reg) {
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == reg.number) {
    life->reg = 0;
  }
  reg.state = RegState::kClosedUnremoved;
  reg.close_seq = line->seq;
  // After an applied REMOVE nothing is queued for its key but the REMOVE packet, which its call
  // queued (spec B5); a packet posted after that call is behind it (F1). Dequeued, such a packet
  // shows the key drained whether the close then dropped the REMOVE packet or not (the fake's two
  // readings of "closesocket after REMOVE, before its packet"): the probe of a lost REMOVE posts
  // its marker after the REMOVE, before or after a close behind the engine's back.
  reg.close_post = reg.remove_applied ? reg.remove_post : posts_made;
  reg.drain_post_seen = false;
  closed_unremoved.insert(reg.number);
  ++counts.closed_unremoved;
  if (closed_unremoved.size() > kClosedUnremovedMax) {
    // Bounded memory: the oldest counts as drained, a guess, so counted as a bound hit.
    bound_hit(OracleBound::kClosedUnremoved);
    finish_drained(*find_reg(*closed_unremoved.begin()));
  }
}

void LifetimeOracle::State::finish_drained(Reg& reg) {
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr) {
    conn->drained = true;
  }
  remember_ended_key(reg.key, false);
  destroy_reg(reg);
}

void LifetimeOracle::State::prune_drained() {
  std::vector<std::uint64_t> done;
  for (const std::uint64_t number : closed_unremoved) {
    const Reg* reg = find_reg(number);
    if (reg != nullptr && drained(*reg)) {
      done.push_back(number);
    }
  }
  for (const std::uint64_t number : done) {
    finish_drained(*find_reg(number));
  }
}

// Closed-unremoved and drained: a packet posted after the close came out of its port (FIFO, F1)
// and every thread that dequeued a packet of its key has moved on since.
bool LifetimeOracle::State::drained(const Reg& reg) const {
  if (reg.state != RegState::kClosedUnremoved || !reg.drain_post_seen || !reg.waiting.empty()) {
    return false;
  }
  for (const auto& [thread, seq] : reg.dequeuers) {
    if (!thread_moved(thread, seq)) {
      return false;
    }
  }
  return true;
}

bool LifetimeOracle::State::thread_moved(std::uint32_t thread, std::uint64_t seq) const {
  auto it = threads.find(thread);
  return it != threads.end() && it->second.has_moved && it->second.moved_seq > seq;
}

// O8: the sentence when a registration with `key` on `port` may still deliver, else empty.
std::string LifetimeOracle::State::key_reuse(std::uintptr_t port, std::uintptr_t key) {
  auto keyed = regs_by_key.find(key);
  if (keyed == regs_by_key.end()) {
    return std::string();
  }
  for (const std::uint64_t number : keyed->second) {
    const Reg* other = find_reg(number);
    if (other == nullptr || other->port != port) {
      continue;
    }
    if (other->state == RegState::kClosedUnremoved && drained(*other)) {
      continue;
    }
    return "an ENABLE creates a registration with key " + num(key) + " on port " + num(port) +
           " while the registration of socket " + num(other->socket) + " with that key is " +
           reg_state_name(other->state) + " and may still deliver";
  }
  return std::string();
}

// The registration a socket packet with `key` dequeued from `port` belongs to: one not closed
// first (there is at most one unless O8 was broken), else the newest closed-unremoved one.
Reg* LifetimeOracle::State::deliverable(std::uintptr_t port, std::uintptr_t key) {
  auto keyed = regs_by_key.find(key);
  if (keyed == regs_by_key.end()) {
    return nullptr;
  }
  Reg* unremoved = nullptr;
  for (const std::uint64_t number : keyed->second) {
    Reg* reg = find_reg(number);
    if (reg == nullptr || reg->port != port) {
      continue;
    }
    if (reg->state != RegState::kClosedUnremoved) {
      return reg;
    }
    unremoved = reg;
  }
  return unremoved;
}

// A psn line without psn.begin applies its ENABLE there; another thread's dequeue of the packet
// it caused may have been recorded first, after this thread's previous line: adopt those.
void LifetimeOracle::State::adopt_orphans(ThreadState& t, Reg& reg) {
  for (auto it = orphans.begin(); it != orphans.end();) {
    const bool after = !t.has_line || it->seq > t.last_seq;
    if (it->key != reg.key || it->port != reg.port || !after) {
      ++it;
      continue;
    }
    reg.dequeuers[it->thread] = std::max(reg.dequeuers[it->thread], it->seq);
    --counts.stale_packets;
    pay(reg.conn);
    it = orphans.erase(it);
  }
}

void LifetimeOracle::State::remember_ended_key(std::uintptr_t key, bool by_remove) {
  auto [it, inserted] = ended_keys.insert_or_assign(key, EndedKey{line->seq, by_remove});
  (void)it;
  if (inserted) {
    ended_key_order.push_back(key);
  }
  while (ended_key_order.size() > kEndedKeysMax) {
    bound_hit(OracleBound::kEndedKeys);
    ended_keys.erase(ended_key_order.front());
    ended_key_order.pop_front();
  }
}

// A REMOVE of `socket` that was not applied (res != 0, a failed call, or a fault): the engine
// must take the E4 path. `reg` is the socket's registration, if it has one.
void LifetimeOracle::State::refuse_remove(Socket socket, Reg* reg) {
  ++counts.removes_refused;
  // A REMOVE refused because one is already pending proves nothing (B7): no E4 path then.
  if (reg != nullptr && (reg->state == RegState::kRemovePending || reg->remove_applied)) {
    return;
  }
  if (stopping) {
    ++coverage.remove_refused_in_stop;
  }
  const bool live = reg != nullptr && reg->state == RegState::kLive;
  if (reg != nullptr) {
    reg->remove_refused = true;
  }
  Conn* conn = reg != nullptr && reg->conn != 0 ? find_conn(reg->conn) : open_conn(socket);
  if (conn == nullptr) {
    return;
  }
  conn->remove_refused = true;
  if (live) {
    conn->refused_live = true;
  }
}

Conn* LifetimeOracle::State::find_conn(std::uint64_t number) {
  if (number == 0) {
    return nullptr;
  }
  auto it = conns.find(number);
  return it == conns.end() ? nullptr : &it->second;
}

Conn* LifetimeOracle::State::conn_by_id(IdKey id) {
  auto it = conns_by_id.find(id);
  return it == conns_by_id.end() ? nullptr : find_conn(it->second);
}

// The socket's newest connection that has not ended.
Conn* LifetimeOracle::State::open_conn(Socket socket) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end()) {
    return nullptr;
  }
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.add != AddState::kFailed && !conn.closed) {
      return &conn;
    }
  }
  return nullptr;
}

// The connection an ENABLE creating a registration of `socket` belongs to.
Conn* LifetimeOracle::State::linkable_conn(Socket socket) {
  Conn* conn = open_conn(socket);
  if (conn == nullptr || conn->reg != 0 || conn->remove_dequeued || conn->engine_closed ||
      conn->behind_closed) {
    return nullptr;
  }
  return conn;
}

Conn* LifetimeOracle::State::adding_conn(Socket socket) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end()) {
    return nullptr;
  }
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.add == AddState::kAdding) {
      return &conn;
    }
  }
  return nullptr;
}

// The connection a hnd.enter s=S id=X is for: the one of S with id X, else S's newest one whose
// id is not known yet (add() not returned), else S's newest (then O4 names the mismatch).
Conn* LifetimeOracle::State::handler_conn(Socket socket, IdKey id) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end() || list->second.empty()) {
    return nullptr;
  }
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.id_known && conn.id == id) {
      return &conn;
    }
  }
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (!conn.id_known && conn.add != AddState::kFailed) {
      return &conn;
    }
  }
  return &conns.at(list->second.back());
}

void LifetimeOracle::State::claim_id(Conn& conn, IdKey id) {
  auto it = conns_by_id.find(id);
  if (it != conns_by_id.end() && it->second != conn.number) {
    const Conn* other = find_conn(it->second);
    if (other != nullptr) {
      fail(kO4, "id " + id_text(id) + " names " + conn_text(*other) + " and now socket " +
                    num(conn.socket) + " as well");
    }
  }
  conns_by_id[id] = conn.number;
  conn.id = id;
  conn.id_known = true;
}

// Forgets a connection (a failed add, or a tombstone past the bound).
void LifetimeOracle::State::drop_conn(Conn& conn) {
  const std::uint64_t number = conn.number;
  auto list = conns_by_socket.find(conn.socket);
  if (list != conns_by_socket.end()) {
    std::vector<std::uint64_t>& numbers = list->second;
    numbers.erase(std::remove(numbers.begin(), numbers.end(), number), numbers.end());
    if (numbers.empty()) {
      conns_by_socket.erase(list);
    }
  }
  if (conn.id_known) {
    auto id = conns_by_id.find(conn.id);
    if (id != conns_by_id.end() && id->second == number) {
      conns_by_id.erase(id);
    }
  }
  Reg* reg = find_reg(conn.reg);
  if (reg != nullptr && reg->conn == number) {
    reg->conn = 0;
  }
  debts.erase(number);
  conns.erase(number);
}

// An ended connection stays as a tombstone (for O2, O9, O12) within the bounds.
void LifetimeOracle::State::bury(Conn& conn) {
  const Socket socket = conn.socket;
  tombstones.push_back(conn.number);
  std::vector<std::uint64_t> dropped;
  while (tombstones.size() > kTombstonesMax) {
    dropped.push_back(tombstones.front());
    tombstones.pop_front();
  }
  auto list = conns_by_socket.find(socket);
  if (list != conns_by_socket.end()) {
    std::size_t kept = 0;
    for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
      const Conn& candidate = conns.at(*it);
      // Kept while it matters: open, in a handler, owing (O5), or its add() has not returned.
      if (!candidate.closed || candidate.in_handler || debts.count(*it) != 0 ||
          candidate.add == AddState::kAdding) {
        continue;
      }
      if (++kept > kTombstonesPerSocketMax) {
        dropped.push_back(*it);
      }
    }
  }
  for (const std::uint64_t number : dropped) {
    Conn* old = find_conn(number);
    if (old == nullptr) {
      continue;
    }
    bound_hit(OracleBound::kTombstones);
    tombstones.erase(std::remove(tombstones.begin(), tombstones.end(), number), tombstones.end());
    drop_conn(*old);
  }
}

bool LifetimeOracle::State::drained_in_another_order(const Conn& conn) const {
  auto it = regs.find(conn.reg);
  if (it == regs.end()) {
    return false;
  }
  const Reg& reg = it->second;
  if (reg.state != RegState::kClosedUnremoved || !reg.alt_drain || !reg.alt_waiting.empty()) {
    return false;
  }
  for (const auto& [thread, seq] : reg.dequeuers) {
    if (!thread_moved(thread, seq)) {
      return false;
    }
  }
  return true;
}

bool LifetimeOracle::State::drained_for(const Conn& conn) const {
  if (conn.drained || conn.reg == 0) {
    return true;
  }
  auto it = regs.find(conn.reg);
  return it == regs.end() || drained(it->second);
}

// A violation unless a dequeue open now on `reg`'s port (another thread's) holds its REMOVE
// packet: failed now when none is open, else judged when they end (end_dequeue, socket_packet).
// The threads other than `except` whose dequeue on `port` has begun and not ended: each may hold
// a packet taken before now.
std::set<std::uint32_t> LifetimeOracle::State::open_dequeuers(std::uintptr_t port,
                                                              std::uint32_t except) const {
  std::set<std::uint32_t> open;
  for (const auto& [id, other] : threads) {
    if (id != except && other.dequeue_open && other.dequeue_port == port) {
      open.insert(id);
    }
  }
  return open;
}

void LifetimeOracle::State::pend_or_fail(const char* rule, std::string text, const ThreadState& t,
                                         const Reg& reg, bool settle) {
  PendingClose pending;
  pending.rule = rule;
  pending.reg = reg.number;
  pending.close_seq = line->seq;
  pending.text = std::move(text);
  pending.waiting = open_dequeuers(reg.port, t.id);
  pending.settle = settle;
  if (pending.waiting.empty() && !settle) {
    return fail(pending.rule, pending.text);
  }
  pending_closes.push_back(std::move(pending));
}

// The REMOVE of registration `reg` was settled by its psn line: pending closes that waited on it.
void LifetimeOracle::State::settle_pending(std::uint64_t reg, bool applied) {
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    if (it->reg != reg || !it->settle) {
      ++it;
      continue;
    }
    it->settle = false;
    if (!applied) {
      ambiguous(it->rule);
    } else if (it->waiting.empty()) {
      fail(it->rule, it->text + " (at line " + num(it->close_seq) + ")");
    } else {
      ++it;
      continue;
    }
    it = pending_closes.erase(it);
  }
}

// Whether a closesocket of `socket` has begun and not yet taken effect as far as the trace shows.
bool LifetimeOracle::State::closing(Socket socket) const {
  for (const auto& [id, t] : threads) {
    if (t.close_open && !t.close_applied && t.close_socket == socket) {
      return true;
    }
  }
  return false;
}

void LifetimeOracle::State::pay(std::uint64_t conn_number) {
  Conn* conn = find_conn(conn_number);
  if (conn == nullptr) {
    return;
  }
  ++conn->paid;
  if (conn->paid >= conn->entries) {
    debts.erase(conn_number);
  }
}

// O5 debts: cleared once paid; a violation once no thread is inside a post's engine call.
void LifetimeOracle::State::recheck_debts() {
  for (auto it = debts.begin(); it != debts.end();) {
    Conn* conn = find_conn(*it);
    if (conn == nullptr || conn->paid >= conn->entries) {
      it = debts.erase(it);
      continue;
    }
    if (open_posts == 0) {
      fail(kO5, "handler of " + conn_text(*conn) + " was entered at line " + num(conn->debt_seq) +
                    " (entry " + num(conn->entries) + "), but only " + num(conn->paid) +
                    " packet(s) of its key or notifies could cause that");
      it = debts.erase(it);
      continue;
    }
    ++it;
  }
}

std::string LifetimeOracle::State::conn_text(const Conn& conn) const {
  return "connection s=" + num(conn.socket) +
         (conn.id_known ? " id=" + id_text(conn.id) : std::string(" (id not known yet)"));
}

std::string LifetimeOracle::State::reg_text(const Reg& reg) const {
  return "(socket " + num(reg.socket) + ", key " + num(reg.key) + ", port " + num(reg.port) + ", " +
         reg_state_name(reg.state) + ")";
}

}  // namespace readyport
