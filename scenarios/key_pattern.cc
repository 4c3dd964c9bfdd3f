#include "scenarios/key_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "base/check.h"

namespace btsim::scenarios {
namespace {

namespace pb = ::btsim::scenario::v1;

constexpr uint64_t kDefaultEntities = 10'000;
constexpr uint64_t kMaxEntities = 100'000'000;
constexpr int kMaxBuckets = 1'000;
constexpr double kDefaultZipfExponent = 1.0;
constexpr double kMaxZipfExponent = 5.0;
constexpr size_t kMaxKeyBytes = 4 * 1024;
constexpr int kSequentialWidth = 8;
constexpr int kMillisWidth = 13;
constexpr int kReverseWidth = 19;
constexpr int kMinNameWidth = 4;
constexpr uint64_t kPages = 10;
constexpr const char* kTlds[] = {"com", "org", "net", "io"};

// Decimal digits of `v` (1 for 0).
int Digits(uint64_t v) {
  int digits = 1;
  while (v >= 10) {
    v /= 10;
    ++digits;
  }
  return digits;
}

// `v` in decimal, zero-padded on the left to at least `width` digits.
std::string Pad(uint64_t v, int width) {
  std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width) {
    digits.insert(0, static_cast<size_t>(width) - digits.size(), '0');
  }
  return digits;
}

uint64_t Millis(sim::Time now) {
  const int64_t ns = sim::NanosSinceEpoch(now);
  return ns <= 0 ? 0 : static_cast<uint64_t>(ns / 1'000'000);
}

std::string MillisKey(sim::Time now) { return Pad(Millis(now), kMillisWidth); }

std::string ReverseKey(sim::Time now) {
  return Pad(static_cast<uint64_t>(INT64_MAX) - Millis(now), kReverseWidth);
}

// log1p(x) / x, accurate near 0.
double Helper1(double x) {
  if (std::fabs(x) > 1e-8) return std::log1p(x) / x;
  return 1 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x) / x, accurate near 0.
double Helper2(double x) {
  if (std::fabs(x) > 1e-8) return std::expm1(x) / x;
  return 1 + x * 0.5 * (1 + x * (1.0 / 3.0) * (1 + 0.25 * x));
}

}  // namespace

uint64_t EntityHash(uint64_t entity) {
  uint64_t z = sim::StableHash(std::to_string(entity));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------
// ZipfSampler. Ranks are 1..n inside (as in the paper), 0..n-1 outside.
// h(x) = x^-s is the unnormalized density; H is an antiderivative of h,
// H(x) = (x^(1-s) - 1) / (1 - s) (log x when s == 1), written with the
// helpers so that it stays accurate as s approaches 1.

ZipfSampler::ZipfSampler(uint64_t n, double exponent)
    : n_(n), exponent_(exponent) {
  BTSIM_CHECK(n >= 1);
  BTSIM_CHECK(exponent > 0 && std::isfinite(exponent));
  h_integral_x1_ = HIntegral(1.5) - 1.0;
  h_integral_n_ = HIntegral(static_cast<double>(n_) + 0.5);
  s_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
}

double ZipfSampler::H(double x) const {
  return std::exp(-exponent_ * std::log(x));
}

double ZipfSampler::HIntegral(double x) const {
  const double log_x = std::log(x);
  return Helper2((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::HIntegralInverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) t = -1.0;  // rounding; the exact value is > -1
  return std::exp(Helper1(t) * x);
}

uint64_t ZipfSampler::Sample(sim::Rng& rng) const {
  const double n = static_cast<double>(n_);
  while (true) {
    const double u =
        h_integral_n_ + rng.UniformDouble() * (h_integral_x1_ - h_integral_n_);
    const double x = HIntegralInverse(u);
    double k = std::floor(x + 0.5);
    if (!(k >= 1.0)) k = 1.0;  // also NaN
    if (k > n) k = n;
    if (k - x <= s_ || u >= HIntegral(k + 0.5) - H(k)) {
      return static_cast<uint64_t>(k) - 1;
    }
  }
}

// ---------------------------------------------------------------------------
// KeyGenerator.

Result<std::unique_ptr<KeyGenerator>> KeyGenerator::Create(
    const pb::KeyPattern& pattern, const std::string& field) {
  std::unique_ptr<KeyGenerator> gen(new KeyGenerator());

  gen->entities_ =
      pattern.entities() == 0 ? kDefaultEntities : pattern.entities();
  if (gen->entities_ > kMaxEntities) {
    return InvalidArgument(field + ".entities: must be in 1..100000000");
  }
  gen->entity_width_ = Digits(gen->entities_ - 1);

  switch (pattern.kind_case()) {
    case pb::KeyPattern::kSequential:
      gen->kind_ = Kind::kSequential;
      gen->time_keyed_ = true;
      gen->next_id_ = pattern.sequential().start();
      break;
    case pb::KeyPattern::kTimestampFirst:
      gen->kind_ = Kind::kTimestampFirst;
      gen->time_keyed_ = true;
      break;
    case pb::KeyPattern::kReversedTimestamp:
      gen->kind_ = Kind::kReversedTimestamp;
      gen->time_keyed_ = true;
      break;
    case pb::KeyPattern::kFieldPromotion: {
      const pb::FieldPromotion& fp = pattern.field_promotion();
      const std::string sub = field + ".field_promotion";
      if (fp.fields().empty()) {
        return InvalidArgument(sub + ".fields: at least one field is required");
      }
      size_t key_bytes = fp.fields_size() - 1;  // the '#' separators
      for (int i = 0; i < fp.fields_size(); ++i) {
        const pb::FieldPromotion::Field& f = fp.fields(i);
        if (f.values() < 1) {
          return InvalidArgument(sub + ".fields[" + std::to_string(i) +
                                 "].values: must be at least 1");
        }
        Field out;
        out.prefix = f.prefix();
        out.values = f.values();
        out.width = Digits(f.values() - 1);
        key_bytes += out.prefix.size() + static_cast<size_t>(out.width);
        gen->fields_.push_back(std::move(out));
      }
      gen->reversed_timestamp_ = fp.reversed_timestamp();
      if (gen->reversed_timestamp_) key_bytes += 1 + kReverseWidth;
      if (key_bytes > kMaxKeyBytes) {
        return InvalidArgument(sub + ".fields: the keys would exceed 4 KiB (" +
                               std::to_string(key_bytes) + " bytes)");
      }
      gen->kind_ = Kind::kFieldPromotion;
      gen->time_keyed_ = gen->reversed_timestamp_;
      break;
    }
    case pb::KeyPattern::kSalted: {
      const int buckets = pattern.salted().buckets();
      if (buckets < 1 || buckets > kMaxBuckets) {
        return InvalidArgument(field + ".salted.buckets: must be in 1..1000");
      }
      gen->kind_ = Kind::kSalted;
      gen->time_keyed_ = true;
      gen->buckets_ = static_cast<uint64_t>(buckets);
      gen->bucket_width_ = Digits(gen->buckets_ - 1);
      break;
    }
    case pb::KeyPattern::kHashed:
      gen->kind_ = Kind::kHashed;
      break;
    case pb::KeyPattern::kUniform:
      gen->kind_ = Kind::kUniform;
      break;
    case pb::KeyPattern::kZipf: {
      double exponent = pattern.zipf().exponent();
      if (exponent == 0) exponent = kDefaultZipfExponent;
      if (!(exponent > 0 && exponent <= kMaxZipfExponent)) {  // also NaN
        return InvalidArgument(field +
                               ".zipf.exponent: must be > 0 and at most 5");
      }
      gen->kind_ = Kind::kZipf;
      gen->zipf_ = std::make_unique<ZipfSampler>(gen->entities_, exponent);
      break;
    }
    case pb::KeyPattern::kReversedDomain: {
      gen->kind_ = Kind::kReversedDomain;
      int width = 1;
      for (uint64_t v = gen->entities_ - 1; v >= 26; v /= 26) ++width;
      gen->name_width_ = std::max(kMinNameWidth, width);
      break;
    }
    case pb::KeyPattern::KIND_NOT_SET:
      return InvalidArgument(field + ": a key pattern is required");
  }
  return gen;
}

std::string KeyGenerator::Entity(uint64_t entity) const {
  return Pad(entity, entity_width_);
}

std::string KeyGenerator::DomainPrefix(uint64_t entity) const {
  std::string name(static_cast<size_t>(name_width_), 'a');
  uint64_t v = entity;
  for (int i = name_width_ - 1; i >= 0 && v > 0; --i) {
    name[static_cast<size_t>(i)] = static_cast<char>('a' + v % 26);
    v /= 26;
  }
  const char* tld = kTlds[(EntityHash(entity) >> 32) % std::size(kTlds)];
  return std::string(tld) + "." + name + ".www";
}

std::string KeyGenerator::FieldValue(const Field& field, sim::Rng& rng) const {
  return field.prefix + Pad(rng.Uniform(field.values), field.width);
}

std::string KeyGenerator::MakeKey(sim::Time now, sim::Rng& rng, bool advance) {
  switch (kind_) {
    case Kind::kSequential: {
      const uint64_t id = advance ? next_id_++ : next_id_;
      return Pad(id, kSequentialWidth);
    }
    case Kind::kTimestampFirst:
      return MillisKey(now) + "#" + Entity(rng.Uniform(entities_));
    case Kind::kReversedTimestamp:
      return Entity(rng.Uniform(entities_)) + "#" + ReverseKey(now);
    case Kind::kFieldPromotion: {
      std::string key;
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i > 0) key += '#';
        key += FieldValue(fields_[i], rng);
      }
      if (reversed_timestamp_) key += "#" + ReverseKey(now);
      return key;
    }
    case Kind::kSalted: {
      const uint64_t entity = rng.Uniform(entities_);
      return Pad(EntityHash(entity) % buckets_, bucket_width_) + "#" +
             MillisKey(now) + "#" + Entity(entity);
    }
    case Kind::kHashed: {
      static constexpr char kHex[] = "0123456789abcdef";
      uint64_t h = EntityHash(rng.Uniform(entities_));
      std::string key(16, '0');
      for (int i = 15; i >= 0; --i) {
        key[static_cast<size_t>(i)] = kHex[h & 0xf];
        h >>= 4;
      }
      return key;
    }
    case Kind::kUniform:
      return "row" + Entity(rng.Uniform(entities_));
    case Kind::kZipf:
      return "row" + Entity(zipf_->Sample(rng));
    case Kind::kReversedDomain: {
      const uint64_t entity = rng.Uniform(entities_);
      return DomainPrefix(entity) + "/page" +
             std::to_string(rng.Uniform(kPages));
    }
  }
  BTSIM_CHECK(false);
  return "";
}

std::string KeyGenerator::WriteKey(sim::Time now, sim::Rng& rng) {
  std::string key = MakeKey(now, rng, /*advance=*/true);
  if (time_keyed_) {
    if (recent_.size() < kRecentKeys) {
      recent_.push_back(key);
    } else {
      recent_[recent_next_] = key;
    }
    recent_next_ = (recent_next_ + 1) % kRecentKeys;
  }
  return key;
}

std::string KeyGenerator::ReadKey(sim::Time now, sim::Rng& rng) {
  if (!time_keyed_) return MakeKey(now, rng, /*advance=*/false);
  if (recent_.empty()) return MakeKey(now, rng, /*advance=*/false);
  return recent_[rng.Uniform(recent_.size())];
}

std::string KeyGenerator::ScanStart(sim::Time now, sim::Rng& rng) {
  switch (kind_) {
    case Kind::kReversedTimestamp:
      return Entity(rng.Uniform(entities_)) + "#";
    case Kind::kSalted:
      return Pad(rng.Uniform(buckets_), bucket_width_) + "#";
    case Kind::kFieldPromotion:
      if (fields_.size() > 1 || reversed_timestamp_) {
        return FieldValue(fields_[0], rng) + "#";
      }
      return ReadKey(now, rng);
    case Kind::kReversedDomain:
      return DomainPrefix(rng.Uniform(entities_)) + "/";
    default:
      return ReadKey(now, rng);
  }
}

}  // namespace btsim::scenarios
