// Per logical thread state. See logical_locals.hpp.
#include "readyport/fake/internal/logical_locals.hpp"

namespace readyport::fake_internal {
namespace {

// The OS thread's own slot, and the one a scheduler made active (null: the own one).
thread_local LogicalLocals t_own_locals;
thread_local LogicalLocals* t_active_locals = nullptr;

}  // namespace

LogicalLocals& logical_locals() {
  return t_active_locals != nullptr ? *t_active_locals : t_own_locals;
}

LogicalLocals* logical_locals_activate(LogicalLocals* slot) {
  LogicalLocals* previous = t_active_locals;
  t_active_locals = slot;
  return previous;
}

}  // namespace readyport::fake_internal
