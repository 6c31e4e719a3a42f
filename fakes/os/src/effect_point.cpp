// Where a fake call takes effect. See effect_point.hpp.
#include "readyport/fake/internal/effect_point.hpp"

#include "readyport/fake/internal/logical_locals.hpp"

namespace readyport {

EffectBegins* effect_begins_current() {
  return static_cast<EffectBegins*>(fake_internal::logical_locals().pending_begins);
}

EffectBegins* effect_begins_set(EffectBegins* begins) {
  EffectBegins* const previous = effect_begins_current();
  fake_internal::logical_locals().pending_begins = begins;
  return previous;
}

void effect_point_for(EffectBegins* begins, EffectPoint point) {
  if (begins != nullptr) {
    begins->write_up_to(point);
  }
}

void effect_point(EffectPoint point) { effect_point_for(effect_begins_current(), point); }

}  // namespace readyport
