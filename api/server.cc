#include "api/server.h"

#include <memory>
#include <vector>

#include <grpcpp/support/server_interceptor.h>

#include "api/bigtable_service.h"
#include "api/control_service.h"
#include "api/instance_admin_service.h"
#include "api/instance_registry.h"
#include "api/operations_service.h"
#include "api/table_admin_service.h"
#include "api/unimplemented_service.h"
#include "sim/asio/asio_scheduler.h"

namespace btsim::api {

namespace {
// Responses: large enough for any row the engine stores (256 MiB).
constexpr int kMaxMessageBytes = 512 << 20;
}  // namespace

namespace {

using BeforeReplyHook = std::function<void(std::function<void()>)>;

// Holds each response message and final status until `before_reply`
// releases it (ServerOptions::before_reply); gRPC lets an interceptor
// proceed later, from another thread.
class BeforeReply : public grpc::experimental::Interceptor {
 public:
  explicit BeforeReply(const BeforeReplyHook* hook) : hook_(hook) {}
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_MESSAGE) ||
        methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      (*hook_)([methods] { methods->Proceed(); });
      return;
    }
    methods->Proceed();
  }

 private:
  const BeforeReplyHook* hook_;
};

class BeforeReplyFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit BeforeReplyFactory(const BeforeReplyHook* hook) : hook_(hook) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new BeforeReply(hook_);
  }

 private:
  const BeforeReplyHook* hook_;
};

}  // namespace

struct Server::State {
  explicit State(const ServerOptions& options)
      : registry(scheduler, options.seed, options.instance,
                 options.on_instance_created, options.max_instances),
        data(registry),
        table_admin(registry, operations),
        instance_admin(registry, operations),
        control(registry, options.scenario) {}
  ~State() { scheduler.Shutdown(); }  // before the registry goes

  sim::AsioScheduler scheduler;
  InstanceRegistry registry;
  BigtableService data;
  OperationsService operations;  // before the admin services, which use it
  TableAdminService table_admin;
  InstanceAdminService instance_admin;
  ControlService control;
  UnimplementedService unimplemented;
  std::unique_ptr<grpc::Server> server;
  std::thread compactor;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool stopped = false;
};

Server::Server(ServerOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>(options_)) {}

Server::~Server() { Shutdown(); }

Result<int> Server::Start() {
  grpc::ServerBuilder builder;
  int port = 0;
  // IPv6 literals need brackets in a gRPC address.
  const std::string host = options_.host.find(':') != std::string::npos &&
                                   options_.host.front() != '['
                               ? "[" + options_.host + "]"
                               : options_.host;
  builder.AddListeningPort(host + ":" + std::to_string(options_.port),
                           grpc::InsecureServerCredentials(), &port);
  // Without this, gRPC binds with SO_REUSEPORT and a second server on a busy
  // port would start and silently share the traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options_.max_request_bytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options_.max_concurrent_streams);
  builder.RegisterService(&state_->data);
  builder.RegisterService(&state_->table_admin);
  builder.RegisterService(&state_->instance_admin);
  builder.RegisterService(&state_->operations);
  builder.RegisterService(&state_->control);
  builder.RegisterCallbackGenericService(&state_->unimplemented);
  if (options_.before_reply) {
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        creators;
    creators.push_back(
        std::make_unique<BeforeReplyFactory>(&options_.before_reply));
    builder.experimental().SetInterceptorCreators(std::move(creators));
  }
  state_->server = builder.BuildAndStart();
  if (!state_->server || port == 0) {
    state_->server.reset();
    return Unavailable("cannot listen on " + options_.host + ":" +
                       std::to_string(options_.port) +
                       " (address in use or not available?)");
  }
  if (options_.compaction_interval.count() > 0) {
    state_->compactor = std::thread([this] { CompactionLoop(); });
  }
  return port;
}

void Server::CompactionLoop() {
  std::unique_lock<std::mutex> lock(state_->mu);
  while (!state_->stopping) {
    state_->cv.wait_for(lock, options_.compaction_interval);
    if (state_->stopping) break;
    lock.unlock();
    state_->registry.CompactAll();
    lock.lock();
  }
}

void Server::AdvanceClockTo(sim::Time floor) {
  state_->scheduler.AdvanceClockTo(floor);
}

void Server::CompactNow() { state_->registry.CompactAll(); }

InstanceRegistry& Server::registry() { return state_->registry; }

void Server::Shutdown() {
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (state_->stopping) {
      // Another thread is shutting down: return only once it has finished,
      // so that a caller may destroy the Server right after.
      state_->cv.wait(lock, [this] { return state_->stopped; });
      return;
    }
    state_->stopping = true;
  }
  state_->cv.notify_all();
  state_->data.ReleaseHeld();
  if (state_->server) {
    state_->server->Shutdown(std::chrono::system_clock::now() +
                             std::chrono::seconds(2));
  }
  if (state_->compactor.joinable()) state_->compactor.join();
  state_->scheduler.Shutdown();
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stopped = true;
  state_->cv.notify_all();  // under the lock: waiters may destroy the Server
}

void Server::Wait() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->stopped; });
}

std::shared_ptr<grpc::Channel> Server::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return state_->server->InProcessChannel(args);
}

}  // namespace btsim::api
