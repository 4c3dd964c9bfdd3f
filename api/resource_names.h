// Parsing of Bigtable resource names, for every RPC. Each id in a name is
// checked, so a malformed name is INVALID_ARGUMENT naming the request field
// whatever the RPC, and only a well-formed name of something absent is left
// for the handler's NOT_FOUND. A name echoed in an error is cut to
// kMaxQuotedBytes (QuoteForError).
//
// The ids btsim accepts (looser than Bigtable's, so that emulator users'
// short ids such as project "p" and instance "i" work):
//   project      1-128 of [-_.:a-zA-Z0-9], starting with a letter or digit
//   instance     1-33 of [-_.a-zA-Z0-9], starting with a letter, digit or
//                '_'; "-" (every instance) only where a listing allows it
//   table        cluster::ValidateTableId
//   cluster      [a-z][-a-z0-9]*, at most 30 characters; "-" (every
//                cluster) only where a listing allows it
//   backup       cluster::ValidateBackupId
//   app profile  appprofile::ValidateProfileId
//   zone         1-63 of [-a-z0-9]
#ifndef BTSIM_API_RESOURCE_NAMES_H_
#define BTSIM_API_RESOURCE_NAMES_H_

#include <string>
#include <string_view>

#include "base/result.h"

namespace btsim::api {

// The instance id of listings over every instance of a project.
inline constexpr std::string_view kAllInstances = "-";

struct TableName {
  std::string instance;  // "projects/P/instances/I"
  std::string table_id;  // "T"
  std::string full() const { return instance + "/tables/" + table_id; }
};

// "projects/P/instances/I/clusters/C/backups/B".
struct BackupName {
  std::string instance;  // "projects/P/instances/I"
  std::string cluster;   // "C"
  std::string backup;    // "B"
  std::string cluster_name() const { return instance + "/clusters/" + cluster; }
  std::string full() const { return cluster_name() + "/backups/" + backup; }
};

// The cluster id of listings over every cluster of an instance.
inline constexpr std::string_view kAllClusters = "-";

// A resource below an instance: "projects/P/instances/I/<collection>/<id>".
struct ChildName {
  std::string instance;  // "projects/P/instances/I"
  std::string id;
};

// "projects/P" -> "P".
Result<std::string> ParseProjectName(std::string_view name,
                                     std::string_view field);
// "projects/P/instances/I", returned whole.
Result<std::string> ParseInstanceName(std::string_view name,
                                      std::string_view field);
// The same, where a listing also takes instance "-" (every instance).
Result<std::string> ParseInstanceNameOrAll(std::string_view name,
                                           std::string_view field);
// "projects/P/instances/I/tables/T".
Result<TableName> ParseTableName(std::string_view name, std::string_view field);
// "projects/P/instances/I/clusters/C" and ".../appProfiles/A".
Result<ChildName> ParseClusterName(std::string_view name,
                                   std::string_view field);
// The same, where a listing also takes cluster "-" (every cluster).
Result<ChildName> ParseClusterNameOrAll(std::string_view name,
                                        std::string_view field);
// "projects/P/instances/I/clusters/C/backups/B" (backup: ValidateBackupId).
Result<BackupName> ParseBackupName(std::string_view name,
                                   std::string_view field);
Result<ChildName> ParseAppProfileName(std::string_view name,
                                      std::string_view field);
// "projects/P/locations/ZONE" -> "ZONE".
Result<std::string> ParseLocation(std::string_view name,
                                  std::string_view field);

// A new instance's id (CreateInstance.instance_id): the rule above, and not
// "-". INVALID_ARGUMENT naming `field`.
Status ValidateInstanceId(std::string_view id, std::string_view field);

// "P" of "projects/P/instances/I" ("" when it is not such a name).
std::string ProjectOf(std::string_view instance_name);
// The last path segment of a resource name ("I" for ".../instances/I").
std::string_view LastSegment(std::string_view name);

}  // namespace btsim::api

#endif  // BTSIM_API_RESOURCE_NAMES_H_
