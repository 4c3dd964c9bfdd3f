#include "sim/clock.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::sim {

void ManualClock::Set(Time t) {
  BTSIM_CHECK_MSG(t >= now_, "ManualClock moved backwards");
  now_ = t;
}

Time OffsetClock::Now() const {
  if (offset_ == Duration(0) && last_ == Time::min()) return base_.Now();
  last_ = std::max(last_, base_.Now() + offset_);
  return last_;
}

}  // namespace btsim::sim
