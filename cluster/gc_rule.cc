#include "cluster/gc_rule.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

namespace btsim::cluster {

GcRule GcRule::MaxVersions(int64_t n) {
  GcRule r;
  r.kind = Kind::kMaxVersions;
  r.max_versions = n;
  return r;
}

GcRule GcRule::MaxAge(std::chrono::microseconds age) {
  GcRule r;
  r.kind = Kind::kMaxAge;
  r.max_age = age;
  return r;
}

GcRule GcRule::Intersection(std::vector<GcRule> rules) {
  GcRule r;
  r.kind = Kind::kIntersection;
  r.rules = std::move(rules);
  return r;
}

GcRule GcRule::Union(std::vector<GcRule> rules) {
  GcRule r;
  r.kind = Kind::kUnion;
  r.rules = std::move(rules);
  return r;
}

Status GcRule::Validate(const std::string& field) const {
  switch (kind) {
    case Kind::kNone:
      return OkStatus();
    case Kind::kMaxVersions:
      if (max_versions < 1) {
        return InvalidArgument(field +
                               ".max_num_versions must be at least 1, got " +
                               std::to_string(max_versions));
      }
      return OkStatus();
    case Kind::kMaxAge:
      if (max_age < std::chrono::milliseconds(1)) {
        return InvalidArgument(field +
                               ".max_age must be at least 1 millisecond");
      }
      return OkStatus();
    case Kind::kIntersection:
    case Kind::kUnion:
      for (size_t i = 0; i < rules.size(); ++i) {
        const char* name =
            kind == Kind::kIntersection ? ".intersection" : ".union";
        BTSIM_RETURN_IF_ERROR(rules[i].Validate(field + name + ".rules[" +
                                                std::to_string(i) + "]"));
      }
      return OkStatus();
  }
  return OkStatus();
}

bool GcRule::Deletes(int64_t index, Timestamp timestamp, Timestamp now) const {
  switch (kind) {
    case Kind::kNone:
      return false;
    case Kind::kMaxVersions:
      return index >= max_versions;
    case Kind::kMaxAge:
      return timestamp < now - max_age;
    case Kind::kIntersection:
      if (rules.empty()) return false;
      for (const GcRule& r : rules) {
        if (!r.Deletes(index, timestamp, now)) return false;
      }
      return true;
    case Kind::kUnion:
      for (const GcRule& r : rules) {
        if (r.Deletes(index, timestamp, now)) return true;
      }
      return false;
  }
  return false;
}

std::optional<std::chrono::microseconds> GcRule::NewestCellAge() const {
  switch (kind) {
    case Kind::kMaxAge:
      return max_age;
    case Kind::kUnion: {
      std::optional<std::chrono::microseconds> out;
      for (const GcRule& r : rules) {
        const auto age = r.NewestCellAge();
        if (age && (!out || *age < *out)) out = age;
      }
      return out;
    }
    case Kind::kIntersection: {
      if (rules.empty()) return std::nullopt;
      std::optional<std::chrono::microseconds> out;
      for (const GcRule& r : rules) {
        const auto age = r.NewestCellAge();
        if (!age) return std::nullopt;
        if (!out || *age > *out) out = age;
      }
      return out;
    }
    case Kind::kNone:
    case Kind::kMaxVersions:
      return std::nullopt;
  }
  return std::nullopt;
}

bool GcRule::LimitsAge() const {
  if (kind == Kind::kMaxAge) return true;
  return std::any_of(rules.begin(), rules.end(),
                     [](const GcRule& r) { return r.LimitsAge(); });
}

namespace {

std::string FormatAge(std::chrono::microseconds age) {
  struct Unit {
    std::chrono::microseconds length;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{std::chrono::days(1), "d"},
                                    {std::chrono::hours(1), "h"},
                                    {std::chrono::minutes(1), "m"},
                                    {std::chrono::seconds(1), "s"},
                                    {std::chrono::milliseconds(1), "ms"}};
  for (const Unit& u : kUnits) {
    if (age % u.length == std::chrono::microseconds::zero()) {
      return std::to_string(age / u.length) + u.suffix;
    }
  }
  return std::to_string(age.count()) + "us";
}

}  // namespace

std::string GcRule::ToString() const {
  switch (kind) {
    case Kind::kNone:
      return "<never>";
    case Kind::kMaxVersions:
      return "versions() > " + std::to_string(max_versions);
    case Kind::kMaxAge:
      return "age() > " + FormatAge(max_age);
    case Kind::kIntersection:
    case Kind::kUnion: {
      std::string out = "(";
      for (size_t i = 0; i < rules.size(); ++i) {
        if (i > 0) out += kind == Kind::kUnion ? " || " : " && ";
        out += rules[i].ToString();
      }
      return out + ")";
    }
  }
  return "";
}

}  // namespace btsim::cluster
