#include "cluster/bound.h"

namespace btsim::cluster {

// Deliberately simple: an unbounded side never makes the interval empty, and
// only identical or inverted end points are detected (so (open "a", open
// "a\0") and (unbounded, open "") report false although nothing is inside).
bool Interval::IsEmpty() const {
  if (start.unbounded() || end.unbounded()) return false;
  const int c = start.value.compare(end.value);
  if (c > 0) return true;
  if (c < 0) return false;
  return start.kind == Bound::Kind::kOpen || end.kind == Bound::Kind::kOpen;
}

}  // namespace btsim::cluster
