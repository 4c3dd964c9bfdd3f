// InstanceJournal: what an Instance reports to a persistent store (the
// file-backed one of `btsim serve --data-dir` is in durable/): the
// replication journal's commits and applies, and every change of the
// instance's metadata. Called on the instance's thread, under its owner's
// serialisation, right after each change, in the order they happen.
#ifndef BTSIM_INSTANCE_JOURNAL_H_
#define BTSIM_INSTANCE_JOURNAL_H_

#include "replication/journal.h"

namespace btsim::instance {

class Instance;

class InstanceJournal : public replication::ReplicationJournal {
 public:
  // A cluster was added or removed or its node count changed, an app
  // profile was created, updated or deleted, or a table's deletion
  // protection changed. `instance` is in its new state (Clusters(),
  // profiles(), ProtectedTables()).
  virtual void OnMetadataChanged(const Instance& instance) = 0;
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_JOURNAL_H_
