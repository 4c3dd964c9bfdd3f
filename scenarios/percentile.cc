#include "scenarios/percentile.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "base/check.h"

namespace btsim::scenarios {
namespace {

// Bucket 0: negative values; 1-256: values 0-255; then 128 per power of
// two up to 2^63.
constexpr size_t kExact = 256;
constexpr size_t kPerPowerOfTwo = 128;
constexpr size_t kBuckets = 1 + kExact + (64 - 8) * kPerPowerOfTwo;

}  // namespace

TwoPassPercentiles::TwoPassPercentiles(std::vector<double> percentiles)
    : percentiles_(std::move(percentiles)) {}

size_t TwoPassPercentiles::Bucket(int64_t value) {
  if (value < 0) return 0;
  const auto v = static_cast<uint64_t>(value);
  if (v < kExact) return 1 + v;
  const int width = std::bit_width(v);  // 9..63
  const uint64_t mantissa = (v >> (width - 8)) & (kPerPowerOfTwo - 1);
  return 1 + kExact + static_cast<size_t>(width - 9) * kPerPowerOfTwo +
         static_cast<size_t>(mantissa);
}

void TwoPassPercentiles::Count(int64_t value) {
  BTSIM_CHECK(first_pass_);
  if (counts_.empty()) counts_.assign(kBuckets, 0);
  ++counts_[Bucket(value)];
  ++total_;
}

int64_t TwoPassPercentiles::EndFirstPass() {
  BTSIM_CHECK(first_pass_);
  first_pass_ = false;
  if (total_ == 0) return 0;
  for (double p : percentiles_) {
    const double n = static_cast<double>(total_);
    const int64_t rank = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(p / 100.0 * n)), 1, total_);
    Target& target = targets_.emplace_back();
    int64_t below = 0;
    while (below + counts_[target.bucket] < rank) {
      below += counts_[target.bucket++];
    }
    target.rank = rank - below;
  }
  counts_ = {};
  return total_;
}

void TwoPassPercentiles::Collect(int64_t value) {
  BTSIM_CHECK(!first_pass_);
  const size_t bucket = Bucket(value);
  for (Target& target : targets_) {
    if (target.bucket == bucket) ++target.seen[value];
  }
}

int64_t TwoPassPercentiles::Result(size_t i) const {
  BTSIM_CHECK(!first_pass_ && i < targets_.size());
  const Target& target = targets_[i];
  int64_t below = 0;
  for (const auto& [value, count] : target.seen) {
    below += count;
    if (below >= target.rank) return value;
  }
  BTSIM_CHECK_MSG(false, "pass 2 saw fewer values than pass 1");
  return 0;
}

}  // namespace btsim::scenarios
