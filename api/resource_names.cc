#include "api/resource_names.h"

#include <vector>

#include "appprofile/app_profile.h"
#include "cluster/cluster.h"
#include "replication/replicas.h"

namespace btsim::api {
namespace {

constexpr size_t kMaxProjectId = 128;
constexpr size_t kMaxInstanceId = 33;
constexpr size_t kMaxZone = 63;

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t slash = s.find('/', start);
    out.push_back(s.substr(start, slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool Alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}
bool LowerOrDigit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool ValidProjectId(std::string_view id) {
  if (id.empty() || id.size() > kMaxProjectId || !Alnum(id[0])) return false;
  for (char c : id) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  }
  return true;
}

bool ValidInstanceId(std::string_view id) {
  if (id.empty() || id.size() > kMaxInstanceId ||
      !(Alnum(id[0]) || id[0] == '_')) {
    return false;
  }
  for (char c : id) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool ValidZone(std::string_view zone) {
  if (zone.empty() || zone.size() > kMaxZone) return false;
  for (char c : zone) {
    if (!LowerOrDigit(c) && c != '-') return false;
  }
  return true;
}

Status BadShape(std::string_view field, std::string_view name,
                std::string_view shape) {
  return InvalidArgument(std::string(field) + ": " + QuoteForError(name) +
                         " is not a valid name; expected " +
                         std::string(shape));
}

Status BadId(std::string_view field, std::string_view kind, std::string_view id,
             std::string_view rule) {
  return InvalidArgument(std::string(field) + ": " + QuoteForError(id) +
                         " is not a valid " + std::string(kind) +
                         " id; it must be " + std::string(rule));
}

constexpr std::string_view kProjectRule =
    "1 to 128 of [-_.:a-zA-Z0-9], starting with a letter or digit";
constexpr std::string_view kInstanceRule =
    "1 to 33 of [-_.a-zA-Z0-9], starting with a letter, digit or '_'";

// Checks "projects/P/instances/I" in parts[0..3].
Status CheckInstanceParts(const std::vector<std::string_view>& parts,
                          std::string_view field) {
  if (!ValidProjectId(parts[1])) {
    return BadId(field, "project", parts[1], kProjectRule);
  }
  if (parts[3] != kAllInstances && !ValidInstanceId(parts[3])) {
    return BadId(field, "instance", parts[3], kInstanceRule);
  }
  return OkStatus();
}

Result<ChildName> ParseChildName(std::string_view name, std::string_view field,
                                 std::string_view collection,
                                 std::string_view placeholder) {
  const auto parts = Split(name);
  if (parts.size() != 6 || parts[0] != "projects" || parts[2] != "instances" ||
      parts[4] != collection) {
    return BadShape(field, name,
                    "projects/{project}/instances/{instance}/" +
                        std::string(collection) + "/" +
                        std::string(placeholder));
  }
  BTSIM_RETURN_IF_ERROR(CheckInstanceParts(parts, field));
  const size_t cut = name.rfind("/" + std::string(collection) + "/");
  return ChildName{std::string(name.substr(0, cut)), std::string(parts[5])};
}

}  // namespace

Result<std::string> ParseProjectName(std::string_view name,
                                     std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 2 || parts[0] != "projects") {
    return BadShape(field, name, "projects/{project}");
  }
  if (!ValidProjectId(parts[1])) {
    return BadId(field, "project", parts[1], kProjectRule);
  }
  return std::string(parts[1]);
}

Result<std::string> ParseInstanceNameOrAll(std::string_view name,
                                           std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 4 || parts[0] != "projects" || parts[2] != "instances") {
    return BadShape(field, name, "projects/{project}/instances/{instance}");
  }
  BTSIM_RETURN_IF_ERROR(CheckInstanceParts(parts, field));
  return std::string(name);
}

Result<std::string> ParseInstanceName(std::string_view name,
                                      std::string_view field) {
  BTSIM_ASSIGN_OR_RETURN(std::string parsed,
                         ParseInstanceNameOrAll(name, field));
  if (LastSegment(parsed) == kAllInstances) {
    return InvalidArgument(std::string(field) +
                           ": instance '-' (every instance) is only allowed "
                           "when listing");
  }
  return parsed;
}

Result<TableName> ParseTableName(std::string_view name,
                                 std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 6 || parts[0] != "projects" || parts[2] != "instances" ||
      parts[4] != "tables") {
    return BadShape(field, name,
                    "projects/{project}/instances/{instance}/tables/{table}");
  }
  BTSIM_RETURN_IF_ERROR(CheckInstanceParts(parts, field));
  if (parts[3] == kAllInstances) {
    return InvalidArgument(std::string(field) +
                           ": instance '-' (every instance) is only allowed "
                           "when listing");
  }
  BTSIM_RETURN_IF_ERROR(cluster::ValidateTableId(parts[5], field));
  const size_t cut = name.rfind("/tables/");
  return TableName{std::string(name.substr(0, cut)), std::string(parts[5])};
}

Result<ChildName> ParseClusterName(std::string_view name,
                                   std::string_view field) {
  BTSIM_ASSIGN_OR_RETURN(ChildName child,
                         ParseChildName(name, field, "clusters", "{cluster}"));
  if (!replication::IsValidClusterId(child.id)) {
    return BadId(field, "cluster", child.id,
                 "[a-z][-a-z0-9]*, at most 30 characters");
  }
  return child;
}

Result<ChildName> ParseClusterNameOrAll(std::string_view name,
                                        std::string_view field) {
  BTSIM_ASSIGN_OR_RETURN(ChildName child,
                         ParseChildName(name, field, "clusters", "{cluster}"));
  if (child.id == kAllClusters) return child;
  return ParseClusterName(name, field);
}

Result<BackupName> ParseBackupName(std::string_view name,
                                   std::string_view field) {
  const size_t cut = name.rfind("/backups/");
  if (cut == std::string_view::npos) {
    return BadShape(field, name,
                    "projects/{project}/instances/{instance}/clusters/"
                    "{cluster}/backups/{backup}");
  }
  BTSIM_ASSIGN_OR_RETURN(ChildName cluster,
                         ParseClusterName(name.substr(0, cut), field));
  const std::string_view backup = name.substr(cut + 9);
  BTSIM_RETURN_IF_ERROR(cluster::ValidateBackupId(backup, field));
  return BackupName{std::move(cluster.instance), std::move(cluster.id),
                    std::string(backup)};
}

Result<ChildName> ParseAppProfileName(std::string_view name,
                                      std::string_view field) {
  BTSIM_ASSIGN_OR_RETURN(
      ChildName child,
      ParseChildName(name, field, "appProfiles", "{app_profile}"));
  if (Status s = appprofile::ValidateProfileId(child.id); !s.ok()) {
    return InvalidArgument(std::string(field) + ": " + s.message());
  }
  return child;
}

Result<std::string> ParseLocation(std::string_view name,
                                  std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 4 || parts[0] != "projects" || parts[2] != "locations") {
    return BadShape(field, name, "projects/{project}/locations/{zone}");
  }
  if (!ValidProjectId(parts[1])) {
    return BadId(field, "project", parts[1], kProjectRule);
  }
  if (!ValidZone(parts[3])) {
    return InvalidArgument(std::string(field) + ": " + QuoteForError(parts[3]) +
                           " is not a valid zone; it must be 1 to 63 of "
                           "[-a-z0-9]");
  }
  return std::string(parts[3]);
}

Status ValidateInstanceId(std::string_view id, std::string_view field) {
  if (id == kAllInstances || !ValidInstanceId(id)) {
    return BadId(field, "instance", id, kInstanceRule);
  }
  return OkStatus();
}

std::string ProjectOf(std::string_view instance_name) {
  const auto parts = Split(instance_name);
  return parts.size() > 1 ? std::string(parts[1]) : std::string();
}

std::string_view LastSegment(std::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

}  // namespace btsim::api
