#include "cluster/aggregate.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::cluster {

std::string EncodeInt64(int64_t v) {
  uint64_t x = static_cast<uint64_t>(v);
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(x & 0xff);
    x >>= 8;
  }
  return out;
}

int64_t DecodeInt64(std::string_view bytes) {
  uint64_t x = 0;
  for (unsigned char c :
       bytes.substr(bytes.size() > 8 ? bytes.size() - 8 : 0)) {
    x = (x << 8) | c;
  }
  return static_cast<int64_t>(x);
}

int64_t Combine(Aggregate aggregate, int64_t a, int64_t b) {
  switch (aggregate) {
    case Aggregate::kSum:
      return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                  static_cast<uint64_t>(b));
    case Aggregate::kMin:
      return std::min(a, b);
    case Aggregate::kMax:
      return std::max(a, b);
    case Aggregate::kNone:
      break;
  }
  BTSIM_CHECK_MSG(false, "Combine on a family without an aggregate");
  return 0;
}

const char* AggregateName(Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      return "sum";
    case Aggregate::kMin:
      return "min";
    case Aggregate::kMax:
      return "max";
    case Aggregate::kNone:
      break;
  }
  return "none";
}

}  // namespace btsim::cluster
