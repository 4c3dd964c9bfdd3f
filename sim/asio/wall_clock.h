// WallClock: the real-time Clock used by `btsim serve`. Lives outside the
// deterministic core; reads the system clock and never goes backwards.
#ifndef BTSIM_SIM_ASIO_WALL_CLOCK_H_
#define BTSIM_SIM_ASIO_WALL_CLOCK_H_

#include <atomic>

#include "sim/clock.h"

namespace btsim::sim {

// Thread-safe.
class WallClock : public Clock {
 public:
  Time Now() const override;
  // Now() never returns less than `floor` from now on: after a restart
  // from persisted state, the clock does not go back behind the times it
  // stamped before (it stands still until the system clock passes them).
  void AdvanceTo(Time floor);

 private:
  mutable std::atomic<int64_t> last_{0};
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_ASIO_WALL_CLOCK_H_
