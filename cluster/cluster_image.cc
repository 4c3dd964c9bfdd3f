// Cluster's image (cluster/image.h): its own state and its tables', written
// out and loaded back.
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "base/status.h"
#include "cluster/cluster.h"
#include "cluster/limits.h"

namespace btsim::cluster {

void Cluster::WriteImage(ImageWriter& out) const {
  ClusterImage image;
  image.last_version = last_version_;
  image.deleted_tables.assign(deleted_tables_.begin(), deleted_tables_.end());
  idempotency_.ForEach([&](std::string_view table, std::string_view key,
                           std::string_view token, Timestamp committed) {
    image.tokens.push_back(TokenImage{std::string(table), std::string(key),
                                      std::string(token), committed});
  });
  out.Cluster(image);
  for (const auto& [id, table] : tables_) {
    out.Table(table->Image());
    table->ForEachStoredRow(
        [&](std::string_view key, std::string_view row) { out.Row(key, row); });
  }
}

Status Cluster::LoadImage(const ClusterImage& image) {
  std::map<std::string, Version, std::less<>> deleted;
  for (const auto& [id, version] : image.deleted_tables) {
    if (!deleted.emplace(id, version).second) {
      return InvalidArgument("image: table " + QuoteForError(id) +
                             " deleted twice");
    }
  }
  tables_.clear();
  ++tables_version_;
  deleted_tables_ = std::move(deleted);
  last_version_ = image.last_version;
  idempotency_ = IdempotencyMemory();
  for (const TokenImage& t : image.tokens) {
    idempotency_.Remember(t.table, t.row_key, t.token, t.committed);
  }
  return OkStatus();
}

Status Cluster::LoadTable(const TableImage& image) {
  if (tables_.contains(image.id)) {
    return InvalidArgument("image: table " + QuoteForError(image.id) +
                           " loaded twice");
  }
  if (static_cast<int64_t>(tables_.size()) >= kMaxTablesPerInstance) {
    return InvalidArgument("image: more than 1000 tables");
  }
  BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<Table> table,
                         Table::FromImage(image, options_.table));
  HookTable(*table);
  tables_[image.id] = std::move(table);
  ++tables_version_;
  return OkStatus();
}

Status Cluster::LoadRow(std::string_view table, std::string_view key,
                        std::string_view encoded) {
  auto it = tables_.find(table);
  if (it == tables_.end()) {
    return InvalidArgument("image: a row of table " + QuoteForError(table) +
                           ", which the image has not loaded");
  }
  return it->second->LoadRow(key, encoded);
}

}  // namespace btsim::cluster
