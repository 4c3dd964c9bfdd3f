#include "api/resource_names.h"

#include <vector>

namespace btsim::api {
namespace {

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

Status Bad(std::string_view field, std::string_view name,
           std::string_view shape) {
  return InvalidArgument(std::string(field) + ": '" + std::string(name) +
                         "' is not a valid name; expected " +
                         std::string(shape));
}

}  // namespace

Result<std::string> ParseInstanceName(std::string_view name,
                                      std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 4 || parts[0] != "projects" || parts[1].empty() ||
      parts[2] != "instances" || parts[3].empty()) {
    return Bad(field, name, "projects/{project}/instances/{instance}");
  }
  return std::string(name);
}

Result<TableName> ParseTableName(std::string_view name,
                                 std::string_view field) {
  const auto parts = Split(name);
  if (parts.size() != 6 || parts[0] != "projects" || parts[1].empty() ||
      parts[2] != "instances" || parts[3].empty() || parts[4] != "tables" ||
      parts[5].empty()) {
    return Bad(field, name,
               "projects/{project}/instances/{instance}/tables/{table}");
  }
  const size_t cut = name.rfind("/tables/");
  return TableName{std::string(name.substr(0, cut)), std::string(parts[5])};
}

std::string_view LastSegment(std::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

}  // namespace btsim::api
