// BigtableService: google.bigtable.v2.Bigtable over the engine. Translates
// requests, takes the instance lock around each engine call, and streams
// ReadRows in bounded batches so a slow reader never holds the lock
// (api/read_rows_reactor.h).
// Methods not declared in our proto answer UNIMPLEMENTED (gRPC's default).
#ifndef BTSIM_API_BIGTABLE_SERVICE_H_
#define BTSIM_API_BIGTABLE_SERVICE_H_

#include "api/instance_registry.h"
#include "api/served_faults.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"

namespace btsim::api {

// The data RPCs run on gRPC's callback API, as raw methods: the handler
// runs on the thread that received the request, with no hand-off to a
// worker thread (which dominated the latency of small requests), and parses
// the request itself (api/raw_messages.h). SampleRowKeys, rare and
// streaming, stays synchronous.
namespace bigtable_service_internal {
using V2 = google::bigtable::v2::Bigtable;
using Base = V2::WithRawCallbackMethod_ReadRows<
    V2::WithRawCallbackMethod_MutateRow<V2::WithRawCallbackMethod_MutateRows<
        V2::WithRawCallbackMethod_CheckAndMutateRow<
            V2::WithRawCallbackMethod_PingAndWarm<
                V2::WithRawCallbackMethod_ReadModifyWriteRow<V2::Service>>>>>>;
}  // namespace bigtable_service_internal

class BigtableService final : public bigtable_service_internal::Base {
 public:
  // `registry` must outlive the service.
  explicit BigtableService(InstanceRegistry& registry) : registry_(registry) {}

  grpc::ServerWriteReactor<grpc::ByteBuffer>* ReadRows(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;
  grpc::Status SampleRowKeys(
      grpc::ServerContext* context,
      const google::bigtable::v2::SampleRowKeysRequest* request,
      grpc::ServerWriter<google::bigtable::v2::SampleRowKeysResponse>* writer)
      override;
  grpc::ServerUnaryReactor* MutateRow(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* MutateRows(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* CheckAndMutateRow(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* PingAndWarm(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ReadModifyWriteRow(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
      grpc::ByteBuffer* response) override;

  // Answers every call a fault holds back now (before the server shuts
  // down: gRPC waits for every call to finish).
  void ReleaseHeld() { held_.ReleaseAll(); }

 private:
  InstanceRegistry& registry_;
  HeldCalls held_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_BIGTABLE_SERVICE_H_
