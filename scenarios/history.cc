#include "scenarios/history.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::scenarios {

std::string_view OpTypeName(OpType type) {
  switch (type) {
    case OpType::kReadRow:
      return "read_row";
    case OpType::kScan:
      return "scan";
    case OpType::kWrite:
      return "write";
    case OpType::kCheckAndMutate:
      return "check_and_mutate";
    case OpType::kReadModifyWrite:
      return "read_modify_write";
    case OpType::kDeleteRow:
      return "delete_row";
    case OpType::kDeleteFamily:
      return "delete_family";
    case OpType::kDeleteCells:
      return "delete_cells";
    case OpType::kAppend:
      return "append";
    case OpType::kAddToCell:
      return "add_to_cell";
  }
  return "unknown";
}

bool IsDelete(OpType type) {
  return type == OpType::kDeleteRow || type == OpType::kDeleteFamily ||
         type == OpType::kDeleteCells;
}

std::optional<OpType> OpTypeFromName(std::string_view name) {
  for (int t = 0; t <= static_cast<int>(OpType::kAddToCell); ++t) {
    if (OpTypeName(static_cast<OpType>(t)) == name) {
      return static_cast<OpType>(t);
    }
  }
  return std::nullopt;
}

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kClusterDown:
      return "cluster_down";
    case EventKind::kClusterUp:
      return "cluster_up";
    case EventKind::kPartition:
      return "partition";
    case EventKind::kHeal:
      return "heal";
    case EventKind::kLatency:
      return "latency";
    case EventKind::kNodeFailure:
      return "node_failure";
    case EventKind::kNodeRecovery:
      return "node_recovery";
    case EventKind::kResize:
      return "resize";
    case EventKind::kAddCluster:
      return "add_cluster";
    case EventKind::kRemoveCluster:
      return "remove_cluster";
    case EventKind::kUpdateAppProfile:
      return "update_app_profile";
    case EventKind::kSetGcRule:
      return "set_gc_rule";
    case EventKind::kDropRowRange:
      return "drop_row_range";
    case EventKind::kStartClient:
      return "start_client";
    case EventKind::kStopClient:
      return "stop_client";
    case EventKind::kChangeWorkload:
      return "change_workload";
    case EventKind::kTokenWait:
      return "wait_for_replication";
    case EventKind::kSettle:
      return "settle";
    case EventKind::kSlowCluster:
      return "slow_cluster";
    case EventKind::kRestoreSpeed:
      return "restore_speed";
    case EventKind::kInjectErrors:
      return "inject_errors";
    case EventKind::kStopErrors:
      return "stop_errors";
    case EventKind::kCutClients:
      return "cut_clients";
    case EventKind::kMendClients:
      return "mend_clients";
    case EventKind::kStallReplication:
      return "stall_replication";
    case EventKind::kResumeReplication:
      return "resume_replication";
    case EventKind::kClockSkew:
      return "clock_skew";
    case EventKind::kCreateBackup:
      return "create_backup";
    case EventKind::kRestoreTable:
      return "restore_table";
  }
  return "unknown";
}

std::optional<EventKind> EventKindFromName(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(EventKind::kRestoreTable); ++k) {
    if (EventKindName(static_cast<EventKind>(k)) == name) {
      return static_cast<EventKind>(k);
    }
  }
  return std::nullopt;
}

void RowStates::Append(Key key, RowState state) {
  BTSIM_CHECK(entries_.empty() || entries_.back().first < key);
  entries_.emplace_back(key, state);
}

RowStates::const_iterator RowStates::LowerBound(std::string_view table,
                                                std::string_view row) const {
  return std::partition_point(
      entries_.begin(), entries_.end(), [&](const Entry& e) {
        const auto by_table = e.first.first <=> table;
        return by_table < 0 || (by_table == 0 && e.first.second < row);
      });
}

RowState& RowStates::operator[](const Key& key) {
  auto it =
      entries_.begin() + (LowerBound(key.first, key.second) - entries_.begin());
  if (it == entries_.end() || it->first != key) {
    it = entries_.insert(it, Entry{key, RowState{}});
  }
  return it->second;
}

const RowState* RowStates::Find(std::string_view table,
                                std::string_view row) const {
  const auto it = LowerBound(table, row);
  return it == entries_.end() || it->first.first != table ||
                 it->first.second != row
             ? nullptr
             : &it->second;
}

const Append* FindAppend(const History& history, uint32_t op) {
  auto it =
      std::lower_bound(history.appends.begin(), history.appends.end(), op,
                       [](const Append& a, uint32_t id) { return a.op < id; });
  return it != history.appends.end() && it->op == op ? &*it : nullptr;
}

Append* FindAppend(History& history, uint32_t op) {
  return const_cast<Append*>(
      FindAppend(static_cast<const History&>(history), op));
}

const RowStates& RowsOf(const History& history, size_t cluster) {
  const ClusterState& state = history.final_state[cluster];
  return state.same_as ? history.final_state[*state.same_as].rows : state.rows;
}

std::string_view TagOf(std::string_view value) {
  const size_t bar = value.find('|');
  return bar == std::string_view::npos ? value : value.substr(0, bar);
}

}  // namespace btsim::scenarios
