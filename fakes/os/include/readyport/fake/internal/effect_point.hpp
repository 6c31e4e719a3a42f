// readyport/fake/internal/effect_point.hpp: where a fake call takes effect, for RecordingOs's begin
// lines.
//
// A call whose order matters to the oracle (closesocket, a post, a PSN's registrations, a
// dequeue) is recorded as an interval: a begin line written before it may take effect, and its
// ordinary line when it returns. RecordingOs writes the begin line before calling the inner Os,
// or, when told that its inner Os marks its own effects (RecordingOs::BeginLines::kAtEffect), at
// the first effect_point() that inner Os calls for it. FakeOs calls effect_point() under its
// state lock just before each effect, after its scheduling point and any wait, so in simulation
// a begin line and its call's line have no other thread's line between them (an exact order),
// except for a dequeue handed its packet while it waited (below), and on real threads the
// interval is as tight as the fake can make it.
//
// A dequeue's effect can happen on another thread: a packet queued while a thread waits is handed
// to that waiter at once (spec F1) by the thread that queued it. The waiter keeps a handle to its
// pending lines (effect_begins_current) and the handing thread writes them at the hand-off
// (effect_point_for), as lines of the waiter's thread: the dequeue's begin line is where its effect
// is, not where the waiter next runs, which on real threads can be many lines later.
//
// Ownership: the pending lines belong to RecordingOs's call on the calling logical thread and live
// only while that call runs. Threading: per logical thread (a fiber's own under SimScheduler);
// effect_point_for() from another thread only while the owner waits, both under the inner Os's
// one lock (FakeOs's state mutex), which orders the owner's accesses after it.
// Errors: none; a call with nothing pending does nothing.
#pragma once

#include <cstdint>

namespace readyport {

// In the order a PSN call reaches them: a point writes every pending begin line up to it.
enum class EffectPoint : std::uint8_t {
  kRegistrations,  // a PSN applies its registration array
  kDequeue,        // a PSN or GetQueuedCompletionStatusEx takes packets from the port
  kCall,           // closesocket or a post changes the socket table or the queue
};

// Begin lines waiting for their effect: a recorder's (RecordingOs, recording/), set as the calling
// logical thread's pending ones (LogicalLocals::pending_begins) for the length of one call. The
// fake only names the point; the recorder writes.
class EffectBegins {
 public:
  // Writes every pending line up to `point` not yet written, stamped with the thread that owns
  // them, from the calling thread.
  virtual void write_up_to(EffectPoint point) = 0;

 protected:
  ~EffectBegins() = default;
};

// Writes the calling thread's pending begin lines up to `point`, if any.
void effect_point(EffectPoint point);

// The calling logical thread's pending begin lines, for a call about to wait for an effect another
// thread may complete on its behalf; null when the call has none pending. Valid while that call
// runs.
EffectBegins* effect_begins_current();
// Makes `begins` the calling logical thread's pending lines (null: none); returns the previous.
EffectBegins* effect_begins_set(EffectBegins* begins);

// Writes the pending begin lines of `begins` up to `point` now, stamped with the thread that owns
// them. Null does nothing.
void effect_point_for(EffectBegins* begins, EffectPoint point);

}  // namespace readyport
