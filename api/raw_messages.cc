#include "api/raw_messages.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <google/protobuf/io/coded_stream.h>

namespace btsim::api {

Status ParseRaw(const grpc::ByteBuffer& raw,
                google::protobuf::MessageLite* message, int recursion_limit) {
  grpc::ByteBuffer copy(raw);  // shares the slices; the reader consumes it
  grpc::ProtoBufferReader reader(&copy);
  bool parsed = false;
  if (reader.status().ok()) {
    google::protobuf::io::CodedInputStream input(&reader);
    input.SetRecursionLimit(recursion_limit);
    parsed =
        message->ParseFromCodedStream(&input) && input.ConsumedEntireMessage();
  }
  if (!parsed) {
    return InvalidArgument("request: the bytes are not a valid " +
                           message->GetTypeName() +
                           " message (or nest messages more than " +
                           std::to_string(recursion_limit) + " deep)");
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
