#include "sim/clock.h"

#include "base/check.h"

namespace btsim::sim {

void ManualClock::Set(Time t) {
  BTSIM_CHECK_MSG(t >= now_, "ManualClock moved backwards");
  now_ = t;
}

}  // namespace btsim::sim
