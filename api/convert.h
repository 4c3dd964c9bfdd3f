// Translation between the Bigtable wire messages and the engine's types.
// Holds no Bigtable semantics beyond the wire format: every conversion error
// is INVALID_ARGUMENT (or UNIMPLEMENTED for a feature btsim lacks) and names
// the offending request field, using `field` as the path prefix.
#ifndef BTSIM_API_CONVERT_H_
#define BTSIM_API_CONVERT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/support/status.h>

#include "base/result.h"
#include "cluster/filter.h"
#include "cluster/gc_rule.h"
#include "cluster/mutation.h"
#include "cluster/row_set.h"
#include "cluster/schema.h"
#include "google/bigtable/admin/v2/table.pb.h"
#include "google/bigtable/v2/data.pb.h"

namespace btsim::api {

namespace v2 = ::google::bigtable::v2;
namespace admin = ::google::bigtable::admin::v2;

// The gRPC status of `status`; a message longer than
// kMaxStatusMessageBytes is cut there, so that it fits in the trailers.
inline constexpr size_t kMaxStatusMessageBytes = 4096;
grpc::Status ToGrpc(const Status& status);

// `text` where it is valid UTF-8, with each byte that is not written as
// \xNN: for a message put in a protobuf `string` field (which must hold
// valid UTF-8, or clients fail to parse the whole response).
std::string ValidUtf8(std::string_view text);

// Converts and validates a whole filter tree (Filter::Validate included).
Result<cluster::Filter> FilterFromProto(const v2::RowFilter& proto,
                                        const std::string& field);

Result<cluster::RowSet> RowSetFromProto(const v2::RowSet& proto,
                                        const std::string& field);

Result<std::vector<cluster::Mutation>> MutationsFromProto(
    const google::protobuf::RepeatedPtrField<v2::Mutation>& protos,
    const std::string& field);
// The same, building the field's name only for an error (MutateRows
// converts one list per entry).
Result<std::vector<cluster::Mutation>> MutationsFromProto(
    const google::protobuf::RepeatedPtrField<v2::Mutation>& protos,
    const std::function<std::string()>& field_name);

// One add_to_cell or merge_to_cell mutation (`m` holds one), named
// `field` (e.g. "mutations[2]"); the input as eight big-endian bytes.
Result<cluster::AddToCell> AddToCellFromProto(const v2::Mutation& m,
                                              const std::string& field);

// A request's idempotency (validated by the engine: see
// cluster/idempotency.h).
cluster::Idempotency IdempotencyFromProto(const v2::Idempotency& proto);

// A column family's value_type: kNone when unset; UNIMPLEMENTED naming
// `field` for the types btsim lacks (HyperLogLog++, non-aggregate types).
Result<cluster::Aggregate> AggregateFromProto(const admin::Type& type,
                                              const std::string& field);
// Fills `type` for an aggregate family: its aggregator and input_type
// (leaves it empty for kNone).
void AggregateToProto(cluster::Aggregate aggregate, admin::Type* type);

Result<std::vector<cluster::ReadModifyWriteRule>> RulesFromProto(
    const google::protobuf::RepeatedPtrField<v2::ReadModifyWriteRule>& protos,
    const std::string& field);

// A GC rule, nested at most kMaxGcRuleDepth levels (Bigtable publishes no
// limit; btsim bounds the recursion a client can ask for). INVALID_ARGUMENT
// naming `field` or the part below it that is wrong.
inline constexpr int kMaxGcRuleDepth = 32;
Result<cluster::GcRule> GcRuleFromProto(const admin::GcRule& proto,
                                        const std::string& field);
void GcRuleToProto(const cluster::GcRule& rule, admin::GcRule* proto);

}  // namespace btsim::api

#endif  // BTSIM_API_CONVERT_H_
