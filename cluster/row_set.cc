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

// Orders intervals for a reversed scan: by end, descending.
bool EndGreater(const Interval& a, const Interval& b) {
  if (a.end.unbounded() != b.end.unbounded()) return a.end.unbounded();
  if (a.end.unbounded()) return false;
  if (int c = a.end.value.compare(b.end.value); c != 0) return c > 0;
  return a.end.kind == Bound::Kind::kClosed && b.end.kind == Bound::Kind::kOpen;
}

}  // namespace

void RowSet::AddKey(std::string key) {
  keys_.push_back(std::move(key));
  forward_.reset();
  reversed_.reset();
}

void RowSet::AddRange(Interval range) {
  ranges_.push_back(std::move(range));
  forward_.reset();
  reversed_.reset();
}

RowSet::Order& RowSet::OrderFor(bool reversed) const {
  std::optional<Order>& cached = reversed ? reversed_ : forward_;
  if (cached.has_value()) return *cached;
  Order order;
  order.intervals = Normalized();
  if (reversed) {
    std::stable_sort(order.intervals.begin(), order.intervals.end(),
                     EndGreater);
  }
  cached = std::move(order);
  return *cached;
}

const std::vector<Interval>& RowSet::ScanOrder(bool reversed) const {
  return OrderFor(reversed).intervals;
}

size_t RowSet::ResumeFrom(std::string_view after, bool reversed) const {
  Order& order = OrderFor(reversed);
  // Made on the first resumption only: most reads never resume.
  if (order.reach.size() != order.intervals.size()) {
    // Forward: the furthest end so far; reversed: the smallest start.
    auto further = [reversed](const Interval& a, const Interval& b) {
      const Bound& x = reversed ? a.start : a.end;
      const Bound& y = reversed ? b.start : b.end;
      if (x.unbounded() || y.unbounded()) {
        return x.unbounded() && !y.unbounded();
      }
      return reversed ? x.value < y.value : x.value > y.value;
    };
    order.reach.resize(order.intervals.size());
    for (size_t i = 0; i < order.intervals.size(); ++i) {
      order.reach[i] = i == 0 || further(order.intervals[i],
                                         order.intervals[order.reach[i - 1]])
                           ? i
                           : order.reach[i - 1];
    }
  }
  // Intervals wholly passed: those whose end value is <= after (reversed:
  // start value >= after). `reach` makes that a prefix.
  auto passed = [&](size_t reach) {
    const Interval& i = order.intervals[reach];
    const Bound& b = reversed ? i.start : i.end;
    return !b.unbounded() && (reversed ? b.value >= after : b.value <= after);
  };
  size_t low = 0, high = order.reach.size();
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (passed(order.reach[mid])) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

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
