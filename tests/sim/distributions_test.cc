#include "sim/distributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "sim/rng.h"

namespace btsim::sim {
namespace {

constexpr int kSamples = 20'000;
constexpr uint64_t kSeed = 20240601;

struct Summary {
  double mean = 0;
  double stddev = 0;
  double median = 0;
  double min = 0;
};

Summary Summarize(std::vector<double> v) {
  Summary s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(squares / static_cast<double>(v.size() - 1));
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.min = v.front();
  return s;
}

std::vector<double> Draw(const std::function<double(Rng&)>& sample,
                         uint64_t seed = kSeed, int n = kSamples) {
  Rng rng(seed);
  std::vector<double> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out.push_back(sample(rng));
  return out;
}

// How many Rng::Next() values one call of `sample` consumes.
int DrawsPerCall(const std::function<void(Rng&)>& sample) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Rng used(seed);
    sample(used);
    const uint64_t next = used.Next();
    Rng reference(seed);
    for (int draws = 0; draws <= 8; ++draws) {
      if (reference.Next() == next) return draws;
    }
  }
  return -1;
}

TEST(DistributionsTest, StandardNormalHasMeanZeroAndUnitStddev) {
  const Summary s = Summarize(Draw([](Rng& r) { return StandardNormal(r); }));
  // The standard error of the mean is 1/sqrt(20000) ~ 0.007.
  EXPECT_NEAR(s.mean, 0.0, 0.03);
  EXPECT_NEAR(s.stddev, 1.0, 0.03);
  EXPECT_NEAR(s.median, 0.0, 0.04);
}

TEST(DistributionsTest, StandardNormalIsSymmetricWithNormalTails) {
  const std::vector<double> v = Draw([](Rng& r) { return StandardNormal(r); });
  int beyond_one = 0;
  int beyond_two = 0;
  int negative = 0;
  for (double x : v) {
    if (std::abs(x) > 1) ++beyond_one;
    if (std::abs(x) > 2) ++beyond_two;
    if (x < 0) ++negative;
  }
  // P(|Z| > 1) = 0.3173, P(|Z| > 2) = 0.0455.
  EXPECT_NEAR(beyond_one / double{kSamples}, 0.3173, 0.015);
  EXPECT_NEAR(beyond_two / double{kSamples}, 0.0455, 0.006);
  EXPECT_NEAR(negative / double{kSamples}, 0.5, 0.015);
}

TEST(DistributionsTest, NormalScalesAndShifts) {
  const Summary s = Summarize(Draw([](Rng& r) { return Normal(r, 10, 2); }));
  EXPECT_NEAR(s.mean, 10.0, 0.06);
  EXPECT_NEAR(s.stddev, 2.0, 0.06);
  EXPECT_NEAR(s.median, 10.0, 0.08);
}

TEST(DistributionsTest, NormalWithZeroStddevIsTheMean) {
  Rng rng(kSeed);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Normal(rng, 3.5, 0), 3.5);
}

TEST(DistributionsTest, LogNormalMedianIsExpMu) {
  const double mu = std::log(1000.0);
  const double sigma = 0.5;
  const Summary s =
      Summarize(Draw([&](Rng& r) { return LogNormal(r, mu, sigma); }));
  EXPECT_NEAR(s.median, 1000.0, 30.0);
  // mean = exp(mu + sigma^2 / 2); stddev = mean * sqrt(exp(sigma^2) - 1).
  const double mean = std::exp(mu + sigma * sigma / 2);
  EXPECT_NEAR(s.mean, mean, mean * 0.02);
  EXPECT_NEAR(s.stddev, mean * std::sqrt(std::exp(sigma * sigma) - 1),
              mean * 0.03);
  EXPECT_GT(s.min, 0.0);
}

TEST(DistributionsTest, ExponentialHasTheGivenMean) {
  const Summary s = Summarize(Draw([](Rng& r) { return Exponential(r, 5); }));
  // mean = stddev = 5; median = 5 ln 2. The standard error is ~0.035.
  EXPECT_NEAR(s.mean, 5.0, 0.15);
  EXPECT_NEAR(s.stddev, 5.0, 0.2);
  EXPECT_NEAR(s.median, 5.0 * std::log(2.0), 0.15);
  EXPECT_GE(s.min, 0.0);
}

TEST(DistributionsTest, ExponentialIsNeverNegativeOrInfinite) {
  Rng rng(kSeed);
  for (int i = 0; i < kSamples; ++i) {
    const double x = Exponential(rng, 1);
    EXPECT_GE(x, 0.0);
    EXPECT_TRUE(std::isfinite(x));
  }
}

TEST(DistributionsTest, UniformIntIsInclusiveAndFlat) {
  Rng rng(kSeed);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < kSamples; ++i) {
    const int64_t x = UniformInt(rng, -3, 3);
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    ++counts[x + 3];
  }
  // Each value expected 20000/7 ~ 2857 times, standard deviation ~ 50.
  for (int c : counts) EXPECT_NEAR(c, kSamples / 7.0, 250);
  const Summary s =
      Summarize(Draw([](Rng& r) { return double(UniformInt(r, 0, 100)); }));
  EXPECT_NEAR(s.mean, 50.0, 0.8);
  EXPECT_NEAR(s.stddev, std::sqrt((101.0 * 101.0 - 1) / 12), 0.8);
}

TEST(DistributionsTest, UniformIntEdgeCases) {
  Rng rng(kSeed);
  EXPECT_EQ(UniformInt(rng, 42, 42), 42);
  EXPECT_EQ(UniformInt(rng, INT64_MIN, INT64_MIN), INT64_MIN);
  std::set<int64_t> seen;
  for (int i = 0; i < 100; ++i) {
    const int64_t x = UniformInt(rng, INT64_MAX - 1, INT64_MAX);
    EXPECT_GE(x, INT64_MAX - 1);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 2u);
  // The full range does not overflow.
  std::set<bool> signs;
  for (int i = 0; i < 100; ++i) {
    signs.insert(UniformInt(rng, INT64_MIN, INT64_MAX) < 0);
  }
  EXPECT_EQ(signs.size(), 2u);
}

TEST(DistributionsTest, FixedDrawsPerCall) {
  EXPECT_EQ(DrawsPerCall([](Rng& r) { StandardNormal(r); }), 2);
  EXPECT_EQ(DrawsPerCall([](Rng& r) { Normal(r, 1, 2); }), 2);
  EXPECT_EQ(DrawsPerCall([](Rng& r) { LogNormal(r, 1, 2); }), 2);
  EXPECT_EQ(DrawsPerCall([](Rng& r) { Exponential(r, 3); }), 1);
  EXPECT_EQ(DrawsPerCall([](Rng& r) { UniformInt(r, 0, 9); }), 1);
  EXPECT_EQ(DrawsPerCall([](Rng& r) { UniformInt(r, 5, 5); }), 0);
}

TEST(DistributionsTest, SameSeedGivesSameSequence) {
  const std::vector<std::function<double(Rng&)>> samplers = {
      [](Rng& r) { return StandardNormal(r); },
      [](Rng& r) { return Normal(r, 7, 3); },
      [](Rng& r) { return LogNormal(r, 2, 0.4); },
      [](Rng& r) { return Exponential(r, 9); },
      [](Rng& r) { return double(UniformInt(r, -1000, 1000)); },
  };
  for (const auto& sampler : samplers) {
    EXPECT_EQ(Draw(sampler, 99, 1000), Draw(sampler, 99, 1000));
    EXPECT_NE(Draw(sampler, 99, 1000), Draw(sampler, 100, 1000));
  }
}

}  // namespace
}  // namespace btsim::sim
