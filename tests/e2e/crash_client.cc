// crash_client: the client of the crash tests (crash_e2e.sh,
// bench/crash-test.sh). It writes to `btsim serve --data-dir` while the
// server is killed and restarted, logs every acknowledged write, and
// verifies later that each one is there and that nothing was applied
// twice.
//
//   crash_client setup TARGET
//       creates table "t" with family "cf" (an existing one is fine)
//   crash_client write TARGET ACKLOG WRITER THREADS STOPFILE
//       THREADS threads write until STOPFILE exists. Each thread, in turn:
//       a MutateRow of a new row "m-W-T-SEQ" through profile to-c1, to-c2
//       or to-c3 (so every cluster commits writes), and a
//       ReadModifyWriteRow appending "SEQ;" to its row "a-W-T" through
//       to-c1 (transactional). Logs "M KEY" or "A ROW SEQ" once answered OK,
//       "U ROW SEQ" for an append whose answer was an error (it may or may
//       not have been applied).
//   crash_client verify TARGET ACKLOG PROFILE
//       reads table "t" through PROFILE and checks: every M row exists;
//       every acknowledged append is in its row exactly once; no SEQ appears
//       twice in a row; every SEQ found was sent. Prints the counts; exit 0
//       when all hold, 1 otherwise.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"

namespace {

namespace admin = google::bigtable::admin::v2;
namespace v2 = google::bigtable::v2;

constexpr char kInstance[] = "projects/p/instances/i";
constexpr char kTable[] = "projects/p/instances/i/tables/t";

// Reconnects within 100 ms of the server's restart (gRPC's default backoff
// grows to minutes).
std::shared_ptr<grpc::Channel> Connect(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

// Calls wait for the server to be back (up to their deadline) rather than
// fail at once while it restarts.
void Deadline(grpc::ClientContext* context, int seconds) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(seconds));
  context->set_wait_for_ready(true);
}

int Setup(const std::string& target) {
  auto stub = admin::BigtableTableAdmin::NewStub(Connect(target));
  for (int attempt = 0; attempt < 100; ++attempt) {
    admin::CreateTableRequest request;
    request.set_parent(kInstance);
    request.set_table_id("t");
    (*request.mutable_table()->mutable_column_families())["cf"];
    admin::Table table;
    grpc::ClientContext context;
    Deadline(&context, 5);
    grpc::Status s = stub->CreateTable(&context, request, &table);
    if (s.ok() || s.error_code() == grpc::StatusCode::ALREADY_EXISTS) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "crash_client: cannot create the table\n");
  return 1;
}

int Write(const std::string& target, const std::string& ack_path,
          const std::string& writer, int threads, const std::string& stop) {
  std::ofstream ack(ack_path, std::ios::app);
  std::mutex ack_mu;
  auto log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(ack_mu);
    ack << line << '\n';
    ack.flush();
  };
  auto stub = v2::Bigtable::NewStub(Connect(target));
  std::atomic<long> acked{0}, failed{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::string id = writer + "-" + std::to_string(t);
      const char* profiles[] = {"to-c1", "to-c2", "to-c3"};
      for (long seq = 0; !std::filesystem::exists(stop); ++seq) {
        {
          v2::MutateRowRequest request;
          request.set_table_name(kTable);
          request.set_app_profile_id(profiles[seq % 3]);
          const std::string key = "m-" + id + "-" + std::to_string(seq);
          request.set_row_key(key);
          auto* set = request.add_mutations()->mutable_set_cell();
          set->set_family_name("cf");
          set->set_column_qualifier("q");
          set->set_timestamp_micros(-1);
          set->set_value("v" + std::to_string(seq));
          v2::MutateRowResponse response;
          grpc::ClientContext context;
          Deadline(&context, 3);
          grpc::Status s = stub->MutateRow(&context, request, &response);
          if (s.ok()) {
            log("M " + key);
            ++acked;
          } else {
            if (std::getenv("CRASH_CLIENT_VERBOSE")) {
              std::fprintf(stderr, "MutateRow: %d %s\n", s.error_code(),
                           s.error_message().c_str());
            }
            ++failed;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }
        {
          v2::ReadModifyWriteRowRequest request;
          request.set_table_name(kTable);
          request.set_app_profile_id("to-c1");
          const std::string row = "a-" + id;
          request.set_row_key(row);
          auto* rule = request.add_rules();
          rule->set_family_name("cf");
          rule->set_column_qualifier("log");
          rule->set_append_value(std::to_string(seq) + ";");
          v2::ReadModifyWriteRowResponse response;
          grpc::ClientContext context;
          Deadline(&context, 3);
          const std::string line = row + " " + std::to_string(seq);
          if (stub->ReadModifyWriteRow(&context, request, &response).ok()) {
            log("A " + line);
            ++acked;
          } else {
            log("U " + line);
            ++failed;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  std::printf("writer %s: %ld acknowledged, %ld failed calls\n", writer.c_str(),
              acked.load(), failed.load());
  return 0;
}

int Verify(const std::string& target, const std::string& ack_path,
           const std::string& profile) {
  // The table's latest cells, through `profile`.
  std::map<std::string, std::map<std::string, std::string>> rows;
  auto stub = v2::Bigtable::NewStub(Connect(target));
  v2::ReadRowsRequest request;
  request.set_table_name(kTable);
  request.set_app_profile_id(profile);
  request.mutable_filter()->set_cells_per_column_limit_filter(1);
  grpc::ClientContext context;
  Deadline(&context, 60);
  auto reader = stub->ReadRows(&context, request);
  v2::ReadRowsResponse response;
  std::string key, qualifier;
  while (reader->Read(&response)) {
    for (const auto& chunk : response.chunks()) {
      if (!chunk.row_key().empty()) key = chunk.row_key();
      if (chunk.has_qualifier()) qualifier = chunk.qualifier().value();
      rows[key][qualifier] += chunk.value();
    }
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "verify %s: ReadRows: %s\n", profile.c_str(),
                 s.error_message().c_str());
    return 1;
  }
  std::ifstream in(ack_path);
  std::string kind, name;
  long checked = 0, missing = 0, duplicated = 0, unsent = 0;
  std::map<std::string, std::set<long>> sent, acked;
  std::vector<std::string> m_rows;
  while (in >> kind >> name) {
    if (kind == "M") {
      m_rows.push_back(name);
      continue;
    }
    long seq = 0;
    in >> seq;
    sent[name].insert(seq);
    if (kind == "A") acked[name].insert(seq);
  }
  for (const std::string& row : m_rows) {
    ++checked;
    if (!rows.contains(row)) {
      if (++missing <= 5) std::fprintf(stderr, "missing row %s\n", row.c_str());
    }
  }
  for (const auto& [row, seqs] : acked) {
    std::map<long, int> seen;
    std::stringstream value(rows[row]["log"]);
    std::string item;
    while (std::getline(value, item, ';')) {
      if (!item.empty()) ++seen[std::stol(item)];
    }
    for (long seq : seqs) {
      ++checked;
      if (!seen.contains(seq) && ++missing <= 5) {
        std::fprintf(stderr, "append %s %ld missing\n", row.c_str(), seq);
      }
    }
    for (const auto& [seq, count] : seen) {
      if (count > 1 && ++duplicated <= 5) {
        std::fprintf(stderr, "append %s %ld applied %d times\n", row.c_str(),
                     seq, count);
      }
      if (!sent[row].contains(seq)) ++unsent;
    }
  }
  std::printf(
      "verify %s: %ld acknowledged writes checked, %ld missing, %ld applied "
      "twice, %ld never sent\n",
      profile.c_str(), checked, missing, duplicated, unsent);
  return missing == 0 && duplicated == 0 && unsent == 0 && checked > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "setup") return Setup(args[1]);
  if (args.size() == 6 && args[0] == "write") {
    return Write(args[1], args[2], args[3], std::stoi(args[4]), args[5]);
  }
  if (args.size() == 4 && args[0] == "verify") {
    return Verify(args[1], args[2], args[3]);
  }
  std::fprintf(stderr,
               "usage: crash_client setup TARGET | write TARGET ACKLOG WRITER "
               "THREADS STOPFILE | verify TARGET ACKLOG PROFILE\n");
  return 2;
}
