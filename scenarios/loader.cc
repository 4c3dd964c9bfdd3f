#include "scenarios/loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "appprofile/app_profile.h"
#include "cluster/cluster.h"
#include "scenarios/offered_load.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;

constexpr int kMaxClientCount = 1000;

// One step of a field path: a name and an optional index.
struct PathPart {
  std::string name;
  int index = -1;
};

Result<std::vector<PathPart>> SplitPath(std::string_view path) {
  std::vector<PathPart> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('.', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(pos, end - pos);
    PathPart p;
    if (size_t open = part.find('['); open != std::string_view::npos) {
      if (part.back() != ']') {
        return InvalidArgument("'" + std::string(path) + "': bad index");
      }
      std::string_view digits = part.substr(open + 1, part.size() - open - 2);
      int index = -1;
      auto [ptr, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec != std::errc() || ptr != digits.data() + digits.size() ||
          index < 0) {
        return InvalidArgument("'" + std::string(path) + "': bad index");
      }
      p.index = index;
      part = part.substr(0, open);
    }
    if (part.empty()) {
      return InvalidArgument("'" + std::string(path) + "': empty field name");
    }
    p.name = std::string(part);
    parts.push_back(std::move(p));
    pos = end + 1;
  }
  return parts;
}

// The line (1-based) of the deepest field of `path` that the file has;
// 0 when not even the first one is there.
int LineOf(const TextFormat::ParseInfoTree* tree, const Message& root,
           std::string_view path) {
  auto parts = SplitPath(path);
  if (!parts.ok()) return 0;
  const google::protobuf::Descriptor* descriptor = root.GetDescriptor();
  int line = 0;
  for (const PathPart& part : *parts) {
    if (tree == nullptr || descriptor == nullptr) break;
    const FieldDescriptor* field = descriptor->FindFieldByName(part.name);
    if (field == nullptr) break;
    const int index = field->is_repeated() ? std::max(part.index, 0) : -1;
    auto location = tree->GetLocation(field, index);
    if (location.line < 0) break;
    line = location.line + 1;
    if (field->type() != FieldDescriptor::TYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, index);
    descriptor = field->message_type();
  }
  return line;
}

// ---- --set ----

Result<sim::Duration> ParseHumanDuration(std::string_view text) {
  // "1.5s", "250ms", "2m", "1h", "10us", "0".
  struct Unit {
    std::string_view suffix;
    double nanos;
  };
  static constexpr Unit kUnits[] = {{"ns", 1},  {"us", 1e3}, {"ms", 1e6},
                                    {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
  for (const Unit& unit : kUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      std::string_view number =
          text.substr(0, text.size() - unit.suffix.size());
      // "ms" also ends with "s": make sure the number is all number.
      double value = 0;
      auto [ptr, ec] =
          std::from_chars(number.data(), number.data() + number.size(), value);
      if (ec != std::errc() || ptr != number.data() + number.size()) continue;
      if (!(value >= 0) || value * unit.nanos > 24 * 3600e9) break;
      return sim::Duration(
          static_cast<int64_t>(std::llround(value * unit.nanos)));
    }
  }
  if (text == "0") return sim::Duration(0);
  return InvalidArgument("'" + std::string(text) +
                         "' is not a duration such as 250ms, 1.5s, 2m or 1h "
                         "(at most 24h)");
}

Status SetScalar(Message* message, const FieldDescriptor* field,
                 const std::string& value, const std::string& path) {
  const Reflection* r = message->GetReflection();
  auto bad = [&](const std::string& what) {
    return InvalidArgument(path + ": '" + value + "' is not " + what);
  };
  auto parse_int = [&](auto& out) -> bool {
    auto [ptr, ec] =
        std::from_chars(value.data(), value.data() + value.size(), out);
    return ec == std::errc() && ptr == value.data() + value.size();
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!parse_int(v)) return bad("an int32");
      r->SetInt32(message, field, v);
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!parse_int(v)) return bad("an int64");
      r->SetInt64(message, field, v);
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!parse_int(v)) return bad("a uint32");
      r->SetUInt32(message, field, v);
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!parse_int(v)) return bad("a uint64");
      r->SetUInt64(message, field, v);
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      auto [ptr, ec] =
          std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() ||
          !std::isfinite(v)) {
        return bad("a number");
      }
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        r->SetDouble(message, field, v);
      } else {
        r->SetFloat(message, field, static_cast<float>(v));
      }
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      if (value == "true") {
        r->SetBool(message, field, true);
      } else if (value == "false") {
        r->SetBool(message, field, false);
      } else {
        return bad("true or false");
      }
      return OkStatus();
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* v = field->enum_type()->FindValueByName(value);
      if (v == nullptr) return bad("a value of " + field->enum_type()->name());
      r->SetEnum(message, field, v);
      return OkStatus();
    }
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(message, field, value);
      return OkStatus();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return InvalidArgument(path + ": not a scalar field");
}

Status ApplyOverride(v1::Scenario* scenario, const Override& override) {
  const std::string& path = override.path;
  BTSIM_ASSIGN_OR_RETURN(std::vector<PathPart> parts, SplitPath(path));
  Message* message = scenario;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PathPart& part = parts[i];
    const FieldDescriptor* field =
        message->GetDescriptor()->FindFieldByName(part.name);
    if (field == nullptr) {
      return InvalidArgument("--set " + path + ": " +
                             message->GetDescriptor()->name() +
                             " has no field '" + part.name + "'");
    }
    const Reflection* r = message->GetReflection();
    const bool last = i + 1 == parts.size();
    if (field->is_repeated()) {
      if (part.index < 0) {
        return InvalidArgument("--set " + path + ": '" + part.name +
                               "' is repeated; give an index, e.g. " +
                               part.name + "[0]");
      }
      if (part.index >= r->FieldSize(*message, field)) {
        return InvalidArgument(
            "--set " + path + ": '" + part.name + "' has only " +
            std::to_string(r->FieldSize(*message, field)) + " entries");
      }
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        return InvalidArgument("--set " + path +
                               ": repeated scalars cannot be set");
      }
      message = r->MutableRepeatedMessage(message, field, part.index);
      if (last) {
        return InvalidArgument("--set " + path + ": not a scalar field");
      }
      continue;
    }
    if (part.index >= 0) {
      return InvalidArgument("--set " + path + ": '" + part.name +
                             "' is not repeated");
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last &&
          field->message_type()->full_name() == "google.protobuf.Duration") {
        auto nanos = ParseHumanDuration(override.value);
        if (!nanos.ok()) {
          return InvalidArgument("--set " + path + ": " +
                                 nanos.status().message());
        }
        auto* d = static_cast<google::protobuf::Duration*>(
            r->MutableMessage(message, field));
        d->set_seconds(nanos->count() / 1'000'000'000);
        d->set_nanos(static_cast<int32_t>(nanos->count() % 1'000'000'000));
        return OkStatus();
      }
      if (last) {
        return InvalidArgument("--set " + path + ": not a scalar field");
      }
      message = r->MutableMessage(message, field);
      continue;
    }
    if (!last) {
      return InvalidArgument("--set " + path + ": '" + part.name +
                             "' is a scalar, it has no fields");
    }
    Status s = SetScalar(message, field, override.value, "--set " + path);
    return s;
  }
  return InvalidArgument("--set " + path + ": empty path");
}

// ---- Validation ----

class Validator {
 public:
  Validator(const v1::Scenario& s, ScenarioUse use) : s_(s), use_(use) {}

  Status Run(const LoadedConfig& instance);
  // The timeline as it plays (after a successful Run).
  std::vector<TimedStep>& timeline() { return timeline_; }

 private:
  Result<sim::Duration> Duration(const google::protobuf::Duration& d,
                                 const std::string& field) {
    return ConfigDuration(d, field);
  }
  Status Retry(const v1::RetryPolicy& r, const std::string& field);
  Status Expectation(const v1::Expectation& e, const std::string& field);
  // Whether table `id` ("": the first table) has a family with aggregate
  // SUM.
  bool HasSumFamily(const std::string& id) const;

  const v1::Scenario& s_;
  const ScenarioUse use_;
  sim::Duration duration_{0};
  std::vector<TimedStep> timeline_;
  // What the scenario defines; its clusters as the timeline goes.
  StepScope scope_;
};

bool Validator::HasSumFamily(const std::string& id) const {
  for (const v1::Table& t : s_.tables()) {
    if (id.empty() || t.id() == id) return AddFamily(t) != nullptr;
  }
  return false;
}

bool ValidClientName(const std::string& name) {
  if (name.empty() || name.size() > 40 || name[0] < 'a' || name[0] > 'z') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

Status Validator::Retry(const v1::RetryPolicy& r, const std::string& field) {
  if (r.max_attempts() < 0 || r.max_attempts() > 100) {
    return InvalidArgument(field + ".max_attempts: must be in 0..100");
  }
  BTSIM_RETURN_IF_ERROR(
      Duration(r.initial_backoff(), field + ".initial_backoff").status());
  BTSIM_RETURN_IF_ERROR(
      Duration(r.max_backoff(), field + ".max_backoff").status());
  BTSIM_RETURN_IF_ERROR(
      Duration(r.attempt_timeout(), field + ".attempt_timeout").status());
  if (r.multiplier() != 0 && !(r.multiplier() >= 1 && r.multiplier() <= 100)) {
    return InvalidArgument(field +
                           ".multiplier: must be in 1..100 (or 0 "
                           "for the default, 2)");
  }
  return OkStatus();
}

Status Validator::Expectation(const v1::Expectation& e,
                              const std::string& field) {
  if (e.metric() == v1::METRIC_UNSPECIFIED) {
    return InvalidArgument(field + ".metric: required");
  }
  if (!e.app_profile().empty() && scope_.profiles.count(e.app_profile()) == 0) {
    return InvalidArgument(field + ".app_profile: unknown app profile '" +
                           e.app_profile() + "'");
  }
  // Served, any other name may be a recorded client's.
  if (!e.client().empty() && e.client() != kRecordedGroup &&
      use_ == ScenarioUse::kRun && scope_.clients.count(e.client()) == 0) {
    // A member of a group ("writer-3") is fine too.
    const size_t dash = e.client().rfind('-');
    if (dash == std::string::npos ||
        scope_.clients.count(e.client().substr(0, dash)) == 0) {
      return InvalidArgument(field + ".client: unknown client '" + e.client() +
                             "'");
    }
  }
  if (!e.cluster().empty() && scope_.clusters_ever.count(e.cluster()) == 0) {
    return InvalidArgument(field + ".cluster: unknown cluster '" + e.cluster() +
                           "'");
  }
  BTSIM_ASSIGN_OR_RETURN(sim::Duration start,
                         Duration(e.window_start(), field + ".window_start"));
  BTSIM_ASSIGN_OR_RETURN(sim::Duration end,
                         Duration(e.window_end(), field + ".window_end"));
  if (e.has_window_end() && end <= start) {
    return InvalidArgument(field + ".window_end: must be after window_start");
  }
  BTSIM_RETURN_IF_ERROR(Duration(e.after(), field + ".after").status());
  if (!(e.percentile() >= 0 && e.percentile() <= 100)) {
    return InvalidArgument(field + ".percentile: must be in (0, 100]");
  }
  switch (e.bound_case()) {
    case v1::Expectation::kAtMost:
      if (!std::isfinite(e.at_most())) {
        return InvalidArgument(field + ".at_most: must be a finite number");
      }
      break;
    case v1::Expectation::kAtLeast:
      if (!std::isfinite(e.at_least())) {
        return InvalidArgument(field + ".at_least: must be a finite number");
      }
      break;
    case v1::Expectation::BOUND_NOT_SET:
      return InvalidArgument(field + ": set at_most or at_least");
  }
  return OkStatus();
}

Status Validator::Run(const LoadedConfig& instance) {
  if (!s_.has_duration()) return InvalidArgument("duration: required");
  BTSIM_ASSIGN_OR_RETURN(duration_, Duration(s_.duration(), "duration"));
  if (duration_ <= sim::Duration(0)) {
    return InvalidArgument("duration: must be positive");
  }
  BTSIM_RETURN_IF_ERROR(Duration(s_.settle().max(), "settle.max").status());

  for (const instance::ClusterConfig& c : instance.config.clusters) {
    scope_.clusters_now.insert(c.id);
    scope_.clusters_ever.insert(c.id);
    scope_.zone_of[c.id] = c.zone;
  }
  scope_.profiles.insert(std::string(appprofile::kDefaultProfileId));
  for (const appprofile::AppProfile& p : instance.profiles) {
    scope_.profiles.insert(p.id);
  }

  // Tables.
  if (s_.tables().empty()) {
    return InvalidArgument("tables: at least one table is required");
  }
  for (int i = 0; i < s_.tables_size(); ++i) {
    const v1::Table& t = s_.tables(i);
    const std::string field = Indexed("tables", i);
    if (Status s = cluster::ValidateTableId(t.id()); !s.ok()) {
      return InvalidArgument(field + ".id: " + s.message());
    }
    if (scope_.families.count(t.id()) != 0) {
      return InvalidArgument(field + ".id: duplicate table '" + t.id() + "'");
    }
    std::set<std::string>& families = scope_.families[t.id()];
    if (t.families().empty()) {
      return InvalidArgument(field +
                             ".families: at least one family is "
                             "required");
    }
    for (int j = 0; j < t.families_size(); ++j) {
      const std::string f = Indexed(field + ".families", j);
      const v1::Family& family = t.families(j);
      BTSIM_RETURN_IF_ERROR(
          cluster::ValidateFamilyName(family.name(), f + ".name"));
      if (!families.insert(family.name()).second) {
        return InvalidArgument(f + ".name: duplicate family '" + family.name() +
                               "'");
      }
      BTSIM_RETURN_IF_ERROR(ValidateGcRule(family.gc_rule(), f + ".gc_rule"));
      BTSIM_RETURN_IF_ERROR(ValidateAggregate(family, j, f));
      if (family.aggregate() != v1::AGGREGATE_UNSPECIFIED) {
        scope_.aggregate_families[t.id()].insert(family.name());
      }
    }
    std::set<std::string> splits;
    for (int j = 0; j < t.initial_splits_size(); ++j) {
      const std::string f = Indexed(field + ".initial_splits", j);
      if (t.initial_splits(j).empty()) {
        return InvalidArgument(f + ": must not be empty");
      }
      if (!splits.insert(t.initial_splits(j)).second) {
        return InvalidArgument(f + ": duplicate split '" + t.initial_splits(j) +
                               "'");
      }
    }
  }

  // Clients.
  if (s_.clients().empty() && use_ == ScenarioUse::kRun) {
    return InvalidArgument(
        "clients: at least one client is required (a scenario without one "
        "is for `btsim serve --scenario`)");
  }
  for (int i = 0; i < s_.clients_size(); ++i) {
    const v1::Client& c = s_.clients(i);
    const std::string field = Indexed("clients", i);
    if (!ValidClientName(c.name())) {
      return InvalidArgument(field + ".name: '" + c.name() +
                             "' is not a valid client name; it must match "
                             "[a-z][-a-z0-9_]* (at most 40 characters)");
    }
    if (c.name() == kRecordedGroup) {
      return InvalidArgument(field + ".name: '" + c.name() +
                             "' is reserved for the calls `btsim serve "
                             "--scenario` records");
    }
    if (!scope_.clients.insert(c.name()).second) {
      return InvalidArgument(field + ".name: duplicate client '" + c.name() +
                             "'");
    }
    if (c.count() < 0 || c.count() > kMaxClientCount) {
      return InvalidArgument(field + ".count: must be in 0..1000");
    }
    if (!c.zone().empty() && !ValidZone(c.zone())) {
      return InvalidArgument(field + ".zone: '" + c.zone() +
                             "' is not a zone name such as us-east1-b");
    }
    if (!c.app_profile().empty() &&
        scope_.profiles.count(c.app_profile()) == 0) {
      return InvalidArgument(field + ".app_profile: unknown app profile '" +
                             c.app_profile() + "'");
    }
    if (!c.table().empty() && scope_.families.count(c.table()) == 0) {
      return InvalidArgument(field + ".table: unknown table '" + c.table() +
                             "'");
    }
    if (!c.has_workload()) {
      return InvalidArgument(field + ".workload: required");
    }
    BTSIM_RETURN_IF_ERROR(ValidateWorkload(c.workload(), field + ".workload"));
    const bool can_add = HasSumFamily(c.table());
    if (can_add) scope_.clients_that_can_add.insert(c.name());
    if (c.workload().mix().add_to_cell() > 0 && !can_add) {
      return InvalidArgument(field +
                             ".workload.mix.add_to_cell: the client's table "
                             "has no family with aggregate: SUM to add to");
    }
    BTSIM_ASSIGN_OR_RETURN(sim::Duration deadline,
                           Duration(c.deadline(), field + ".deadline"));
    if (c.has_deadline() && deadline <= sim::Duration(0)) {
      return InvalidArgument(field + ".deadline: must be positive");
    }
    BTSIM_RETURN_IF_ERROR(Retry(c.retry(), field + ".retry"));
  }

  // Timeline, expanded (`for`, `repeat`), in the order it will play.
  BTSIM_ASSIGN_OR_RETURN(timeline_, ExpandTimeline(s_.timeline(), duration_));
  std::vector<int> order(timeline_.size());
  std::vector<sim::Duration> at(timeline_.size());
  v1::Scenario played = s_;
  played.clear_timeline();
  for (size_t i = 0; i < timeline_.size(); ++i) {
    order[i] = static_cast<int>(i);
    at[i] = timeline_[i].at;
    *played.add_timeline() = timeline_[i].step;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return at[a] < at[b]; });
  for (int i : order) {
    BTSIM_RETURN_IF_ERROR(
        ValidateStep(timeline_[i].step, timeline_[i].field, scope_));
  }
  BTSIM_RETURN_IF_ERROR(CheckOfferedLoad(played, duration_, order, at));

  // Expectations.
  std::set<std::string> names;
  for (int i = 0; i < s_.expectations_size(); ++i) {
    const std::string field = Indexed("expectations", i);
    const v1::Expectation& e = s_.expectations(i);
    if (e.name().empty()) return InvalidArgument(field + ".name: required");
    if (!names.insert(e.name()).second) {
      return InvalidArgument(field + ".name: duplicate expectation '" +
                             e.name() + "'");
    }
    BTSIM_RETURN_IF_ERROR(Expectation(e, field));
  }
  return OkStatus();
}

// "FILE:LINE: message", with the line of the field the message starts with.
Status WithLine(const Status& status, const std::string& path,
                const TextFormat::ParseInfoTree* tree,
                const v1::Scenario& scenario) {
  const std::string& message = status.message();
  const size_t end = message.find_first_of(": ");
  const std::string field = message.substr(0, end);
  return Status(status.code(),
                path + ":" + std::to_string(LineOf(tree, scenario, field)) +
                    ": " + message);
}

}  // namespace

Result<Override> ParseOverride(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgument("--set '" + std::string(text) +
                           "': expected path=value, e.g. "
                           "clients[0].workload.ops_per_second=500");
  }
  return Override{std::string(text.substr(0, eq)),
                  std::string(text.substr(eq + 1))};
}

Result<LoadedScenario> ParseScenario(std::string_view text,
                                     const std::string& path,
                                     std::span<const Override> overrides,
                                     ScenarioUse use) {
  LoadedScenario out;
  out.path = path;
  TextFormat::ParseInfoTree tree;
  BTSIM_RETURN_IF_ERROR(ParseTextProto(text, path, &out.proto, &tree));
  for (const Override& o : overrides) {
    if (Status s = ApplyOverride(&out.proto, o); !s.ok()) {
      return InvalidArgument(path + ":0: " + s.message());
    }
  }
  if (!out.proto.has_instance()) {
    return InvalidArgument(path + ":0: instance: required");
  }
  auto instance = ConvertInstanceConfig(out.proto.instance());
  if (!instance.ok()) {
    return WithLine(InvalidArgument("instance." + instance.status().message()),
                    path, &tree, out.proto);
  }
  out.instance = std::move(*instance);
  Validator validator(out.proto, use);
  if (Status s = validator.Run(out.instance); !s.ok()) {
    return WithLine(s, path, &tree, out.proto);
  }
  out.proto.clear_timeline();
  for (TimedStep& t : validator.timeline()) {
    *out.proto.add_timeline() = std::move(t.step);
  }
  out.name = out.proto.name();
  if (out.name.empty()) {
    std::string base = path.substr(path.find_last_of('/') + 1);
    out.name = base.substr(0, base.find('.'));
  }
  return out;
}

Result<LoadedScenario> LoadScenario(const std::string& path,
                                    std::span<const Override> overrides,
                                    ScenarioUse use) {
  BTSIM_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseScenario(text, path, overrides, use);
}

}  // namespace btsim::scenarios
