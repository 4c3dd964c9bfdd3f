#include "scenarios/scenario_fields.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "scenarios/instance_config.h"
#include "scenarios/key_pattern.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

constexpr int kMaxGcRuleDepth = 10;

Status ValidateGcRule(const v1::GcRule& rule, const std::string& field,
                      int depth) {
  if (depth > kMaxGcRuleDepth) {
    return InvalidArgument(field + ": nested too deeply");
  }
  switch (rule.rule_case()) {
    case v1::GcRule::kMaxNumVersions:
      if (rule.max_num_versions() < 1) {
        return InvalidArgument(field + ".max_num_versions: must be at least 1");
      }
      return OkStatus();
    case v1::GcRule::kMaxAge: {
      BTSIM_ASSIGN_OR_RETURN(
          sim::Duration age,
          ConfigDuration(rule.max_age(), field + ".max_age"));
      if (age <= sim::Duration(0)) {
        return InvalidArgument(field + ".max_age: must be positive");
      }
      return OkStatus();
    }
    case v1::GcRule::kIntersection:
    case v1::GcRule::kUnion: {
      const bool is_union = rule.rule_case() == v1::GcRule::kUnion;
      const auto& list = is_union ? rule.union_() : rule.intersection();
      const std::string f = field + (is_union ? ".union" : ".intersection");
      if (list.rules().empty()) {
        return InvalidArgument(f + ".rules: at least one rule is required");
      }
      for (int i = 0; i < list.rules_size(); ++i) {
        BTSIM_RETURN_IF_ERROR(
            ValidateGcRule(list.rules(i), Indexed(f + ".rules", i), depth + 1));
      }
      return OkStatus();
    }
    case v1::GcRule::RULE_NOT_SET:
      if (depth > 0) {
        return InvalidArgument(field +
                               ": set max_num_versions, max_age, "
                               "intersection or union");
      }
      return OkStatus();
  }
  return OkStatus();
}

}  // namespace

std::string Indexed(const std::string& field, int i) {
  return field + "[" + std::to_string(i) + "]";
}

bool ValidZone(const std::string& zone) {
  if (zone.empty() || zone.size() > 63 || zone.find('-') == std::string::npos) {
    return false;
  }
  return std::all_of(zone.begin(), zone.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

Status ValidateGcRule(const v1::GcRule& rule, const std::string& field) {
  return ValidateGcRule(rule, field, /*depth=*/0);
}

Status ValidateWorkload(const v1::Workload& w, const std::string& field) {
  const v1::OpMix& m = w.mix();
  const uint64_t total = uint64_t{m.read_row()} + m.scan() + m.write() +
                         m.check_and_mutate() + m.read_modify_write() +
                         m.delete_row() + m.delete_family() + m.delete_cells() +
                         m.append() + m.add_to_cell();
  if (total == 0) {
    return InvalidArgument(field +
                           ".mix: at least one operation needs a "
                           "non-zero weight");
  }
  if (total > 1'000'000'000) {
    return InvalidArgument(field + ".mix: the weights add up to too much");
  }
  BTSIM_RETURN_IF_ERROR(
      KeyGenerator::Create(w.keys(), field + ".keys").status());
  switch (w.rate_case()) {
    case v1::Workload::kOpsPerSecond:
      if (!(w.ops_per_second() > 0 && w.ops_per_second() <= 1e6)) {
        return InvalidArgument(field +
                               ".ops_per_second: must be in "
                               "(0, 1000000]");
      }
      break;
    case v1::Workload::kInFlight:
      if (w.in_flight() < 1 || w.in_flight() > 10'000) {
        return InvalidArgument(field + ".in_flight: must be in 1..10000");
      }
      break;
    case v1::Workload::RATE_NOT_SET:
      return InvalidArgument(field +
                             ": set ops_per_second (open loop) or "
                             "in_flight (closed loop)");
  }
  if (w.has_value_bytes()) {
    const auto& v = w.value_bytes();
    if (v.min() < 1) {
      return InvalidArgument(field + ".value_bytes.min: must be at least 1");
    }
    if (v.max() < v.min() || v.max() > 1'048'576) {
      return InvalidArgument(field +
                             ".value_bytes.max: must be in "
                             "min..1048576");
    }
  }
  if (w.scan_rows() < 0 || w.scan_rows() > 10'000) {
    return InvalidArgument(field + ".scan_rows: must be in 0..10000");
  }
  for (const auto& [name, d] :
       {std::pair<const char*, const google::protobuf::Duration*>{
            "max_backdate", &w.max_backdate()},
        {"delete_range", &w.delete_range()}}) {
    if (d->seconds() < 0 || d->nanos() < 0 || d->nanos() > 999'999'999 ||
        d->seconds() > 86'400 || (d->seconds() == 86'400 && d->nanos() > 0)) {
      return InvalidArgument(field + "." + name +
                             ": must be between 0 and 24 hours");
    }
  }
  return OkStatus();
}

sim::Duration ToDuration(const google::protobuf::Duration& duration) {
  return std::chrono::seconds(duration.seconds()) +
         sim::Duration(duration.nanos());
}

google::protobuf::Duration ToProtoDuration(sim::Duration duration) {
  google::protobuf::Duration out;
  out.set_seconds(duration.count() / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(duration.count() % 1'000'000'000));
  return out;
}

Status ValidateAggregate(const v1::Family& family, int index,
                         const std::string& field) {
  if (!v1::Aggregate_IsValid(family.aggregate())) {
    return InvalidArgument(field + ".aggregate: unknown aggregate " +
                           std::to_string(family.aggregate()));
  }
  if (family.aggregate() == v1::AGGREGATE_UNSPECIFIED) return OkStatus();
  if (index == 0) {
    return InvalidArgument(field +
                           ".aggregate: the first family holds the clients' "
                           "values and cannot be an aggregate");
  }
  if (family.has_gc_rule()) {
    return InvalidArgument(field +
                           ".gc_rule: an aggregate family takes no GC rule");
  }
  return OkStatus();
}

const v1::Family* AddFamily(const v1::Table& table) {
  for (const v1::Family& f : table.families()) {
    if (f.aggregate() == v1::SUM) return &f;
  }
  return nullptr;
}

cluster::Aggregate ToAggregate(v1::Aggregate aggregate) {
  switch (aggregate) {
    case v1::SUM:
      return cluster::Aggregate::kSum;
    case v1::MIN:
      return cluster::Aggregate::kMin;
    case v1::MAX:
      return cluster::Aggregate::kMax;
    default:
      return cluster::Aggregate::kNone;
  }
}

cluster::GcRule ToGcRule(const v1::GcRule& rule) {
  switch (rule.rule_case()) {
    case v1::GcRule::kMaxNumVersions:
      return cluster::GcRule::MaxVersions(rule.max_num_versions());
    case v1::GcRule::kMaxAge:
      return cluster::GcRule::MaxAge(
          std::chrono::duration_cast<std::chrono::microseconds>(
              ToDuration(rule.max_age())));
    case v1::GcRule::kIntersection:
    case v1::GcRule::kUnion: {
      const bool is_union = rule.rule_case() == v1::GcRule::kUnion;
      std::vector<cluster::GcRule> rules;
      for (const v1::GcRule& r :
           (is_union ? rule.union_() : rule.intersection()).rules()) {
        rules.push_back(ToGcRule(r));
      }
      return is_union ? cluster::GcRule::Union(std::move(rules))
                      : cluster::GcRule::Intersection(std::move(rules));
    }
    case v1::GcRule::RULE_NOT_SET:
      break;
  }
  return cluster::GcRule::None();
}

v1::GcRule FromGcRule(const cluster::GcRule& rule) {
  v1::GcRule out;
  switch (rule.kind) {
    case cluster::GcRule::Kind::kNone:
      break;
    case cluster::GcRule::Kind::kMaxVersions:
      out.set_max_num_versions(static_cast<int32_t>(rule.max_versions));
      break;
    case cluster::GcRule::Kind::kMaxAge:
      *out.mutable_max_age() = ToProtoDuration(rule.max_age);
      break;
    case cluster::GcRule::Kind::kIntersection:
    case cluster::GcRule::Kind::kUnion: {
      auto* list = rule.kind == cluster::GcRule::Kind::kUnion
                       ? out.mutable_union_()
                       : out.mutable_intersection();
      for (const cluster::GcRule& r : rule.rules) {
        *list->add_rules() = FromGcRule(r);
      }
      break;
    }
  }
  return out;
}

}  // namespace btsim::scenarios
