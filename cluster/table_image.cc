// Table's image (cluster/image.h): the state Copy copies, as plain values,
// and a table rebuilt from them.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "base/bytes.h"
#include "cluster/cluster.h"  // ValidateTableId, ValidateFamilyName
#include "cluster/internal/tablet.h"
#include "cluster/limits.h"
#include "cluster/row_codec.h"
#include "cluster/table.h"

namespace btsim::cluster {

namespace {

// More family ids than any table hands out: FromImage refuses images
// claiming more (each id costs a pointer up front).
constexpr uint32_t kMaxImageFamilyIds = 1 << 20;

bool KnownAggregate(Aggregate a) {
  return a == Aggregate::kNone || a == Aggregate::kSum ||
         a == Aggregate::kMin || a == Aggregate::kMax;
}

}  // namespace

using internal::Tablet;

TableImage Table::Image() const {
  TableImage image;
  image.id = id_;
  for (const auto& [name, entry] : families_) {
    FamilyImage f{.name = entry->name,
                  .id = entry->id,
                  .gc_rule = entry->gc_rule,
                  .aggregate = entry->aggregate,
                  .created = entry->created,
                  .changed = entry->changed,
                  .past_rules = {}};
    for (const FamilyEntry::PastRule& r : entry->past_rules) {
      f.past_rules.emplace_back(r.since, r.rule);
    }
    image.families.push_back(std::move(f));
  }
  image.family_ids = static_cast<uint32_t>(families_by_id_.size());
  image.has_aggregates = has_aggregates_;
  image.dropped_families.assign(dropped_families_.begin(),
                                dropped_families_.end());
  image.created_version = created_version_;
  for (const auto& [key, cells] : superseded_) {
    for (const Superseded& c : cells) {
      image.superseded.push_back(SupersededImage{.row_key = key,
                                                 .family_id = c.family_id,
                                                 .qualifier = c.qualifier,
                                                 .timestamp = c.timestamp,
                                                 .version = c.version,
                                                 .until = c.until,
                                                 .garbage = c.garbage});
    }
  }
  for (const RangeTombstone& r : range_tombstones_) {
    image.range_tombstones.emplace_back(r.prefix, r.version);
  }
  for (const auto& t : tablets_) {
    image.tablets.push_back(TabletImage{t->start(), t->pinned()});
  }
  return image;
}

void Table::ForEachStoredRow(
    const std::function<void(std::string_view, std::string_view)>& visit)
    const {
  for (const auto& t : tablets_) {
    t->Scan(Interval{}, /*reversed=*/false, [&](const RowRecord& row) {
      visit(row.key(), row.encoded());
      return true;
    });
  }
}

Result<std::unique_ptr<Table>> Table::FromImage(const TableImage& image,
                                                TableOptions options) {
  BTSIM_RETURN_IF_ERROR(ValidateTableId(image.id, "table id"));
  const std::string table = "table " + QuoteForError(image.id) + ": ";
  if (image.family_ids > kMaxImageFamilyIds) {
    return InvalidArgument(table + std::to_string(image.family_ids) +
                           " family ids; at most " +
                           std::to_string(kMaxImageFamilyIds) + " are loaded");
  }
  if (image.tablets.empty() || !image.tablets[0].start.empty()) {
    return InvalidArgument(table + "the first tablet must start at \"\"");
  }
  for (size_t i = 1; i < image.tablets.size(); ++i) {
    if (!LessBytes(image.tablets[i - 1].start, image.tablets[i].start)) {
      return InvalidArgument(table + "tablets[" + std::to_string(i) +
                             "] does not start after the one before");
    }
  }
  auto out =
      std::make_unique<Table>(image.id, options, std::vector<std::string>{});
  out->families_by_id_.assign(image.family_ids, nullptr);
  for (size_t i = 0; i < image.families.size(); ++i) {
    const FamilyImage& f = image.families[i];
    const std::string field = "families[" + std::to_string(i) + "]";
    BTSIM_RETURN_IF_ERROR(ValidateFamilyName(f.name, table + field));
    if (f.id >= image.family_ids || out->families_by_id_[f.id] != nullptr) {
      return InvalidArgument(table + field + ": id " + std::to_string(f.id) +
                             " is taken or not below family_ids");
    }
    if (out->families_.contains(f.name)) {
      return InvalidArgument(table + field + ": a second family " +
                             QuoteForError(f.name));
    }
    if (!KnownAggregate(f.aggregate)) {
      return InvalidArgument(table + field + ": unknown aggregate");
    }
    BTSIM_RETURN_IF_ERROR(f.gc_rule.Validate(table + field + ".gc_rule"));
    auto entry = std::make_unique<FamilyEntry>(FamilyEntry{
        .name = f.name,
        .id = f.id,
        .gc_rule = f.gc_rule,
        .aggregate = f.aggregate,
        .created = f.created,
        .changed = f.changed,
        .past_rules = {},
    });
    for (const auto& [since, rule] : f.past_rules) {
      BTSIM_RETURN_IF_ERROR(rule.Validate(table + field + ".past_rules"));
      // Each rule until the next one's, the last until `changed`.
      if (since >= f.changed || (!entry->past_rules.empty() &&
                                 since <= entry->past_rules.back().since)) {
        return InvalidArgument(table + field +
                               ": past rules not in ascending order before "
                               "the family's last change");
      }
      entry->past_rules.push_back(FamilyEntry::PastRule{since, rule});
    }
    if (f.aggregate != Aggregate::kNone && !image.has_aggregates) {
      return InvalidArgument(
          table + field + ": an aggregate family, but has_aggregates is false");
    }
    out->families_by_id_[f.id] = entry.get();
    out->families_[f.name] = std::move(entry);
  }
  out->has_aggregates_ = image.has_aggregates;
  for (const auto& [name, version] : image.dropped_families) {
    if (!out->dropped_families_.emplace(name, version).second) {
      return InvalidArgument(table + "family " + QuoteForError(name) +
                             " dropped twice");
    }
  }
  out->created_version_ = image.created_version;
  for (const SupersededImage& s : image.superseded) {
    if (s.family_id >= image.family_ids) {
      return InvalidArgument(table + "a superseded cell of row " +
                             QuoteForError(s.row_key) + " has family id " +
                             std::to_string(s.family_id) +
                             ", not below family_ids");
    }
    out->superseded_[s.row_key].push_back(Superseded{.family_id = s.family_id,
                                                     .qualifier = s.qualifier,
                                                     .timestamp = s.timestamp,
                                                     .version = s.version,
                                                     .until = s.until,
                                                     .garbage = s.garbage});
  }
  for (const auto& [prefix, version] : image.range_tombstones) {
    out->range_tombstones_.push_back(RangeTombstone{prefix, version});
  }
  out->tablets_.clear();
  for (size_t i = 0; i < image.tablets.size(); ++i) {
    const std::string& end =
        i + 1 < image.tablets.size() ? image.tablets[i + 1].start : "";
    out->tablets_.push_back(std::make_unique<Tablet>(
        image.tablets[i].start, end, image.tablets[i].pinned));
  }
  out->IndexTablets();
  out->schema_dirty_ = true;
  return out;
}

Status Table::LoadRow(std::string_view key, std::string_view encoded) {
  const auto bad = [&](const std::string& what) {
    return InvalidArgument("table " + QuoteForError(id_) + ", row " +
                           QuoteForError(key.substr(0, 64)) + ": " + what);
  };
  if (key.empty() || static_cast<int64_t>(key.size()) > kMaxRowKeyBytes) {
    return bad("a row key must hold 1 to 4096 bytes");
  }
  if (!last_loaded_.empty() && !LessBytes(last_loaded_, key)) {
    return bad("not after the row stored before it");
  }
  if (encoded.size() > UINT32_MAX) return bad("longer than 4 GiB");
  if (Status s = CheckRowEncoding(
          encoded, static_cast<uint32_t>(families_by_id_.size()));
      !s.ok()) {
    return bad(s.message());
  }
  Tablet& tablet = *tablets_[TabletIndex(key)];
  const internal::RowSlot slot = tablet.Seek(key);
  if (slot.row != nullptr) return bad("already stored");
  char* at = nullptr;
  RowRecord record = RowRecord::Uninitialized(key, encoded.size(), &at);
  if (!encoded.empty()) std::memcpy(at, encoded.data(), encoded.size());
  tablet.Put(slot, std::move(record), /*dirty=*/true);
  last_loaded_.assign(key);
  return OkStatus();
}

}  // namespace btsim::cluster
