#include "api/convert.h"

#include <chrono>
#include <memory>
#include <utility>

#include "cluster/limits.h"
#include "cluster/timestamp.h"

namespace btsim::api {

using cluster::Bound;
using cluster::Filter;

grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message = status.message();
  if (message.size() > kMaxStatusMessageBytes) {
    const size_t size = message.size();
    message.resize(kMaxStatusMessageBytes);
    message += "... (message cut; " + std::to_string(size) + " bytes)";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::move(message));
}

std::string ValidUtf8(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) {
      return static_cast<unsigned char>(text[k]);
    };
    const unsigned char b = byte(i);
    // The length of the sequence b starts and the range of its second
    // byte (which excludes overlong forms, surrogates and > U+10FFFF).
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (b < 0x80) {
      n = 1;
    } else if (b >= 0xc2 && b <= 0xdf) {
      n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b == 0xe0) lo = 0xa0;
      if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b == 0xf0) lo = 0x90;
      if (b == 0xf4) hi = 0x8f;
    }
    bool valid = n > 0 && i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k) {
      const unsigned char c = byte(i + k);
      valid = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xbf);
    }
    if (valid) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      ++i;
    }
  }
  return out;
}

namespace {

Result<Filter> Convert(const v2::RowFilter& f, const std::string& field);

Result<std::vector<Filter>> ConvertList(
    const google::protobuf::RepeatedPtrField<v2::RowFilter>& list,
    const std::string& field) {
  std::vector<Filter> out;
  out.reserve(list.size());
  for (int i = 0; i < list.size(); ++i) {
    BTSIM_ASSIGN_OR_RETURN(
        Filter f,
        Convert(list[i], field + ".filters[" + std::to_string(i) + "]"));
    out.push_back(std::move(f));
  }
  return out;
}

Bound QualifierStart(const v2::ColumnRange& r) {
  switch (r.start_qualifier_case()) {
    case v2::ColumnRange::kStartQualifierClosed:
      return Bound::Closed(r.start_qualifier_closed());
    case v2::ColumnRange::kStartQualifierOpen:
      return Bound::Open(r.start_qualifier_open());
    default:
      return Bound::Unbounded();
  }
}

Bound QualifierEnd(const v2::ColumnRange& r) {
  switch (r.end_qualifier_case()) {
    case v2::ColumnRange::kEndQualifierClosed:
      return Bound::Closed(r.end_qualifier_closed());
    case v2::ColumnRange::kEndQualifierOpen:
      return Bound::Open(r.end_qualifier_open());
    default:
      return Bound::Unbounded();
  }
}

Bound ValueStart(const v2::ValueRange& r) {
  switch (r.start_value_case()) {
    case v2::ValueRange::kStartValueClosed:
      return Bound::Closed(r.start_value_closed());
    case v2::ValueRange::kStartValueOpen:
      return Bound::Open(r.start_value_open());
    default:
      return Bound::Unbounded();
  }
}

Bound ValueEnd(const v2::ValueRange& r) {
  switch (r.end_value_case()) {
    case v2::ValueRange::kEndValueClosed:
      return Bound::Closed(r.end_value_closed());
    case v2::ValueRange::kEndValueOpen:
      return Bound::Open(r.end_value_open());
    default:
      return Bound::Unbounded();
  }
}

// Prefixes a leaf filter's error with the path of the filter in the request.
Result<Filter> AtField(Result<Filter> result, const std::string& field) {
  if (result.ok()) return result;
  return Status(result.status().code(),
                field + ": " + result.status().message());
}

Status MustBeTrue(bool value, const std::string& field) {
  if (!value) {
    return InvalidArgument(field + ": must be true when set");
  }
  return OkStatus();
}

Result<Filter> Convert(const v2::RowFilter& f, const std::string& field) {
  switch (f.filter_case()) {
    case v2::RowFilter::kChain: {
      BTSIM_ASSIGN_OR_RETURN(
          auto list, ConvertList(f.chain().filters(), field + ".chain"));
      return Filter::Chain(std::move(list));
    }
    case v2::RowFilter::kInterleave: {
      BTSIM_ASSIGN_OR_RETURN(auto list, ConvertList(f.interleave().filters(),
                                                    field + ".interleave"));
      return Filter::Interleave(std::move(list));
    }
    case v2::RowFilter::kCondition: {
      const auto& c = f.condition();
      Filter predicate = Filter::PassAll();
      if (c.has_predicate_filter()) {
        BTSIM_ASSIGN_OR_RETURN(predicate,
                               Convert(c.predicate_filter(),
                                       field + ".condition.predicate_filter"));
      }
      std::unique_ptr<Filter> on_true, on_false;
      if (c.has_true_filter()) {
        BTSIM_ASSIGN_OR_RETURN(
            Filter t,
            Convert(c.true_filter(), field + ".condition.true_filter"));
        on_true = std::make_unique<Filter>(std::move(t));
      }
      if (c.has_false_filter()) {
        BTSIM_ASSIGN_OR_RETURN(
            Filter t,
            Convert(c.false_filter(), field + ".condition.false_filter"));
        on_false = std::make_unique<Filter>(std::move(t));
      }
      return Filter::Condition(std::move(predicate), std::move(on_true),
                               std::move(on_false));
    }
    case v2::RowFilter::kRowKeyRegexFilter:
      return AtField(Filter::RowKeyRegex(f.row_key_regex_filter()), field);
    case v2::RowFilter::kFamilyNameRegexFilter:
      return AtField(Filter::FamilyNameRegex(f.family_name_regex_filter()),
                     field);
    case v2::RowFilter::kColumnQualifierRegexFilter:
      return AtField(
          Filter::ColumnQualifierRegex(f.column_qualifier_regex_filter()),
          field);
    case v2::RowFilter::kColumnRangeFilter: {
      const auto& r = f.column_range_filter();
      if (r.family_name().empty()) {
        return InvalidArgument(field +
                               ".column_range_filter.family_name: required");
      }
      return Filter::ColumnRange(r.family_name(), QualifierStart(r),
                                 QualifierEnd(r));
    }
    case v2::RowFilter::kTimestampRangeFilter:
      return AtField(
          Filter::TimestampRange(
              cluster::TimestampFromMicros(
                  f.timestamp_range_filter().start_timestamp_micros()),
              cluster::TimestampFromMicros(
                  f.timestamp_range_filter().end_timestamp_micros())),
          field);
    case v2::RowFilter::kValueRegexFilter:
      return AtField(Filter::ValueRegex(f.value_regex_filter()), field);
    case v2::RowFilter::kCellsPerRowOffsetFilter:
      return AtField(Filter::CellsPerRowOffset(f.cells_per_row_offset_filter()),
                     field);
    case v2::RowFilter::kCellsPerRowLimitFilter:
      return AtField(Filter::CellsPerRowLimit(f.cells_per_row_limit_filter()),
                     field);
    case v2::RowFilter::kCellsPerColumnLimitFilter:
      return AtField(
          Filter::CellsPerColumnLimit(f.cells_per_column_limit_filter()),
          field);
    case v2::RowFilter::kStripValueTransformer:
      BTSIM_RETURN_IF_ERROR(MustBeTrue(f.strip_value_transformer(),
                                       field + ".strip_value_transformer"));
      return Filter::StripValue();
    case v2::RowFilter::kRowSampleFilter:
      return AtField(Filter::RowSample(f.row_sample_filter()), field);
    case v2::RowFilter::kValueRangeFilter:
      return Filter::ValueRange(ValueStart(f.value_range_filter()),
                                ValueEnd(f.value_range_filter()));
    case v2::RowFilter::kSink:
      BTSIM_RETURN_IF_ERROR(MustBeTrue(f.sink(), field + ".sink"));
      return Filter::Sink();
    case v2::RowFilter::kPassAllFilter:
      BTSIM_RETURN_IF_ERROR(
          MustBeTrue(f.pass_all_filter(), field + ".pass_all_filter"));
      return Filter::PassAll();
    case v2::RowFilter::kBlockAllFilter:
      BTSIM_RETURN_IF_ERROR(
          MustBeTrue(f.block_all_filter(), field + ".block_all_filter"));
      return Filter::BlockAll();
    case v2::RowFilter::kApplyLabelTransformer:
      return Filter::ApplyLabel(f.apply_label_transformer());
    case v2::RowFilter::kValueBitmaskFilter:
      return Status(StatusCode::kUnimplemented,
                    field + ".value_bitmask_filter: not supported by btsim");
    case v2::RowFilter::FILTER_NOT_SET:
      // An empty filter message selects everything.
      return Filter::PassAll();
  }
  return InvalidArgument(field + ": unknown filter type");
}

}  // namespace

Result<Filter> FilterFromProto(const v2::RowFilter& proto,
                               const std::string& field) {
  BTSIM_ASSIGN_OR_RETURN(Filter f, Convert(proto, field));
  if (Status s = f.Validate(); !s.ok()) {
    return Status(s.code(), field + ": " + s.message());
  }
  return f;
}

Result<cluster::RowSet> RowSetFromProto(const v2::RowSet& proto,
                                        const std::string& field) {
  cluster::RowSet set;
  for (int i = 0; i < proto.row_keys_size(); ++i) {
    if (proto.row_keys(i).empty()) {
      return InvalidArgument(field + ".row_keys[" + std::to_string(i) +
                             "]: row keys must not be empty");
    }
    set.AddKey(proto.row_keys(i));
  }
  for (const v2::RowRange& r : proto.row_ranges()) {
    cluster::Interval interval;
    switch (r.start_key_case()) {
      case v2::RowRange::kStartKeyClosed:
        interval.start = Bound::Closed(r.start_key_closed());
        break;
      case v2::RowRange::kStartKeyOpen:
        interval.start = Bound::Open(r.start_key_open());
        break;
      default:
        break;
    }
    switch (r.end_key_case()) {
      case v2::RowRange::kEndKeyClosed:
        interval.end = Bound::Closed(r.end_key_closed());
        break;
      case v2::RowRange::kEndKeyOpen:
        interval.end = Bound::Open(r.end_key_open());
        break;
      default:
        break;
    }
    // An empty key in a bound means "unbounded" on the wire.
    if (!interval.start.unbounded() && interval.start.value.empty()) {
      interval.start = Bound::Unbounded();
    }
    if (!interval.end.unbounded() && interval.end.value.empty()) {
      interval.end = Bound::Unbounded();
    }
    set.AddRange(std::move(interval));
  }
  return set;
}

Result<std::vector<cluster::Mutation>> MutationsFromProto(
    const google::protobuf::RepeatedPtrField<v2::Mutation>& protos,
    const std::string& field) {
  return MutationsFromProto(protos, [&] { return field; });
}

Result<std::vector<cluster::Mutation>> MutationsFromProto(
    const google::protobuf::RepeatedPtrField<v2::Mutation>& protos,
    const std::function<std::string()>& field_name) {
  if (static_cast<int64_t>(protos.size()) > cluster::kMaxMutationsPerRequest) {
    return InvalidArgument(field_name() + ": " + std::to_string(protos.size()) +
                           " mutations; the limit is 100000 per request");
  }
  std::vector<cluster::Mutation> out;
  out.reserve(protos.size());
  for (int i = 0; i < protos.size(); ++i) {
    const v2::Mutation& m = protos[i];
    switch (m.mutation_case()) {
      case v2::Mutation::kSetCell: {
        const auto& s = m.set_cell();
        auto& set = out.emplace_back(std::in_place_type<cluster::SetCell>);
        auto& cell = std::get<cluster::SetCell>(set);
        cell.family = s.family_name();
        cell.qualifier = s.column_qualifier();
        cell.timestamp = cluster::TimestampFromMicros(s.timestamp_micros());
        cell.value = s.value();
        break;
      }
      case v2::Mutation::kDeleteFromColumn: {
        const auto& d = m.delete_from_column();
        auto& del = std::get<cluster::DeleteFromColumn>(
            out.emplace_back(std::in_place_type<cluster::DeleteFromColumn>));
        del.family = d.family_name();
        del.qualifier = d.column_qualifier();
        del.start = cluster::TimestampFromMicros(
            d.time_range().start_timestamp_micros());
        del.end =
            cluster::TimestampFromMicros(d.time_range().end_timestamp_micros());
        break;
      }
      case v2::Mutation::kDeleteFromFamily:
        std::get<cluster::DeleteFromFamily>(
            out.emplace_back(std::in_place_type<cluster::DeleteFromFamily>))
            .family = m.delete_from_family().family_name();
        break;
      case v2::Mutation::kDeleteFromRow:
        out.emplace_back(std::in_place_type<cluster::DeleteFromRow>);
        break;
      case v2::Mutation::kAddToCell:
      case v2::Mutation::kMergeToCell: {
        auto add =
            AddToCellFromProto(m, field_name() + "[" + std::to_string(i) + "]");
        if (!add.ok()) return add.status();
        out.emplace_back(std::move(add).value());
        break;
      }
      case v2::Mutation::MUTATION_NOT_SET:
        if (!m.GetReflection()->GetUnknownFields(m).empty()) {
          return Status(StatusCode::kUnimplemented,
                        field_name() + "[" + std::to_string(i) +
                            "]: this mutation type is not supported by btsim");
        }
        return InvalidArgument(field_name() + "[" + std::to_string(i) +
                               "]: no mutation set");
    }
  }
  return out;
}

Result<std::vector<cluster::ReadModifyWriteRule>> RulesFromProto(
    const google::protobuf::RepeatedPtrField<v2::ReadModifyWriteRule>& protos,
    const std::string& field) {
  std::vector<cluster::ReadModifyWriteRule> out;
  out.reserve(protos.size());
  for (int i = 0; i < protos.size(); ++i) {
    const auto& p = protos[i];
    cluster::ReadModifyWriteRule r;
    r.family = p.family_name();
    r.qualifier = p.column_qualifier();
    switch (p.rule_case()) {
      case v2::ReadModifyWriteRule::kAppendValue:
        r.kind = cluster::ReadModifyWriteRule::Kind::kAppend;
        r.append_value = p.append_value();
        break;
      case v2::ReadModifyWriteRule::kIncrementAmount:
        r.kind = cluster::ReadModifyWriteRule::Kind::kIncrement;
        r.increment_amount = p.increment_amount();
        break;
      case v2::ReadModifyWriteRule::RULE_NOT_SET:
        return InvalidArgument(field + "[" + std::to_string(i) +
                               "]: set append_value or increment_amount");
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

Result<cluster::GcRule> GcRuleAt(const admin::GcRule& proto,
                                 const std::string& field, int depth) {
  if (depth > kMaxGcRuleDepth) {
    return InvalidArgument(field + ": GC rules nest at most " +
                           std::to_string(kMaxGcRuleDepth) + " levels deep");
  }
  cluster::GcRule rule;
  switch (proto.rule_case()) {
    case admin::GcRule::kMaxNumVersions:
      rule = cluster::GcRule::MaxVersions(proto.max_num_versions());
      break;
    case admin::GcRule::kMaxAge: {
      const auto& d = proto.max_age();
      // google.protobuf.Duration's valid range is +-10,000 years.
      constexpr int64_t kMaxDurationSeconds = 315'576'000'000;
      if (d.seconds() < 0 || d.nanos() < 0 || d.nanos() > 999'999'999 ||
          d.seconds() > kMaxDurationSeconds) {
        return InvalidArgument(
            field +
            ".max_age: must be a valid, non-negative google.protobuf.Duration "
            "(0 <= nanos < 1e9, seconds <= 315576000000)");
      }
      rule = cluster::GcRule::MaxAge(
          std::chrono::duration_cast<std::chrono::microseconds>(
              std::chrono::seconds(d.seconds()) +
              std::chrono::nanoseconds(d.nanos())));
      break;
    }
    case admin::GcRule::kIntersection:
    case admin::GcRule::kUnion: {
      const bool inter = proto.rule_case() == admin::GcRule::kIntersection;
      const auto& rules =
          inter ? proto.intersection().rules() : proto.union_().rules();
      std::vector<cluster::GcRule> subs;
      for (int i = 0; i < rules.size(); ++i) {
        BTSIM_ASSIGN_OR_RETURN(
            cluster::GcRule sub,
            GcRuleAt(rules[i],
                     field + (inter ? ".intersection" : ".union") + ".rules[" +
                         std::to_string(i) + "]",
                     depth + 1));
        subs.push_back(std::move(sub));
      }
      rule = inter ? cluster::GcRule::Intersection(std::move(subs))
                   : cluster::GcRule::Union(std::move(subs));
      break;
    }
    case admin::GcRule::RULE_NOT_SET:
      break;
  }
  BTSIM_RETURN_IF_ERROR(rule.Validate(field));
  return rule;
}

}  // namespace

Result<cluster::GcRule> GcRuleFromProto(const admin::GcRule& proto,
                                        const std::string& field) {
  return GcRuleAt(proto, field, 1);
}

void GcRuleToProto(const cluster::GcRule& rule, admin::GcRule* proto) {
  using Kind = cluster::GcRule::Kind;
  switch (rule.kind) {
    case Kind::kNone:
      break;
    case Kind::kMaxVersions:
      proto->set_max_num_versions(static_cast<int32_t>(rule.max_versions));
      break;
    case Kind::kMaxAge:
      proto->mutable_max_age()->set_seconds(rule.max_age.count() / 1000000);
      proto->mutable_max_age()->set_nanos(
          static_cast<int32_t>(rule.max_age.count() % 1000000) * 1000);
      break;
    case Kind::kIntersection:
      for (const auto& r : rule.rules) {
        GcRuleToProto(r, proto->mutable_intersection()->add_rules());
      }
      if (rule.rules.empty()) proto->mutable_intersection();
      break;
    case Kind::kUnion:
      for (const auto& r : rule.rules) {
        GcRuleToProto(r, proto->mutable_union_()->add_rules());
      }
      if (rule.rules.empty()) proto->mutable_union_();
      break;
  }
}

}  // namespace btsim::api
