// Row keys for simulated clients, after Bigtable's schema-design guidance:
// one KeyGenerator per btsim.scenario.v1.KeyPattern (see
// proto/btsim/scenario/v1/scenario.proto). Every number in a key is
// zero-padded to a fixed width, so byte order is numeric order. Keys built on
// time use the virtual clock (`now`), so they are deterministic too.
//
// Key formats (E = the entity number, padded to the width of entities - 1;
// MS = now in milliseconds since the Unix epoch, padded to 13 digits;
// REV = INT64_MAX - MS, padded to 19 digits):
//   sequential         "00000042": the next id of a counter shared by the
//                      generator, starting at `start`, padded to 8 digits
//                      (longer ids, from 100,000,000 on, sort out of order).
//   timestamp_first    "MS#E", E uniform.
//   reversed_timestamp "E#REV", E uniform.
//   field_promotion    "<prefix><value>#...#<prefix><value>[#REV]", each value
//                      uniform in [0, values), padded to the width of
//                      values - 1: e.g. "I35#347#9223370...".
//   salted             "B#MS#E", E uniform, B = EntityHash(E) % buckets,
//                      padded to the width of buckets - 1.
//   hashed             16 lowercase hex digits of EntityHash(E), E uniform.
//   uniform            "rowE", E uniform.
//   zipf               "rowE", E a Zipf(exponent) rank (0 the hottest).
//   reversed_domain    "<tld>.<name>.www/page<d>", E uniform; <name> is
//                      E in base 26 (letters a-z, at least 4 of them, fixed
//                      width), <tld> one of com, org, net, io by EntityHash(E),
//                      <d> uniform in 0..9. Keys group by TLD, then domain.
#ifndef BTSIM_SCENARIOS_KEY_PATTERN_H_
#define BTSIM_SCENARIOS_KEY_PATTERN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "sim/clock.h"
#include "sim/rng.h"

namespace btsim::scenarios {

// The hash behind hashed keys and salt buckets: sim::StableHash of the
// entity's decimal digits, followed by the SplitMix64 finalizer (FNV-1a
// alone spreads short decimal strings poorly over its high bits).
uint64_t EntityHash(uint64_t entity);

// Zipf ranks over [0, n): P(k) proportional to (k + 1)^-exponent, rank 0 the
// most likely. Rejection-inversion sampling (Hörmann & Derflinger, 1996):
// O(1) memory and expected O(1) time for any n, exact for any exponent > 0,
// including values at or near 1. Each draw takes one or more
// Rng::UniformDouble values (rejection; the expected count is below 1.2).
class ZipfSampler {
 public:
  // Requires n >= 1 and 0 < exponent <= 5 (the scenario limit; larger is
  // fine too, as long as it is finite).
  ZipfSampler(uint64_t n, double exponent);

  uint64_t Sample(sim::Rng& rng) const;

  uint64_t n() const { return n_; }
  double exponent() const { return exponent_; }

 private:
  double H(double x) const;
  double HIntegral(double x) const;
  double HIntegralInverse(double x) const;

  uint64_t n_;
  double exponent_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

// One generator per simulated client group (all clients created from one
// scenario `clients` entry share it); each call takes the calling client's
// own Rng, so a client's keys depend only on its own stream and on the
// generator's shared state (the sequential counter, the recent-keys ring).
// Not thread-safe.
class KeyGenerator {
 public:
  // How many recent write keys time-keyed patterns keep for reads.
  static constexpr size_t kRecentKeys = 1024;

  // Validates `pattern` and applies its defaults (entities 0 -> 10,000,
  // zipf exponent 0 -> 1.0). INVALID_ARGUMENT naming the field as `field`
  // plus the sub-field, e.g.
  // "clients[0].workload.keys.salted.buckets: must be in 1..1000", or
  // "clients[0].workload.keys: a key pattern is required" when no kind is
  // set. Limits: entities 1..100,000,000; salted.buckets 1..1,000;
  // zipf.exponent finite, > 0 and <= 5; field_promotion: at least one
  // field, each with values >= 1, and keys no longer than 4 KiB.
  static Result<std::unique_ptr<KeyGenerator>> Create(
      const btsim::scenario::v1::KeyPattern& pattern, const std::string& field);

  // The row key of a write issued at virtual time `now` (nanoseconds since
  // the Unix epoch; negative times count as 0). Time-keyed patterns record
  // it in the recent-keys ring.
  std::string WriteKey(sim::Time now, sim::Rng& rng);

  // The row key of a single-row read at `now`. Entity-keyed patterns
  // (uniform, zipf, hashed, reversed_domain, field_promotion without a
  // reversed timestamp) draw it as a write would. Time-keyed patterns
  // (sequential, timestamp_first, reversed_timestamp, salted,
  // field_promotion with a reversed timestamp) pick uniformly one of the
  // last kRecentKeys written keys; before any write, what WriteKey would
  // return (the next id for sequential), without recording it.
  std::string ReadKey(sim::Time now, sim::Rng& rng);

  // The start key of a scan at `now`. Hierarchical patterns give the start
  // of a group: "E#" (reversed_timestamp: that entity's newest rows first),
  // "B#" (salted: a uniform bucket), "<prefix><value>#" (field_promotion
  // with more than one level: a uniform first field), "<tld>.<name>.www/"
  // (reversed_domain: that domain's pages). Others: a ReadKey.
  std::string ScanStart(sim::Time now, sim::Rng& rng);

  // True for the time-keyed patterns (see ReadKey).
  bool time_keyed() const { return time_keyed_; }
  // The number of distinct entities, defaults applied.
  uint64_t entities() const { return entities_; }

 private:
  enum class Kind {
    kSequential,
    kTimestampFirst,
    kReversedTimestamp,
    kFieldPromotion,
    kSalted,
    kHashed,
    kUniform,
    kZipf,
    kReversedDomain,
  };
  struct Field {
    std::string prefix;
    uint64_t values = 1;
    int width = 1;
  };

  KeyGenerator() = default;

  // The key a write at `now` gets, without recording it; advances the
  // sequential counter only when `advance`.
  std::string MakeKey(sim::Time now, sim::Rng& rng, bool advance);
  std::string Entity(uint64_t entity) const;
  std::string DomainPrefix(uint64_t entity) const;
  std::string FieldValue(const Field& field, sim::Rng& rng) const;

  Kind kind_ = Kind::kUniform;
  bool time_keyed_ = false;
  uint64_t entities_ = 10'000;
  int entity_width_ = 4;
  uint64_t next_id_ = 0;               // sequential
  std::vector<Field> fields_;          // field_promotion
  bool reversed_timestamp_ = false;    // field_promotion
  uint64_t buckets_ = 1;               // salted
  int bucket_width_ = 1;               // salted
  std::unique_ptr<ZipfSampler> zipf_;  // zipf
  int name_width_ = 4;                 // reversed_domain
  std::vector<std::string> recent_;    // time-keyed: the ring
  size_t recent_next_ = 0;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_KEY_PATTERN_H_
