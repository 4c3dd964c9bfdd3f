#include "sim/clock.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::sim {

void ManualClock::Set(Time t) {
  BTSIM_CHECK_MSG(t >= now_, "ManualClock moved backwards");
  now_ = t;
}

Time OffsetClock::Now() const {
  // Every reading is recorded, at offset 0 too: an offset set back later
  // must not take the clock below any time it showed.
  last_ = std::max(last_, base_.Now() + offset_);
  return last_;
}

}  // namespace btsim::sim
