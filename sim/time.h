// Time in the simulator's terms, the same in virtual time (`btsim run`) and
// in wall time (`btsim serve`):
//   Duration  a length of time, in integer nanoseconds;
//   Time      a point in time: nanoseconds since the Unix epoch on the
//             clock of whatever runs on a Scheduler (sim/clock.h).
// Time - Time is a Duration and Time + Duration a Time; adding two Times
// does not compile. Time{} is the Unix epoch.
#ifndef BTSIM_SIM_TIME_H_
#define BTSIM_SIM_TIME_H_

#include <chrono>
#include <cstdint>

namespace btsim::sim {

using Duration = std::chrono::nanoseconds;

// The clock sim::Time belongs to. It has no now(): the current time comes
// from a Clock object that the caller injects, never from a static call.
struct SimClock {
  using duration = Duration;
  using rep = Duration::rep;
  using period = Duration::period;
  using time_point = std::chrono::time_point<SimClock, Duration>;
  static constexpr bool is_steady = true;
};

using Time = SimClock::time_point;

// Nanoseconds and whole microseconds (rounded towards zero) since the Unix
// epoch: for output, hashing and Bigtable's microsecond timestamps.
constexpr int64_t NanosSinceEpoch(Time t) {
  return t.time_since_epoch().count();
}
constexpr int64_t MicrosSinceEpoch(Time t) { return NanosSinceEpoch(t) / 1000; }

}  // namespace btsim::sim

#endif  // BTSIM_SIM_TIME_H_
