// LifetimeOracle: the port lines (psn.begin, psn, gqcs, post.begin, post, dequeue.begin) and the
// packets they dequeue: rules O6 (second port), O7 (second REMOVE) and O8 (key reuse). See
// oracle_state.hpp.
#include "oracle_state.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

namespace readyport {

// ==== Port lines =================================================================================

void LifetimeOracle::State::on_psn_begin(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port)) {
    return;
  }
  if (!line->has_regs) {
    return unparsable("psn.begin without regs=");
  }
  if (t.begin_open) {
    fail(kInconsistent, "psn.begin on T" + num(t.id) + " while its psn.begin at line " +
                            num(t.begin_seq) + " has no psn line");
    abandon_begin(t);
  }
  t.begin_open = true;
  t.begin_seq = line->seq;
  t.begin_port = static_cast<std::uintptr_t>(port);
  t.begin.clear();
  for (const TraceReg& reg : line->regs) {
    t.begin.push_back(begin_element(t.begin_port, reg));
  }
}

// Makes `reg` possibly applied from now on (A7: what it causes may be dequeued by another thread
// before this call's own psn line), and judges the attempt itself (O6, O7).
Element LifetimeOracle::State::begin_element(std::uintptr_t port, const TraceReg& reg) {
  Element element;
  element.reg = reg;
  if (reg.operation == kSockNotifyOpEnable) {
    judge(kO6);
    Life& life = life_of(reg.socket);
    if (life.reg != 0) {
      // An ENABLE of a registered socket modifies it (B2)... on its own port only (B8).
      Reg* existing = find_reg(life.reg);
      if (existing != nullptr && existing->port != port) {
        fail(kO6, "ENABLE of socket " + num(reg.socket) + " on port " + num(port) +
                      " while its registration " + reg_text(*existing) + " lives on port " +
                      num(existing->port));
      }
      element.target = life.reg;
      return element;
    }
    // An ENABLE of an unregistered socket life creates a registration (B2).
    judge(kO8);
    element.key_reuse = key_reuse(port, reg.key);
    element.created = create_reg(reg.socket, life, port, reg);
    return element;
  }
  if (reg.operation == kSockNotifyOpRemove) {
    judge(kO7);
    Reg* existing = active_reg(reg.socket);
    if (existing == nullptr) {
      // Nothing to remove: the OS refuses it (B6). Harmless to the OS, but a REMOVE for the key
      // whose REMOVE packet was already dequeued is the engine removing twice (B7).
      const Life* life = find_life(reg.socket);
      if (life != nullptr && life->removed && life->removed_key == reg.key) {
        fail(kO7, "REMOVE of socket " + num(reg.socket) + " key " + num(reg.key) +
                      " after that registration's REMOVE packet was dequeued");
      }
      return element;
    }
    if (existing->key != reg.key) {
      // The OS ignores the key of a REMOVE (B5): this would remove another registration.
      fail(kO7, "REMOVE of socket " + num(reg.socket) + " carries key " + num(reg.key) +
                    " but its registration " + reg_text(*existing) +
                    " has another: a REMOVE meant for an earlier registration");
    }
    if (existing->state == RegState::kRemovePending || existing->remove_tentative) {
      // B5/B7: one REMOVE per registration. (A retry after a failed call or a refused REMOVE
      // finds neither flag set.)
      fail(kO7, "REMOVE of socket " + num(reg.socket) + " for registration " + reg_text(*existing) +
                    ", whose earlier REMOVE packet has not been dequeued");
    }
    existing->remove_tentative = true;
    element.target = existing->number;
  }
  return element;
}

void LifetimeOracle::State::abandon_begin(ThreadState& t) {
  for (const Element& element : t.begin) {
    TraceReg failed = element.reg;
    failed.has_result = true;
    failed.applied = false;
    settle_element(t, t.begin_port, element, failed, false, true);
  }
  t.begin.clear();
  t.begin_open = false;
}

void LifetimeOracle::State::on_psn(ThreadState& t) {
  std::uint64_t port64 = 0;
  if (!need_u64("port", &port64) || !need_result()) {
    return;
  }
  const std::uintptr_t port = static_cast<std::uintptr_t>(port64);
  ++counts.port_calls;
  t.removed.clear();
  t.call_seq = line->seq;
  if (line->has_entries) {
    t.dequeue_seq = line->seq;
  }
  if (t.call_failed) {
    ++coverage.call_retry;
    t.call_failed = false;
  }
  // Spec A1-A3: only these two returns mean the registrations were processed.
  const bool call_ok = result_is("ERROR_SUCCESS") || result_is("WAIT_TIMEOUT");
  const bool had_begin = t.begin_open;
  std::vector<Element> elements;
  if (had_begin) {
    elements.swap(t.begin);
    t.begin_open = false;
    bool same = t.begin_port == port && elements.size() == line->regs.size();
    for (std::size_t i = 0; same && i < elements.size(); ++i) {
      same = elements[i].reg.socket == line->regs[i].socket &&
             elements[i].reg.operation == line->regs[i].operation;
    }
    if (!same) {
      fail(kInconsistent, "the psn line on T" + num(t.id) + " differs from its psn.begin at line " +
                              num(t.begin_seq));
      t.begin.swap(elements);
      t.begin_open = true;
      abandon_begin(t);
      return;
    }
  } else {
    for (const TraceReg& reg : line->regs) {
      elements.push_back(begin_element(port, reg));
    }
  }
  for (std::size_t i = 0; i < elements.size(); ++i) {
    settle_element(t, port, elements[i], line->regs[i], call_ok, had_begin);
  }
  if (call_ok && line->has_entries) {
    take_entries(t, port);
  }
  end_dequeue(t);
  std::uint64_t received = 0;
  std::uint64_t count = 0;
  if (line->find_u64("n", &received) && line->find_u64("count", &count)) {
    count_batch(received, count);
  }
}

// The psn line's result for one element: applied or not (A3, A8).
// An ENABLE's outcome: a registration created (or not, when refused), or one modified.
void LifetimeOracle::State::settle_enable(ThreadState& t, std::uintptr_t port,
                                          const Element& element, const TraceReg& reg, bool applied,
                                          bool had_begin) {
  if (element.created != 0) {
    Reg* created = find_reg(element.created);
    if (created == nullptr) {
      return;  // ended meanwhile (closed by another thread)
    }
    if (!applied) {
      // Not applied: no registration ever existed.
      if (created->state == RegState::kTentative) {
        destroy_reg(*created);
      }
      return;
    }
    if (created->state == RegState::kTentative) {
      created->state = RegState::kLive;
    }
    ++counts.registrations;
    if (!element.key_reuse.empty()) {
      fail(kO8, element.key_reuse);
    }
    if (!had_begin) {
      adopt_orphans(t, *created);
    }
    return;
  }
  Reg* existing = find_reg(element.target);
  if (existing == nullptr || !applied) {
    return;
  }
  if (existing->port != port) {
    fail(kO6, "ENABLE of socket " + num(reg.socket) + " applied on port " + num(port) +
                  " while its registration " + reg_text(*existing) + " lives on port " +
                  num(existing->port));
  }
  if ((existing->trigger & kSockNotifyTriggerOneshot) != 0 && existing->out_since_enable &&
      (reg.filter & kSockNotifyRegisterEventIn) != 0 &&
      (reg.filter & kSockNotifyRegisterEventOut) != 0) {
    ++coverage.oneshot_rearmed_all_after_out;
  }
  existing->filter = reg.filter;
  existing->trigger = reg.trigger;
  existing->out_since_enable = false;
}

void LifetimeOracle::State::settle_element(ThreadState& t, std::uintptr_t port,
                                           const Element& element, const TraceReg& reg,
                                           bool call_ok, bool had_begin) {
  const bool applied = call_ok && reg.has_result && reg.applied;
  if (element.reg.operation == kSockNotifyOpEnable) {
    return settle_enable(t, port, element, reg, applied, had_begin);
  }
  if (element.reg.operation != kSockNotifyOpRemove) {
    return;  // DISABLE, NONE: no lifetime change
  }
  if (element.target == 0) {
    if (!applied) {
      refuse_remove(reg.socket, nullptr);
    }
    return;
  }
  Reg* target = find_reg(element.target);
  if (target == nullptr) {
    return;  // its REMOVE packet was dequeued before this line (A7)
  }
  target->remove_tentative = false;
  settle_pending(target->number, applied);
  if (applied) {
    target->remove_applied = true;
    target->remove_post = posts_made;
    if (target->state == RegState::kLive || target->state == RegState::kTentative) {
      target->state = RegState::kRemovePending;
    }
    return;
  }
  refuse_remove(reg.socket, target);
}

void LifetimeOracle::State::on_gqcs(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port) || !need_result()) {
    return;
  }
  ++counts.port_calls;
  t.removed.clear();
  t.call_seq = line->seq;
  if (line->has_entries) {
    t.dequeue_seq = line->seq;
  }
  if (result_is("1") && line->has_entries) {
    take_entries(t, static_cast<std::uintptr_t>(port));
  }
  end_dequeue(t);
  std::uint64_t received = 0;
  std::uint64_t count = 0;
  if (line->find_u64("n", &received) && line->find_u64("count", &count)) {
    count_batch(received, count);
  }
}

void LifetimeOracle::State::count_batch(std::uint64_t received, std::uint64_t count) {
  if (count > 1 && received == count) {
    ++coverage.full_batch;
  }
}

// The (port, key, bytes) of a post.begin or post line.
bool LifetimeOracle::State::need_post_packet(PostPacket* packet_out) {
  std::uint64_t port = 0;
  std::uint64_t bytes = 0;
  std::uint64_t key = 0;
  if (!need_u64("port", &port) || !need_u64("bytes", &bytes) || !need_u64("key", &key)) {
    return false;
  }
  *packet_out = {static_cast<std::uintptr_t>(port), static_cast<std::uintptr_t>(key),
                 static_cast<std::uint32_t>(bytes)};
  return true;
}

// t's post may queue its packet, to be dequeued by any thread, from here on: it is numbered now
// (a drain counts the posts that began after a close took effect), and t's engine call is open
// until its next line that ends it (O5 waits for the notify's wl.notify).
void LifetimeOracle::State::open_post_call(ThreadState& t, const PostPacket& packet) {
  t.post_open = true;
  t.post_packet = packet;
  t.post_number = ++posts_made;
  posts[packet].push_back(t.post_number);
  if (!t.open_post) {
    t.open_post = true;
    ++open_posts;
  }
}

void LifetimeOracle::State::on_post_begin(ThreadState& t) {
  PostPacket packet;
  if (!need_post_packet(&packet)) {
    return;
  }
  if (t.post_open || t.dequeue_open) {
    fail(kInconsistent, "post.begin on T" + num(t.id) + " while its earlier " +
                            (t.post_open ? "post" : "dequeue") + " has no line");
  }
  open_post_call(t, packet);
}

void LifetimeOracle::State::on_post(ThreadState& t) {
  PostPacket packet;
  if (!need_post_packet(&packet) || !need_result()) {
    return;
  }
  if (!t.post_open) {
    open_post_call(t, packet);  // no post.begin (trace format 1): a point at this line
  } else if (t.post_packet != packet) {
    t.post_open = false;
    return fail(kInconsistent, "the post line on T" + num(t.id) + " differs from its post.begin");
  }
  t.post_open = false;
  if (result_is("1")) {
    return;
  }
  // Not queued: forget it, unless a dequeue already took it, which a failed post cannot cause.
  auto list = posts.find(packet);
  auto number = list == posts.end()
                    ? std::deque<std::uint64_t>::iterator()
                    : std::find(list->second.begin(), list->second.end(), t.post_number);
  if (list == posts.end() || number == list->second.end()) {
    return fail(kInconsistent,
                "a packet of the post on T" + num(t.id) + " was dequeued, but the post failed");
  }
  list->second.erase(number);
  if (list->second.empty()) {
    posts.erase(list);
  }
  // t's engine call stays open (open_post) until its line that ends it, as for a post that
  // queued: an entry's O5 debt is judged then, only later.
}

void LifetimeOracle::State::on_dequeue_begin(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port)) {
    return;
  }
  if (t.dequeue_open) {
    fail(kInconsistent,
         "dequeue.begin on T" + num(t.id) + " while its earlier dequeue has no psn or gqcs line");
  }
  t.dequeue_open = true;
  t.dequeue_port = static_cast<std::uintptr_t>(port);
  t.dequeue_begin_seq = line->seq;
}

// The psn or gqcs line of a dequeue: what it took is known now (take_entries ran). Drains and
// closes that waited on this thread's open dequeue are settled.
void LifetimeOracle::State::end_dequeue(ThreadState& t) {
  if (!t.dequeue_open) {
    return;
  }
  t.dequeue_open = false;
  for (const std::uint64_t number : closed_unremoved) {
    Reg* reg = find_reg(number);
    if (reg == nullptr) {
      continue;
    }
    reg->waiting.erase(t.id);  // a packet it took is in reg->dequeuers
    reg->alt_waiting.erase(t.id);
  }
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    it->waiting.erase(t.id);
    if (!it->waiting.empty() || it->settle) {
      ++it;
      continue;
    }
    // No open dequeue took the REMOVE packet: the close came first in every order.
    fail(it->rule, it->text + " (at line " + num(it->close_seq) + ")");
    it = pending_closes.erase(it);
  }
}

// The entries of a successful port call: posted packets (matched to post lines), else socket
// packets of the registration with that key on that port, else stray packets.
void LifetimeOracle::State::take_entries(ThreadState& t, std::uintptr_t port) {
  for (const TraceEntry& entry : line->entries) {
    auto post = posts.find({port, entry.key, entry.mask});
    if (post != posts.end()) {
      const std::uint64_t number = post->second.front();
      // While an alike post's call is open (its packet may have queued at any time within it),
      // the order in which alike packets queued is not known: any of them may be this one. So too
      // while a dequeue that began before this one is still open: it may hold the oldest (a
      // waiter that a post handed its packet to has its begin line there, and ends later).
      if (post->second.size() > 1 &&
          (alike_post_open(post->first) || earlier_dequeue_open(port, t))) {
        for (std::size_t i = 1; i < post->second.size(); ++i) {
          note_alt_drain(port, post->second[i]);
        }
      }
      post->second.pop_front();
      if (post->second.empty()) {
        posts.erase(post);
      }
      ++counts.posted_packets;
      post_dequeued(port, number);
      continue;
    }
    Reg* reg = deliverable(port, entry.key);
    if (reg == nullptr) {
      stray_packet(t, port, entry);
    } else {
      socket_packet(t, *reg, entry);
    }
  }
}

void LifetimeOracle::State::socket_packet(ThreadState& t, Reg& reg, const TraceEntry& entry) {
  ++counts.packets;
  reg.dequeuers[t.id] = line->seq;
  if (reg.key == kKeyLowest) {
    ++coverage.boundary_key_lowest;
  }
  const bool remove = (entry.mask & kSockNotifyEventRemove) != 0;
  if (reg.state == RegState::kClosedUnremoved && !remove) {
    ++counts.stale_packets;
    ++coverage.stale_packet_dequeued;
  }
  if ((entry.mask & kSockNotifyEventOut) != 0 && (reg.trigger & kSockNotifyTriggerOneshot) != 0) {
    reg.out_since_enable = true;
  }
  pay(reg.conn);
  if (!remove) {
    return;
  }
  ++counts.removes_seen;
  judge(kO7);
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    if (it->reg != reg.number) {
      ++it;
      continue;
    }
    if (it->waiting.count(t.id) != 0) {
      // This dequeue was open at the close (or on_closed): either may have come first.
      ambiguous(it->rule);
    } else {
      // A dequeue that began after the close took the REMOVE packet: the close came first in
      // every order (whether or not the call that applied the REMOVE has returned yet).
      fail(it->rule, it->text + " (at line " + num(it->close_seq) + ")");
    }
    it = pending_closes.erase(it);
  }
  if ((entry.mask & kSockNotifyEventIn) != 0) {
    ++coverage.remove_ored_with_in;
  }
  // The REMOVE packet is the last for its key (E3). (One whose REMOVE element this trace has not
  // shown yet, a psn line recorded after another thread's dequeue, is taken the same way.)
  end_by_remove(t, reg);
}

void LifetimeOracle::State::stray_packet(ThreadState& t, std::uintptr_t port,
                                         const TraceEntry& entry) {
  ++counts.packets;
  ++counts.stale_packets;
  auto ended = ended_keys.find(entry.key);
  if (ended != ended_keys.end()) {
    ++coverage.stale_packet_dequeued;
    if ((entry.mask & kSockNotifyEventRemove) != 0 && ended->second.by_remove) {
      fail(kO7, "a second REMOVE packet for key " + num(entry.key) +
                    " (its registration's REMOVE packet was dequeued at line " +
                    num(ended->second.seq) + ")");
    }
  }
  orphans.push_back(Orphan{entry.key, port, line->seq, t.id});
  if (orphans.size() > kOrphansMax) {
    bound_hit(OracleBound::kOrphans);
    orphans.pop_front();
  }
}

bool LifetimeOracle::State::alike_post_open(const PostPacket& packet) const {
  for (const auto& [id, thread] : threads) {
    if (thread.post_open && thread.post_packet == packet) {
      return true;
    }
  }
  return false;
}

bool LifetimeOracle::State::earlier_dequeue_open(std::uintptr_t port, const ThreadState& t) const {
  for (const auto& [id, other] : threads) {
    if (id != t.id && other.dequeue_open && other.dequeue_port == port &&
        other.dequeue_begin_seq < t.dequeue_begin_seq) {
      return true;
    }
  }
  return false;
}

void LifetimeOracle::State::note_alt_drain(std::uintptr_t port, std::uint64_t post) {
  for (const std::uint64_t number : closed_unremoved) {
    Reg* reg = find_reg(number);
    if (reg == nullptr || reg->port != port || post <= reg->close_post || reg->drain_post_seen ||
        reg->alt_drain) {
      continue;
    }
    reg->alt_drain = true;
    reg->alt_waiting = open_dequeuers(port, line->thread);
  }
}

void LifetimeOracle::State::post_dequeued(std::uintptr_t port, std::uint64_t post) {
  for (const std::uint64_t number : closed_unremoved) {
    Reg* reg = find_reg(number);
    if (reg == nullptr || reg->port != port || post <= reg->close_post || reg->drain_post_seen) {
      continue;
    }
    reg->drain_post_seen = true;
    // A dequeue open now may have taken a packet of the key before this one (FIFO): wait for it.
    reg->waiting = open_dequeuers(port, line->thread);
  }
}

}  // namespace readyport
