// Fuzz target: ReadRows request handling. The input is a serialized
// google.bigtable.v2.ReadRowsRequest (inputs that do not parse are
// rejected); it is read from the fixed table of tests/fuzz/data_fixture.h,
// and the response stream must keep every chunk rule and rows_limit, with
// a status a client may get.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/data_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  google::bigtable::v2::ReadRowsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  btsim::fuzz::DataFixture& fixture = btsim::fuzz::DataFixture::Get();
  fixture.Reset();
  fixture.ReadAndCheck(request);
  return 0;
}
