// Fuzz target: CheckAndMutateRow request handling. The input is a
// serialized google.bigtable.v2.CheckAndMutateRowRequest (inputs that do
// not parse are rejected), sent to the fixed table of
// tests/fuzz/data_fixture.h (one cluster: transactions are allowed). The
// status must be one a client may get, and the table must still read back
// as a valid stream.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/data_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  google::bigtable::v2::CheckAndMutateRowRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  btsim::fuzz::DataFixture& fixture = btsim::fuzz::DataFixture::Get();
  fixture.Reset();
  google::bigtable::v2::CheckAndMutateRowResponse response;
  btsim::fuzz::DataFixture::CheckStatus(
      fixture.data().CheckAndMutateRow(
          btsim::fuzz::DataFixture::Context().get(), request, &response),
      "CheckAndMutateRow");
  fixture.CheckTableReadable();
  return 0;
}
