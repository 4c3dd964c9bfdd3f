// Random distributions over btsim's own Rng, written from the math so that
// every platform and standard library draws the same numbers from the same
// seed. Do not use the standard library's distributions instead: their
// algorithms differ between implementations (see DESIGN.md, "Time,
// randomness, determinism").
//
// Draws per call are fixed, so a stream's position never depends on the
// values drawn: StandardNormal, Normal and LogNormal take exactly two
// Rng::Next() values, Exponential exactly one, UniformInt one or more
// (rejection sampling, as Rng::Uniform; none when lo == hi).
//
// The floating-point results go through libm (log, exp, sqrt, cos). sqrt is
// correctly rounded (IEEE 754); log, exp and cos are accurate to within an
// ulp but not guaranteed correctly rounded, so their last bit may differ
// between libm implementations or versions. Run fingerprints therefore
// depend on the libm: they match across machines with the same one (e.g.
// glibc on x86-64), which is what we rely on. Build without -ffast-math and
// without FP contraction (GCC's ISO mode, -std=c++20, already disables it).
#ifndef BTSIM_SIM_DISTRIBUTIONS_H_
#define BTSIM_SIM_DISTRIBUTIONS_H_

#include <cstdint>

#include "sim/rng.h"

namespace btsim::sim {

// Standard normal N(0, 1), by the Box-Muller transform. Uses two draws and
// discards the second (sine) variate, so it keeps no state outside `rng`.
double StandardNormal(Rng& rng);

// Normal with the given mean and standard deviation.
double Normal(Rng& rng, double mean, double stddev);

// exp(N(mu, sigma)): log-normal whose median is exp(mu).
double LogNormal(Rng& rng, double mu, double sigma);

// Exponential with the given mean (>= 0 when mean >= 0), by the inverse CDF.
double Exponential(Rng& rng, double mean);

// Uniform in [lo, hi], both inclusive. Requires lo <= hi.
int64_t UniformInt(Rng& rng, int64_t lo, int64_t hi);

}  // namespace btsim::sim

#endif  // BTSIM_SIM_DISTRIBUTIONS_H_
