# btsim_proto_library(NAME PROTOS a.proto ... GRPC b.proto ...)
#
# Generates C++ from .proto files (paths relative to the calling folder,
# which is also the import root) into the build tree at build time, and
# builds them into a static library NAME. Files listed under GRPC also get
# gRPC service stubs. Consumers include e.g. "google/bigtable/v2/data.pb.h".
function(btsim_proto_library name)
  cmake_parse_arguments(ARG "" "" "PROTOS;GRPC" ${ARGN})
  set(src_dir ${CMAKE_CURRENT_SOURCE_DIR})
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR})
  set(import_args -I${src_dir})
  foreach(dir IN LISTS Protobuf_INCLUDE_DIRS)
    list(APPEND import_args -I${dir})
  endforeach()
  list(TRANSFORM ARG_PROTOS PREPEND ${src_dir}/ OUTPUT_VARIABLE all_protos)

  set(sources)
  foreach(file IN LISTS ARG_PROTOS)
    string(REGEX REPLACE "\\.proto$" "" base ${file})
    set(outs ${gen_dir}/${base}.pb.cc ${gen_dir}/${base}.pb.h)
    set(args --cpp_out=${gen_dir})
    if(file IN_LIST ARG_GRPC)
      list(APPEND outs ${gen_dir}/${base}.grpc.pb.cc ${gen_dir}/${base}.grpc.pb.h)
      list(APPEND args --grpc_out=${gen_dir}
           --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
    endif()
    # Any .proto change regenerates everything: there are only a handful.
    add_custom_command(
      OUTPUT ${outs}
      COMMAND protobuf::protoc ${import_args} ${args} ${src_dir}/${file}
      DEPENDS ${all_protos} protobuf::protoc gRPC::grpc_cpp_plugin
      COMMENT "protoc ${file}"
      VERBATIM)
    list(APPEND sources ${outs})
  endforeach()

  # Generated code is not ours to keep warning-free.
  set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS -w)
  add_library(${name} STATIC ${sources})
  # SYSTEM: -Wall -Wextra in consumers ignores the generated headers.
  target_include_directories(${name} SYSTEM PUBLIC ${gen_dir})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf gRPC::grpc++)
endfunction()
