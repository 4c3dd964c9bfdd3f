// Helpers for tests that talk to a real btsim::api::Server through the
// generated gRPC stubs. Every ReadRows call goes through ChunkMerger, so each
// test that reads also checks the chunk protocol.
#ifndef BTSIM_TESTS_API_API_TEST_UTIL_H_
#define BTSIM_TESTS_API_API_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "api/server.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"
#include "tests/api/chunk_merger.h"

namespace btsim::api_test {

namespace v2 = ::google::bigtable::v2;
namespace admin = ::google::bigtable::admin::v2;

// The outcome of one ReadRows call: the RPC status, and the merged rows (or
// the first chunk-rule violation).
struct ReadOutcome {
  grpc::Status status;
  Status stream;  // OK unless the chunk stream broke a rule
  std::vector<MergedRow> rows;
  int64_t responses = 0;
  int64_t chunks = 0;
};

// Runs one ReadRows call and validates every response. `features` (when
// non-empty) is sent as the `bigtable-features` metadata value.
ReadOutcome ReadRowsRaw(v2::Bigtable::Stub& stub,
                        const v2::ReadRowsRequest& request,
                        const std::string& features = "");

// ReadRows that must succeed with a valid stream (else the test fails) and
// returns the merged rows. Also checks rows_limit.
std::vector<MergedRow> ReadAll(v2::Bigtable::Stub& stub,
                               const v2::ReadRowsRequest& request,
                               const std::string& features = "");

// The `bigtable-features` header value for FeatureFlags{reverse_scans}.
std::string ReverseScanFeatures();

// Base64 (URL-safe alphabet, padded), as clients encode FeatureFlags.
std::string Base64Url(std::string_view bytes);

// An 8-byte big-endian int64.
std::string BigEndian(int64_t v);

// Mutation builders.
v2::Mutation SetCellMutation(const std::string& family,
                             const std::string& qualifier,
                             const std::string& value,
                             int64_t timestamp_micros = 1000);
v2::Mutation DeleteFromColumnMutation(const std::string& family,
                                      const std::string& qualifier,
                                      int64_t start_micros = 0,
                                      int64_t end_micros = 0);
v2::Mutation DeleteFromFamilyMutation(const std::string& family);
v2::Mutation DeleteFromRowMutation();

// A fixture owning a server (port 0 on 127.0.0.1, no background compaction)
// and stubs over a TCP channel to it.
class ServerTest : public ::testing::Test {
 protected:
  static constexpr char kInstance[] = "projects/p/instances/i";

  // Loopback, port 0, no background compaction.
  static api::ServerOptions TestOptions();
  // TestOptions with clusters c1=us-east1-b, c2=us-east1-c (one region) and
  // c3=europe-west1-d, and a fixed replication delay.
  static api::ServerOptions ThreeClusterOptions(sim::Duration latency);

  void SetUp() override;  // StartServer(TestOptions())
  void TearDown() override;
  // Starts the server and connects channel_, data_ and admin_ to it.
  void StartServer(const api::ServerOptions& options);

  // "projects/p/instances/i/tables/<id>".
  static std::string TableName(const std::string& id);

  // Creates a table whose families have no GC rule; fails the test on error.
  void CreateTable(const std::string& id,
                   const std::vector<std::string>& families = {"cf"},
                   const std::vector<std::string>& splits = {});
  grpc::Status TryCreateTable(const admin::CreateTableRequest& request,
                              admin::Table* out = nullptr);

  // MutateRow returning the RPC status.
  grpc::Status Mutate(const std::string& table, const std::string& key,
                      const std::vector<v2::Mutation>& mutations);
  // Writes one cell; fails the test on error.
  void Set(const std::string& table, const std::string& key,
           const std::string& family, const std::string& qualifier,
           const std::string& value, int64_t timestamp_micros = 1000);

  // Reads the whole table (or one row) through ReadAll.
  std::vector<MergedRow> ReadTable(const std::string& table);
  std::optional<MergedRow> ReadRow(const std::string& table,
                                   const std::string& key);

  std::vector<v2::SampleRowKeysResponse> SampleRowKeys(
      const std::string& table, grpc::Status* status = nullptr);

  std::unique_ptr<api::Server> server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v2::Bigtable::Stub> data_;
  std::unique_ptr<admin::BigtableTableAdmin::Stub> admin_;
};

// Asserts a gRPC status code, printing the message on mismatch.
#define EXPECT_GRPC_CODE(status, code)                                    \
  do {                                                                    \
    const ::grpc::Status& btsim_s_ = (status);                            \
    EXPECT_EQ(btsim_s_.error_code(), (code)) << btsim_s_.error_message(); \
  } while (0)

#define ASSERT_GRPC_OK(status)                                        \
  do {                                                                \
    const ::grpc::Status& btsim_s_ = (status);                        \
    ASSERT_TRUE(btsim_s_.ok())                                        \
        << btsim_s_.error_code() << ": " << btsim_s_.error_message(); \
  } while (0)

#define EXPECT_GRPC_OK(status)                                        \
  do {                                                                \
    const ::grpc::Status& btsim_s_ = (status);                        \
    EXPECT_TRUE(btsim_s_.ok())                                        \
        << btsim_s_.error_code() << ": " << btsim_s_.error_message(); \
  } while (0)

}  // namespace btsim::api_test

#endif  // BTSIM_TESTS_API_API_TEST_UTIL_H_
