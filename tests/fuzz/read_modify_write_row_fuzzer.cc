// Fuzz target: ReadModifyWriteRow request handling. The input is a
// serialized google.bigtable.v2.ReadModifyWriteRowRequest (inputs that do
// not parse are rejected), sent to the fixed table of
// tests/fuzz/data_fixture.h. The status must be one a client may get; an
// OK answer holds the request's row with one cell per column the rules
// name; the table must still read back as a valid stream.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "base/check.h"
#include "tests/fuzz/data_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace v2 = google::bigtable::v2;
  using btsim::fuzz::DataFixture;
  v2::ReadModifyWriteRowRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  DataFixture& fixture = DataFixture::Get();
  fixture.Reset();
  v2::ReadModifyWriteRowResponse response;
  const grpc::Status status = fixture.data().ReadModifyWriteRow(
      DataFixture::Context().get(), request, &response);
  DataFixture::CheckStatus(status, "ReadModifyWriteRow");
  if (status.ok()) {
    BTSIM_CHECK(response.row().key() == request.row_key());
    std::set<std::pair<std::string, std::string>> named, answered;
    for (const auto& rule : request.rules()) {
      named.insert({rule.family_name(), rule.column_qualifier()});
    }
    for (const auto& family : response.row().families()) {
      for (const auto& column : family.columns()) {
        BTSIM_CHECK_MSG(column.cells_size() == 1,
                        "ReadModifyWriteRow answered a column with " +
                            std::to_string(column.cells_size()) + " cells");
        BTSIM_CHECK_MSG(
            answered.insert({family.name(), column.qualifier()}).second,
            "ReadModifyWriteRow answered a column twice");
      }
    }
    BTSIM_CHECK_MSG(named == answered,
                    "ReadModifyWriteRow answered other columns than its rules "
                    "name");
  }
  fixture.CheckTableReadable();
  return 0;
}
