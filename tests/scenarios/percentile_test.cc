#include "scenarios/percentile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace btsim::scenarios {
namespace {

int64_t NearestRank(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto n = static_cast<int64_t>(values.size());
  const int64_t rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(n))), 1,
      n);
  return values[static_cast<size_t>(rank - 1)];
}

void ExpectExact(const std::vector<int64_t>& values) {
  const std::vector<double> ps = {0.1, 1, 25, 50, 90, 99, 99.9, 100};
  TwoPassPercentiles percentiles(ps);
  for (int64_t v : values) percentiles.Count(v);
  ASSERT_EQ(percentiles.EndFirstPass(), static_cast<int64_t>(values.size()));
  // The second pass may see the values in another order.
  for (size_t i = values.size(); i-- > 0;) percentiles.Collect(values[i]);
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(percentiles.Result(i), NearestRank(values, ps[i])) << ps[i];
  }
}

TEST(TwoPassPercentilesTest, MatchesSortingOnSpreadValues) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> values;
  // Latencies from 1 microsecond to 10 seconds, log-uniform, in ns.
  std::uniform_real_distribution<double> exponent(3, 10);
  for (int i = 0; i < 20000; ++i) {
    values.push_back(static_cast<int64_t>(std::pow(10.0, exponent(rng))));
  }
  ExpectExact(values);
}

TEST(TwoPassPercentilesTest, MatchesSortingOnDuplicatesSmallAndNegative) {
  std::vector<int64_t> values(5000, 2'000'000);  // one repeated latency
  for (int i = 0; i < 300; ++i) values.push_back(i % 17);
  values.push_back(-5);
  values.push_back(-1);
  values.push_back(INT64_MAX);
  values.push_back(2'000'001);
  ExpectExact(values);
  ExpectExact({42});
}

TEST(TwoPassPercentilesTest, NothingCountedGivesAnEmptySample) {
  TwoPassPercentiles percentiles({50});
  EXPECT_EQ(percentiles.EndFirstPass(), 0);
  EXPECT_EQ(percentiles.count(), 0);
}

}  // namespace
}  // namespace btsim::scenarios
