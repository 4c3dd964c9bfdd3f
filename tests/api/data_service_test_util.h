// The DataServiceTest fixture shared by the data_service_*_test.cc files:
// a server with table "t" (families "cf", "cf2") and stub helpers per RPC.
#ifndef BTSIM_TESTS_API_DATA_SERVICE_TEST_UTIL_H_
#define BTSIM_TESTS_API_DATA_SERVICE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"

namespace btsim::api_test {

inline std::vector<std::string> Keys(const std::vector<MergedRow>& rows) {
  std::vector<std::string> out;
  for (const MergedRow& r : rows) out.push_back(r.key);
  return out;
}

inline std::vector<int64_t> Timestamps(const std::vector<MergedCell>& cells) {
  std::vector<int64_t> out;
  for (const MergedCell& c : cells) out.push_back(c.timestamp_micros);
  return out;
}

class DataServiceTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    CreateTable("t", {"cf", "cf2"});
  }

  v2::ReadRowsRequest Request(const std::string& table = "t") {
    v2::ReadRowsRequest r;
    r.set_table_name(TableName(table));
    return r;
  }

  // Writes rows "a".."e" (one cell each, value = key).
  void WriteFiveRows() {
    for (const char* k : {"a", "b", "c", "d", "e"}) Set("t", k, "cf", "q", k);
  }

  grpc::Status MutateRows(const v2::MutateRowsRequest& request,
                          std::vector<v2::MutateRowsResponse::Entry>* out) {
    grpc::ClientContext context;
    auto reader = data_->MutateRows(&context, request);
    v2::MutateRowsResponse response;
    while (reader->Read(&response)) {
      for (const auto& e : response.entries()) out->push_back(e);
    }
    return reader->Finish();
  }

  grpc::Status CheckAndMutate(const v2::CheckAndMutateRowRequest& request,
                              bool* matched) {
    grpc::ClientContext context;
    v2::CheckAndMutateRowResponse response;
    grpc::Status s = data_->CheckAndMutateRow(&context, request, &response);
    *matched = response.predicate_matched();
    return s;
  }

  grpc::Status ReadModifyWrite(const v2::ReadModifyWriteRowRequest& request,
                               v2::ReadModifyWriteRowResponse* response) {
    grpc::ClientContext context;
    return data_->ReadModifyWriteRow(&context, request, response);
  }

  grpc::Status Ping(const std::string& name) {
    v2::PingAndWarmRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    v2::PingAndWarmResponse response;
    return data_->PingAndWarm(&context, request, &response);
  }
};

}  // namespace btsim::api_test

#endif  // BTSIM_TESTS_API_DATA_SERVICE_TEST_UTIL_H_
