// Fuzz target: SampleRowKeys request handling. The input is a serialized
// google.bigtable.v2.SampleRowKeysRequest (inputs that do not parse are
// rejected), sent to the fixed table of tests/fuzz/data_fixture.h. The
// status must be one a client may get; the samples' offsets never
// decrease, their keys ascend, and only the last key may be empty (the
// table's end).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "tests/fuzz/data_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace v2 = google::bigtable::v2;
  using btsim::fuzz::DataFixture;
  v2::SampleRowKeysRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  DataFixture& fixture = DataFixture::Get();
  fixture.Reset();
  auto context = DataFixture::Context();
  auto reader = fixture.data().SampleRowKeys(context.get(), request);
  v2::SampleRowKeysResponse response;
  bool ended = false;
  std::string last_key;
  int64_t last_offset = 0;
  int samples = 0;
  while (reader->Read(&response)) {
    BTSIM_CHECK_MSG(!ended, "a sample after the table's end");
    if (response.row_key().empty()) {
      ended = true;
    } else {
      BTSIM_CHECK_MSG(samples == 0 || response.row_key() > last_key,
                      "sample keys do not ascend");
      last_key = response.row_key();
    }
    BTSIM_CHECK_MSG(response.offset_bytes() >= last_offset,
                    "sample offsets decrease");
    last_offset = response.offset_bytes();
    ++samples;
  }
  DataFixture::CheckStatus(reader->Finish(), "SampleRowKeys");
  return 0;
}
