#include "cli/load_workloads.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <latch>
#include <thread>
#include <utility>

#include "btsim/report/v1/report.pb.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"
#include "scenarios/json_printer.h"
#include "sim/rng.h"

namespace btsim::cli {

namespace {

namespace v2 = ::google::bigtable::v2;
using Clock = std::chrono::steady_clock;

// Cells are written at one fixed, millisecond-granular timestamp, so a
// rerun overwrites them instead of stacking versions.
constexpr int64_t kTimestampMicros = 1'700'000'000'000'000;
constexpr std::chrono::seconds kRequestDeadline{120};
constexpr std::chrono::seconds kConnectTimeout{5};
constexpr char kFamily[] = "cf";
constexpr char kColumn[] = "c";                 // the loaded cell
constexpr char kCamColumn[] = "m";              // written by check_and_mutate
constexpr char kCounterColumn[] = "n";          // incremented by rmw_hot
constexpr char kHotRow[] = "hot-row-00000000";  // 16 bytes

// SplitMix64's finaliser: a bijection of 64-bit words.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string GrpcError(const grpc::Status& status) {
  return std::string(
             StatusCodeName(static_cast<StatusCode>(status.error_code()))) +
         ": " + status.error_message();
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + kRequestDeadline);
}

void FillSetCell(v2::Mutation::SetCell& cell, const char* column) {
  cell.set_family_name(kFamily);
  cell.set_column_qualifier(column);
  cell.set_timestamp_micros(kTimestampMicros);
}

// Reads a ReadRows stream to its end; the number of committed rows.
struct ReadOutcome {
  int64_t rows = 0;
  grpc::Status status;
};
ReadOutcome ReadAll(v2::Bigtable::Stub& stub,
                    const v2::ReadRowsRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub.ReadRows(&context, request);
  v2::ReadRowsResponse response;
  ReadOutcome outcome;
  while (reader->Read(&response)) {
    for (const auto& chunk : response.chunks()) {
      if (chunk.commit_row()) ++outcome.rows;
    }
  }
  outcome.status = reader->Finish();
  return outcome;
}

// Sends one MutateRows request; the first failure (of the call or of an
// entry), or an empty string.
std::string MutateRowsOnce(v2::Bigtable::Stub& stub,
                           const v2::MutateRowsRequest& request) {
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub.MutateRows(&context, request);
  v2::MutateRowsResponse response;
  std::string error;
  int64_t acknowledged = 0;
  while (reader->Read(&response)) {
    for (const auto& entry : response.entries()) {
      ++acknowledged;
      if (entry.status().code() != 0 && error.empty()) {
        error = "entry " + std::to_string(entry.index()) + ": " +
                std::string(StatusCodeName(
                    static_cast<StatusCode>(entry.status().code()))) +
                ": " + entry.status().message();
      }
    }
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return GrpcError(status);
  if (error.empty() && acknowledged != request.entries_size()) {
    error = "MutateRows acknowledged " + std::to_string(acknowledged) + " of " +
            std::to_string(request.entries_size()) + " entries";
  }
  return error;
}

// The key index of row `index` written by a writer workload.
uint64_t WriteKeyIndex(const LoadConfig& config, uint64_t index) {
  return config.write_keys > 0
             ? index % static_cast<uint64_t>(config.write_keys)
             : index;
}

// Fills `request`'s entries with rows [first, first + request size) of the
// key space `prefix`, their keys' indexes mapped by `key_index`, their
// values from the rows' own indexes.
template <typename KeyIndex>
void FillBatch(v2::MutateRowsRequest& request, char prefix, uint64_t seed,
               uint64_t first, KeyIndex key_index) {
  for (int j = 0; j < request.entries_size(); ++j) {
    auto* entry = request.mutable_entries(j);
    AssignLoadKey(entry->mutable_row_key(), prefix, seed, key_index(first + j));
    AssignLoadValue(
        entry->mutable_mutations(0)->mutable_set_cell()->mutable_value(), seed,
        first + j);
  }
}

v2::MutateRowsRequest BatchTemplate(const LoadConfig& config, int size) {
  v2::MutateRowsRequest request;
  request.set_table_name(config.table_name);
  request.set_app_profile_id(config.app_profile);
  for (int j = 0; j < size; ++j) {
    FillSetCell(*request.add_entries()->add_mutations()->mutable_set_cell(),
                kColumn);
  }
  return request;
}

// The result of one request: items done, and an error message or "".
struct OpOutcome {
  int64_t items = 0;
  std::string error;
};
// One client thread's request function; `index` is the request number
// (thread t issues t, t + threads, t + 2 * threads, ...).
using OpFn = std::function<OpOutcome(int64_t index)>;
// Builds a thread's OpFn around its own stub and random stream.
using OpFactory =
    std::function<OpFn(std::shared_ptr<v2::Bigtable::Stub>, sim::Rng)>;

struct ThreadStats {
  std::vector<int64_t> latencies_ns;
  int64_t requests = 0;
  int64_t items = 0;
  int64_t errors = 0;
  std::string first_error;
  Clock::time_point end;
};

Result<WorkloadResult> RunThreads(std::string_view workload, int threads,
                                  const LoadConfig& config, std::string unit,
                                  const OpFactory& factory) {
  // Connect every channel before the clock starts.
  std::vector<OpFn> ops;
  for (int t = 0; t < threads; ++t) {
    auto channel = MakeLoadChannel(config.target, t + 1);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                   kConnectTimeout)) {
      return Unavailable("cannot connect to " + config.target + " within " +
                         std::to_string(kConnectTimeout.count()) + " s");
    }
    sim::Rng rng = sim::Rng(config.seed)
                       .Fork(std::string(workload) + "/" +
                             std::to_string(threads) + "/" + std::to_string(t));
    ops.push_back(factory(v2::Bigtable::NewStub(channel), rng));
  }

  std::vector<ThreadStats> stats(threads);
  std::latch start_line(threads + 1);
  Clock::time_point start;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ThreadStats& s = stats[t];
      s.latencies_ns.reserve(1 << 14);
      start_line.arrive_and_wait();
      const Clock::time_point begin = Clock::now();
      const Clock::time_point stop = begin + config.duration;
      // Open loop: request `index` (thread t sends t, t + threads, ...) is
      // due at start + index / rate, so the threads interleave evenly.
      const double interval_ns = config.rate > 0 ? 1e9 / config.rate : 0;
      for (int64_t index = t;; index += threads) {
        if (config.ops > 0 ? index >= config.ops : Clock::now() >= stop) {
          break;
        }
        if (interval_ns > 0) {
          const Clock::time_point due =
              start + std::chrono::nanoseconds(static_cast<int64_t>(
                          interval_ns * static_cast<double>(index)));
          if (config.ops == 0 && due >= stop) break;
          std::this_thread::sleep_until(due);
        }
        const Clock::time_point t0 = Clock::now();
        OpOutcome outcome = ops[t](index);
        const Clock::time_point t1 = Clock::now();
        s.latencies_ns.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0)
                .count());
        ++s.requests;
        s.items += outcome.items;
        if (!outcome.error.empty()) {
          if (s.errors == 0) s.first_error = std::move(outcome.error);
          ++s.errors;
        }
      }
      s.end = Clock::now();
    });
  }
  start = Clock::now();
  start_line.arrive_and_wait();
  for (auto& worker : workers) worker.join();

  WorkloadResult result;
  result.workload = std::string(workload);
  result.label = result.workload + "/" + std::to_string(threads) + "t";
  result.threads = threads;
  result.unit = std::move(unit);
  std::vector<int64_t> latencies;
  Clock::time_point end = start;
  for (ThreadStats& s : stats) {
    result.requests += s.requests;
    result.items += s.items;
    if (s.errors > 0 && result.errors == 0) result.first_error = s.first_error;
    result.errors += s.errors;
    latencies.insert(latencies.end(), s.latencies_ns.begin(),
                     s.latencies_ns.end());
    end = std::max(end, s.end);
  }
  result.seconds = std::chrono::duration<double>(end - start).count();
  result.rate = result.seconds > 0 ? result.items / result.seconds : 0;
  result.p50_us = Percentile(latencies, 0.50) / 1e3;
  result.p99_us = Percentile(latencies, 0.99) / 1e3;
  return result;
}

}  // namespace

const std::vector<std::string>& WorkloadNames() {
  static const auto* names = new std::vector<std::string>{
      std::string(kWorkloadMutateRow), std::string(kWorkloadMutateRows),
      std::string(kWorkloadScan),      std::string(kWorkloadPointRead),
      std::string(kWorkloadRmwHot),    std::string(kWorkloadCheckAndMutate)};
  return *names;
}

bool NeedsLoadedRows(std::string_view workload) {
  return workload == kWorkloadScan || workload == kWorkloadPointRead ||
         workload == kWorkloadCheckAndMutate;
}

void AssignLoadKey(std::string* out, char prefix, uint64_t seed,
                   uint64_t index) {
  // The prefix, then 15 lowercase hex digits (a 60-bit value).
  uint64_t v = Mix(Mix(seed) ^ index) >> 4;
  out->resize(16);
  char* p = out->data();
  p[0] = prefix;
  for (int i = 15; i >= 1; --i) {
    p[i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  }
}

void AssignLoadValue(std::string* out, uint64_t seed, uint64_t index) {
  // 20 decimal digits, zero-padded (every uint64_t fits).
  uint64_t v = Mix(index ^ Mix(seed + 1));
  out->resize(20);
  char* p = out->data();
  for (int i = 19; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

std::string LoadKey(char prefix, uint64_t seed, uint64_t index) {
  std::string key;
  AssignLoadKey(&key, prefix, seed, index);
  return key;
}

std::string LoadValue(uint64_t seed, uint64_t index) {
  std::string value;
  AssignLoadValue(&value, seed, index);
  return value;
}

int64_t Percentile(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(q * static_cast<double>(values.size()));
  if (static_cast<double>(rank) < q * static_cast<double>(values.size())) {
    ++rank;  // ceil
  }
  const size_t index = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + index, values.end());
  return values[index];
}

std::shared_ptr<grpc::Channel> MakeLoadChannel(const std::string& target,
                                               int index) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("btsim.load.channel", index);
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

Status LoadRows(const LoadConfig& config,
                const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v2::Bigtable::NewStub(channel);
  const int batch = std::max(1, config.batch);
  for (int64_t first = 0; first < config.rows; first += batch) {
    const int size =
        static_cast<int>(std::min<int64_t>(batch, config.rows - first));
    v2::MutateRowsRequest request = BatchTemplate(config, size);
    FillBatch(request, 'r', config.seed, first,
              [](uint64_t index) { return index; });
    std::string error = MutateRowsOnce(*stub, request);
    if (!error.empty()) {
      return Status(StatusCode::kUnknown,
                    "loading rows " + std::to_string(first) + "..: " + error);
    }
  }
  return OkStatus();
}

Result<WorkloadResult> RunWorkload(std::string_view workload, int threads,
                                   const LoadConfig& config) {
  threads = std::max(1, threads);
  using StubPtr = std::shared_ptr<v2::Bigtable::Stub>;
  const LoadConfig& c = config;

  if (workload == kWorkloadMutateRow) {
    return RunThreads(
        workload, threads, c, "ops/s", [&c](StubPtr stub, sim::Rng) {
          auto request = std::make_shared<v2::MutateRowRequest>();
          request->set_table_name(c.table_name);
          request->set_app_profile_id(c.app_profile);
          FillSetCell(*request->add_mutations()->mutable_set_cell(), kColumn);
          return [&c, stub, request](int64_t index) {
            request->set_row_key(LoadKey(
                'm', c.seed, WriteKeyIndex(c, static_cast<uint64_t>(index))));
            request->mutable_mutations(0)->mutable_set_cell()->set_value(
                LoadValue(c.seed, index));
            grpc::ClientContext context;
            SetDeadline(context);
            v2::MutateRowResponse response;
            grpc::Status status =
                stub->MutateRow(&context, *request, &response);
            return OpOutcome{1, status.ok() ? "" : GrpcError(status)};
          };
        });
  }
  if (workload == kWorkloadMutateRows) {
    return RunThreads(
        workload, threads, c, "rows/s", [&c](StubPtr stub, sim::Rng) {
          const int batch = std::max(1, c.batch);
          auto request =
              std::make_shared<v2::MutateRowsRequest>(BatchTemplate(c, batch));
          return [&c, stub, request, batch](int64_t index) {
            FillBatch(*request, 'w', c.seed,
                      static_cast<uint64_t>(index) * batch,
                      [&c](uint64_t row) { return WriteKeyIndex(c, row); });
            return OpOutcome{batch, MutateRowsOnce(*stub, *request)};
          };
        });
  }
  if (workload == kWorkloadScan) {
    return RunThreads(
        workload, threads, c, "rows/s", [&c](StubPtr stub, sim::Rng) {
          auto request = std::make_shared<v2::ReadRowsRequest>();
          request->set_table_name(c.table_name);
          request->set_app_profile_id(c.app_profile);
          return [&c, stub, request](int64_t) {
            ReadOutcome read = ReadAll(*stub, *request);
            OpOutcome outcome{read.rows, ""};
            if (!read.status.ok()) {
              outcome.error = GrpcError(read.status);
            } else if (read.rows < c.rows) {
              outcome.error = "scan returned " + std::to_string(read.rows) +
                              " rows, expected at least " +
                              std::to_string(c.rows);
            }
            return outcome;
          };
        });
  }
  if (workload == kWorkloadPointRead) {
    if (c.rows <= 0) return InvalidArgument("--rows: point_read needs rows");
    return RunThreads(
        workload, threads, c, "ops/s", [&c](StubPtr stub, sim::Rng rng) {
          auto request = std::make_shared<v2::ReadRowsRequest>();
          request->set_table_name(c.table_name);
          request->set_app_profile_id(c.app_profile);
          request->mutable_rows()->add_row_keys();
          auto random = std::make_shared<sim::Rng>(rng);
          return [&c, stub, request, random](int64_t) {
            const uint64_t row = random->Uniform(static_cast<uint64_t>(c.rows));
            *request->mutable_rows()->mutable_row_keys(0) =
                LoadKey('r', c.seed, row);
            ReadOutcome read = ReadAll(*stub, *request);
            OpOutcome outcome{1, ""};
            if (!read.status.ok()) {
              outcome.error = GrpcError(read.status);
            } else if (read.rows != 1) {
              outcome.error = "point read of loaded row " +
                              request->rows().row_keys(0) + " returned " +
                              std::to_string(read.rows) + " rows";
            }
            return outcome;
          };
        });
  }
  if (workload == kWorkloadRmwHot) {
    return RunThreads(
        workload, threads, c, "ops/s", [&c](StubPtr stub, sim::Rng) {
          auto request = std::make_shared<v2::ReadModifyWriteRowRequest>();
          request->set_table_name(c.table_name);
          request->set_app_profile_id(c.app_profile);
          request->set_row_key(kHotRow);
          auto* rule = request->add_rules();
          rule->set_family_name(kFamily);
          rule->set_column_qualifier(kCounterColumn);
          rule->set_increment_amount(1);
          return [stub, request](int64_t) {
            grpc::ClientContext context;
            SetDeadline(context);
            v2::ReadModifyWriteRowResponse response;
            grpc::Status status =
                stub->ReadModifyWriteRow(&context, *request, &response);
            OpOutcome outcome{1, ""};
            if (!status.ok()) {
              outcome.error = GrpcError(status);
            } else if (response.row().families_size() == 0) {
              outcome.error = "ReadModifyWriteRow returned no cell";
            }
            return outcome;
          };
        });
  }
  if (workload == kWorkloadCheckAndMutate) {
    if (c.rows <= 0) {
      return InvalidArgument("--rows: check_and_mutate needs rows");
    }
    return RunThreads(
        workload, threads, c, "ops/s", [&c](StubPtr stub, sim::Rng rng) {
          auto request = std::make_shared<v2::CheckAndMutateRowRequest>();
          request->set_table_name(c.table_name);
          request->set_app_profile_id(c.app_profile);
          request->mutable_predicate_filter()
              ->set_column_qualifier_regex_filter(kColumn);
          FillSetCell(*request->add_true_mutations()->mutable_set_cell(),
                      kCamColumn);
          auto random = std::make_shared<sim::Rng>(rng);
          return [&c, stub, request, random](int64_t index) {
            const uint64_t row = random->Uniform(static_cast<uint64_t>(c.rows));
            request->set_row_key(LoadKey('r', c.seed, row));
            request->mutable_true_mutations(0)->mutable_set_cell()->set_value(
                LoadValue(c.seed + 7, index));
            grpc::ClientContext context;
            SetDeadline(context);
            v2::CheckAndMutateRowResponse response;
            grpc::Status status =
                stub->CheckAndMutateRow(&context, *request, &response);
            OpOutcome outcome{1, ""};
            if (!status.ok()) {
              outcome.error = GrpcError(status);
            } else if (!response.predicate_matched()) {
              outcome.error =
                  "predicate did not match loaded row " + request->row_key();
            }
            return outcome;
          };
        });
  }
  return InvalidArgument("--workload: unknown workload '" +
                         std::string(workload) + "'");
}

std::string FormatText(const WorkloadResult& r) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "%-22s %12.0f %-6s  p50 %8.3f ms  p99 %8.3f ms  errors %" PRId64
                "  (%" PRId64 " requests in %.2f s)",
                r.label.c_str(), r.rate, r.unit.c_str(), r.p50_us / 1e3,
                r.p99_us / 1e3, r.errors, r.requests, r.seconds);
  return line;
}

std::string CsvHeader() {
  return "workload,label,threads,requests,items,unit,seconds,rate,p50_us,"
         "p99_us,errors";
}

std::string FormatCsv(const WorkloadResult& r) {
  char line[256];
  std::snprintf(
      line, sizeof(line),
      "%s,%s,%d,%" PRId64 ",%" PRId64 ",%s,%.4f,%.1f,%.1f,%.1f,%" PRId64,
      r.workload.c_str(), r.label.c_str(), r.threads, r.requests, r.items,
      r.unit.c_str(), r.seconds, r.rate, r.p50_us, r.p99_us, r.errors);
  return line;
}

Result<std::string> FormatJson(const WorkloadResult& r) {
  btsim::report::v1::LoadResult message;
  message.set_workload(scenarios::JsonText(r.workload));
  message.set_label(scenarios::JsonText(r.label));
  message.set_unit(scenarios::JsonText(r.unit));
  message.set_threads(r.threads);
  message.set_requests(static_cast<double>(r.requests));
  message.set_items(static_cast<double>(r.items));
  message.set_seconds(scenarios::RoundToDecimals(r.seconds, 4));
  message.set_rate(scenarios::RoundToDecimals(r.rate, 1));
  message.set_p50_us(scenarios::RoundToDecimals(r.p50_us, 1));
  message.set_p99_us(scenarios::RoundToDecimals(r.p99_us, 1));
  message.set_errors(static_cast<double>(r.errors));
  message.set_first_error(scenarios::JsonText(r.first_error));
  // Once per workload: a printer of its own costs nothing that matters.
  scenarios::JsonPrinter printer(scenarios::JsonPrinter::Layout::kOneLine);
  std::string json;
  BTSIM_RETURN_IF_ERROR(printer.Print(message, json));
  return json;
}

}  // namespace btsim::cli
