// Scenario fields that more than one part of scenarios/ reads: validated
// by the loader (tables, clients) and by the timeline's steps
// (set_gc_rule, change_workload, add_cluster), and converted by the runner.
// Internal to scenarios/.
//
// Validation errors are INVALID_ARGUMENT naming `field` or a field below
// it, e.g. "clients[0].workload.mix: at least one operation needs a
// non-zero weight".
#ifndef BTSIM_SCENARIOS_SCENARIO_FIELDS_H_
#define BTSIM_SCENARIOS_SCENARIO_FIELDS_H_

#include <string>

#include "base/status.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "cluster/gc_rule.h"
#include "cluster/schema.h"
#include "sim/clock.h"

namespace btsim::scenarios {

// "FIELD[i]", the name of a repeated field's entry in errors.
std::string Indexed(const std::string& field, int i);

// A zone name such as us-east1-b: lowercase letters, digits and '-', with
// at least one '-', at most 63 characters.
bool ValidZone(const std::string& zone);

// A family's GC rule. Unset means no rule (every version is kept); a rule
// nested in a union or intersection must be set.
Status ValidateGcRule(const btsim::scenario::v1::GcRule& rule,
                      const std::string& field);

// A client's workload: the operation mix, the keys, the rate (open or
// closed loop), the value sizes and the scan length.
Status ValidateWorkload(const btsim::scenario::v1::Workload& workload,
                        const std::string& field);

// A google.protobuf.Duration field as a sim::Duration (no range check: the
// loader has done it).
sim::Duration ToDuration(const google::protobuf::Duration& duration);
// The inverse of ToDuration.
google::protobuf::Duration ToProtoDuration(sim::Duration duration);

// A validated GC rule as the engine's (GcRule::None() when unset).
cluster::GcRule ToGcRule(const btsim::scenario::v1::GcRule& rule);
// The inverse of ToGcRule (unset for GcRule::None()).
btsim::scenario::v1::GcRule FromGcRule(const cluster::GcRule& rule);

// Family `index` of its table, at `field`: a known aggregate, and an
// aggregate family is not the first (clients write values there) and has
// no GC rule.
Status ValidateAggregate(const btsim::scenario::v1::Family& family, int index,
                         const std::string& field);
// The table's first SUM family, where clients' add_to_cell adds; null when
// it has none.
const btsim::scenario::v1::Family* AddFamily(
    const btsim::scenario::v1::Table& table);

// A family's `aggregate` as the engine's (kNone when unspecified).
cluster::Aggregate ToAggregate(btsim::scenario::v1::Aggregate aggregate);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_SCENARIO_FIELDS_H_
