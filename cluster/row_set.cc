#include "cluster/row_set.h"

#include <algorithm>

namespace btsim::cluster {
namespace {

// Orders intervals by start: unbounded first, then by value, closed before
// open at the same value.
bool StartLess(const Interval& a, const Interval& b) {
  if (a.start.unbounded() != b.start.unbounded()) return a.start.unbounded();
  if (a.start.unbounded()) return false;
  if (int c = a.start.value.compare(b.start.value); c != 0) return c < 0;
  return a.start.kind == Bound::Kind::kClosed &&
         b.start.kind == Bound::Kind::kOpen;
}

}  // namespace

void RowSet::AddKey(std::string key) { keys_.push_back(std::move(key)); }

void RowSet::AddRange(Interval range) { ranges_.push_back(std::move(range)); }

std::vector<Interval> RowSet::Normalized() const {
  std::vector<Interval> out;
  if (IsAllRows()) {
    out.push_back(Interval{});
    return out;
  }
  for (const std::string& k : keys_) {
    out.push_back(Interval{Bound::Closed(k), Bound::Closed(k)});
  }
  for (const Interval& r : ranges_) {
    if (!r.IsEmpty()) out.push_back(r);
  }
  // One interval (a point read) needs no sort, nor the buffer it takes.
  if (out.size() > 1) std::stable_sort(out.begin(), out.end(), StartLess);
  return out;
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    unsigned char last = static_cast<unsigned char>(s.back());
    if (last != 0xff) {
      s.back() = static_cast<char>(last + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

}  // namespace btsim::cluster
