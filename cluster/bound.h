// Bound: one end of a byte-string interval (row keys, qualifiers, values).
// Comparison is by unsigned bytes, which std::string_view::compare gives.
#ifndef BTSIM_CLUSTER_BOUND_H_
#define BTSIM_CLUSTER_BOUND_H_

#include <string>
#include <string_view>

namespace btsim::cluster {

struct Bound {
  enum class Kind { kUnbounded, kClosed, kOpen };
  Kind kind = Kind::kUnbounded;
  std::string value;  // ignored when kUnbounded

  static Bound Unbounded() { return {}; }
  static Bound Closed(std::string v) { return {Kind::kClosed, std::move(v)}; }
  static Bound Open(std::string v) { return {Kind::kOpen, std::move(v)}; }

  bool unbounded() const { return kind == Kind::kUnbounded; }
  // True when `x` is on the allowed side of this bound used as a start.
  bool AdmitsAsStart(std::string_view x) const {
    if (kind == Kind::kUnbounded) return true;
    const int c = x.compare(value);
    return kind == Kind::kClosed ? c >= 0 : c > 0;
  }
  // True when `x` is on the allowed side of this bound used as an end.
  bool AdmitsAsEnd(std::string_view x) const {
    if (kind == Kind::kUnbounded) return true;
    const int c = x.compare(value);
    return kind == Kind::kClosed ? c <= 0 : c < 0;
  }
  bool operator==(const Bound&) const = default;
};

// [start, end] with each end closed, open or unbounded.
struct Interval {
  Bound start;
  Bound end;
  bool Contains(std::string_view x) const {
    return start.AdmitsAsStart(x) && end.AdmitsAsEnd(x);
  }
  // True when no byte string can be inside (inverted or degenerate).
  bool IsEmpty() const;
  bool operator==(const Interval&) const = default;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_BOUND_H_
