// Clock: the only source of "now" for the core. Time is integer nanoseconds
// since the Unix epoch; the core never reads a wall clock itself. The virtual
// implementation lives here; the wall-clock one lives in sim/asio/.
#ifndef BTSIM_SIM_CLOCK_H_
#define BTSIM_SIM_CLOCK_H_

#include <chrono>

namespace btsim::sim {

using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since the Unix epoch. Never decreases.
  virtual Nanos Now() const = 0;
};

// A clock that moves only when told to. Not thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Nanos start) : now_(start) {}
  Nanos Now() const override { return now_; }
  // Requires `t >= Now()`.
  void Set(Nanos t);
  void Advance(Nanos d) { Set(now_ + d); }

 private:
  Nanos now_;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_CLOCK_H_
