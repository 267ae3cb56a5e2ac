// Seeded, deterministic discrete-event simulator of iteration-level
// continuous batching: the test oracle of the analytical queueing model
// (queueing.h), also usable as a slower "simulate" mode.
//
// Each engine iteration:
//   1. requests that have arrived join a FCFS waiting queue;
//   2. the head of the queue is admitted while a slot is free (running-request
//      limit / operator gate), free KV holds its reservation (KvAdmission)
//      and a state slot is free (head-of-line blocking: no overtaking);
//   3. every admitted request past its prefill decodes one token (k + 1
//      verified with speculative decoding, of which 1 + the run of accepted
//      draft tokens are kept); the remaining token budget
//      (max_batched_tokens − decode tokens) goes to prefill chunks, FCFS;
//   4. the iteration lasts T from the same step-time model (step_time.h)
//      evaluated on the iteration's actual composition;
//   5. a request whose prefill completes emits its first token at the end of
//      that iteration (TTFT); one that has all its output leaves and frees its
//      KV, slot and state slot.
// Closed loop: N users, each submitting again after an exponential think
// time of mean Z (0 = at once). Open loop: Poisson arrivals at λ.
// Lengths are drawn log-normal with the workload's mean and cv (fixed when
// cv = 0), clipped so that one request fits the KV pool.
// No preemption: a reservation is held until the request completes.
#ifndef CAPPLAN_MODEL_SIMULATOR_H_
#define CAPPLAN_MODEL_SIMULATOR_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "model/queueing.h"
#include "model/step_time.h"

namespace capplan::model {

inline constexpr int kMaxSimulatedRequests = 1000000;
// Open loop: stop and report saturation when this many requests wait.
inline constexpr int kSimulatorMaxWaiting = 100000;

struct SimulationConfig {
  PerformanceModel model;
  Workload workload;
  // limits.kv_admission: how the engine holds KV (queueing.h). Under the two
  // allocate-as-you-go rules a decoder that finds no free token preempts the
  // newest running request, which goes back to the head of the queue and
  // recomputes its prompt and the tokens it had generated.
  SlotLimits limits;
  // Exactly one of concurrency (closed loop) and arrival_rate_rps (open).
  std::optional<int> concurrency;
  double think_time_seconds = 0;
  std::optional<double> arrival_rate_rps;
  // Requests measured after `warmup_requests` have been issued.
  int measured_requests = 2000;
  int warmup_requests = 200;
  uint64_t seed = 1;
};

struct SimulationResult {
  LatencyPercentiles ttft;
  LatencyPercentiles e2e;
  double tpot_mean_seconds = 0;  // mean over requests of (e2e − ttft)/(o − 1)
  double requests_per_second = 0;
  double output_tokens_per_second = 0;
  double mean_batch_size = 0;    // time-average requests admitted
  double mean_queue_length = 0;  // time-average requests waiting
  // Share of measured requests that found no free slot / KV on arrival.
  double slot_wait_fraction = 0;
  int completed_requests = 0;  // measured requests completed
  long preemptions = 0;        // requests preempted (incremental KV rules)
  int iterations = 0;
  double simulated_seconds = 0;
  // Open loop: the waiting queue hit kSimulatorMaxWaiting.
  bool saturated = false;
};

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& config);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_SIMULATOR_H_
