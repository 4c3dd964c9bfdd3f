// Raw request and response bytes for the data RPCs, which the service takes
// as grpc::ByteBuffer (gRPC's raw callback methods) so that:
//   - requests are parsed onto a protobuf Arena (one allocation for a whole
//     MutateRows batch, freed at once), and
//   - bytes that do not parse answer INVALID_ARGUMENT naming the request,
//     as DESIGN.md asks of malformed input, instead of the code gRPC picks.
// Thread-compatible free functions.
#ifndef BTSIM_API_RAW_MESSAGES_H_
#define BTSIM_API_RAW_MESSAGES_H_

#include <string>

#include <google/protobuf/arena.h>
#include <google/protobuf/message_lite.h>
#include <grpcpp/grpcpp.h>

#include "base/result.h"
#include "base/status.h"

namespace btsim::api {

// Parses `raw` into `message`, with messages nested at most
// `recursion_limit` deep (protobuf's default is 100; requests that carry
// GC rules take more, so that their own check can name the field). The
// buffer is left unchanged.
inline constexpr int kDefaultRecursionLimit = 100;
Status ParseRaw(const grpc::ByteBuffer& raw,
                google::protobuf::MessageLite* message,
                int recursion_limit = kDefaultRecursionLimit);

// Parses `raw` into a new message of type T owned by `arena`.

template <typename T>
Result<T*> ParseRequest(const grpc::ByteBuffer& raw,
                        google::protobuf::Arena& arena) {
  T* message = google::protobuf::Arena::CreateMessage<T>(&arena);
  BTSIM_RETURN_IF_ERROR(ParseRaw(raw, message));
  return message;
}

// Serializes `message` into `out` (replacing its contents).
grpc::Status SerializeResponse(const google::protobuf::MessageLite& message,
                               grpc::ByteBuffer* out);

}  // namespace btsim::api

#endif  // BTSIM_API_RAW_MESSAGES_H_
