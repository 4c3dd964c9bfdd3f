#include "sim/asio/wall_clock.h"

#include <chrono>

namespace btsim::sim {

Nanos WallClock::Now() const {
  const int64_t now = std::chrono::duration_cast<Nanos>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_.load(std::memory_order_relaxed);
  while (now > last &&
         !last_.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
  }
  return Nanos(now > last ? now : last);
}

}  // namespace btsim::sim
