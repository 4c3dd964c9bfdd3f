#include "sim/distributions.h"

#include <cmath>
#include <cstdint>

#include "base/check.h"

namespace btsim::sim {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Uniform in (0, 1]: never zero, so its logarithm is finite.
double UniformOpenClosed(Rng& rng) { return 1.0 - rng.UniformDouble(); }

}  // namespace

double StandardNormal(Rng& rng) {
  // Box-Muller: with u1 in (0, 1] and u2 in [0, 1),
  // sqrt(-2 ln u1) * cos(2 pi u2) is N(0, 1). Always two draws, in this
  // order.
  const double u1 = UniformOpenClosed(rng);
  const double u2 = rng.UniformDouble();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double Normal(Rng& rng, double mean, double stddev) {
  return mean + stddev * StandardNormal(rng);
}

double LogNormal(Rng& rng, double mu, double sigma) {
  return std::exp(mu + sigma * StandardNormal(rng));
}

double Exponential(Rng& rng, double mean) {
  // Inverse CDF: -mean * ln(1 - U) with U in [0, 1); 1 - U is in (0, 1].
  return -mean * std::log(UniformOpenClosed(rng));
}

int64_t UniformInt(Rng& rng, int64_t lo, int64_t hi) {
  BTSIM_CHECK(lo <= hi);
  // Unsigned arithmetic: hi - lo may not fit in int64_t.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  const uint64_t offset =
      span == UINT64_MAX ? rng.Next() : (span == 0 ? 0 : rng.Uniform(span + 1));
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + offset);
}

}  // namespace btsim::sim
