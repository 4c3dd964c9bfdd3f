#include "cli/ctl.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "btsim/control/v1/control.grpc.pb.h"
#include "cli/duration.h"

namespace btsim::cli {

namespace control = ::btsim::control::v1;

namespace {

constexpr std::chrono::seconds kDeadline{10};

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

// "3s", "200ms", "1.5ms", "250us", "0".
std::string FormatDuration(const google::protobuf::Duration& d) {
  const int64_t ns = d.seconds() * 1'000'000'000 + d.nanos();
  if (ns == 0) return "0";
  struct Unit {
    int64_t ns;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
  for (const Unit& unit : kUnits) {
    if (ns < unit.ns && unit.ns != 1) continue;
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f",
                  static_cast<double>(ns) / static_cast<double>(unit.ns));
    std::string out = text;
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
    return out + unit.suffix;
  }
  return std::to_string(ns) + "ns";
}

// A node load as a CPU percentage, "0.0%" to "100.0%": offered load beyond
// a node's capacity (load > 1) shows as 100%.
std::string Percent(double load) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%",
                std::clamp(load, 0.0, 1.0) * 100.0);
  return text;
}

std::string StorageName(control::StorageType storage) {
  switch (storage) {
    case control::SSD:
      return "SSD";
    case control::HDD:
      return "HDD";
    default:
      return "-";
  }
}

// Left-aligned columns separated by two spaces; trailing blanks trimmed.
void PrintTable(const std::vector<std::vector<std::string>>& rows,
                const std::string& indent, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

// " in projects/P/instances/I" or " (every instance)".
std::string Scope(const CtlArgs& args) {
  return args.instance.empty() ? " (every instance)" : " in " + args.instance;
}

}  // namespace

CLI::App* AddCtlCommand(CLI::App& app, CtlArgs& args) {
  CLI::App* ctl = app.add_subcommand(
      "ctl",
      "Inject live faults into a running `btsim serve` and show its state, "
      "through btsim's control service on the same port");
  // Lets --target and --instance also come after the command.
  ctl->fallthrough();
  ctl->add_option("--target", args.target,
                  "Address of the running server, HOST:PORT (default: "
                  "$BIGTABLE_EMULATOR_HOST)")
      ->envname("BIGTABLE_EMULATOR_HOST")
      ->required();
  ctl->add_option("--instance", args.instance,
                  "Instance to act on, projects/P/instances/I (created on "
                  "first use); default: every instance the server has served");
  ctl->require_subcommand(1);

  auto add = [&](const std::string& name, const std::string& description) {
    CLI::App* sub = ctl->add_subcommand(name, description);
    sub->callback([&args, name] { args.command = name; });
    return sub;
  };
  auto one_way = [&](CLI::App* sub, const std::string& what) {
    sub->add_flag("--one-way", args.one_way,
                  "Only the direction A -> B " + what);
  };

  CLI::App* down = add("cluster-down",
                       "cluster-down ID [--blackhole]: take cluster ID down "
                       "(it stops serving and replicating; routing fails "
                       "over once its front end has seen it fail)");
  down->add_option("ID", args.cluster_a, "Cluster id")->required();
  down->add_flag("--blackhole", args.blackhole,
                 "Requests hang until their deadline instead of failing "
                 "at once with UNAVAILABLE");
  CLI::App* up = add("cluster-up",
                     "cluster-up ID: bring cluster ID back up (it catches up "
                     "on replication)");
  up->add_option("ID", args.cluster_a, "Cluster id")->required();

  CLI::App* partition =
      add("partition",
          "partition A B [--one-way]: cut replication between clusters A "
          "and B");
  partition->add_option("A", args.cluster_a, "Cluster id")->required();
  partition->add_option("B", args.cluster_b, "Cluster id")->required();
  one_way(partition, "is cut");
  CLI::App* heal =
      add("heal",
          "heal A B [--one-way]: restore replication between clusters A and "
          "B");
  heal->add_option("A", args.cluster_a, "Cluster id")->required();
  heal->add_option("B", args.cluster_b, "Cluster id")->required();
  one_way(heal, "is restored");

  CLI::App* latency =
      add("latency",
          "latency A B DURATION [--one-way]: set the replication delay "
          "between clusters A and B, e.g. 500ms, 3s; 0 resets it");
  latency->add_option("A", args.cluster_a, "Cluster id")->required();
  latency->add_option("B", args.cluster_b, "Cluster id")->required();
  latency
      ->add_option("DURATION", args.duration,
                   "One-way delay, e.g. 250ms, 3s, 1m; 0 resets the link")
      ->required();
  one_way(latency, "changes");

  CLI::App* slow =
      add("slow",
          "slow ID DURATION: answer every request cluster ID serves DURATION "
          "later, e.g. 200ms; 0 restores full speed");
  slow->add_option("ID", args.cluster_a, "Cluster id")->required();
  slow->add_option("DURATION", args.duration, "Added latency, e.g. 200ms, 2s")
      ->required();

  CLI::App* errors =
      add("errors",
          "errors ID FRACTION [--code CODE] [--method RPC]: fail that "
          "fraction of cluster ID's requests; 0 stops");
  errors->add_option("ID", args.cluster_a, "Cluster id")->required();
  errors
      ->add_option("FRACTION", args.fraction,
                   "Fraction of requests that fail, 0..1")
      ->required();
  errors->add_option("--code", args.code,
                     "gRPC code name (default UNAVAILABLE)");
  errors->add_option("--method", args.method,
                     "Only this RPC, e.g. ReadRows, MutateRow");

  CLI::App* cut =
      add("cut-clients",
          "cut-clients ID: cut the network between the server's clients "
          "(and its routing front end) and cluster ID; calls hang until "
          "their deadline, replication keeps flowing");
  cut->add_option("ID", args.cluster_a, "Cluster id")->required();
  auto* requests_only =
      cut->add_flag("--requests-only", args.requests_only,
                    "Only requests are lost (nothing executes)");
  cut->add_flag("--replies-only", args.replies_only,
                "Only replies are lost (requests execute)")
      ->excludes(requests_only);
  CLI::App* mend =
      add("mend-clients", "mend-clients ID: restore what cut-clients cut");
  mend->add_option("ID", args.cluster_a, "Cluster id")->required();

  CLI::App* stall = add("stall-replication",
                        "stall-replication ID: cluster ID keeps serving but "
                        "ships nothing of its log");
  stall->add_option("ID", args.cluster_a, "Cluster id")->required();
  CLI::App* resume = add("resume-replication",
                         "resume-replication ID: cluster ID ships its log "
                         "again");
  resume->add_option("ID", args.cluster_a, "Cluster id")->required();
  CLI::App* skew =
      add("clock-skew",
          "clock-skew ID OFFSET: offset cluster ID's clock, e.g. 2s, -500ms "
          "(its timestamps and commit order); 0 ends it");
  skew->add_option("ID", args.cluster_a, "Cluster id")->required();
  skew->add_option("OFFSET", args.duration,
                   "Offset, e.g. 2s or -500ms; at most 1h either way")
      ->required()
      ->allow_extra_args(false);

  add("start",
      "start: start the scenario of a `btsim serve --scenario FILE "
      "--wait-for-start` (its timeline's time 0 is now)");
  add("finish",
      "finish: end the scenario of a `btsim serve --scenario` now; the "
      "server settles, writes its report and exits with the verdict");
  add("status",
      "status: show clusters (up/down, faults, and what the routing front "
      "end believes), replication backlog, cuts and latency per link, and "
      "app profiles");
  return ctl;
}

int RunCtl(const CtlArgs& args, std::ostream& out, std::ostream& err) {
  // Argument checks first, so that a usage error needs no server.
  google::protobuf::Duration latency;
  bool negative = false;
  if (args.command == "latency" || args.command == "slow" ||
      args.command == "clock-skew") {
    std::string_view text = args.duration;
    if (args.command == "clock-skew" && !text.empty() && text[0] == '-') {
      negative = true;
      text.remove_prefix(1);
    }
    auto parsed = ParseDuration(text);
    if (!parsed.ok()) {
      err << "btsim ctl: " << args.command << ": " << parsed.status().message()
          << "\n";
      return kCtlUsageError;
    }
    const int64_t ms = parsed->count();
    latency.set_seconds(ms / 1000);
    latency.set_nanos(static_cast<int32_t>(ms % 1000) * 1'000'000);
  }

  auto channel =
      grpc::CreateChannel(args.target, grpc::InsecureChannelCredentials());
  auto stub = control::Control::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kDeadline);
  grpc::Status status;
  std::string done;  // printed on success
  const std::string& a = args.cluster_a;
  const std::string& b = args.cluster_b;
  const std::string arrow = args.one_way ? " -> " : " <-> ";
  if (args.command == "cluster-down" || args.command == "cluster-up") {
    control::SetClusterStateRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    request.set_down(args.command == "cluster-down");
    if (args.blackhole) request.set_mode(control::BLACKHOLE);
    control::SetClusterStateResponse response;
    status = stub->SetClusterState(&context, request, &response);
    done = "cluster " + a + " is " +
           (request.down() ? (args.blackhole ? "down (black-holed)" : "down")
                           : "up");
  } else if (args.command == "slow") {
    control::SetSlownessRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    const bool restore = latency.seconds() == 0 && latency.nanos() == 0;
    if (!restore) *request.mutable_added_latency() = latency;
    control::SetSlownessResponse response;
    status = stub->SetSlowness(&context, request, &response);
    done = "cluster " + a +
           (restore ? " at full speed"
                    : " answers " + FormatDuration(latency) + " later");
  } else if (args.command == "errors") {
    control::InjectErrorsRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    request.set_fraction(args.fraction);
    request.set_code(args.code);
    request.set_method(args.method);
    control::InjectErrorsResponse response;
    status = stub->InjectErrors(&context, request, &response);
    std::ostringstream what;
    what << "cluster " << a;
    if (args.fraction == 0) {
      what << " no longer fails requests";
    } else {
      what << " fails " << args.fraction * 100 << "% of "
           << (args.method.empty() ? "requests" : args.method) << " with "
           << (args.code.empty() ? "UNAVAILABLE" : args.code);
    }
    done = what.str();
  } else if (args.command == "stall-replication" ||
             args.command == "resume-replication") {
    control::SetReplicationStallRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    request.set_stalled(args.command == "stall-replication");
    control::SetReplicationStallResponse response;
    status = stub->SetReplicationStall(&context, request, &response);
    done = "cluster " + a +
           (request.stalled() ? " ships nothing" : " ships its log again");
  } else if (args.command == "clock-skew") {
    control::SetClockSkewRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    google::protobuf::Duration offset = latency;
    if (negative) {
      offset.set_seconds(-offset.seconds());
      offset.set_nanos(-offset.nanos());
    }
    *request.mutable_offset() = offset;
    control::SetClockSkewResponse response;
    status = stub->SetClockSkew(&context, request, &response);
    const bool zero = latency.seconds() == 0 && latency.nanos() == 0;
    done = "cluster " + a + "'s clock " +
           (zero ? std::string("agrees again")
                 : std::string(negative ? "-" : "+") + FormatDuration(latency));
  } else if (args.command == "cut-clients" || args.command == "mend-clients") {
    control::CutClientsRequest request;
    request.set_instance(args.instance);
    request.set_cluster_id(a);
    request.set_mend(args.command == "mend-clients");
    if (args.requests_only) {
      request.set_direction(control::CutClientsRequest::REQUESTS);
    } else if (args.replies_only) {
      request.set_direction(control::CutClientsRequest::REPLIES);
    }
    control::CutClientsResponse response;
    status = stub->CutClients(&context, request, &response);
    done = request.mend() ? "clients reach cluster " + a + " again"
                          : "clients cut off from cluster " + a;
  } else if (args.command == "partition" || args.command == "heal") {
    control::SetPartitionRequest request;
    request.set_instance(args.instance);
    request.set_cluster_a(a);
    request.set_cluster_b(b);
    request.set_one_way(args.one_way);
    request.set_heal(args.command == "heal");
    control::SetPartitionResponse response;
    status = stub->SetPartition(&context, request, &response);
    done = "link " + a + arrow + b + (request.heal() ? " healed" : " cut");
  } else if (args.command == "latency") {
    control::SetLatencyRequest request;
    request.set_instance(args.instance);
    request.set_cluster_a(a);
    request.set_cluster_b(b);
    request.set_one_way(args.one_way);
    const bool reset = latency.seconds() == 0 && latency.nanos() == 0;
    if (!reset) *request.mutable_latency() = latency;
    control::SetLatencyResponse response;
    status = stub->SetLatency(&context, request, &response);
    done = "link " + a + arrow + b + " latency " +
           (reset ? "reset" : "set to " + FormatDuration(latency));
  } else if (args.command == "start") {
    control::StartScenarioRequest request;
    control::StartScenarioResponse response;
    status = stub->StartScenario(&context, request, &response);
    if (status.ok()) out << "scenario started\n";
  } else if (args.command == "finish") {
    control::FinishScenarioRequest request;
    control::FinishScenarioResponse response;
    status = stub->FinishScenario(&context, request, &response);
    if (status.ok()) out << "scenario finishing\n";
  } else if (args.command == "status") {
    control::GetStatusRequest request;
    request.set_instance(args.instance);
    control::GetStatusResponse response;
    status = stub->GetStatus(&context, request, &response);
    if (status.ok()) out << FormatStatus(response);
  } else {
    err << "btsim ctl: unknown command '" << args.command
        << "'; see btsim ctl --help\n";
    return kCtlUsageError;
  }
  if (!status.ok()) {
    err << "btsim ctl: " << CodeName(status.error_code()) << ": "
        << status.error_message() << "\n";
    return kCtlRpcError;
  }
  if (!done.empty()) out << done << Scope(args) << "\n";
  return 0;
}

std::string FormatStatus(const control::GetStatusResponse& status) {
  std::ostringstream out;
  if (status.instances().empty()) {
    out << "no instances yet (an instance is created when first used; name "
           "one with --instance)\n";
    return out.str();
  }
  bool first = true;
  for (const control::InstanceStatus& instance : status.instances()) {
    if (!first) out << "\n";
    first = false;
    out << "instance " << instance.name() << "\n";
    out << "  clusters:\n";
    std::vector<std::vector<std::string>> rows;
    for (const control::ClusterStatus& c : instance.clusters()) {
      std::string down = "up";
      if (c.down()) {
        down =
            c.down_mode() == control::BLACKHOLE ? "DOWN (black hole)" : "DOWN";
      }
      std::string front_end = "front end: admitted";
      if (c.ejected()) {
        front_end =
            "front end: EJECTED " + FormatDuration(c.ejected_ago()) + " ago";
      }
      if (c.ejections() > 0) {
        front_end += " (" + std::to_string(c.ejections()) + " ejection(s))";
      }
      rows.push_back({c.id(), c.zone(), down,
                      std::to_string(c.nodes()) + " node(s)", front_end});
    }
    PrintTable(rows, "    ", out);
    rows.clear();
    for (const control::ClusterStatus& c : instance.clusters()) {
      std::vector<std::string> faults;
      if (c.has_added_latency()) {
        faults.push_back("slow +" + FormatDuration(c.added_latency()));
      }
      if (c.error_fraction() > 0) {
        std::ostringstream e;
        e << "errors " << c.error_fraction() * 100 << "% " << c.error_code();
        if (!c.error_method().empty()) e << " on " << c.error_method();
        faults.push_back(e.str());
      }
      if (!c.clients_cut().empty()) {
        faults.push_back("clients cut (" + c.clients_cut() + ")");
      }
      if (c.replication_stalled()) faults.push_back("replication stalled");
      if (c.has_clock_offset()) {
        google::protobuf::Duration magnitude = c.clock_offset();
        const bool behind = magnitude.seconds() < 0 || magnitude.nanos() < 0;
        magnitude.set_seconds(std::abs(magnitude.seconds()));
        magnitude.set_nanos(std::abs(magnitude.nanos()));
        faults.push_back(std::string("clock ") + (behind ? "-" : "+") +
                         FormatDuration(magnitude));
      }
      if (faults.empty()) continue;
      std::string joined;
      for (const std::string& f : faults) {
        joined += (joined.empty() ? "" : ", ") + f;
      }
      rows.push_back({c.id(), joined});
    }
    if (!rows.empty()) {
      out << "  faults:\n";
      PrintTable(rows, "    ", out);
    }
    out << "  capacity (storage, CPU average, hottest node):\n";
    rows.clear();
    for (const control::ClusterStatus& c : instance.clusters()) {
      rows.push_back({c.id(), StorageName(c.storage_type()),
                      "cpu " + Percent(c.cpu_load()),
                      "hottest " + Percent(c.hottest_node_load())});
    }
    PrintTable(rows, "    ", out);
    if (!instance.links().empty()) {
      out << "  replication (backlog entries, latency):\n";
      rows.clear();
      for (const control::LinkStatus& link : instance.links()) {
        rows.push_back(
            {link.from_cluster() + " -> " + link.to_cluster(),
             std::to_string(link.backlog()),
             link.has_latency() ? FormatDuration(link.latency()) : "-",
             link.cut() ? "CUT" : ""});
      }
      PrintTable(rows, "    ", out);
    }
    out << "  profiles:\n";
    rows.clear();
    for (const control::ProfileStatus& p : instance.profiles()) {
      rows.push_back({p.id(), p.routing()});
    }
    PrintTable(rows, "    ", out);
  }
  return out.str();
}

}  // namespace btsim::cli
