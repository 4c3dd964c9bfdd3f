// Conversions of aggregate families and their writes: ColumnFamily's
// value_type, Mutation's add_to_cell and merge_to_cell, and Idempotency.
// The rest of api/convert.h is in convert.cc.
#include <string>

#include "api/convert.h"
#include "cluster/aggregate.h"
#include "cluster/timestamp.h"

namespace btsim::api {

namespace {

// The Int64 type aggregates take: big-endian bytes (or the encoding left
// unset).
Status ValidInt64(const admin::Type& type, const std::string& field) {
  if (type.kind_case() != admin::Type::kInt64Type) {
    if (type.kind_case() == admin::Type::KIND_NOT_SET &&
        type.GetReflection()->GetUnknownFields(type).empty()) {
      return OkStatus();  // unset: the input type is Int64
    }
    return Unimplemented(field +
                         ": btsim's aggregates take int64_type inputs only");
  }
  if (type.int64_type().encoding().encoding_case() ==
      admin::Type::Int64::Encoding::kOrderedCodeBytes) {
    return Unimplemented(field +
                         ".int64_type.encoding.ordered_code_bytes: btsim's "
                         "aggregates take big_endian_bytes only");
  }
  return OkStatus();
}

}  // namespace

Result<cluster::Aggregate> AggregateFromProto(const admin::Type& type,
                                              const std::string& field) {
  switch (type.kind_case()) {
    case admin::Type::kAggregateType: {
      const admin::Type::Aggregate& a = type.aggregate_type();
      BTSIM_RETURN_IF_ERROR(
          ValidInt64(a.input_type(), field + ".aggregate_type.input_type"));
      switch (a.aggregator_case()) {
        case admin::Type::Aggregate::kSum:
          return cluster::Aggregate::kSum;
        case admin::Type::Aggregate::kMin:
          return cluster::Aggregate::kMin;
        case admin::Type::Aggregate::kMax:
          return cluster::Aggregate::kMax;
        case admin::Type::Aggregate::kHllppUniqueCount:
          return Unimplemented(
              field +
              ".aggregate_type.hllpp_unique_count: HyperLogLog++ aggregates "
              "are not supported by btsim (sum, min and max are)");
        case admin::Type::Aggregate::AGGREGATOR_NOT_SET:
          if (!a.GetReflection()->GetUnknownFields(a).empty()) {
            return Unimplemented(field +
                                 ".aggregate_type: this aggregator is not "
                                 "supported by btsim (sum, min and max are)");
          }
          return InvalidArgument(field +
                                 ".aggregate_type: one of sum, min or max is "
                                 "required");
      }
      break;
    }
    case admin::Type::kBytesType:
    case admin::Type::kInt64Type:
      return Unimplemented(field +
                           ": btsim supports aggregate value types only "
                           "(aggregate_type with sum, min or max)");
    case admin::Type::KIND_NOT_SET:
      if (!type.GetReflection()->GetUnknownFields(type).empty()) {
        return Unimplemented(field +
                             ": btsim supports aggregate value types only "
                             "(aggregate_type with sum, min or max)");
      }
      return cluster::Aggregate::kNone;
  }
  return cluster::Aggregate::kNone;
}

void AggregateToProto(cluster::Aggregate aggregate, admin::Type* type) {
  // state_type (output only) is left unset, as cbtemulator leaves it: for
  // Sum, Min and Max it equals input_type.
  if (aggregate == cluster::Aggregate::kNone) return;
  admin::Type::Aggregate* a = type->mutable_aggregate_type();
  a->mutable_input_type()
      ->mutable_int64_type()
      ->mutable_encoding()
      ->mutable_big_endian_bytes();
  switch (aggregate) {
    case cluster::Aggregate::kSum:
      a->mutable_sum();
      break;
    case cluster::Aggregate::kMin:
      a->mutable_min();
      break;
    case cluster::Aggregate::kMax:
      a->mutable_max();
      break;
    case cluster::Aggregate::kNone:
      break;
  }
}

Result<cluster::AddToCell> AddToCellFromProto(const v2::Mutation& m,
                                              const std::string& field) {
  const bool merge = m.mutation_case() == v2::Mutation::kMergeToCell;
  const std::string at = field + (merge ? ".merge_to_cell" : ".add_to_cell");
  // AddToCell and MergeToCell have the same fields.
  const auto& family =
      merge ? m.merge_to_cell().family_name() : m.add_to_cell().family_name();
  const v2::Value& qualifier = merge ? m.merge_to_cell().column_qualifier()
                                     : m.add_to_cell().column_qualifier();
  const v2::Value& timestamp =
      merge ? m.merge_to_cell().timestamp() : m.add_to_cell().timestamp();
  const v2::Value& input =
      merge ? m.merge_to_cell().input() : m.add_to_cell().input();
  cluster::AddToCell out;
  out.merge = merge;
  out.family = family;
  if (qualifier.kind_case() != v2::Value::kRawValue) {
    return InvalidArgument(at + ".column_qualifier: must hold a raw_value");
  }
  out.qualifier = qualifier.raw_value();
  if (timestamp.kind_case() != v2::Value::kRawTimestampMicros) {
    return InvalidArgument(at + ".timestamp: must hold a raw_timestamp_micros");
  }
  out.timestamp =
      cluster::TimestampFromMicros(timestamp.raw_timestamp_micros());
  switch (input.kind_case()) {
    case v2::Value::kIntValue:
      out.input = cluster::EncodeInt64(input.int_value());
      break;
    case v2::Value::kRawValue:
      if (input.raw_value().size() != 8) {
        return InvalidArgument(at + ".input.raw_value: " +
                               std::to_string(input.raw_value().size()) +
                               " bytes; a 64-bit integer is 8 bytes "
                               "(big-endian)");
      }
      out.input = input.raw_value();
      break;
    default:
      return InvalidArgument(
          at +
          ".input: must hold an int_value (or 8 big-endian bytes as a "
          "raw_value)");
  }
  return out;
}

cluster::Idempotency IdempotencyFromProto(const v2::Idempotency& proto) {
  cluster::Idempotency out;
  out.token = proto.token();
  if (proto.has_start_time()) {
    out.start_time =
        cluster::TimestampFromMicros(proto.start_time().seconds() * 1'000'000 +
                                     proto.start_time().nanos() / 1000);
  }
  return out;
}

}  // namespace btsim::api
