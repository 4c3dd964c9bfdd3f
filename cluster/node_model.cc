#include "cluster/node_model.h"

#include <algorithm>
#include <limits>

#include "base/check.h"

namespace btsim::cluster {
namespace {

// Work is counted in units of 1/D ns, D chosen per storage type so that every
// per-operation cost 1e9 * D / rate is an integer:
//   SSD: D = 17 * 7 * 11 = 1309 (17,000 = 17 * 1000, 14,000 = 7 * 2000,
//        220e6 = 11 * 20e6, against 1e9 = 1000 * 1e6 = 2000 * 5e5 = 20e6 * 50)
//   HDD: D = 9 (500, 10,000 divide 1e9; 180e6 = 9 * 20e6).
constexpr int64_t kSsdDenominator = 1309;
constexpr int64_t kHddDenominator = 9;

int64_t Denominator(StorageType storage) {
  return storage == StorageType::kSsd ? kSsdDenominator : kHddDenominator;
}

// Rate per second of each kind alone on one node.
int64_t Rate(StorageType storage, OpKind kind) {
  const bool ssd = storage == StorageType::kSsd;
  switch (kind) {
    case OpKind::kRead:
      return ssd ? 17'000 : 500;
    case OpKind::kWrite:
    case OpKind::kReplicationApply:  // every cluster pays for every write
      return ssd ? 14'000 : 10'000;
    case OpKind::kScanBytes:
      return ssd ? 220'000'000 : 180'000'000;
  }
  BTSIM_CHECK(false);
  return 1;
}

// Cost of one unit in 1/D ns.
int64_t UnitCost(StorageType storage, OpKind kind) {
  const int64_t d = Denominator(storage);
  const int64_t rate = Rate(storage, kind);
  BTSIM_CHECK((1'000'000'000 * d) % rate == 0);
  return 1'000'000'000 * d / rate;
}

int64_t Work(StorageType storage, OpKind kind, int64_t units) {
  BTSIM_CHECK(units >= 0);
  const int64_t cost = UnitCost(storage, kind);
  BTSIM_CHECK(units <= std::numeric_limits<int64_t>::max() / cost);
  return units * cost;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t BucketOf(sim::Time t) {
  return FloorDiv(sim::NanosSinceEpoch(t), NodeModel::kBucket.count());
}

}  // namespace

void NodeModel::Window::Add(int64_t bucket, int64_t w) {
  const auto size = static_cast<int64_t>(index.size());
  const auto slot = static_cast<size_t>(((bucket % size) + size) % size);
  if (!used || index[slot] != bucket) {
    if (!used) {
      // Mark every slot stale so zero-initialised indices never match.
      index.fill(std::numeric_limits<int64_t>::min());
      work.fill(0);
      used = true;
    }
    index[slot] = bucket;
    work[slot] = 0;
  }
  work[slot] += w;
}

int64_t NodeModel::Window::Sum(int64_t current_bucket) const {
  if (!used) return 0;
  int64_t sum = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] <= current_bucket &&
        index[i] >= current_bucket - kWindowBuckets) {
      sum += work[i];
    }
  }
  return sum;
}

NodeModel::NodeModel(StorageType storage, int nodes)
    : storage_(storage), denominator_(Denominator(storage)) {
  BTSIM_CHECK(nodes >= 1);
  nodes_.resize(static_cast<size_t>(nodes));
}

sim::Duration NodeModel::ServiceTime(StorageType storage, OpKind kind,
                                     int64_t units) {
  const int64_t w = Work(storage, kind, units);
  const int64_t d = Denominator(storage);
  return sim::Duration(w / d + (w % d != 0 ? 1 : 0));
}

void NodeModel::SetNodes(int n) {
  BTSIM_CHECK(n >= 1);
  const int old = nodes();
  nodes_.resize(static_cast<size_t>(n));
  if (n >= old) return;
  // Reassign the removed nodes' tablets in tablet-id order, measuring load at
  // the latest time this model has been told about.
  const int64_t bucket = last_bucket_;
  std::vector<int64_t> work = NodeWork(bucket);
  std::vector<int64_t> counts = NodeTabletCounts();
  for (auto& [id, t] : tablets_) {
    if (t.node < n) continue;
    const int64_t w = t.window.Sum(bucket);
    const int to = LeastLoadedNode(work, counts);
    t.node = to;
    work[static_cast<size_t>(to)] += w;
    ++counts[static_cast<size_t>(to)];
  }
}

std::vector<int64_t> NodeModel::NodeWork(int64_t bucket) const {
  std::vector<int64_t> work(nodes_.size(), 0);
  for (const auto& [id, t] : tablets_) {
    if (t.node < nodes())
      work[static_cast<size_t>(t.node)] += t.window.Sum(bucket);
  }
  return work;
}

std::vector<int64_t> NodeModel::NodeTabletCounts() const {
  std::vector<int64_t> counts(nodes_.size(), 0);
  for (const auto& [id, t] : tablets_) {
    if (t.node < nodes()) ++counts[static_cast<size_t>(t.node)];
  }
  return counts;
}

int NodeModel::LeastLoadedNode(const std::vector<int64_t>& work,
                               const std::vector<int64_t>& tablets) const {
  int best = 0;
  for (int i = 1; i < nodes(); ++i) {
    const auto u = static_cast<size_t>(i);
    const auto b = static_cast<size_t>(best);
    if (work[u] < work[b] || (work[u] == work[b] && tablets[u] < tablets[b])) {
      best = i;
    }
  }
  return best;
}

NodeModel::TabletState& NodeModel::Assign(sim::Time now, uint64_t tablet_id) {
  auto& [recent_id, recent] = recent_.For(tablet_id);
  if (recent != nullptr && recent_id == tablet_id) return *recent;
  auto it = tablets_.find(tablet_id);
  if (it == tablets_.end()) {
    const int node =
        LeastLoadedNode(NodeWork(BucketOf(now)), NodeTabletCounts());
    it = tablets_.try_emplace(tablet_id).first;
    it->second.node = node;
    last_bucket_ = std::max(last_bucket_, BucketOf(now));
  }
  recent_id = tablet_id;
  recent = &it->second;
  return it->second;
}

int NodeModel::AddTablet(sim::Time now, uint64_t tablet_id) {
  return Assign(now, tablet_id).node;
}

void NodeModel::RemoveTablet(uint64_t tablet_id) {
  auto& [recent_id, recent] = recent_.For(tablet_id);
  if (recent_id == tablet_id) recent = nullptr;
  tablets_.erase(tablet_id);
}

int NodeModel::NodeOf(uint64_t tablet_id) const {
  const auto& [recent_id, recent] = recent_.entries[tablet_id % Recent::kSize];
  if (recent != nullptr && recent_id == tablet_id) return recent->node;
  auto it = tablets_.find(tablet_id);
  return it == tablets_.end() ? -1 : it->second.node;
}

sim::Time NodeModel::BusyUntil(int node) const {
  BTSIM_CHECK(node >= 0 && node < nodes());
  const NodeState& n = nodes_[static_cast<size_t>(node)];
  return sim::Time(sim::Duration(n.busy_ns + (n.busy_frac != 0 ? 1 : 0)));
}

sim::Time NodeModel::Submit(sim::Time now, uint64_t tablet_id, OpKind kind,
                            int64_t units) {
  const int64_t w = Work(storage_, kind, units);
  TabletState& t = Assign(now, tablet_id);
  last_bucket_ = std::max(last_bucket_, BucketOf(now));
  t.window.Add(BucketOf(now), w);
  NodeState& n = nodes_[static_cast<size_t>(t.node)];
  // Start at max(now, busy-until).
  const int64_t now_ns = sim::NanosSinceEpoch(now);
  if (!n.ever_busy || now_ns > n.busy_ns ||
      (now_ns == n.busy_ns && n.busy_frac == 0)) {
    n.busy_ns = now_ns;
    n.busy_frac = 0;
    n.ever_busy = true;
  }
  const int64_t frac = n.busy_frac + w;
  n.busy_ns += frac / denominator_;
  n.busy_frac = frac % denominator_;
  return sim::Time(sim::Duration(n.busy_ns + (n.busy_frac != 0 ? 1 : 0)));
}

NodeModel::Admission NodeModel::Admit(sim::Time now, uint64_t tablet_id,
                                      OpKind kind, int64_t units,
                                      sim::Time deadline,
                                      sim::Duration queue_limit) {
  const int node = Assign(now, tablet_id).node;
  const sim::Time start = std::max(now, BusyUntil(node));
  Admission admission;
  if (start - now > queue_limit) {
    admission.outcome = Admission::Outcome::kQueueFull;
    return admission;
  }
  if (start >= deadline) {
    admission.outcome = Admission::Outcome::kExpired;
    return admission;
  }
  admission.start = start;
  admission.done = Submit(now, tablet_id, kind, units);
  return admission;
}

int NodeModel::Rebalance(sim::Time now) {
  const int64_t bucket = BucketOf(now);
  last_bucket_ = std::max(last_bucket_, bucket);
  std::vector<int64_t> work = NodeWork(bucket);
  std::vector<int64_t> counts = NodeTabletCounts();
  int moved = 0;
  while (moved < kMaxMovesPerRebalance && nodes() > 1) {
    int64_t total = 0;
    int hot = 0;
    for (int i = 0; i < nodes(); ++i) {
      total += work[static_cast<size_t>(i)];
      if (work[static_cast<size_t>(i)] > work[static_cast<size_t>(hot)])
        hot = i;
    }
    const int64_t hot_work = work[static_cast<size_t>(hot)];
    if (total == 0) break;
    const double average = static_cast<double>(total) / nodes();
    if (static_cast<double>(hot_work) <= average * kRebalanceThreshold) break;
    const int cold = LeastLoadedNode(work, counts);
    const int64_t gap = hot_work - work[static_cast<size_t>(cold)];
    // The hottest tablet on `hot` whose move lowers the hotter of the two
    // nodes: 0 < load < gap. Ties: lowest tablet id (map order, strict >).
    TabletState* pick = nullptr;
    int64_t pick_work = 0;
    for (auto& [id, t] : tablets_) {
      if (t.node != hot) continue;
      const int64_t tw = t.window.Sum(bucket);
      if (tw > 0 && tw < gap && tw > pick_work) {
        pick = &t;
        pick_work = tw;
      }
    }
    if (pick == nullptr) break;
    pick->node = cold;
    work[static_cast<size_t>(hot)] -= pick_work;
    work[static_cast<size_t>(cold)] += pick_work;
    --counts[static_cast<size_t>(hot)];
    ++counts[static_cast<size_t>(cold)];
    ++moved;
  }
  return moved;
}

double NodeModel::WindowLength(sim::Time now) const {
  const int64_t bucket = BucketOf(now);
  const int64_t ns = kWindowBuckets * kBucket.count() +
                     (sim::NanosSinceEpoch(now) - bucket * kBucket.count());
  return static_cast<double>(ns) * static_cast<double>(denominator_);
}

std::vector<double> NodeModel::NodeLoads(sim::Time now) const {
  const std::vector<int64_t> work = NodeWork(BucketOf(now));
  const double len = WindowLength(now);
  std::vector<double> loads;
  loads.reserve(work.size());
  for (int64_t w : work) loads.push_back(static_cast<double>(w) / len);
  return loads;
}

double NodeModel::CpuLoad(sim::Time now) const {
  double sum = 0;
  for (double l : NodeLoads(now)) sum += l;
  return sum / nodes();
}

double NodeModel::HottestNodeLoad(sim::Time now) const {
  double hottest = 0;
  for (double l : NodeLoads(now)) hottest = std::max(hottest, l);
  return hottest;
}

std::vector<std::pair<uint64_t, double>> NodeModel::TabletLoads(
    sim::Time now) const {
  const int64_t bucket = BucketOf(now);
  const double len = WindowLength(now);
  std::vector<std::pair<uint64_t, double>> loads;
  loads.reserve(tablets_.size());
  for (const auto& [id, t] : tablets_) {
    loads.emplace_back(id, static_cast<double>(t.window.Sum(bucket)) / len);
  }
  return loads;
}

}  // namespace btsim::cluster
