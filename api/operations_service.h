// OperationsService: google.longrunning.Operations over the operations btsim
// has started. Every btsim operation finishes before the call that started it
// returns, so the service only remembers finished operations (the most recent
// `capacity` of them) and answers GetOperation for them; older or unknown
// names are NOT_FOUND. Methods not declared in our proto answer
// UNIMPLEMENTED. Thread-safe.
#ifndef BTSIM_API_OPERATIONS_SERVICE_H_
#define BTSIM_API_OPERATIONS_SERVICE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>

#include "google/longrunning/operations.grpc.pb.h"

namespace btsim::api {

// The wall clock's time now, for the times in operations' metadata.
google::protobuf::Timestamp OperationTime();

class OperationsService final
    : public google::longrunning::Operations::Service {
 public:
  static constexpr size_t kDefaultCapacity = 1000;

  explicit OperationsService(size_t capacity = kDefaultCapacity);

  // Records a successfully finished operation on `resource` (a resource
  // name such as "projects/P/instances/I/clusters/C") and returns it: done,
  // named "operations/<resource>/operations/<n>" (unique per service), with
  // `response` (and `metadata`, when given) packed into Any.
  google::longrunning::Operation Finish(
      std::string_view resource, const google::protobuf::Message& response,
      const google::protobuf::Message* metadata = nullptr);

  grpc::Status GetOperation(
      grpc::ServerContext* context,
      const google::longrunning::GetOperationRequest* request,
      google::longrunning::Operation* response) override;

 private:
  const size_t capacity_;
  std::mutex mu_;  // guards everything below
  uint64_t next_id_ = 1;
  std::map<std::string, google::longrunning::Operation, std::less<>>
      operations_;
  std::deque<std::string> order_;  // names, oldest first
};

}  // namespace btsim::api

#endif  // BTSIM_API_OPERATIONS_SERVICE_H_
