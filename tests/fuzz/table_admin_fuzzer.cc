// Fuzz target: table admin request handling on the in-process server of
// tests/fuzz/data_fixture.h. The first byte picks the request, the rest is
// its serialized message (inputs that do not parse are rejected):
//   0 CreateTable (families with nested GC rules, splits, protection)
//   1 ModifyColumnFamilies (create, update with update_mask, drop)
//   2 DropRowRange
//   3 CheckConsistency (a client's token)
//   4 UpdateTable (deletion protection, update_mask)
//   5 GetTable (views)
// The status must be one a client may get. After the call every table of
// the instance must answer GetTable and read back as a valid stream; a
// table created or modified must list the families the response lists. The
// schema is restored before each input (DataFixture::ResetSchema).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "base/check.h"
#include "tests/fuzz/data_fixture.h"

namespace btsim::fuzz {
namespace {

namespace admin = ::google::bigtable::admin::v2;
namespace v2 = ::google::bigtable::v2;

// Family names of a Table message.
std::set<std::string> Families(const admin::Table& table) {
  std::set<std::string> out;
  for (const auto& [name, unused] : table.column_families()) out.insert(name);
  return out;
}

// Every table of kInstance answers GetTable and reads back.
void CheckInstance(DataFixture& fixture) {
  admin::ListTablesRequest list;
  list.set_parent(kInstance);
  admin::ListTablesResponse tables;
  grpc::Status s =
      fixture.admin().ListTables(DataFixture::Context().get(), list, &tables);
  BTSIM_CHECK_MSG(s.ok(), s.error_message());
  for (const admin::Table& t : tables.tables()) {
    admin::GetTableRequest get;
    get.set_name(t.name());
    get.set_view(admin::Table::FULL);
    admin::Table table;
    s = fixture.admin().GetTable(DataFixture::Context().get(), get, &table);
    BTSIM_CHECK_MSG(s.ok(), "GetTable of a listed table: " + s.error_message());
    v2::ReadRowsRequest read;
    read.set_table_name(t.name());
    s = fixture.ReadAndCheck(read);
    BTSIM_CHECK_MSG(s.ok(),
                    "a listed table does not read: " + s.error_message());
  }
}

// After an OK call that answered `table`, GetTable agrees on its families.
void CheckAnswered(DataFixture& fixture, const admin::Table& table) {
  admin::GetTableRequest get;
  get.set_name(table.name());
  admin::Table now;
  const grpc::Status s =
      fixture.admin().GetTable(DataFixture::Context().get(), get, &now);
  BTSIM_CHECK_MSG(s.ok(),
                  "GetTable of an answered table: " + s.error_message());
  BTSIM_CHECK_MSG(Families(now) == Families(table),
                  "GetTable and the answer list different families");
}

template <typename Request>
bool Parse(const uint8_t* data, size_t size, Request* request) {
  return request->ParseFromArray(data, static_cast<int>(size));
}

int Run(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const uint8_t kind = data[0] % 6;
  ++data;
  --size;
  DataFixture& fixture = DataFixture::Get();
  auto& stub = fixture.admin();
  auto context = DataFixture::Context();
  grpc::Status status;
  switch (kind) {
    case 0: {
      admin::CreateTableRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      admin::Table table;
      status = stub.CreateTable(context.get(), request, &table);
      DataFixture::CheckStatus(status, "CreateTable");
      if (status.ok()) CheckAnswered(fixture, table);
      break;
    }
    case 1: {
      admin::ModifyColumnFamiliesRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      admin::Table table;
      status = stub.ModifyColumnFamilies(context.get(), request, &table);
      DataFixture::CheckStatus(status, "ModifyColumnFamilies");
      if (status.ok()) CheckAnswered(fixture, table);
      break;
    }
    case 2: {
      admin::DropRowRangeRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      google::protobuf::Empty empty;
      status = stub.DropRowRange(context.get(), request, &empty);
      DataFixture::CheckStatus(status, "DropRowRange");
      break;
    }
    case 3: {
      admin::CheckConsistencyRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      admin::CheckConsistencyResponse response;
      status = stub.CheckConsistency(context.get(), request, &response);
      DataFixture::CheckStatus(status, "CheckConsistency");
      break;
    }
    case 4: {
      admin::UpdateTableRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      google::longrunning::Operation operation;
      status = stub.UpdateTable(context.get(), request, &operation);
      DataFixture::CheckStatus(status, "UpdateTable");
      break;
    }
    default: {
      admin::GetTableRequest request;
      if (!Parse(data, size, &request)) return -1;
      fixture.ResetSchema();
      admin::Table table;
      status = stub.GetTable(context.get(), request, &table);
      DataFixture::CheckStatus(status, "GetTable");
      break;
    }
  }
  CheckInstance(fixture);
  return 0;
}

}  // namespace
}  // namespace btsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return btsim::fuzz::Run(data, size);
}
