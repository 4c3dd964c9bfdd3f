#include "tests/fuzz/data_fixture.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "tests/api/chunk_merger.h"

namespace btsim::fuzz {

namespace v2 = ::google::bigtable::v2;
namespace admin = ::google::bigtable::admin::v2;

namespace {

// The fixed contents: (row, family, qualifier, timestamp, value).
struct FixedCell {
  const char* row;
  const char* family;
  const char* qualifier;
  int64_t timestamp_micros;
  std::string_view value;
};
constexpr FixedCell kCells[] = {
    {"a", "cf", "q", 3000, "a3"},
    {"a", "cf", "q", 2000, "a2"},
    {"a", "cf", "r", 1000, "1"},
    {"a", "cf2", "q", 5000, std::string_view("\0\0\0\0\0\0\0\x07", 8)},
    {"b", "cf", "q", 1000, "b"},
    {"c", "cf2", "", 4000, ""},
    {"m", "cf", "q", 1000, "m"},
    {"n", "cf", "long", 7000, "a value of some length, for split chunks"},
    {"z", "cf", "q", 9000, "z"},
    {"z", "cf2", "n", 9000, "\xff"},
};

}  // namespace

DataFixture& DataFixture::Get() {
  static DataFixture* fixture = new DataFixture();
  return *fixture;
}

DataFixture::DataFixture() {
  api::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.compaction_interval = std::chrono::milliseconds(0);
  server_ = std::make_unique<api::Server>(options);
  auto port = server_->Start();
  BTSIM_CHECK_MSG(port.ok(), port.status().ToString());
  channel_ = server_->InProcessChannel();
  data_ = v2::Bigtable::NewStub(channel_);
  admin_ = admin::BigtableTableAdmin::NewStub(channel_);
  CreateFixedTable();
}

void DataFixture::CreateFixedTable() {
  admin::CreateTableRequest create;
  create.set_parent(kInstance);
  create.set_table_id("t");
  (*create.mutable_table()->mutable_column_families())["cf"];
  (*create.mutable_table()->mutable_column_families())["cf2"];
  create.add_initial_splits()->set_key("m");
  admin::Table table;
  const grpc::Status s = admin_->CreateTable(Context().get(), create, &table);
  BTSIM_CHECK_MSG(s.ok(), s.error_message());
}

std::unique_ptr<grpc::ClientContext> DataFixture::Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(30));
  return context;
}

void DataFixture::Reset() {
  admin::DropRowRangeRequest drop;
  drop.set_name(kTable);
  drop.set_delete_all_data_from_table(true);
  google::protobuf::Empty empty;
  grpc::Status s = admin_->DropRowRange(Context().get(), drop, &empty);
  BTSIM_CHECK_MSG(s.ok(), s.error_message());

  v2::MutateRowsRequest write;
  write.set_table_name(kTable);
  v2::MutateRowsRequest::Entry* entry = nullptr;
  for (const FixedCell& c : kCells) {
    if (entry == nullptr || entry->row_key() != c.row) {
      entry = write.add_entries();
      entry->set_row_key(c.row);
    }
    auto* set = entry->add_mutations()->mutable_set_cell();
    set->set_family_name(c.family);
    set->set_column_qualifier(c.qualifier);
    set->set_timestamp_micros(c.timestamp_micros);
    set->set_value(std::string(c.value));
  }
  auto context = Context();
  auto reader = data_->MutateRows(context.get(), write);
  v2::MutateRowsResponse response;
  while (reader->Read(&response)) {
    for (const auto& e : response.entries()) {
      BTSIM_CHECK_MSG(e.status().code() == 0, e.status().message());
    }
  }
  s = reader->Finish();
  BTSIM_CHECK_MSG(s.ok(), s.error_message());
}

void DataFixture::ResetSchema() {
  for (api::ServedInstance* served : server_->registry().All()) {
    std::lock_guard<std::mutex> lock(served->mu);
    instance::Instance& instance = *served->instance;
    for (const instance::ClusterConfig& config : instance.Clusters()) {
      auto cluster = instance.ClusterIfUp(config.id);
      BTSIM_CHECK_MSG(cluster.ok(), cluster.status().ToString());
      for (const std::string& id : (*cluster)->ListTables()) {
        instance.SetDeletionProtection(id, false);
        const Status s = (*cluster)->DeleteTable(id);
        BTSIM_CHECK_MSG(s.ok(), s.ToString());
      }
    }
  }
  CreateFixedTable();
  Reset();
}

void DataFixture::CheckStatus(const grpc::Status& status, const char* what) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::DATA_LOSS:
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      BTSIM_CHECK_MSG(false, std::string(what) + " answered code " +
                                 std::to_string(status.error_code()) + ": " +
                                 status.error_message());
      break;
    case grpc::StatusCode::OK:
      break;
    default:
      BTSIM_CHECK_MSG(!status.error_message().empty(),
                      std::string(what) + " answered an error with no message");
  }
}

grpc::Status DataFixture::ReadAndCheck(const v2::ReadRowsRequest& request) {
  auto context = Context();
  api_test::ChunkMerger merger(request.reversed());
  auto reader = data_->ReadRows(context.get(), request);
  v2::ReadRowsResponse response;
  Status stream;
  while (reader->Read(&response)) {
    if (stream.ok()) stream = merger.Feed(response);
  }
  const grpc::Status status = reader->Finish();
  CheckStatus(status, "ReadRows");
  if (!status.ok()) return status;
  if (stream.ok()) stream = merger.Finish();
  BTSIM_CHECK_MSG(stream.ok(),
                  "ReadRows broke a chunk rule: " + stream.ToString() +
                      "\nrequest: " + request.ShortDebugString());
  if (request.rows_limit() > 0) {
    BTSIM_CHECK_MSG(
        static_cast<int64_t>(merger.rows().size()) <= request.rows_limit(),
        "ReadRows returned more rows than rows_limit");
  }
  return status;
}

void DataFixture::CheckTableReadable() {
  v2::ReadRowsRequest all;
  all.set_table_name(kTable);
  const grpc::Status s = ReadAndCheck(all);
  BTSIM_CHECK_MSG(s.ok(),
                  "the fixed table no longer reads: " + s.error_message());
}

}  // namespace btsim::fuzz
