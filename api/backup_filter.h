// The filter of ListBackups: a conjunction of comparisons joined by "AND",
// each "FIELD OP VALUE" (VALUE optionally in double quotes):
//   name, source_table, source_backup   =  !=  :   (":" is "contains")
//   state                               =  !=      (READY, CREATING)
//   start_time, end_time, expire_time   =  !=  <  <=  >  >=  (RFC 3339)
//   size_bytes                          =  !=  <  <=  >  >=  (an integer)
// Anything else (OR, NOT, parentheses, other fields, an unquoted value
// with spaces) is INVALID_ARGUMENT naming "filter".
#ifndef BTSIM_API_BACKUP_FILTER_H_
#define BTSIM_API_BACKUP_FILTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "google/bigtable/admin/v2/table.pb.h"

namespace btsim::api {

class BackupFilter {
 public:
  // The empty filter passes every backup.
  static Result<BackupFilter> Parse(std::string_view text);
  bool Matches(const google::bigtable::admin::v2::Backup& backup) const;

 private:
  enum class Op { kEq, kNe, kHas, kLt, kLe, kGt, kGe };
  struct Term {
    std::string field;
    Op op = Op::kEq;
    std::string value;
    int64_t number = 0;  // size_bytes, or a time's nanoseconds since epoch
  };
  std::vector<Term> terms_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_BACKUP_FILTER_H_
