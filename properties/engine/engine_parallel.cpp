// The API model of the engine's results and the interleaving search. See engine_parallel.hpp.
#include "engine_parallel.hpp"

#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "readyport/assert.hpp"

namespace readyport::properties {
namespace {

using C = StatusCode;
using S = ApiConnState;

const char* state_name(S state) {
  switch (state) {
    case S::kUnborn:
      return "unborn";
    case S::kOpen:
      return "open";
    case S::kMayEnd:
      return "may_end";
    case S::kGone:
      return "gone";
  }
  return "?";
}

bool refuse(std::string* why, const std::string& text) {
  if (why != nullptr) {
    *why = text;
  }
  return false;
}

bool apply_add(const ApiStep& step, const ApiModelStart& start, std::vector<S>& conns,
               std::string* why) {
  std::uint32_t certain = 0;   // kOpen: holds its slot for sure
  std::uint32_t possible = 0;  // kOpen or kMayEnd: may hold its slot
  for (S state : conns) {
    certain += state == S::kOpen ? 1u : 0u;
    possible += state == S::kOpen || state == S::kMayEnd ? 1u : 0u;
  }
  const std::string table = " (table of " + std::to_string(start.connections_max) + ")";
  switch (step.code) {
    case C::kOk:
      if (certain >= start.connections_max) {
        return refuse(
            why, "ok, yet " + std::to_string(certain) + " connections are certainly open" + table);
      }
      READYPORT_ASSERT(step.conn < conns.size() && conns[step.conn] == S::kUnborn);
      conns[step.conn] = start.faults ? S::kMayEnd : S::kOpen;
      return true;
    case C::kResourceExhausted:
      // A quarantined slot (a fault) is held beyond its connection's end.
      if (possible >= start.connections_max || start.faults) {
        return true;
      }
      return refuse(why, "resource_exhausted, yet at most " + std::to_string(possible) +
                             " connections may hold a slot" + table);
    case C::kOsError:
      return start.faults ? true : refuse(why, "os_error, yet no fault is armed in the case");
    default:
      return refuse(why, "add returns ok, resource_exhausted or os_error (a fault) here");
  }
}

// close() and notify() of a connection the model knows.
bool apply_conn_call(const ApiStep& step, const ApiModelStart& start, S& state, std::string* why) {
  const bool close = step.kind == ApiStepKind::kClose;
  if (state == S::kUnborn) {
    return refuse(why, "names a connection not added yet");
  }
  if (step.ended_before && state == S::kOpen) {
    return refuse(why, "its on_closed had run, yet nothing could have ended it (open)");
  }
  if (step.code == C::kNotFound) {
    if (state == S::kOpen) {
      return refuse(why, "not_found, yet the connection is open (nothing could have ended it)");
    }
    state = S::kGone;
    return true;
  }
  if (state == S::kGone) {
    return refuse(why, std::string(close ? "close" : "notify") + " -> " +
                           status_code_name(step.code) +
                           " after its slot was freed (a not_found before): a second life");
  }
  if (step.code == C::kOk) {
    if (close) {
      state = S::kMayEnd;  // closing; idempotent ok until the slot is freed
    }
    return true;
  }
  if (step.code == C::kOsError && !close) {
    return start.faults ? true : refuse(why, "os_error, yet no fault is armed in the case");
  }
  return refuse(why, std::string(close ? "close" : "notify") + " returns ok or not_found" +
                         (close ? "" : " (or os_error with a fault)") + " here");
}

}  // namespace

bool api_step_apply(const ApiStep& step, const ApiModelStart& start, std::vector<S>& conns,
                    std::string* why) {
  READYPORT_ASSERT(step.kind == ApiStepKind::kPost || step.kind == ApiStepKind::kCloseForeign ||
                   step.conn < conns.size());
  switch (step.kind) {
    case ApiStepKind::kAdd:
      return apply_add(step, start, conns, why);
    case ApiStepKind::kClose:
    case ApiStepKind::kNotify:
      return apply_conn_call(step, start, conns[step.conn], why);
    case ApiStepKind::kPost:
      if (step.code == C::kOk || (step.code == C::kOsError && start.faults)) {
        return true;
      }
      return refuse(why, "post returns ok (or os_error with a fault) here");
    case ApiStepKind::kCloseForeign:
      return step.code == C::kNotFound ? true : refuse(why, "an id never handed out: not_found");
    case ApiStepKind::kMayEnd:
      if (conns[step.conn] == S::kUnborn) {
        return refuse(why, "names a connection not added yet");
      }
      if (conns[step.conn] == S::kOpen) {
        conns[step.conn] = S::kMayEnd;
      }
      return true;
  }
  return refuse(why, "unknown step");
}

std::string api_step_text(const ApiStep& step) {
  if (step.kind == ApiStepKind::kMayEnd) {
    return step.text + " (may end c#" + std::to_string(step.conn) + ")";
  }
  std::string text = step.text + " -> " + status_code_name(step.code);
  if (step.ended_before) {
    text += " (on_closed had run)";
  }
  return text;
}

namespace {

// The depth-first search over interleavings, memoising the nodes it left without success.
class InterleavingSearch {
 public:
  InterleavingSearch(const ApiModelStart& start, const std::vector<std::vector<ApiStep>>& branches)
      : start_(start), branches_(branches), positions_(branches.size(), 0) {}

  bool run(std::vector<S> conns) { return visit(conns); }
  const std::vector<std::uint32_t>& order() const { return order_; }
  std::string report() const;

 private:
  bool visit(const std::vector<S>& conns);
  std::string key(const std::vector<S>& conns) const {
    std::string k(positions_.begin(), positions_.end());
    for (S state : conns) {
      k.push_back(static_cast<char>(state));
    }
    return k;
  }

  const ApiModelStart& start_;
  const std::vector<std::vector<ApiStep>>& branches_;
  std::vector<std::uint8_t> positions_;
  std::vector<std::uint32_t> order_;  // the branch of each step taken so far
  std::set<std::string> failed_;
  std::uint64_t nodes_ = 0;
  bool bound_hit_ = false;
  // The deepest node left without success: its order and why each next step was refused.
  bool best_set_ = false;
  std::vector<std::uint32_t> best_order_;
  std::vector<std::string> best_why_;
  std::vector<S> best_conns_;
};

bool InterleavingSearch::visit(const std::vector<S>& conns) {
  bool done = true;
  for (std::size_t b = 0; b < branches_.size(); ++b) {
    done = done && positions_[b] == branches_[b].size();
  }
  if (done) {
    return true;
  }
  if (bound_hit_ || ++nodes_ > kApiSearchNodesMax) {
    bound_hit_ = true;
    return false;
  }
  const std::string here = key(conns);
  if (failed_.count(here) != 0) {
    return false;
  }
  std::vector<std::string> why(branches_.size());
  for (std::size_t b = 0; b < branches_.size(); ++b) {
    if (positions_[b] == branches_[b].size()) {
      why[b] = "done";
      continue;
    }
    std::vector<S> next = conns;
    if (!api_step_apply(branches_[b][positions_[b]], start_, next, &why[b])) {
      continue;
    }
    why[b] = "allowed, but no order of the rest explains it";
    ++positions_[b];
    order_.push_back(static_cast<std::uint32_t>(b));
    if (visit(next)) {
      return true;
    }
    order_.pop_back();
    --positions_[b];
  }
  if (!best_set_ || order_.size() > best_order_.size()) {
    best_set_ = true;
    best_order_ = order_;
    best_why_ = why;
    best_conns_ = conns;
  }
  failed_.insert(here);
  return false;
}

std::string InterleavingSearch::report() const {
  std::ostringstream out;
  std::size_t total = 0;
  for (const std::vector<ApiStep>& branch : branches_) {
    total += branch.size();
  }
  out << (bound_hit_ ? "undecided: the interleaving search hit its bound of " +
                           std::to_string(kApiSearchNodesMax) + " nodes"
                     : std::string("no interleaving of the branches explains their results"))
      << " (" << nodes_ << " nodes; faults " << (start_.faults ? "armed" : "none")
      << "; at the fork:";
  for (std::size_t c = 0; c < start_.conns.size(); ++c) {
    out << " c#" << c << " " << state_name(start_.conns[c]);
  }
  out << ")\n";
  for (std::size_t b = 0; b < branches_.size(); ++b) {
    out << "  branch " << b + 1 << ":";
    for (const ApiStep& step : branches_[b]) {
      out << "\n    " << api_step_text(step);
    }
    out << "\n";
  }
  out << "  the longest explained order (" << best_order_.size() << " of " << total << " steps): [";
  for (std::size_t i = 0; i < best_order_.size(); ++i) {
    out << (i == 0 ? "" : " ") << "b" << best_order_[i] + 1;
  }
  out << "], then:";
  for (std::size_t c = 0; c < best_conns_.size(); ++c) {
    out << " c#" << c << " " << state_name(best_conns_[c]);
  }
  for (std::size_t b = 0; b < best_why_.size(); ++b) {
    out << "\n    branch " << b + 1 << ": " << best_why_[b];
  }
  return out.str();
}

}  // namespace

Status branches_explained(const ApiModelStart& start,
                          const std::vector<std::vector<ApiStep>>& branches,
                          std::vector<std::uint32_t>* order_out) {
  READYPORT_ASSERT(branches.size() <= kEngineBranchesMax);
  std::uint32_t conns_max = static_cast<std::uint32_t>(start.conns.size());
  for (const std::vector<ApiStep>& branch : branches) {
    READYPORT_ASSERT(branch.size() <= kApiBranchStepsMax);
    for (const ApiStep& step : branch) {
      if (step.kind != ApiStepKind::kPost && step.kind != ApiStepKind::kCloseForeign &&
          step.conn + 1 > conns_max) {
        conns_max = step.conn + 1;
      }
    }
  }
  std::vector<S> conns = start.conns;
  conns.resize(conns_max, S::kUnborn);
  for (S& state : conns) {
    if (start.faults && state == S::kOpen) {
      state = S::kMayEnd;  // a fault (a reset, a failed re-arm) may end any connection
    }
  }
  InterleavingSearch search(start, branches);
  if (search.run(std::move(conns))) {
    if (order_out != nullptr) {
      *order_out = search.order();
    }
    return Status();
  }
  return Status(StatusCode::kInternal, search.report());
}

}  // namespace readyport::properties
