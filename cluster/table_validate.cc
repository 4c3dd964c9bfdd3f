// Table's validation of row requests: mutations (families, aggregate
// families, qualifiers, values, timestamps) and ReadModifyWriteRow rules.
// The rest of Table is in table.cc, table_read.cc and table_maintenance.cc.
#include <string>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/aggregate.h"
#include "cluster/limits.h"
#include "cluster/table.h"

namespace btsim::cluster {

namespace {

std::string Field(size_t i, const char* rest) {
  return "mutations[" + std::to_string(i) + "]" + rest;
}

// `field` builds the field's name, only on error (requests are validated
// per mutation, and formatting names is most of the cost otherwise).
template <typename FieldName>
Status ValidQualifier(std::string_view q, FieldName&& field) {
  if (static_cast<int64_t>(q.size()) > kMaxQualifierBytes) {
    return InvalidArgument(field() + ": column qualifier is " +
                           std::to_string(q.size()) +
                           " bytes; the limit is 16 KiB (16384 bytes)");
  }
  return OkStatus();
}

// A cell timestamp a write may name: kServerTimestamp, or whole
// milliseconds from the epoch on.
template <typename FieldName>
Status ValidCellTimestamp(Timestamp timestamp, FieldName&& field) {
  const int64_t ts = Micros(timestamp);
  if (timestamp != kServerTimestamp && (ts < 0 || ts % 1000 != 0)) {
    return InvalidArgument(
        field() + ": " + std::to_string(ts) +
        " is not a valid timestamp; use -1 (server time) or a "
        "non-negative number of microseconds divisible by 1000 "
        "(millisecond granularity)");
  }
  return OkStatus();
}

}  // namespace

Status Table::MissingFamily(const std::string& field,
                            std::string_view family) const {
  if (family.empty()) {
    return InvalidArgument(field + ": the column family name is empty");
  }
  return NotFound(field + ": column family " + QuoteForError(family) +
                  " does not exist in table '" + id_ + "'");
}

Status Table::ValidateMutations(std::span<const Mutation> mutations) const {
  if (static_cast<int64_t>(mutations.size()) > kMaxMutationsPerRequest) {
    return InvalidArgument("mutations: " + std::to_string(mutations.size()) +
                           " mutations; the limit is 100000 per request");
  }
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Mutation& m = mutations[i];
    auto family_missing = [&](const std::string& family, const char* rest) {
      return MissingFamily(Field(i, rest), family);
    };
    if (const auto* set = std::get_if<SetCell>(&m)) {
      const FamilyEntry* family = FindFamily(set->family);
      if (family == nullptr) {
        return family_missing(set->family, ".set_cell.family_name");
      }
      if (family->aggregate != Aggregate::kNone) {
        return InvalidArgument(
            Field(i, ".set_cell.family_name") + ": column family " +
            QuoteForError(set->family) + " is an aggregate family (" +
            AggregateName(family->aggregate) +
            "); write it with add_to_cell or merge_to_cell, not set_cell");
      }
      BTSIM_RETURN_IF_ERROR(ValidQualifier(set->qualifier, [&] {
        return Field(i, ".set_cell.column_qualifier");
      }));
      if (static_cast<int64_t>(set->value.size()) > kMaxCellValueBytes) {
        return InvalidArgument(Field(i, ".set_cell.value") + ": value is " +
                               std::to_string(set->value.size()) +
                               " bytes; the cell limit is 100 MiB");
      }
      BTSIM_RETURN_IF_ERROR(ValidCellTimestamp(set->timestamp, [&] {
        return Field(i, ".set_cell.timestamp_micros");
      }));
    } else if (const auto* add = std::get_if<AddToCell>(&m)) {
      const char* const kind = add->merge ? ".merge_to_cell" : ".add_to_cell";
      auto field = [&](const char* rest) { return Field(i, kind) + rest; };
      const FamilyEntry* family = FindFamily(add->family);
      if (family == nullptr) {
        return MissingFamily(field(".family_name"), add->family);
      }
      if (family->aggregate == Aggregate::kNone) {
        return InvalidArgument(
            field(".family_name") + ": column family " +
            QuoteForError(add->family) +
            " is not an aggregate family (it has no aggregate value_type); "
            "write it with set_cell");
      }
      BTSIM_RETURN_IF_ERROR(ValidQualifier(
          add->qualifier, [&] { return field(".column_qualifier"); }));
      BTSIM_RETURN_IF_ERROR(ValidCellTimestamp(
          add->timestamp, [&] { return field(".timestamp"); }));
      if (add->input.size() != 8) {
        return InvalidArgument(field(".input") + ": the input is " +
                               std::to_string(add->input.size()) +
                               " bytes; a " + AggregateName(family->aggregate) +
                               " family takes a 64-bit integer (8 bytes, "
                               "big-endian)");
      }
    } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      if (!HasFamily(col->family)) {
        return family_missing(col->family, ".delete_from_column.family_name");
      }
      BTSIM_RETURN_IF_ERROR(ValidQualifier(col->qualifier, [&] {
        return Field(i, ".delete_from_column.column_qualifier");
      }));
      if (col->start < Timestamp{} || col->end < Timestamp{}) {
        return InvalidArgument(Field(i, ".delete_from_column.time_range") +
                               ": timestamps must not be negative");
      }
      if (col->end != Timestamp{} && col->end < col->start) {
        return InvalidArgument(Field(i, ".delete_from_column.time_range") +
                               ": end_timestamp_micros is before "
                               "start_timestamp_micros");
      }
    } else if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
      if (!HasFamily(fam->family)) {
        return family_missing(fam->family, ".delete_from_family.family_name");
      }
    } else {
      BTSIM_CHECK(std::holds_alternative<DeleteFromRow>(m));
    }
  }
  return OkStatus();
}

Status Table::ValidateRules(std::span<const ReadModifyWriteRule> rules) const {
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string field = "rules[" + std::to_string(i) + "]";
    const FamilyEntry* family = FindFamily(rules[i].family);
    if (family == nullptr) {
      return MissingFamily(field + ".family_name", rules[i].family);
    }
    if (family->aggregate != Aggregate::kNone) {
      return InvalidArgument(
          field + ".family_name: column family " +
          QuoteForError(rules[i].family) + " is an aggregate family (" +
          AggregateName(family->aggregate) +
          "); ReadModifyWriteRow cannot write it: use add_to_cell");
    }
    BTSIM_RETURN_IF_ERROR(ValidQualifier(
        rules[i].qualifier, [&] { return field + ".column_qualifier"; }));
  }
  return OkStatus();
}

}  // namespace btsim::cluster
