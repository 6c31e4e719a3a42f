// The slot state machine (readyport/internal/slot_machine.hpp) on its own: no Os, no engine, no
// GoogleMock. Table-driven: every allowed edge is reached by the event that takes it, the edge
// table refuses every other pair, and a forbidden transition or event aborts.
#include "readyport/internal/slot_machine.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace readyport::internal {
namespace {

using S = SlotState;

constexpr std::uint16_t kSelf = 1;   // the driver that dequeues the packet
constexpr std::uint16_t kOther = 2;  // another driver

// A machine brought to `state` by the events that lead there (never by writing the state): added
// with the interest IN and its ENABLE applied; dispatching on kSelf; then closed (REMOVE issued),
// refused (quarantined), its marker posted and seen, or its REMOVE seen.
SlotMachine machine_in(S state, Mode mode = Mode::kOneshotLevel) {
  SlotMachine m;
  if (state == S::kFree) {
    return m;
  }
  slot_on_add(m, mode, kInterestIn);
  EXPECT_EQ(slot_on_add_result(m, false), ResultAction::kSettle);
  if (state == S::kLive) {
    return m;
  }
  if (state == S::kDispatching) {
    EXPECT_EQ(slot_on_packet(m, kSockNotifyEventIn, kSelf), PacketAction::kDispatch);
    return m;
  }
  EXPECT_EQ(slot_on_close(m), CloseAction::kSettle);
  EXPECT_EQ(slot_settle(m, false), SettleAction::kRemove);
  if (state == S::kRemoving) {
    return m;
  }
  if (state == S::kClosing) {
    EXPECT_EQ(slot_on_packet(m, kSockNotifyEventRemove, kSelf), PacketAction::kRemoveSeen);
    return m;
  }
  slot_on_remove_failed(m);
  if (state == S::kQuarantined) {
    return m;
  }
  slot_on_marker_posting(m);
  if (state == S::kDraining) {
    return m;
  }
  slot_on_marker_seen(m);
  EXPECT_EQ(state, S::kGrace);
  return m;
}

struct EdgeCase {
  const char* name;
  S from;
  S to;
  std::function<void(SlotMachine&)> setup;  // flags beside the state
  std::function<int(SlotMachine&)> event;   // returns the action, as an int
  int action;
};

std::vector<EdgeCase> edge_cases() {
  auto none = [](SlotMachine&) {};
  return {
      {"add", S::kFree, S::kLive, none,
       [](SlotMachine& m) {
         slot_on_add(m, Mode::kPersistentEdge, kInterestOut);
         return 0;
       },
       0},
      {"add_refused", S::kLive, S::kFree, [](SlotMachine& m) { m.op_in_flight = true; },
       [](SlotMachine& m) { return static_cast<int>(slot_on_add_result(m, true)); },
       static_cast<int>(ResultAction::kNone)},
      {"packet_dispatch", S::kLive, S::kDispatching, none,
       [](SlotMachine& m) {
         return static_cast<int>(slot_on_packet(m, kSockNotifyEventIn, kSelf));
       },
       static_cast<int>(PacketAction::kDispatch)},
      {"handler_returned_run_again", S::kDispatching, S::kDispatching,
       [](SlotMachine& m) { m.pending_events = kSockNotifyEventOut; },
       [](SlotMachine& m) {
         std::uint32_t events = 0;
         const ReturnAction a = slot_on_handler_returned(m, kInterestIn, &events);
         EXPECT_EQ(events, kSockNotifyEventOut);
         return static_cast<int>(a);
       },
       static_cast<int>(ReturnAction::kRunAgain)},
      {"handler_returned_settle", S::kDispatching, S::kLive, none,
       [](SlotMachine& m) {
         std::uint32_t events = 0;
         return static_cast<int>(slot_on_handler_returned(m, kInterestIn, &events));
       },
       static_cast<int>(ReturnAction::kSettle)},
      {"settle_remove", S::kLive, S::kRemoving, [](SlotMachine& m) { m.close_requested = true; },
       [](SlotMachine& m) { return static_cast<int>(slot_settle(m, false)); },
       static_cast<int>(SettleAction::kRemove)},
      {"remove_seen", S::kRemoving, S::kClosing, none,
       [](SlotMachine& m) {
         return static_cast<int>(
             slot_on_packet(m, kSockNotifyEventRemove | kSockNotifyEventIn, kSelf));
       },
       static_cast<int>(PacketAction::kRemoveSeen)},
      {"remove_failed", S::kRemoving, S::kQuarantined, none,
       [](SlotMachine& m) {
         slot_on_remove_failed(m);
         return 0;
       },
       0},
      {"marker_posting", S::kQuarantined, S::kDraining, none,
       [](SlotMachine& m) {
         slot_on_marker_posting(m);
         return 0;
       },
       0},
      {"marker_post_failed", S::kDraining, S::kQuarantined, none,
       [](SlotMachine& m) {
         slot_on_marker_post_failed(m);
         return 0;
       },
       0},
      {"marker_seen", S::kDraining, S::kGrace, none,
       [](SlotMachine& m) {
         slot_on_marker_seen(m);
         return 0;
       },
       0},
      {"grace_over", S::kGrace, S::kClosing, none,
       [](SlotMachine& m) { return static_cast<int>(slot_on_grace_over(m)); }, 0},
      // A probe for a lost REMOVE: the quarantine's path with the socket left open.
      {"probe", S::kRemoving, S::kQuarantined, [](SlotMachine& m) { m.remove_applied = true; },
       [](SlotMachine& m) {
         slot_probe(m);
         return static_cast<int>(m.probe);
       },
       1},
      // Its grace period ended without the REMOVE: lost.
      {"grace_over_probe_lost", S::kGrace, S::kClosing, [](SlotMachine& m) { m.probe = true; },
       [](SlotMachine& m) { return static_cast<int>(slot_on_grace_over(m)); }, 1},
      {"disposed", S::kClosing, S::kFree, none,
       [](SlotMachine& m) {
         slot_on_disposed(m);
         return 0;
       },
       0},
  };
}

TEST(SlotMachine, EveryAllowedEdgeIsTakenByItsEvent) {
  std::set<std::pair<S, S>> covered;
  for (const EdgeCase& c : edge_cases()) {
    SCOPED_TRACE(c.name);
    SlotMachine m = machine_in(c.from);
    c.setup(m);
    ASSERT_TRUE(slot_edge_allowed(c.from, c.to));
    EXPECT_EQ(c.event(m), c.action);
    EXPECT_EQ(m.state(), c.to) << slot_state_name(m.state());
    covered.insert({c.from, c.to});
  }
  // The cases cover the whole table: every allowed pair is one of them.
  std::size_t allowed = 0;
  for (std::uint32_t a = 0; a < kSlotStateCount; ++a) {
    for (std::uint32_t b = 0; b < kSlotStateCount; ++b) {
      const S from = static_cast<S>(a);
      const S to = static_cast<S>(b);
      if (!slot_edge_allowed(from, to)) {
        continue;
      }
      ++allowed;
      EXPECT_TRUE(covered.count({from, to}))
          << slot_state_name(from) << " -> " << slot_state_name(to) << " has no event case";
    }
  }
  EXPECT_EQ(allowed, 13u);
  EXPECT_EQ(covered.size(), 13u);
}

TEST(SlotMachine, EveryOtherPairIsRefused) {
  std::set<std::pair<S, S>> allowed;
  for (const EdgeCase& c : edge_cases()) {
    allowed.insert({c.from, c.to});
  }
  std::size_t refused = 0;
  for (std::uint32_t a = 0; a < kSlotStateCount; ++a) {
    for (std::uint32_t b = 0; b < kSlotStateCount; ++b) {
      const S from = static_cast<S>(a);
      const S to = static_cast<S>(b);
      if (allowed.count({from, to})) {
        continue;
      }
      EXPECT_FALSE(slot_edge_allowed(from, to))
          << slot_state_name(from) << " -> " << slot_state_name(to);
      ++refused;
    }
  }
  EXPECT_EQ(refused, kSlotStateCount * kSlotStateCount - 13u);
}

TEST(SlotMachineDeathTest, ForbiddenTransitionsAbort) {
  const std::pair<S, S> forbidden[] = {
      {S::kFree, S::kDispatching},    {S::kLive, S::kClosing},     {S::kRemoving, S::kFree},
      {S::kQuarantined, S::kClosing}, {S::kDraining, S::kClosing}, {S::kClosing, S::kLive},
  };
  for (const auto& [from, to] : forbidden) {
    SlotMachine m = machine_in(from);
    EXPECT_DEATH(slot_transition(m, to), "slot_edge_allowed") << slot_state_name(from);
  }
  // Events a state cannot take: a REMOVE packet for a live slot, a marker for a removing one, a
  // settle of a dispatching one. Each event asserts its states on entry (kSlotEventStates).
  SlotMachine live = machine_in(S::kLive);
  EXPECT_DEATH(slot_on_packet(live, kSockNotifyEventRemove, kSelf), "slot_event_accepts");
  SlotMachine removing = machine_in(S::kRemoving);
  EXPECT_DEATH(slot_on_marker_seen(removing), "slot_event_accepts");
  SlotMachine dispatching = machine_in(S::kDispatching);
  EXPECT_DEATH((void)slot_settle(dispatching, false), "slot_event_accepts");
}

// Decisions that keep the state: settle, pause, results, merges, drops, close.
struct StayCase {
  const char* name;
  S state;
  Mode mode;
  std::function<void(SlotMachine&)> setup;
  std::function<int(SlotMachine&)> event;
  int action;
  std::function<bool(const SlotMachine&)> after;
};

std::vector<StayCase> stay_cases() {
  auto none = [](SlotMachine&) {};
  auto any = [](const SlotMachine&) { return true; };
  const Mode ol = Mode::kOneshotLevel;
  const Mode pl = Mode::kPersistentLevel;
  const Mode pe = Mode::kPersistentEdge;
  auto settle = [](bool full) {
    return [full](SlotMachine& m) { return static_cast<int>(slot_settle(m, full)); };
  };
  auto packet = [](std::uint32_t mask, std::uint16_t driver) {
    return [mask, driver](SlotMachine& m) {
      return static_cast<int>(slot_on_packet(m, mask, driver));
    };
  };
  auto close = [](SlotMachine& m) { return static_cast<int>(slot_on_close(m)); };
  auto op_result = [](bool failed) {
    return [failed](SlotMachine& m) { return static_cast<int>(slot_on_op_result(m, failed)); };
  };
  auto pause = [](bool full) {
    return [full](SlotMachine& m) { return slot_pause(m, full) ? 1 : 0; };
  };
  const int kNone = static_cast<int>(SettleAction::kNone);
  return {
      {"settle_idle", S::kLive, ol, none, settle(false), kNone,
       [](const SlotMachine& m) { return !m.op_in_flight; }},
      {"settle_in_flight", S::kLive, ol,
       [](SlotMachine& m) {
         m.op_in_flight = true;
         m.close_requested = true;
       },
       settle(false), kNone, any},
      {"settle_deferred_already", S::kLive, ol,
       [](SlotMachine& m) {
         m.deferred = true;
         m.rearm_needed = true;
       },
       settle(false), kNone, any},
      {"settle_enable", S::kLive, pe,
       [](SlotMachine& m) {
         m.rearm_needed = true;
         m.paused = true;
         m.interest = kInterestOut;
       },
       settle(false), static_cast<int>(SettleAction::kEnable),
       [](const SlotMachine& m) {
         return m.op_in_flight && !m.rearm_needed && !m.paused &&
                m.interest_applied == kInterestOut;
       }},
      {"settle_full_defers", S::kLive, ol, [](SlotMachine& m) { m.close_requested = true; },
       settle(true), static_cast<int>(SettleAction::kDefer),
       [](const SlotMachine& m) { return m.deferred; }},
      {"undeferred_live", S::kLive, ol, [](SlotMachine& m) { m.deferred = true; },
       [](SlotMachine& m) { return slot_on_undeferred(m) ? 1 : 0; }, 1,
       [](const SlotMachine& m) { return !m.deferred; }},
      {"undeferred_dispatching", S::kDispatching, ol, [](SlotMachine& m) { m.deferred = true; },
       [](SlotMachine& m) { return slot_on_undeferred(m) ? 1 : 0; }, 0,
       [](const SlotMachine& m) { return !m.deferred; }},
      {"pause", S::kDispatching, pl, none, pause(false), 1,
       [](const SlotMachine& m) { return m.paused && m.op_in_flight; }},
      {"pause_refused_in_flight", S::kDispatching, pl,
       [](SlotMachine& m) { m.op_in_flight = true; }, pause(false), 0,
       [](const SlotMachine& m) { return !m.paused; }},
      {"pause_refused_full", S::kDispatching, pl, none, pause(true), 0,
       [](const SlotMachine& m) { return !m.paused && !m.op_in_flight; }},
      // Applied with nothing wanted meanwhile: armed as it is, nothing to settle.
      {"op_ok_live", S::kLive, ol, [](SlotMachine& m) { m.op_in_flight = true; }, op_result(false),
       static_cast<int>(ResultAction::kNone),
       [](const SlotMachine& m) { return !m.op_in_flight && !m.close_requested; }},
      {"op_ok_live_rearm_wanted", S::kLive, ol,
       [](SlotMachine& m) {
         m.op_in_flight = true;
         m.rearm_needed = true;
       },
       op_result(false), static_cast<int>(ResultAction::kSettle),
       [](const SlotMachine& m) { return !m.op_in_flight && m.rearm_needed; }},
      {"op_ok_live_close_wanted", S::kLive, ol,
       [](SlotMachine& m) {
         m.op_in_flight = true;
         m.close_requested = true;
       },
       op_result(false), static_cast<int>(ResultAction::kSettle),
       [](const SlotMachine& m) { return !m.op_in_flight && m.close_requested; }},
      // On the deferred list: the driver that takes it off settles it.
      {"op_ok_live_deferred", S::kLive, ol,
       [](SlotMachine& m) {
         m.op_in_flight = true;
         m.close_requested = true;
         m.deferred = true;
       },
       op_result(false), static_cast<int>(ResultAction::kNone),
       [](const SlotMachine& m) { return !m.op_in_flight && m.deferred; }},
      {"op_failed_live", S::kLive, ol, [](SlotMachine& m) { m.op_in_flight = true; },
       op_result(true), static_cast<int>(ResultAction::kSettle),
       [](const SlotMachine& m) { return m.close_requested; }},
      {"op_ok_dispatching", S::kDispatching, ol, [](SlotMachine& m) { m.op_in_flight = true; },
       op_result(false), static_cast<int>(ResultAction::kNone), any},
      {"add_ok_dispatching", S::kDispatching, ol, [](SlotMachine& m) { m.op_in_flight = true; },
       [](SlotMachine& m) { return static_cast<int>(slot_on_add_result(m, false)); },
       static_cast<int>(ResultAction::kNone), [](const SlotMachine& m) { return !m.op_in_flight; }},
      {"add_ok_live", S::kLive, ol, [](SlotMachine& m) { m.op_in_flight = true; },
       [](SlotMachine& m) { return static_cast<int>(slot_on_add_result(m, false)); },
       static_cast<int>(ResultAction::kSettle), any},
      {"packet_closing_live", S::kLive, ol,
       [](SlotMachine& m) {
         m.close_requested = true;
         m.op_in_flight = true;
       },
       packet(kSockNotifyEventIn, kSelf), static_cast<int>(PacketAction::kDropClosing), any},
      {"packet_unwanted_persistent", S::kLive, pe, none, packet(kSockNotifyEventOut, kSelf),
       static_cast<int>(PacketAction::kDropUnwanted), any},
      {"packet_err_persistent", S::kLive, pe, none, packet(kSockNotifyEventErr, kSelf),
       static_cast<int>(PacketAction::kDispatch), nullptr},
      {"merge_own", S::kDispatching, pl, none, packet(kSockNotifyEventOut, kSelf),
       static_cast<int>(PacketAction::kMergeOwn),
       [](const SlotMachine& m) { return m.pending_events == kSockNotifyEventOut; }},
      {"merge_foreign", S::kDispatching, ol, none, packet(kSockNotifyEventIn, kOther),
       static_cast<int>(PacketAction::kMergeForeign), any},
      {"merge_pause", S::kDispatching, pl, none, packet(kSockNotifyEventIn, kOther),
       static_cast<int>(PacketAction::kMergePause), any},
      {"removing_drop", S::kRemoving, ol, none, packet(kSockNotifyEventIn, kSelf),
       static_cast<int>(PacketAction::kDropClosing), any},
      {"grace_drop", S::kGrace, ol, none, packet(kSockNotifyEventIn, kSelf),
       static_cast<int>(PacketAction::kDropClosing), any},
      {"close_live", S::kLive, ol, none, close, static_cast<int>(CloseAction::kSettle),
       [](const SlotMachine& m) { return m.close_requested; }},
      {"close_live_twice", S::kLive, ol,
       [](SlotMachine& m) {
         m.close_requested = true;
         m.op_in_flight = true;
       },
       close, static_cast<int>(CloseAction::kNone), any},
      {"close_dispatching", S::kDispatching, ol, none, close, static_cast<int>(CloseAction::kNone),
       [](const SlotMachine& m) { return m.close_requested; }},
      {"close_draining", S::kDraining, ol, none, close,
       static_cast<int>(CloseAction::kAlreadyClosing), any},
      {"close_removing_not_applied_yet", S::kRemoving, ol, none, close,
       static_cast<int>(CloseAction::kAlreadyClosing), any},
      {"close_removing_applied", S::kRemoving, ol, [](SlotMachine& m) { m.remove_applied = true; },
       close, static_cast<int>(CloseAction::kAlreadyClosing), any},
      {"probe_answered_in_grace", S::kGrace, ol, [](SlotMachine& m) { m.probe = true; },
       packet(kSockNotifyEventRemove, kSelf), static_cast<int>(PacketAction::kProbeAnswered),
       [](const SlotMachine& m) { return !m.probe; }},
      {"probe_answered_in_draining", S::kDraining, ol, [](SlotMachine& m) { m.probe = true; },
       packet(kSockNotifyEventRemove | kSockNotifyEventIn, kOther),
       static_cast<int>(PacketAction::kProbeAnswered),
       [](const SlotMachine& m) { return !m.probe; }},
      {"handler_close_settles", S::kDispatching, ol,
       [](SlotMachine& m) { m.pending_events = kSockNotifyEventIn; },
       [](SlotMachine& m) {
         std::uint32_t events = 0;
         return static_cast<int>(slot_on_handler_returned(m, kInterestClose, &events));
       },
       static_cast<int>(ReturnAction::kSettle),
       [](const SlotMachine& m) { return m.close_requested && m.pending_events == 0; }},
      {"persistent_same_interest_no_rearm", S::kDispatching, pe, none,
       [](SlotMachine& m) {
         std::uint32_t events = 0;
         return static_cast<int>(slot_on_handler_returned(m, kInterestIn, &events));
       },
       static_cast<int>(ReturnAction::kSettle),
       [](const SlotMachine& m) { return !m.rearm_needed && m.dispatcher == kDriverNone; }},
      {"oneshot_always_rearms", S::kDispatching, ol, none,
       [](SlotMachine& m) {
         std::uint32_t events = 0;
         return static_cast<int>(slot_on_handler_returned(m, kInterestIn, &events));
       },
       static_cast<int>(ReturnAction::kSettle),
       [](const SlotMachine& m) { return m.rearm_needed; }},
  };
}

TEST(SlotMachine, DecisionsTable) {
  for (const StayCase& c : stay_cases()) {
    SCOPED_TRACE(c.name);
    SlotMachine m = machine_in(c.state, c.mode);
    c.setup(m);
    const S before = m.state();
    EXPECT_EQ(c.event(m), c.action);
    if (c.after) {
      EXPECT_TRUE(c.after(m));
    }
    // Decisions keep the state, except the three cases named for the edge they take.
    const std::string name = c.name;
    S expected = before;
    if (name == "packet_err_persistent") {
      expected = S::kDispatching;
    }
    if (name.rfind("handler_", 0) == 0 || name.find("rearm") != std::string::npos) {
      expected = S::kLive;
    }
    EXPECT_EQ(m.state(), expected) << slot_state_name(m.state());
  }
}

TEST(SlotMachine, StateNames) {
  std::set<std::string> names;
  for (std::uint32_t a = 0; a < kSlotStateCount; ++a) {
    names.insert(slot_state_name(static_cast<S>(a)));
  }
  EXPECT_EQ(names.size(), kSlotStateCount);
  EXPECT_EQ(names.count("unknown"), 0u);
}

}  // namespace
}  // namespace readyport::internal
