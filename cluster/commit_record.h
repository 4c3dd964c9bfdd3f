// CommitRecord: one change a cluster committed, as it travels through the
// replication log to the other clusters of an instance. Row mutations carry
// their resolved timestamps (never -1), so every replica stores the same
// cells. Applying a record twice, or records from different origins in any
// interleaving, converges: cells resolve by last-writer-wins on Version and
// tombstones cover by Version (see cluster/version.h).
#ifndef BTSIM_CLUSTER_COMMIT_RECORD_H_
#define BTSIM_CLUSTER_COMMIT_RECORD_H_

#include <string>
#include <vector>

#include "cluster/mutation.h"
#include "cluster/table.h"
#include "cluster/version.h"

namespace btsim::cluster {

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
  std::vector<Mutation> mutations;
  std::string prefix;
  std::vector<FamilyModification> families;
  std::vector<std::string> splits;
};

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
  // False while the observer has no use for the records of row commits
  // (kMutateRow): the cluster then skips building them and calls
  // OnRowCommitSkipped once per commit instead. Other kinds always arrive.
  virtual bool WantsRowRecords() const { return true; }
  virtual void OnRowCommitSkipped() {}
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_COMMIT_RECORD_H_
