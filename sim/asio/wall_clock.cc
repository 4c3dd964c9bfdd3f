#include "sim/asio/wall_clock.h"

#include <chrono>

namespace btsim::sim {

Time WallClock::Now() const {
  const int64_t now = std::chrono::duration_cast<Duration>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_.load(std::memory_order_relaxed);
  while (now > last &&
         !last_.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
  }
  return Time(Duration(now > last ? now : last));
}

void WallClock::AdvanceTo(Time floor) {
  const int64_t target = floor.time_since_epoch().count();
  int64_t last = last_.load(std::memory_order_relaxed);
  while (target > last && !last_.compare_exchange_weak(
                              last, target, std::memory_order_relaxed)) {
  }
}

}  // namespace btsim::sim
