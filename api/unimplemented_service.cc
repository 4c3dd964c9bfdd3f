#include "api/unimplemented_service.h"

#include <string>

namespace btsim::api {
namespace {

class UnimplementedReactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit UnimplementedReactor(const std::string& method) {
    Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "btsim does not implement " + method));
  }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerGenericBidiReactor* UnimplementedService::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  return new UnimplementedReactor(context->method());
}

}  // namespace btsim::api
