// LifetimeOracle: the OS-side lifetime oracle over trace lines (lifetime_oracle.hpp).
//
// This file: the public class, which only locks and forwards to State (on_trace_event() is in
// oracle_read.cpp, with the reading it forwards to inlined), and the free functions of the
// header. State and the model's records are in oracle_state.hpp; State's methods in the
// oracle_*.cpp files, one per rule family.
#include "readyport/fake/lifetime_oracle.hpp"

#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oracle_state.hpp"

namespace readyport {

// ==== The public class ===========================================================================

LifetimeOracle::LifetimeOracle() : state_(std::make_unique<State>()) {}

LifetimeOracle::~LifetimeOracle() = default;

void LifetimeOracle::on_trace_line(std::string_view line) {
  std::lock_guard<std::mutex> guard(mutex_);
  state_->read(line);
  note_violation_locked();
}

void LifetimeOracle::observe_text(std::string_view text) {
  std::lock_guard<std::mutex> guard(mutex_);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view one = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (one.empty() || one == "\r") {
      continue;
    }
    state_->read(one);
  }
  note_violation_locked();
}

Status LifetimeOracle::finish() {
  std::lock_guard<std::mutex> guard(mutex_);
  state_->finish(/*run_ended=*/true);
  note_violation_locked();
  if (state_->violation.empty()) {
    return Status();
  }
  return Status(StatusCode::kInternal, state_->violation);
}

Status LifetimeOracle::finish_cut() {
  std::lock_guard<std::mutex> guard(mutex_);
  state_->finish(/*run_ended=*/false);
  note_violation_locked();
  if (state_->violation.empty()) {
    return Status();
  }
  return Status(StatusCode::kInternal, state_->violation);
}

void LifetimeOracle::note_violation_locked() {
  if (!state_->violation.empty()) {
    violated_.store(true, std::memory_order_release);
  }
}

Status LifetimeOracle::status() const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (state_->violation.empty()) {
    return Status();
  }
  return Status(StatusCode::kInternal, state_->violation);
}

bool LifetimeOracle::try_violation(std::string* violation_out) const {
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock() || state_->violation.empty()) {
    return false;
  }
  *violation_out = state_->violation;
  return true;
}

bool LifetimeOracle::try_describe_open(std::string* text_out) const {
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock()) {
    return false;
  }
  constexpr std::uint32_t kListedMax = 16;
  std::uint32_t open = 0;
  std::string listed;
  for (const auto& [number, conn] : state_->conns) {
    if (conn.closed || conn.add == AddState::kFailed) {
      continue;
    }
    if (++open > kListedMax) {
      continue;
    }
    listed += "\n  " + state_->conn_text(conn);
    if (conn.in_handler) {
      listed += ": its handler runs on T" + std::to_string(conn.handler_thread);
    }
    if (conn.close_returned) {
      listed += ", close() returned ok";
    }
    if (conn.remove_dequeued) {
      listed += ", REMOVE dequeued";
    }
    if (conn.remove_refused) {
      listed += ", a REMOVE refused";
    }
    if (conn.engine_closed) {
      listed += ", socket closed";
    }
  }
  std::uint32_t registrations = 0;
  for (const auto& [number, reg] : state_->regs) {
    if (reg.state == RegState::kLive) {
      ++registrations;
    }
  }
  *text_out = "the trace shows " + std::to_string(open) + " connection(s) without on_closed and " +
              std::to_string(registrations) + " live registration(s)" + listed;
  if (open > kListedMax) {
    *text_out += "\n  (" + std::to_string(open - kListedMax) + " more)";
  }
  return true;
}

std::vector<std::string> LifetimeOracle::coverage_names() {
  std::vector<std::string> names = {"remove_ored_with_in",
                                    "stale_packet_dequeued",
                                    "call_retry",
                                    "remove_refused_quarantined",
                                    "oneshot_rearmed_all_after_out",
                                    "full_batch",
                                    "socket_reused_while_stale",
                                    "close_in_handler",
                                    "handler_entered",
                                    "remove_refused_in_stop"};
  for (std::string& name : race_coverage_names()) {
    names.push_back(std::move(name));
  }
  for (const char* name : {"boundary.socket_reused_at_once", "boundary.key_lowest",
                           "boundary.table_full", "boundary.tasks_full", "boundary.drivers_full"}) {
    names.emplace_back(name);
  }
  return names;
}

// The race rows (oracle_api.cpp): one per pair of public calls, then three on one connection.
std::vector<std::string> LifetimeOracle::race_coverage_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kRacePairs; ++i) {
    names.push_back(race_pair_name(i));
  }
  names.emplace_back("race.same.close/close");
  names.emplace_back("race.same.close/notify");
  names.emplace_back("race.same.close/handler");
  return names;
}

std::vector<std::pair<std::string, std::uint64_t>> LifetimeOracle::coverage() const {
  std::lock_guard<std::mutex> guard(mutex_);
  const Coverage& c = state_->coverage;
  // In the order of coverage_names().
  const std::uint64_t values[] = {c.remove_ored_with_in,
                                  c.stale_packet_dequeued,
                                  c.call_retry,
                                  c.remove_refused_quarantined,
                                  c.oneshot_rearmed_all_after_out,
                                  c.full_batch,
                                  c.socket_reused_while_stale,
                                  c.close_in_handler,
                                  c.handler_entered,
                                  c.remove_refused_in_stop};
  const std::vector<std::string> names = coverage_names();
  std::vector<std::pair<std::string, std::uint64_t>> rows;
  for (std::size_t i = 0; i < names.size() && i < std::size(values); ++i) {
    rows.emplace_back(names[i], values[i]);
  }
  for (std::size_t i = 0; i < kRacePairs; ++i) {
    rows.emplace_back(names[rows.size()], c.race_pairs[i]);
  }
  rows.emplace_back(names[rows.size()], c.race_same_close_close);
  rows.emplace_back(names[rows.size()], c.race_same_close_notify);
  rows.emplace_back(names[rows.size()], c.race_same_close_handler);
  for (const std::uint64_t value :
       {c.boundary_socket_reused_at_once, c.boundary_key_lowest, c.boundary_table_full,
        c.boundary_tasks_full, c.boundary_drivers_full}) {
    rows.emplace_back(names[rows.size()], value);
  }
  READYPORT_ASSERT(rows.size() == names.size());
  for (const auto& [site, count] : state_->fault_sites) {
    rows.emplace_back("fault." + site, count);
  }
  return rows;
}

const char* oracle_bound_name(OracleBound bound) {
  switch (bound) {
    case OracleBound::kClosedUnremoved:
      return "closed_unremoved";
    case OracleBound::kEndedKeys:
      return "ended_keys";
    case OracleBound::kOrphans:
      return "orphans";
    case OracleBound::kTombstones:
      return "tombstones";
    case OracleBound::kCount:
      break;
  }
  READYPORT_UNREACHABLE();
}

void OracleJudgement::add(const OracleJudgement& other) {
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    judged[rule] += other.judged[rule];
    violated[rule] += other.violated[rule];
    ambiguous[rule] += other.ambiguous[rule];
    unjudged[rule] += other.unjudged[rule];
  }
  for (std::size_t i = 0; i < kOracleBounds; ++i) {
    bounds_hit[i] += other.bounds_hit[i];
  }
}

std::uint64_t OracleJudgement::not_judged() const {
  std::uint64_t sum = 0;
  for (const std::uint64_t hits : bounds_hit) {
    sum += hits;
  }
  for (const std::uint64_t count : unjudged) {
    sum += count;
  }
  return sum;
}

std::string oracle_rules_text(const OracleJudgement& judgement) {
  std::string text;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    if (!text.empty()) {
      text += "\n";
    }
    // 'O' appended first: "O" + std::to_string(...) makes g++ 12 at -O3 warn -Wrestrict about
    // its own inlined memcpy (a false positive, GCC bug 105651).
    text += 'O';
    text += std::to_string(rule) + (rule < 10 ? "  " : " ") + "judged " +
            std::to_string(judgement.judged[rule]) + ", violated " +
            std::to_string(judgement.violated[rule]) + ", ambiguous " +
            std::to_string(judgement.ambiguous[rule]) + ", unjudged " +
            std::to_string(judgement.unjudged[rule]);
  }
  return text;
}

std::string oracle_rule_list_text(const std::array<std::uint64_t, kOracleRules + 1>& by_rule) {
  std::string text;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    if (by_rule[rule] == 0) {
      continue;
    }
    if (!text.empty()) {
      text += ", ";
    }
    text += 'O';  // appended first, as above (GCC bug 105651)
    text += std::to_string(rule) + " " + std::to_string(by_rule[rule]);
  }
  return text.empty() ? "none" : text;
}

std::string oracle_bounds_text(const std::array<std::uint64_t, kOracleBounds>& bounds_hit) {
  std::string text;
  for (std::size_t i = 0; i < kOracleBounds; ++i) {
    if (!text.empty()) {
      text += ", ";
    }
    text += std::string(oracle_bound_name(static_cast<OracleBound>(i))) + " " +
            std::to_string(bounds_hit[i]);
  }
  return text;
}

OracleCounts LifetimeOracle::counts() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return state_->counts;
}

}  // namespace readyport
