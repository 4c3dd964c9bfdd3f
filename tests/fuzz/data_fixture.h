// DataFixture: the in-process instance the data-RPC fuzz targets call. One
// api::Server per process (loopback, port 0, no background compaction),
// reached through its in-process channel, with one small fixed table
// kTable: families "cf" and "cf2", split at "m", rows "a" to "z" with a few
// cells and versions each (Reset restores it before every input).
//
// What keeps a target deterministic given its input: the table is restored
// before each call, and nothing else the data RPCs change is read back.
// Two things persist and are documented as such: instances that requests
// name (created on first use, up to the server's limit of 100, after which
// a new name gets RESOURCE_EXHAUSTED instead of NOT_FOUND), and the server's
// wall clock, which stamps cells written with timestamp -1.
#ifndef BTSIM_TESTS_FUZZ_DATA_FIXTURE_H_
#define BTSIM_TESTS_FUZZ_DATA_FIXTURE_H_

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "api/server.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"

namespace btsim::fuzz {

inline constexpr char kInstance[] = "projects/p/instances/i";
inline constexpr char kTable[] = "projects/p/instances/i/tables/t";

class DataFixture {
 public:
  // The process's fixture, started on first use; never destroyed.
  static DataFixture& Get();

  // Restores kTable to its fixed contents.
  void Reset();
  // Deletes every table of every instance (deletion protection or not),
  // then creates kTable again and Reset()s it: for targets that change
  // schemas.
  void ResetSchema();

  // Aborts unless `status` is one a client may get for a request it wrote:
  // never UNKNOWN, INTERNAL, DATA_LOSS, or (with no faults injected)
  // UNAVAILABLE, CANCELLED or DEADLINE_EXCEEDED; an error says what is
  // wrong. `what` names the call in the abort message.
  static void CheckStatus(const grpc::Status& status, const char* what);

  // Reads `request` with ReadRows, checking the response stream against
  // every chunk rule (tests/api/chunk_merger.h) and rows_limit, and the
  // status with CheckStatus. Returns the status.
  grpc::Status ReadAndCheck(
      const google::bigtable::v2::ReadRowsRequest& request);
  // ReadAndCheck of the whole of kTable: after any call, the table must
  // still read back as a valid stream.
  void CheckTableReadable();

  // A context with a 30 s deadline: a call that takes longer is a hang.
  static std::unique_ptr<grpc::ClientContext> Context();

  google::bigtable::v2::Bigtable::Stub& data() { return *data_; }
  google::bigtable::admin::v2::BigtableTableAdmin::Stub& admin() {
    return *admin_;
  }

 private:
  DataFixture();
  void CreateFixedTable();

  std::unique_ptr<api::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<google::bigtable::v2::Bigtable::Stub> data_;
  std::unique_ptr<google::bigtable::admin::v2::BigtableTableAdmin::Stub> admin_;
};

}  // namespace btsim::fuzz

#endif  // BTSIM_TESTS_FUZZ_DATA_FIXTURE_H_
