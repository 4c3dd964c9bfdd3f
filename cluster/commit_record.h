// CommitRecord: one change a cluster committed, as it travels through the
// replication log to the other clusters of an instance. Row mutations carry
// their resolved timestamps (never kServerTimestamp), so every replica stores
// the same cells. Applying a record twice, or records from different origins in
// any interleaving, converges: cells resolve by last-writer-wins on Version and
// tombstones cover by Version (see cluster/version.h).
#ifndef BTSIM_CLUSTER_COMMIT_RECORD_H_
#define BTSIM_CLUSTER_COMMIT_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/prefetch.h"
#include "cluster/mutation.h"
#include "cluster/row_sharing.h"
#include "cluster/schema.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster {

// The mutations of a row commit: a contiguous list (it converts to
// std::span<const Mutation>) that holds a single mutation, the common
// write, inline instead of in an allocation of its own. A moved-from list
// is empty.
class MutationList {
 public:
  MutationList() = default;
  MutationList(const MutationList&) = default;
  MutationList& operator=(const MutationList&) = default;
  MutationList(MutationList&& other) noexcept
      : one_(std::move(other.one_)), many_(std::move(other.many_)) {
    other.clear();
  }
  MutationList& operator=(MutationList&& other) noexcept {
    one_ = std::move(other.one_);
    many_ = std::move(other.many_);
    other.clear();
    return *this;
  }

  template <typename It>
  void assign(It first, It last) {
    clear();
    if (first == last) return;
    if (std::next(first) == last) {
      one_.emplace(*first);
    } else {
      many_.assign(first, last);
    }
  }
  void push_back(Mutation m) {
    if (many_.empty() && !one_.has_value()) {
      one_.emplace(std::move(m));
      return;
    }
    if (one_.has_value()) {
      many_.reserve(2);
      many_.push_back(std::move(*one_));
      one_.reset();
    }
    many_.push_back(std::move(m));
  }
  void clear() {
    one_.reset();
    many_.clear();
  }

  size_t size() const { return one_.has_value() ? 1 : many_.size(); }
  bool empty() const { return size() == 0; }
  Mutation* data() { return one_.has_value() ? &*one_ : many_.data(); }
  const Mutation* data() const {
    return one_.has_value() ? &*one_ : many_.data();
  }
  Mutation* begin() { return data(); }
  Mutation* end() { return data() + size(); }
  const Mutation* begin() const { return data(); }
  const Mutation* end() const { return data() + size(); }
  Mutation& operator[](size_t i) { return data()[i]; }
  const Mutation& operator[](size_t i) const { return data()[i]; }

 private:
  // A single mutation is in one_ (many_ is empty); more are in many_.
  std::optional<Mutation> one_;
  std::vector<Mutation> many_;
};

struct CommitRecord {
  enum class Kind {
    kMutateRow,     // row_key + mutations
    kDropRowRange,  // prefix ("" = every row)
    kCreateTable,   // families (all kCreate) + splits
    kDeleteTable,
    kModifyFamilies,  // families
  };
  Kind kind = Kind::kMutateRow;
  std::string table;
  Version version = 0;
  std::string row_key;
  MutationList mutations;
  // kMutateRow of one mutation: the origin's result, which replicas holding
  // the same row take instead of applying `mutations` (cluster/row_sharing.h).
  // Not part of the change's meaning: a record without it (or a replica
  // that cannot take it) converges the same way.
  RowShare share;
  std::string prefix;
  std::vector<FamilyModification> families;
  std::vector<std::string> splits;
  // kMutateRow: the write's idempotency token (empty: none), which every
  // cluster applying the record remembers (cluster/idempotency.h).
  std::string idempotency_token;
};

// Asks the CPU for the memory outside `record` that destroying it writes:
// the reference counts of its share's rows and the block of its one
// SetCell's value (free() writes into a freed block). Hints only; for loops
// that destroy many records (log truncation). Always inlined: GCC drops a
// call to a function whose only effect is a prefetch.
[[gnu::always_inline]] inline void PrefetchForDestroy(
    const CommitRecord& record) {
  record.share.PrefetchForRelease();
  if (record.mutations.size() != 1) return;
  const auto* set = std::get_if<SetCell>(&record.mutations[0]);
  if (set == nullptr) return;
  const auto value = reinterpret_cast<uintptr_t>(set->value.data());
  PrefetchForWrite(reinterpret_cast<const void*>(value - 8), 16);
}

// A local row commit as the table reports it (Table::CommitHook): server
// timestamps (kServerTimestamp) not resolved yet. Views the caller's data.
struct RowCommit {
  std::string_view table;
  std::string_view key;
  std::span<const Mutation> mutations;
  Timestamp server_time;
  Version version = 0;
  RowShare share;
  std::string_view idempotency_token = {};
};

// Makes *record, which must be empty (as default-constructed), the
// kMutateRow record of `commit`, server timestamps resolved to
// commit.server_time. Takes commit.share.
inline void FillRowRecord(RowCommit& commit, CommitRecord* record) {
  record->kind = CommitRecord::Kind::kMutateRow;
  record->table = commit.table;
  record->version = commit.version;
  record->row_key = commit.key;
  record->mutations.assign(commit.mutations.begin(), commit.mutations.end());
  record->share = std::move(commit.share);
  record->idempotency_token = commit.idempotency_token;
  for (Mutation& mutation : record->mutations) {
    if (auto* set = std::get_if<SetCell>(&mutation)) {
      if (set->timestamp == kServerTimestamp) {
        set->timestamp = commit.server_time;
      }
    } else if (auto* add = std::get_if<AddToCell>(&mutation)) {
      if (add->timestamp == kServerTimestamp) {
        add->timestamp = commit.server_time;
      }
    }
  }
}

// Receives every record a cluster commits locally, in commit order, on the
// cluster's thread, right after the change is applied.
class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  virtual void OnCommit(const CommitRecord& record) = 0;
  // The same, for a record the cluster no longer needs: an observer that
  // keeps it may take it instead of copying. Defaults to the const& form.
  virtual void OnCommit(CommitRecord&& record) {
    OnCommit(static_cast<const CommitRecord&>(record));
  }
  // A row commit (kMutateRow) as its parts. By default its record, made by
  // FillRowRecord, goes to OnCommit(CommitRecord&&); an observer that keeps
  // records may fill one where it keeps it instead (no move).
  virtual void OnRowCommit(RowCommit&& commit) {
    CommitRecord record;
    FillRowRecord(commit, &record);
    OnCommit(std::move(record));
  }
  // False while the observer has no use for the records of row commits
  // (kMutateRow): the cluster then skips building them and calls
  // OnRowCommitSkipped once per commit instead. Other kinds always arrive.
  virtual bool WantsRowRecords() const { return true; }
  virtual void OnRowCommitSkipped() {}
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_COMMIT_RECORD_H_
