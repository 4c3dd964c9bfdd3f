#include "api/operations_service.h"

#include <chrono>
#include <utility>

namespace btsim::api {

google::protobuf::Timestamp OperationTime() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
  google::protobuf::Timestamp t;
  t.set_seconds(nanos / 1000000000);
  t.set_nanos(static_cast<int32_t>(nanos % 1000000000));
  return t;
}

namespace lro = ::google::longrunning;

OperationsService::OperationsService(size_t capacity)
    : capacity_(capacity == 0 ? 1 : capacity) {}

lro::Operation OperationsService::Finish(
    std::string_view resource, const google::protobuf::Message& response,
    const google::protobuf::Message* metadata) {
  lro::Operation op;
  op.set_done(true);
  op.mutable_response()->PackFrom(response);
  if (metadata != nullptr) op.mutable_metadata()->PackFrom(*metadata);
  std::lock_guard<std::mutex> lock(mu_);
  op.set_name("operations/" + std::string(resource) + "/operations/" +
              std::to_string(next_id_++));
  operations_.emplace(op.name(), op);
  order_.push_back(op.name());
  while (order_.size() > capacity_) {
    operations_.erase(order_.front());
    order_.pop_front();
  }
  return op;
}

grpc::Status OperationsService::GetOperation(
    grpc::ServerContext*, const lro::GetOperationRequest* request,
    lro::Operation* response) {
  if (request->name().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "name: must name an operation");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = operations_.find(request->name());
  if (it == operations_.end()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "operation '" + request->name() +
                            "' not found (btsim keeps the last " +
                            std::to_string(capacity_) + " operations)");
  }
  *response = it->second;
  return grpc::Status::OK;
}

}  // namespace btsim::api
