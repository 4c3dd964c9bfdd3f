// Rng: btsim's own seeded pseudo-random generator (xoshiro256**, seeded with
// SplitMix64). Identical output on every platform and standard library. Use
// Fork(name) to give each component its own stream, so that adding one
// component does not shift the numbers another one sees. Not thread-safe.
#ifndef BTSIM_SIM_RNG_H_
#define BTSIM_SIM_RNG_H_

#include <cstdint>
#include <string_view>

namespace btsim::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, n). Requires n > 0.
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1).
  double UniformDouble();
  // True with probability p (p <= 0: never; p >= 1: always).
  bool Bernoulli(double p);
  // An independent stream derived from this generator's seed and `name`;
  // does not advance this generator.
  Rng Fork(std::string_view name) const;
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

// 64-bit FNV-1a, for stable hashing of names and keys.
uint64_t StableHash(std::string_view bytes, uint64_t seed = 0);

}  // namespace btsim::sim

#endif  // BTSIM_SIM_RNG_H_
