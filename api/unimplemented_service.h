// UnimplementedService: answers every method that no registered service
// handles with UNIMPLEMENTED and a message naming the method, e.g.
// "btsim does not implement /google.bigtable.admin.v2.BigtableInstanceAdmin/
// ListInstances". Register it on the ServerBuilder as the generic service.
#ifndef BTSIM_API_UNIMPLEMENTED_SERVICE_H_
#define BTSIM_API_UNIMPLEMENTED_SERVICE_H_

#include <grpcpp/generic/async_generic_service.h>

namespace btsim::api {

class UnimplementedService final : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;
};

}  // namespace btsim::api

#endif  // BTSIM_API_UNIMPLEMENTED_SERVICE_H_
