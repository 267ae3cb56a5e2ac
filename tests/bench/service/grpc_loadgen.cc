// capplan-loadgen: a closed-loop gRPC load generator for capplan-server.
//
// N client threads each send one RPC at a time for a bounded duration (and at
// most --max_requests in total) to a server on this machine, then print
// throughput and latency percentiles per method. With --spawn_server it
// starts an in-process server on 127.0.0.1:0 over --data_dir first, so a
// bounded run needs nothing else (CI runs one for a few seconds).
//
//   capplan-loadgen --spawn_server --threads 4 --seconds 5
//   capplan-loadgen --target 127.0.0.1:50051 --threads 8 --seconds 30 --method memory
//   capplan-loadgen --spawn_server --threads 2 --seconds 10 --method health   (then plan:
//       Plan's throughput against the health check's, same threads)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "service/server/server.h"

ABSL_FLAG(std::string, target, "", "server address host:port (loopback only)");
ABSL_FLAG(bool, spawn_server, false, "start an in-process server on 127.0.0.1:0");
ABSL_FLAG(std::string, data_dir, CAPPLAN_DEFAULT_DATA_DIR, "catalogue for --spawn_server");
ABSL_FLAG(int, threads, 4, "concurrent clients, each with one RPC in flight");
ABSL_FLAG(double, seconds, 5, "duration of the run");
ABSL_FLAG(int64_t, max_requests, 1000000, "stop after this many RPCs in total");
ABSL_FLAG(std::string, method, "mixed",
          "get_baseline | list_hardware | memory | health | plan | search | mixed (the first "
          "three in turn)");

namespace {

bool IsLoopback(const std::string& target) {
  return target.rfind("127.", 0) == 0 || target.rfind("localhost:", 0) == 0 ||
         target.rfind("[::1]:", 0) == 0;
}

struct Sample {
  int method;
  double seconds;
  bool ok;
};

constexpr const char* kMethods[] = {"GetBaseline", "ListHardware", "PlanMemory",
                                    "Health.Check", "Plan",         "SearchConfigs"};
constexpr int kNumMethods = 6;

int MethodIndex(const std::string& name) {
  const char* names[] = {"get_baseline", "list_hardware", "memory", "health", "plan", "search"};
  for (int i = 0; i < kNumMethods; ++i) {
    if (name == names[i]) return i;
  }
  return -1;
}

// The Plan the sales engineer asks for, on a card with a price.
capplan::v1::PlanRequest PlanRequest() {
  capplan::v1::PlanRequest r;
  r.mutable_deployment()->set_model_id("llama-3.1-8b-instruct");
  r.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_slo()->set_ttft_p95_seconds(1);
  r.set_target_requests_per_second(20);
  r.set_price_per_gpu_hour(2.5);
  return r;
}

capplan::v1::SearchConfigsRequest SearchRequest() {
  capplan::v1::SearchConfigsRequest r;
  r.set_model_id("llama-3.1-70b-instruct");
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_slo()->set_ttft_p95_seconds(1);
  r.mutable_slo()->set_tpot_seconds(0.05);
  r.set_target_concurrent_users(200);
  return r;
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(q * (v.size() - 1));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::unique_ptr<capplan::service::PlannerServer> server;
  std::string target = absl::GetFlag(FLAGS_target);
  if (absl::GetFlag(FLAGS_spawn_server)) {
    capplan::service::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "";
    options.data_dir = absl::GetFlag(FLAGS_data_dir);
    auto created = capplan::service::PlannerServer::Create(options);
    if (!created.ok()) {
      std::cerr << "capplan-loadgen: " << created.status().message() << "\n";
      return 2;
    }
    server = *std::move(created);
    target = "127.0.0.1:" + std::to_string(server->port());
  }
  if (target.empty() || !IsLoopback(target)) {
    std::cerr << "capplan-loadgen: --target must be a loopback address (or use --spawn_server)\n";
    return 2;
  }
  int threads = std::clamp(absl::GetFlag(FLAGS_threads), 1, 256);
  double seconds = std::clamp(absl::GetFlag(FLAGS_seconds), 0.1, 600.0);
  int64_t max_requests = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_requests));
  std::string method = absl::GetFlag(FLAGS_method);
  int only = MethodIndex(method);
  if (only < 0 && method != "mixed") {
    std::cerr << "capplan-loadgen: --method = " << method << "; must be get_baseline, "
              << "list_hardware, memory, health, plan, search or mixed\n";
    return 2;
  }

  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = capplan::v1::CapacityPlanner::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  const capplan::v1::PlanRequest plan = PlanRequest();
  const capplan::v1::SearchConfigsRequest search = SearchRequest();
  capplan::v1::ListBaselinesResponse baselines;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = stub->ListBaselines(&context, {}, &baselines);
    if (!status.ok() || baselines.baselines_size() == 0) {
      std::cerr << "capplan-loadgen: cannot list baselines at " << target << ": "
                << status.error_message() << "\n";
      return 2;
    }
  }
  capplan::v1::GetBaselineRequest get;
  get.set_id(baselines.baselines(0).id());
  capplan::v1::PlanMemoryRequest memory;
  memory.mutable_deployment()->set_model_id("llama-3.1-8b-instruct");
  memory.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  memory.mutable_deployment()->mutable_engine()->set_max_model_len(8192);

  std::atomic<int64_t> issued{0};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::vector<Sample>> samples(threads);
  std::vector<std::thread> workers;
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      int turn = t;
      while (std::chrono::steady_clock::now() < deadline && issued.fetch_add(1) < max_requests) {
        int m = only >= 0 ? only : turn++ % 3;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        auto begin = std::chrono::steady_clock::now();
        grpc::Status status;
        if (m == 0) {
          capplan::v1::Baseline reply;
          status = stub->GetBaseline(&context, get, &reply);
        } else if (m == 1) {
          capplan::v1::ListHardwareResponse reply;
          status = stub->ListHardware(&context, {}, &reply);
        } else if (m == 2) {
          capplan::v1::MemoryPlan reply;
          status = stub->PlanMemory(&context, memory, &reply);
        } else if (m == 3) {
          grpc::health::v1::HealthCheckResponse reply;
          status = health->Check(&context, {}, &reply);
        } else if (m == 4) {
          capplan::v1::PlanResponse reply;
          status = stub->Plan(&context, plan, &reply);
        } else {
          capplan::v1::SearchConfigsResponse reply;
          status = stub->SearchConfigs(&context, search, &reply);
        }
        double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        samples[t].push_back({m, elapsed, status.ok()});
      }
    });
  }
  for (std::thread& w : workers) w.join();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int64_t total = 0, failed = 0;
  std::printf("%-14s %10s %10s %12s %12s %12s %8s\n", "METHOD", "RPCS", "RPC/s", "p50 (us)",
              "p99 (us)", "max (us)", "FAILED");
  for (int m = 0; m < kNumMethods; ++m) {
    std::vector<double> lat;
    int64_t bad = 0;
    for (const auto& per_thread : samples) {
      for (const Sample& s : per_thread) {
        if (s.method != m) continue;
        lat.push_back(s.seconds * 1e6);
        bad += !s.ok;
      }
    }
    if (lat.empty()) continue;
    double max = *std::max_element(lat.begin(), lat.end());
    double p99 = Percentile(lat, 0.99);
    double p50 = Percentile(lat, 0.50);
    std::printf("%-14s %10zu %10.0f %12.1f %12.1f %12.1f %8lld\n", kMethods[m], lat.size(),
                lat.size() / wall, p50, p99, max, static_cast<long long>(bad));
    total += static_cast<int64_t>(lat.size());
    failed += bad;
  }
  std::printf("total: %lld RPCs in %.2f s with %d threads = %.0f RPC/s; %lld failed\n",
              static_cast<long long>(total), wall, threads, total / wall,
              static_cast<long long>(failed));
  if (server != nullptr) server->Shutdown(absl::Seconds(1));
  return failed == 0 && total > 0 ? 0 : 1;
}
