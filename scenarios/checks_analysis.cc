#include "scenarios/checks_analysis.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "cluster/version.h"

namespace btsim::scenarios::checks_internal {
namespace {

using sim::Duration;

bool IsWriteType(OpType type) {
  return type == OpType::kWrite || type == OpType::kCheckAndMutate;
}

bool IsAckedWrite(const Operation& op) {
  return IsWriteType(op.type) && op.ok() && !op.written().empty();
}

uint64_t Group(uint32_t high, int32_t row) {
  return (uint64_t{high} << 32) | static_cast<uint32_t>(row);
}

// Counts over positions 0..size-1: point increments, prefix sums; O(log n)
// each.
class Fenwick {
 public:
  explicit Fenwick(size_t size) : tree_(size + 1, 0) {}
  void Add(size_t position) {
    for (size_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) {
      ++tree_[i];
    }
  }
  // The sum over positions [0, end).
  int64_t Prefix(size_t end) const {
    int64_t sum = 0;
    for (size_t i = end; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::vector<int64_t> tree_;
};

}  // namespace

void Series::Add(uint64_t group, Duration at, OrderKey key, uint32_t op) {
  entries_.push_back({group, at, key, op, 0});
}

void Series::Finish() {
  std::sort(
      entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.group, a.at, a.op) < std::tie(b.group, b.at, b.op);
      });
  for (size_t i = 0; i < entries_.size(); ++i) {
    const bool first = i == 0 || entries_[i - 1].group != entries_[i].group;
    uint32_t best = static_cast<uint32_t>(i);
    if (!first) {
      const uint32_t previous = entries_[i - 1].max_index;
      if (!(entries_[i].key > entries_[previous].key)) best = previous;
    }
    entries_[i].max_index = best;
    if (first) {
      // Groups are distinct here, so no entry matches.
      ranges_.Emplace(entries_[i].group, static_cast<uint32_t>(begins_.size()),
                      [](uint32_t) { return false; });
      begins_.push_back(i);
      groups_.push_back(entries_[i].group);
    }
  }
  begins_.push_back(entries_.size());
}

std::pair<size_t, size_t> Series::Range(uint64_t group) const {
  const uint32_t* index =
      ranges_.Find(group, [&](uint32_t g) { return groups_[g] == group; });
  return index == nullptr
             ? std::make_pair(size_t{0}, size_t{0})
             : std::make_pair(begins_[*index], begins_[*index + 1]);
}

const Series::Entry* Series::MaxUpTo(uint64_t group, Duration t) const {
  const auto [begin, end] = Range(group);
  auto it =
      std::partition_point(entries_.begin() + begin, entries_.begin() + end,
                           [t](const Entry& e) { return e.at <= t; });
  if (it == entries_.begin() + begin) return nullptr;
  return &entries_[std::prev(it)->max_index];
}

const Series::Entry* Series::FirstNewerThan(uint64_t group,
                                            OrderKey key) const {
  const auto [begin, end] = Range(group);
  auto it = std::partition_point(
      entries_.begin() + begin, entries_.begin() + end,
      [&](const Entry& e) { return !(entries_[e.max_index].key > key); });
  return it == entries_.begin() + end ? nullptr : &*it;
}

const Series::Entry* Series::FirstAtOrAfter(std::pair<size_t, size_t> range,
                                            Duration t) const {
  const auto [begin, end] = range;
  auto it =
      std::partition_point(entries_.begin() + begin, entries_.begin() + end,
                           [t](const Entry& e) { return e.at < t; });
  return it == entries_.begin() + end ? nullptr : &*it;
}

std::vector<size_t> SurvivingClusters(const History& history) {
  std::map<std::string, bool> removed;
  for (const Event& event : history.events) {
    if (event.refused) continue;
    if (event.kind == EventKind::kRemoveCluster) removed[event.cluster] = true;
    if (event.kind == EventKind::kAddCluster) removed[event.cluster] = false;
  }
  std::vector<size_t> surviving;
  for (size_t c = 0; c < history.final_state.size(); ++c) {
    auto it = removed.find(history.final_state[c].id);
    if (it == removed.end() || !it->second) surviving.push_back(c);
  }
  return surviving;
}

Analysis::Analysis(const History& history)
    : history_(history), tags_(history.operations.size()) {
  IndexRows();
  IndexDrops();
  IndexExpiries();
  IndexCollected();
  AnalyzeReads();
  FindLostWrites();
}

void Analysis::IndexRows() {
  const auto& ops = history_.operations;
  row_of_.assign(ops.size(), -1);
  // (table, row) -> row id. Sized up front (growing a table of millions
  // of entries costs more than filling it) for about as many rows as a
  // cluster holds.
  FlatIndex ids;
  {
    size_t stored_rows = 0;
    for (const ClusterState& state : history_.final_state) {
      stored_rows = std::max(stored_rows, state.rows.size());
    }
    ids.Reserve(stored_rows);
    row_names_.reserve(stored_rows);
    acked_writes_.reserve(ops.size());  // untouched capacity costs nothing
  }
  auto same_row = [this](std::string_view table, std::string_view row) {
    return [this, table, row](uint32_t id) {
      return row_names_[id].row == row && row_names_[id].table == table;
    };
  };
  // For the keys hashes[0, n) (those `used` selects), starts fetching what
  // their lookups in `ids` will compare them with: the row's entry in
  // row_names_, then (a pass later) its key's text.
  constexpr size_t kBlock = 64;  // operations per block (see below)
  uint32_t candidates[kBlock];
  auto prefetch_row_names = [&](const uint64_t* hashes, size_t n, auto used) {
    for (size_t j = 0; j < n; ++j) {
      candidates[j] = used(j) ? ids.Candidate(hashes[j]) : FlatIndex::kNoValue;
      if (candidates[j] < row_names_.size()) {
        __builtin_prefetch(&row_names_[candidates[j]]);
      }
    }
    for (size_t j = 0; j < n; ++j) {
      if (candidates[j] < row_names_.size()) {
        row_names_[candidates[j]].row.Prefetch();
      }
    }
  };
  // Operations go in blocks: each lookup waits for cache misses (its slot,
  // the row's entry in row_names_, then the key's text, which `same_row`
  // compares), which the first passes over a block start for all of its
  // ops at once.
  uint64_t hashes[kBlock];
  for (size_t begin = 0; begin < ops.size(); begin += kBlock) {
    const size_t end = std::min(ops.size(), begin + kBlock);
    for (size_t i = begin; i < end; ++i) {
      if (ops[i].type == OpType::kScan) continue;
      hashes[i - begin] = HashTableRow(ops[i].table(), ops[i].row);
      ids.Prefetch(hashes[i - begin]);
    }
    prefetch_row_names(hashes, end - begin, [&](size_t j) {
      return ops[begin + j].type != OpType::kScan;
    });
    for (size_t i = begin; i < end; ++i) {
      const Operation& op = ops[i];
      if (op.type == OpType::kScan) continue;
      const auto [id, inserted] = ids.Emplace(
          hashes[i - begin], static_cast<uint32_t>(row_names_.size()),
          same_row(op.table(), op.row));
      if (inserted) {
        row_names_.push_back({op.table(), op.row, static_cast<uint32_t>(i)});
      }
      row_of_[i] = static_cast<int32_t>(id);
      if (IsWriteType(op.type) && !op.written().empty() && op.version != 0) {
        // On a duplicate the first committed one wins.
        tags_.Add(op.written(), row_of_[i], static_cast<uint32_t>(i), row_of_);
      }
      if (IsAckedWrite(op)) acked_writes_.push_back(static_cast<uint32_t>(i));
    }
  }

  surviving_ = SurvivingClusters(history_);
  const auto& clusters = history_.final_state;
  // The clusters' rows, merged in (table, row) order: one hash lookup per
  // distinct stored row, shared by every cluster that stores it (a tree
  // search per history row costs seconds on millions of rows).
  // Each cluster with rows of its own has a column in states_; a cluster
  // whose rows are an earlier one's (same_as) reads that one's column.
  std::vector<size_t> own;  // clusters with rows of their own
  column_of_.assign(clusters.size(), 0);
  for (size_t c = 0; c < clusters.size(); ++c) {
    if (const auto& same_as = clusters[c].same_as) {
      BTSIM_CHECK(*same_as < c);
      column_of_[c] = column_of_[*same_as];
    } else {
      column_of_[c] = own.size();
      own.push_back(c);
    }
  }
  columns_ = own.size();
  states_.assign(row_names_.size() * columns_, nullptr);
  std::vector<RowStates::const_iterator> at, end;
  for (size_t c : own) {
    at.push_back(clusters[c].rows.begin());
    end.push_back(clusters[c].rows.end());
  }
  // One step of the merge: the least key at the iterators `it` (null at
  // the end), passing every iterator there past it after visit(k, state).
  // Keys stay valid as iterators advance (the vectors do not change).
  auto step = [&](std::vector<RowStates::const_iterator>& it, auto visit) {
    const RowStates::Key* least = nullptr;
    for (size_t k = 0; k < own.size(); ++k) {
      if (it[k] != end[k] && (least == nullptr || it[k]->first < *least)) {
        least = &it[k]->first;
      }
    }
    if (least == nullptr) return least;
    for (size_t k = 0; k < own.size(); ++k) {
      if (it[k] == end[k] || it[k]->first != *least) continue;
      visit(k, it[k]->second);
      ++it[k];
    }
    return least;
  };
  // In blocks, as above: merge a block of keys, look them all up, then
  // merge the block again to store the states.
  const RowStates::Key* keys[kBlock];
  uint32_t key_ids[kBlock];
  while (true) {
    const std::vector<RowStates::const_iterator> block_start = at;
    size_t n = 0;
    for (; n < kBlock; ++n) {
      keys[n] = step(at, [](size_t, const RowState&) {});
      if (keys[n] == nullptr) break;
      hashes[n] = HashTableRow(keys[n]->first, keys[n]->second);
      ids.Prefetch(hashes[n]);
    }
    if (n == 0) break;
    prefetch_row_names(hashes, n, [](size_t) { return true; });
    for (size_t j = 0; j < n; ++j) {
      const auto& [table, row] = *keys[j];
      const uint32_t* id = ids.Find(hashes[j], same_row(table, row));
      key_ids[j] = id == nullptr ? FlatIndex::kNoValue : *id;
    }
    std::vector<RowStates::const_iterator> again = block_start;
    for (size_t j = 0; j < n; ++j) {
      step(again, [&](size_t k, const RowState& state) {
        if (key_ids[j] != FlatIndex::kNoValue) {
          states_[static_cast<size_t>(key_ids[j]) * columns_ + k] = &state;
        }
      });
    }
  }
}

namespace {

// Commit versions follow each cluster's hybrid clock, which can run ahead
// of the run's clock: a delete ordered after a write by version may have
// committed a little earlier by time.
constexpr Duration kClockLead = std::chrono::seconds(1);

}  // namespace

size_t Analysis::FirstRemovalFor(const RowDrops& drops, Duration committed) {
  return static_cast<size_t>(
      std::partition_point(
          drops.removals.begin(), drops.removals.end(),
          [&](const Removal& r) { return r.at < committed - kClockLead; }) -
      drops.removals.begin());
}

void Analysis::IndexDrops() {
  const auto& ops = history_.operations;
  bool any_drop = false;
  for (const Event& event : history_.events) {
    any_drop |= event.kind == EventKind::kDropRowRange && !event.refused;
  }
  // Deletes that committed remove cells of their row by design.
  for (size_t id = 0; id < ops.size(); ++id) {
    const Operation& op = ops[id];
    if (!IsDelete(op.type) || op.version == 0) continue;
    drops_[row_of_[id]].removals.push_back(Removal{op.committed, &op});
  }
  if (any_drop) {
    // Rows sorted by (table, row), to find a prefix's rows by binary
    // search.
    std::vector<int32_t> sorted(row_names_.size());
    for (size_t r = 0; r < sorted.size(); ++r) {
      sorted[r] = static_cast<int32_t>(r);
    }
    auto key = [this](int32_t r) {
      return std::pair<std::string_view, std::string_view>(row_names_[r].table,
                                                           row_names_[r].row);
    };
    auto less = [&](int32_t a, int32_t b) { return key(a) < key(b); };
    std::sort(sorted.begin(), sorted.end(), less);
    for (const Event& event : history_.events) {
      if (event.kind != EventKind::kDropRowRange || event.refused) continue;
      const std::string& prefix = event.detail;
      auto it =
          std::partition_point(sorted.begin(), sorted.end(), [&](int32_t r) {
            return key(r) < std::pair<std::string_view, std::string_view>(
                                event.table, prefix);
          });
      for (; it != sorted.end(); ++it) {
        const RowName& named = row_names_[*it];
        if (!DropCovers(event, named.table, named.row)) break;
        drops_[*it].removals.push_back(Removal{event.at});
      }
    }
  }
  if (drops_.empty()) return;
  for (auto& [row, drops] : drops_) {
    std::stable_sort(
        drops.removals.begin(), drops.removals.end(),
        [](const Removal& a, const Removal& b) { return a.at < b.at; });
    drops.floor.assign(drops.removals.size(), kNothing);
  }
  // floor[k]: the newest write that removals[0..k] removed (the first
  // removal at or after its commit that covers it).
  for (size_t id = 0; id < ops.size(); ++id) {
    if (!IsWriteType(ops[id].type) || ops[id].written().empty() ||
        ops[id].version == 0) {
      continue;  // not a committed write
    }
    auto it = drops_.find(row_of_[id]);
    if (it == drops_.end()) continue;
    auto& drops = it->second;
    for (size_t k = FirstRemovalFor(drops, ops[id].committed);
         k < drops.removals.size(); ++k) {
      if (drops.removals[k].Covers(ops[id])) {
        drops.floor[k] = std::max(drops.floor[k], KeyOf(ops[id]));
        break;
      }
    }
  }
  for (auto& [row, drops] : drops_) {
    for (size_t k = 1; k < drops.floor.size(); ++k) {
      drops.floor[k] = std::max(drops.floor[k], drops.floor[k - 1]);
    }
  }
}

int64_t Analysis::WriteOfTag(Tag tag, int32_t row) const {
  return tags_.Find(tag, row, row_of_);
}

const RowState* Analysis::State(int32_t row, size_t cluster) const {
  return states_[static_cast<size_t>(row) * columns_ + column_of_[cluster]];
}

OrderKey Analysis::Effective(int32_t row, OrderKey seen,
                             Duration complete) const {
  OrderKey out = seen;
  if (auto it = drops_.find(row); it != drops_.end()) {
    const auto& removals = it->second.removals;
    auto k = std::partition_point(
                 removals.begin(), removals.end(),
                 [&](const Removal& r) { return r.at <= complete; }) -
             removals.begin();
    if (k > 0) out = std::max(out, it->second.floor[k - 1]);
  }
  if (auto it = expiries_.find(row); it != expiries_.end()) {
    const auto& at = it->second.at;
    auto k = std::partition_point(
                 at.begin(), at.end(),
                 [&](const auto& e) { return e.first <= complete; }) -
             at.begin();
    if (k > 0) out = std::max(out, it->second.floor[k - 1]);
  }
  return out;
}

std::optional<Duration> Analysis::ExpiryOf(const Operation& op) const {
  // The cell's timestamp on the run's clock: an increment's is the
  // server's, its commit time in whole milliseconds (its reply's when the
  // commit is unknown).
  Duration written = op.timestamp - cluster::TimestampOf(history_.start);
  if (op.type == OpType::kReadModifyWrite) {
    written =
        op.version != 0
            ? cluster::TruncateToMillis(cluster::VersionTime(op.version)) -
                  cluster::TimestampOf(history_.start)
            : op.complete;
  }
  auto it = age_periods_.find(op.table());
  if (it == age_periods_.end()) return std::nullopt;
  const std::vector<AgePeriod>& periods = it->second;
  for (size_t p = 0; p < periods.size(); ++p) {
    if (!periods[p].age) continue;
    // GC deletes a cell older than the age: once now > written + age.
    const Duration expiry =
        std::max(periods[p].from,
                 written + *periods[p].age + std::chrono::microseconds(1));
    if (p + 1 == periods.size() || expiry < periods[p + 1].from) return expiry;
  }
  return std::nullopt;
}

void Analysis::IndexExpiries() {
  bool any_age = false;
  for (const GcRuleChange& change : history_.gc_rules) {
    auto& periods = age_periods_[change.table];
    periods.push_back(AgePeriod{change.at, change.rule.NewestCellAge()});
    any_age |= periods.back().age.has_value();
  }
  if (!any_age) {
    age_periods_.clear();
    return;
  }
  const auto& ops = history_.operations;
  for (size_t id = 0; id < ops.size(); ++id) {
    if (!IsWriteType(ops[id].type) || ops[id].written().empty() ||
        ops[id].version == 0) {
      continue;  // not a committed write
    }
    if (const std::optional<Duration> expiry = ExpiryOf(ops[id])) {
      // Not before the write existed.
      expiries_[row_of_[id]].at.emplace_back(
          std::max(*expiry, ops[id].committed), KeyOf(ops[id]));
    }
  }
  for (auto& [row, expiries] : expiries_) {
    std::sort(expiries.at.begin(), expiries.at.end());
    expiries.floor.resize(expiries.at.size());
    OrderKey newest = kNothing;
    for (size_t k = 0; k < expiries.at.size(); ++k) {
      newest = std::max(newest, expiries.at[k].second);
      expiries.floor[k] = newest;
    }
  }
}

bool Analysis::RemovedLater(int32_t row, const Operation& op) const {
  auto it = drops_.find(row);
  if (it == drops_.end()) return false;
  const auto& drops = it->second;
  for (size_t k = FirstRemovalFor(drops, op.committed);
       k < drops.removals.size(); ++k) {
    if (drops.removals[k].Covers(op)) return true;
  }
  return false;
}

std::optional<Duration> Analysis::LastDrop(int32_t row) const {
  auto it = drops_.find(row);
  if (it == drops_.end()) return std::nullopt;
  for (auto r = it->second.removals.rbegin(); r != it->second.removals.rend();
       ++r) {
    if (r->whole()) return r->at;
  }
  return std::nullopt;
}

void Analysis::AnalyzeReads() {
  const auto& ops = history_.operations;
  // Client ids, in first-seen order (lookups only).
  // Lookups only.
  LookupMap<std::string_view, uint32_t> client_ids;
  auto client_id = [&](std::string_view client) {
    // try_emplace: emplace would allocate a node on every call.
    return client_ids
        .try_emplace(client, static_cast<uint32_t>(client_ids.size()))
        .first->second;
  };
  // Rows with a successful read: the series below are only queried for
  // those, so writes on other rows are left out.
  row_has_reads_.assign(row_names_.size(), false);
  size_t read_count = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].type == OpType::kReadRow && ops[i].ok()) {
      row_has_reads_[row_of_[i]] = true;
      ++read_count;
    }
  }
  // Sized up front: millions of entries, grown by doubling, would touch
  // about twice their memory.
  size_t write_count = 0;
  for (uint32_t id : acked_writes_) write_count += row_has_reads_[row_of_[id]];
  Series own_writes;  // group (client, row), at = complete
  Series all_writes;  // group row, at = complete
  own_writes.Reserve(write_count);
  all_writes.Reserve(write_count);
  for (uint32_t id : acked_writes_) {
    if (!row_has_reads_[row_of_[id]]) continue;
    const Operation& op = ops[id];
    own_writes.Add(Group(client_id(op.client()), row_of_[id]), op.complete,
                   KeyOf(op), id);
    all_writes.Add(Group(0, row_of_[id]), op.complete, KeyOf(op), id);
  }
  own_writes.Finish();
  all_writes.Finish();

  Series earlier_reads;  // group (client, row), at = complete
  earlier_reads.Reserve(read_count);
  reads_.reserve(read_count);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = ops[i];
    if (op.type != OpType::kReadRow || !op.ok()) continue;
    ReadResult read;
    read.op = static_cast<uint32_t>(i);
    read.row = row_of_[i];
    OrderKey seen = kNothing;
    if (!op.read().empty()) {
      const int64_t write = WriteOfTag(op.read(), read.row);
      if (write < 0) {
        read.unknown_tag = true;
      } else {
        seen = KeyOf(ops[write]);
      }
    }
    read.effective = Effective(read.row, seen, op.complete);
    earlier_reads.Add(Group(client_id(op.client()), read.row), op.complete,
                      read.effective, read.op);
    reads_.push_back(read);
  }
  earlier_reads.Finish();

  for (ReadResult& read : reads_) {
    const Operation& op = ops[read.op];
    const uint64_t own = Group(client_id(op.client()), read.row);
    if (const auto* e = own_writes.MaxUpTo(own, op.invoke);
        e != nullptr && e->key > read.effective) {
      read.ryw_missed = e->op;
    }
    if (const auto* e = earlier_reads.MaxUpTo(own, op.invoke);
        e != nullptr && e->key > read.effective) {
      const int64_t write = WriteOfTag(ops[e->op].read(), read.row);
      read.monotonic_missed = write >= 0 ? write : e->op;
    }
    const uint64_t row = Group(0, read.row);
    if (const auto* e = all_writes.MaxUpTo(row, op.invoke);
        e != nullptr && e->key > read.effective) {
      read.strong_missed = e->op;
      const auto* first = all_writes.FirstNewerThan(row, read.effective);
      // first->at <= e->at <= invoke: `first` exists and was acknowledged
      // before the read.
      read.staleness = op.invoke - first->at;
      read.stale_missed = first->op;
    }
  }
  CountStaleWrites();
}

void Analysis::CountStaleWrites() {
  const auto& ops = history_.operations;
  // Per row with reads: its acknowledged writes (in op order) and its reads
  // (indexes in reads_, in invoke order since operations are), grouped by
  // row in two flat arrays: row r's are [start[r], start[r + 1]).
  const size_t rows = row_names_.size();
  std::vector<uint32_t> write_start(rows + 1, 0);
  std::vector<uint32_t> read_start(rows + 1, 0);
  for (uint32_t id : acked_writes_) {
    if (row_has_reads_[row_of_[id]]) ++write_start[row_of_[id] + 1];
  }
  for (const ReadResult& read : reads_) ++read_start[read.row + 1];
  for (size_t r = 0; r < rows; ++r) {
    write_start[r + 1] += write_start[r];
    read_start[r + 1] += read_start[r];
  }
  std::vector<uint32_t> row_writes(write_start[rows]);
  std::vector<uint32_t> row_reads(read_start[rows]);
  {
    std::vector<uint32_t> next(write_start.begin(), write_start.end() - 1);
    for (uint32_t id : acked_writes_) {
      if (row_has_reads_[row_of_[id]]) row_writes[next[row_of_[id]]++] = id;
    }
    next.assign(read_start.begin(), read_start.end() - 1);
    for (size_t r = 0; r < reads_.size(); ++r) {
      row_reads[next[reads_[r].row]++] = static_cast<uint32_t>(r);
    }
  }
  std::vector<OrderKey> keys;
  for (size_t row = 0; row < rows; ++row) {
    const auto writes_begin = row_writes.begin() + write_start[row];
    const auto writes_end = row_writes.begin() + write_start[row + 1];
    if (writes_begin == writes_end || read_start[row] == read_start[row + 1]) {
      continue;
    }
    keys.clear();
    for (auto w = writes_begin; w != writes_end; ++w) {
      keys.push_back(KeyOf(ops[*w]));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    // By completion (ties in op order, though writes completing at the same
    // time enter the sweep together): no stable sort's buffer per row.
    std::sort(writes_begin, writes_end, [&](uint32_t a, uint32_t b) {
      return ops[a].complete != ops[b].complete
                 ? ops[a].complete < ops[b].complete
                 : a < b;
    });
    const size_t count = static_cast<size_t>(writes_end - writes_begin);
    // Sweep in time order; a write acknowledged at t enters before reads
    // invoked at t.
    Fenwick acked(keys.size());
    size_t next = 0;
    for (uint32_t k = read_start[row]; k < read_start[row + 1]; ++k) {
      ReadResult& read = reads_[row_reads[k]];
      const Duration invoke = ops[read.op].invoke;
      for (; next < count && ops[writes_begin[next]].complete <= invoke;
           ++next) {
        acked.Add(std::lower_bound(keys.begin(), keys.end(),
                                   KeyOf(ops[writes_begin[next]])) -
                  keys.begin());
      }
      const size_t not_newer =
          std::upper_bound(keys.begin(), keys.end(), read.effective) -
          keys.begin();
      read.k_stale = static_cast<int64_t>(next) - acked.Prefix(not_newer);
    }
  }
}

void Analysis::FindLostWrites() {
  const auto& ops = history_.operations;
  // Writes land on rows at random: the row's states, then the states they
  // point to, are fetched a few writes ahead (kAhead and half of it) so that
  // their cache misses overlap.
  constexpr size_t kAhead = 16;
  auto states_of = [this](uint32_t id) {
    return states_.data() + static_cast<size_t>(row_of_[id]) * columns_;
  };
  for (size_t i = 0; i < acked_writes_.size(); ++i) {
    if (i + kAhead < acked_writes_.size()) {
      __builtin_prefetch(states_of(acked_writes_[i + kAhead]));
    }
    if (i + kAhead / 2 < acked_writes_.size()) {
      const RowState* const* ahead = states_of(acked_writes_[i + kAhead / 2]);
      for (size_t k = 0; k < columns_; ++k) __builtin_prefetch(ahead[k]);
    }
    const uint32_t id = acked_writes_[i];
    const Operation& op = ops[id];
    const int32_t row = row_of_[id];
    if (RemovedLater(row, op)) continue;
    // Garbage collection may have removed it by the end: not lost.
    if (const auto expiry = ExpiryOf(op); expiry && *expiry <= history_.ended) {
      continue;
    }
    if (MayHaveBeenCollected(id)) continue;
    for (size_t c : surviving_) {
      const RowState* state = State(row, c);
      const OrderKey have = state == nullptr || state->tag.empty()
                                ? kNothing
                                : OrderKey{state->timestamp, state->version};
      if (!(have < KeyOf(op))) continue;
      // Not applied there yet (the run did not settle): pending.
      const auto& applied = history_.final_state[c].applied;
      const auto from = applied.find(op.cluster.view());
      if (history_.settled < Duration(0) && from != applied.end() &&
          from->second < op.log_position) {
        pending_writes_.push_back({id, c});
      } else {
        lost_writes_.push_back({id, c});
      }
    }
  }
}

namespace {

template <typename T>
T NearestRank(std::vector<T> values, double p) {
  const double n = static_cast<double>(values.size());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace

Duration Percentile(std::vector<Duration> values, double p) {
  return NearestRank(std::move(values), p);
}

int64_t Percentile(std::vector<int64_t> values, double p) {
  return NearestRank(std::move(values), p);
}

std::string Join(const std::vector<std::string>& parts,
                 const std::string& separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

std::string FormatNumber(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string FormatSeconds(double seconds) {
  if (std::isinf(seconds)) return "never";
  return FormatNumber(seconds) + "s";
}

double Seconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }

std::string FormatSeconds(Duration d) { return FormatSeconds(Seconds(d)); }

std::string DescribeOp(const Operation& op) {
  return "op " + std::to_string(op.id) + " (" + std::string(op.client()) +
         ", " + std::string(OpTypeName(op.type)) + " " +
         std::string(op.table()) + "/" + op.row.str() + " at " +
         FormatSeconds(op.invoke) + ")";
}

std::string DescribeTag(const History& history, int64_t op) {
  if (op < 0) return "nothing";
  const Operation& write = history.operations[op];
  const Tag tag =
      write.type == OpType::kReadRow ? write.read() : write.written();
  return "'" + history.names->Text(tag) + "'";
}

}  // namespace btsim::scenarios::checks_internal
