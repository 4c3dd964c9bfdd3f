// Fuzz target: MutateRows request handling. The input is a serialized
// google.bigtable.v2.MutateRowsRequest (inputs that do not parse are
// rejected), sent to the fixed table of tests/fuzz/data_fixture.h. The
// status and every entry's status must be ones a client may get; an OK
// call answers every entry exactly once; the table must still read back as
// a valid stream.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/check.h"
#include "tests/fuzz/data_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace v2 = google::bigtable::v2;
  using btsim::fuzz::DataFixture;
  v2::MutateRowsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return -1;
  DataFixture& fixture = DataFixture::Get();
  fixture.Reset();
  auto context = DataFixture::Context();
  auto reader = fixture.data().MutateRows(context.get(), request);
  std::vector<int> answered(request.entries_size(), 0);
  v2::MutateRowsResponse response;
  while (reader->Read(&response)) {
    for (const auto& entry : response.entries()) {
      BTSIM_CHECK_MSG(
          entry.index() >= 0 && entry.index() < request.entries_size(),
          "an entry status for no entry");
      ++answered[entry.index()];
      DataFixture::CheckStatus(
          grpc::Status(static_cast<grpc::StatusCode>(entry.status().code()),
                       entry.status().message()),
          "a MutateRows entry");
    }
  }
  const grpc::Status status = reader->Finish();
  DataFixture::CheckStatus(status, "MutateRows");
  if (status.ok()) {
    for (int n : answered) {
      BTSIM_CHECK_MSG(n == 1,
                      "an entry answered " + std::to_string(n) + " times");
    }
  }
  fixture.CheckTableReadable();
  return 0;
}
