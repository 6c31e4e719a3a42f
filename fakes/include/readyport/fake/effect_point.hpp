// readyport/fake/effect_point.hpp: where a fake call takes effect, for RecordingOs's begin lines.
//
// A call whose order matters to the oracle (closesocket, a post, a PSN's registrations, a
// dequeue) is recorded as an interval: a begin line written before it may take effect, and its
// ordinary line when it returns. RecordingOs writes the begin line before calling the inner Os,
// or, when told that its inner Os marks its own effects (RecordingOs::BeginLines::kAtEffect), at
// the first effect_point() that inner Os calls for it. FakeOs calls effect_point() under its
// state lock just before each effect, after its scheduling point and any wait, so in simulation
// a begin line and its call's line have no other thread's line between them (an exact order),
// and on real threads the interval is as tight as the fake can make it.
//
// Ownership: the pending lines belong to RecordingOs's call on the calling logical thread and live
// only while that call runs. Threading: per logical thread (a fiber's own under SimScheduler).
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

// Writes the calling thread's pending begin lines up to `point`, if any.
void effect_point(EffectPoint point);

}  // namespace readyport
