#include "api/raw_messages.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

namespace btsim::api {

Status ParseRaw(const grpc::ByteBuffer& raw,
                google::protobuf::MessageLite* message) {
  grpc::ByteBuffer copy(raw);  // shares the slices; the reader consumes it
  grpc::ProtoBufferReader reader(&copy);
  if (!reader.status().ok() || !message->ParseFromZeroCopyStream(&reader)) {
    return InvalidArgument("request: the bytes are not a valid " +
                           message->GetTypeName() + " message");
  }
  return OkStatus();
}

grpc::Status SerializeResponse(const google::protobuf::MessageLite& message,
                               grpc::ByteBuffer* out) {
  out->Clear();
  bool own_buffer = false;
  return grpc::GenericSerialize<grpc::ProtoBufferWriter,
                                google::protobuf::MessageLite>(message, out,
                                                               &own_buffer);
}

}  // namespace btsim::api
