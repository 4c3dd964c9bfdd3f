// Parsing of Bigtable resource names. Errors are INVALID_ARGUMENT naming the
// request field that held the bad name.
#ifndef BTSIM_API_RESOURCE_NAMES_H_
#define BTSIM_API_RESOURCE_NAMES_H_

#include <string>
#include <string_view>

#include "base/result.h"

namespace btsim::api {

struct TableName {
  std::string instance;  // "projects/P/instances/I"
  std::string table_id;  // "T"
  std::string full() const { return instance + "/tables/" + table_id; }
};

// "projects/P/instances/I".
Result<std::string> ParseInstanceName(std::string_view name,
                                      std::string_view field);
// "projects/P/instances/I/tables/T".
Result<TableName> ParseTableName(std::string_view name, std::string_view field);

// The last path segment of a resource name ("I" for ".../instances/I").
std::string_view LastSegment(std::string_view name);

}  // namespace btsim::api

#endif  // BTSIM_API_RESOURCE_NAMES_H_
