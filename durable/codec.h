// Conversions between the engine's types and the journal's protobuf
// records (proto/btsim/durable/v1/journal.proto). Exact both ways: a
// record decoded from its encoding equals the original (its RowShare, a
// memory-sharing hint, is not kept).
#ifndef BTSIM_DURABLE_CODEC_H_
#define BTSIM_DURABLE_CODEC_H_

#include <string>
#include <vector>

#include "appprofile/app_profile.h"
#include "base/result.h"
#include "btsim/durable/v1/journal.pb.h"
#include "cluster/commit_record.h"
#include "instance/instance.h"

namespace btsim::durable {

void EncodeRecord(const cluster::CommitRecord& record, v1::CommitRecord* out);
// INVALID_ARGUMENT for a kind or mutation type out of range.
Result<cluster::CommitRecord> DecodeRecord(const v1::CommitRecord& in);

// The instance's clusters, profiles and protected tables.
void EncodeMetadata(const instance::Instance& instance, v1::Metadata* out);
std::vector<appprofile::AppProfile> DecodeProfiles(const v1::Metadata& in);

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_CODEC_H_
