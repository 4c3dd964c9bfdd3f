// Clock: the only source of "now" for the core (sim/time.h); the core never
// reads a wall clock itself. The virtual implementation lives here; the
// wall-clock one lives in sim/asio/.
#ifndef BTSIM_SIM_CLOCK_H_
#define BTSIM_SIM_CLOCK_H_

#include "sim/time.h"

namespace btsim::sim {

class Clock {
 public:
  virtual ~Clock() = default;
  // Never decreases.
  virtual Time Now() const = 0;
};

// A clock that moves only when told to. Not thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Time start) : now_(start) {}
  Time Now() const override { return now_; }
  // Requires `t >= Now()`.
  void Set(Time t);
  void Advance(Duration d) { Set(now_ + d); }

 private:
  Time now_;
};

// Another clock's time plus an offset that can change (clock skew). Never
// decreases: after the offset moves back, it stays put until the base
// clock's time plus the new offset passes where it was. Not thread-safe.
class OffsetClock : public Clock {
 public:
  // `base` must outlive this clock.
  explicit OffsetClock(const Clock& base) : base_(base) {}
  Time Now() const override;
  void set_offset(Duration offset) { offset_ = offset; }
  Duration offset() const { return offset_; }

 private:
  const Clock& base_;
  Duration offset_{0};
  mutable Time last_ = Time::min();
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_CLOCK_H_
