// TwoPassPercentiles: exact nearest-rank percentiles of a sequence of
// integers (durations in nanoseconds, counts) read twice, in memory bounded
// by a fixed histogram and the distinct values near each percentile, not by
// the length of the sequence: a long run's latencies are read from its
// history twice instead of being held.
//
// Pass 1 counts every value into a log-linear histogram (every value below
// 256 exactly; above, 128 buckets per power of two); pass 2 keeps the exact
// values of the one bucket that holds each percentile's rank. Feed both
// passes the same values (in any order). Not thread-safe.
#ifndef BTSIM_SCENARIOS_PERCENTILE_H_
#define BTSIM_SCENARIOS_PERCENTILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace btsim::scenarios {

class TwoPassPercentiles {
 public:
  // Percentiles in (0, 100], e.g. {50, 99}.
  explicit TwoPassPercentiles(std::vector<double> percentiles);

  // Pass 1.
  void Count(int64_t value);
  // Ends pass 1. Values counted so far: the sample size.
  int64_t EndFirstPass();
  // Pass 2 (only once pass 1 has ended).
  void Collect(int64_t value);

  // The nearest-rank value of percentiles[i]: the value of rank
  // ceil(p / 100 * n) (at least 1) in sorted order. Requires both passes
  // and at least one value.
  int64_t Result(size_t i) const;
  int64_t count() const { return total_; }

 private:
  static size_t Bucket(int64_t value);

  struct Target {
    size_t bucket = 0;
    int64_t rank = 0;                 // within the bucket, from 1
    std::map<int64_t, int64_t> seen;  // its values, with their counts
  };
  std::vector<double> percentiles_;
  std::vector<int64_t> counts_;  // per bucket, allocated on the first value
  int64_t total_ = 0;
  bool first_pass_ = true;
  std::vector<Target> targets_;  // per percentile
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_PERCENTILE_H_
