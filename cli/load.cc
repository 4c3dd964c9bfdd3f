#include "cli/load.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "cli/duration.h"
#include "cli/load_workloads.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"

namespace btsim::cli {

namespace {

namespace admin = ::google::bigtable::admin::v2;

constexpr std::chrono::seconds kConnectTimeout{5};
constexpr std::chrono::seconds kAdminDeadline{30};

std::string GrpcError(const grpc::Status& status) {
  return std::string(
             StatusCodeName(static_cast<StatusCode>(status.error_code()))) +
         ": " + status.error_message();
}

// HOST:PORT with a non-empty host (a bracketed IPv6 literal allowed) and a
// port in 1..65535.
bool ValidTarget(const std::string& target) {
  const size_t colon = target.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string host = target.substr(0, colon);
  const std::string port = target.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  const int number = std::stoi(port);
  if (number < 1 || number > 65535) return false;
  if (host.front() == '[') return host.back() == ']' && host.size() > 2;
  return host.find_first_of(":/ ") == std::string::npos;
}

// The workloads to run, with their thread counts, in order.
std::vector<std::pair<std::string, int>> Plan(const LoadArgs& args) {
  auto threads = [&](int fallback) {
    return args.threads > 0 ? args.threads : fallback;
  };
  if (args.workload != "all") return {{args.workload, threads(1)}};
  std::vector<std::pair<std::string, int>> plan = {
      {std::string(kWorkloadScan), threads(1)},
      {std::string(kWorkloadPointRead), threads(1)},
      {std::string(kWorkloadCheckAndMutate), threads(1)},
      {std::string(kWorkloadRmwHot), threads(1)},
      {std::string(kWorkloadMutateRow), threads(1)},
      {std::string(kWorkloadMutateRows), threads(1)}};
  if (args.threads == 0) plan.emplace_back(kWorkloadMutateRows, 4);
  return plan;
}

}  // namespace

CLI::App* AddLoadCommand(CLI::App& app, LoadArgs& args) {
  CLI::App* load = app.add_subcommand(
      "load",
      "Drive a Bigtable endpoint (cbtemulator, btsim serve, ...) with "
      "closed-loop (or, with --rate, open-loop) workloads and print "
      "throughput, p50/p99 latency and errors per workload");
  load->add_option("--target", args.target,
                   "Address of the server, HOST:PORT (default: "
                   "$BIGTABLE_EMULATOR_HOST)")
      ->envname("BIGTABLE_EMULATOR_HOST")
      ->required();
  std::vector<std::string> choices = WorkloadNames();
  choices.push_back("all");
  load->add_option("--workload", args.workload,
                   "mutate_row, mutate_rows, scan, point_read, rmw_hot, "
                   "check_and_mutate, or all")
      ->capture_default_str()
      ->check(CLI::IsMember(choices));
  CLI::Option* duration = load->add_option(
      "--duration", args.duration,
      "How long each workload runs, e.g. 500ms, 5s (default 5s)");
  load->add_option("--ops", args.ops,
                   "Requests per workload instead of --duration (a "
                   "MutateRows batch or a full scan is one request)")
      ->check(CLI::PositiveNumber)
      ->excludes(duration);
  load->add_option("--rate", args.rate,
                   "Open loop: this many requests per second in all, on one "
                   "schedule spread over the threads (a request late for "
                   "its slot goes at once; latency is measured from the "
                   "send; compare the rate printed); default: closed loop, "
                   "each thread as fast as it can")
      ->check(CLI::PositiveNumber);
  load->add_option("--threads", args.threads,
                   "Client threads, each with its own connection (default 1; "
                   "`all` runs mutate_rows with 1 and with 4)")
      ->check(CLI::Range(1, 256));
  load->add_option("--rows", args.rows,
                   "Rows loaded before the read workloads (scan, point_read, "
                   "check_and_mutate)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  load->add_option("--write-keys", args.write_keys,
                   "mutate_row and mutate_rows overwrite rows among this many "
                   "keys (default: a new row for every row written)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  load->add_option("--batch", args.batch, "Entries per MutateRows request")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000));
  load->add_option("--seed", args.seed,
                   "Seed of the row keys, values and random choices")
      ->capture_default_str();
  load->add_option("--project", args.project, "Project id")
      ->capture_default_str();
  load->add_option("--instance", args.instance, "Instance id")
      ->capture_default_str();
  load->add_option("--table", args.table,
                   "Table id; created (with family cf) if missing")
      ->capture_default_str();
  load->add_option("--app-profile", args.app_profile,
                   "App profile of every data request (default: the "
                   "server's default profile)");
  load->add_flag("--keep-table", args.keep_table,
                 "Leave the table and its rows in place at the end (default: "
                 "delete it)");
  load->add_flag("--skip-load", args.skip_load,
                 "Do not load the --rows rows: the table already holds them "
                 "(from an earlier run with the same --rows, --seed and "
                 "--keep-table)");
  CLI::Option* json =
      load->add_flag("--json", args.json, "One JSON object per workload");
  load->add_flag("--csv", args.csv, "CSV: a header, then one line per workload")
      ->excludes(json);
  return load;
}

int RunLoad(const LoadArgs& args, std::ostream& out, std::ostream& err) {
  // Usage checks first, so that a usage error needs no server.
  if (!ValidTarget(args.target)) {
    err << "btsim load: --target: expected HOST:PORT (e.g. 127.0.0.1:8086), "
           "got '"
        << args.target << "'\n";
    return kLoadUsageError;
  }
  LoadConfig config;
  config.target = args.target;
  const std::string parent =
      "projects/" + args.project + "/instances/" + args.instance;
  config.table_name = parent + "/tables/" + args.table;
  config.app_profile = args.app_profile;
  config.ops = args.ops;
  config.rate = args.rate;
  config.rows = args.rows;
  config.write_keys = args.write_keys;
  config.batch = args.batch;
  config.seed = args.seed;
  if (!args.duration.empty()) {
    auto duration = ParseDuration(args.duration);
    if (!duration.ok()) {
      err << "btsim load: --duration: " << duration.status().message() << "\n";
      return kLoadUsageError;
    }
    if (duration->count() <= 0) {
      err << "btsim load: --duration: must be positive\n";
      return kLoadUsageError;
    }
    config.duration = *duration;
  }

  auto channel = MakeLoadChannel(args.target, 0);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 kConnectTimeout)) {
    err << "btsim load: cannot connect to " << args.target << " within "
        << kConnectTimeout.count() << " s\n";
    return kLoadFailed;
  }
  auto table_admin = admin::BigtableTableAdmin::NewStub(channel);
  {
    admin::CreateTableRequest request;
    request.set_parent(parent);
    request.set_table_id(args.table);
    (*request.mutable_table()->mutable_column_families())["cf"];
    admin::Table table;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kAdminDeadline);
    grpc::Status status = table_admin->CreateTable(&context, request, &table);
    if (!status.ok() &&
        status.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      err << "btsim load: CreateTable " << config.table_name << ": "
          << GrpcError(status) << "\n";
      return kLoadFailed;
    }
  }

  if (args.csv) out << CsvHeader() << "\n";
  bool loaded = false;
  bool failed = false;
  for (const auto& [workload, threads] : Plan(args)) {
    if (NeedsLoadedRows(workload) && !loaded && !args.skip_load) {
      const auto t0 = std::chrono::steady_clock::now();
      Status status = LoadRows(config, channel);
      if (!status.ok()) {
        err << "btsim load: " << status.message() << "\n";
        failed = true;
        break;
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      char line[160];
      std::snprintf(line, sizeof(line),
                    "btsim load: loaded %lld rows in %.2f s (%.0f rows/s)\n",
                    static_cast<long long>(config.rows), seconds,
                    seconds > 0 ? config.rows / seconds : 0.0);
      err << line << std::flush;
      loaded = true;
    }
    auto result = RunWorkload(workload, threads, config);
    if (!result.ok()) {
      err << "btsim load: " << workload << ": " << result.status().message()
          << "\n";
      failed = true;
      break;
    }
    if (args.csv) {
      out << FormatCsv(*result) << "\n";
    } else if (args.json) {
      Result<std::string> json = FormatJson(*result);
      if (!json.ok()) {
        err << "btsim load: " << json.status().message() << "\n";
        failed = true;
        break;
      }
      out << *json << "\n";
    } else {
      out << FormatText(*result) << "\n";
    }
    out << std::flush;
    if (result->errors > 0) {
      err << "btsim load: " << result->label << ": " << result->errors
          << " error(s); first: " << result->first_error << "\n";
      failed = true;
    }
  }

  if (!args.keep_table) {
    admin::DeleteTableRequest request;
    request.set_name(config.table_name);
    google::protobuf::Empty empty;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kAdminDeadline);
    grpc::Status status = table_admin->DeleteTable(&context, request, &empty);
    if (!status.ok()) {
      err << "btsim load: warning: DeleteTable " << config.table_name << ": "
          << GrpcError(status) << "\n";
    }
  }
  return failed ? kLoadFailed : 0;
}

}  // namespace btsim::cli
