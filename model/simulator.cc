#include "model/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/perf_checks.h"

namespace capplan::model {
namespace {

using perf_internal::CheckNonNegative;
using perf_internal::CheckPositive;
using perf_internal::Invalid;

// Portable draws from a 64-bit Mersenne twister (the std distributions are
// implementation-defined; these are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // (0, 1).
  double Uniform() {
    return (static_cast<double>(gen_() >> 11) + 0.5) * 0x1.0p-53;
  }
  double Exponential(double mean) { return -mean * std::log(Uniform()); }
  double Normal() {
    const double u1 = Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Log-normal with the given mean and coefficient of variation.
  double LogNormal(double mean, double cv) {
    if (cv <= 0) return mean;
    const double s2 = std::log1p(cv * cv);
    return mean * std::exp(std::sqrt(s2) * Normal() - 0.5 * s2);
  }

 private:
  std::mt19937_64 gen_;
};

struct Request {
  long id = 0;
  int user = -1;
  double arrival = 0;
  double input = 0;          // tokens
  double cached = 0;         // prefix-cache hit tokens (not recomputed)
  double prefill_left = 0;   // tokens still to prefill
  double output = 0;         // tokens to emit
  double generated = 0;
  double first_token = -1;
  double kv_reserved = 0;
  bool waited = false;  // found no slot at its first admission attempt
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(
      std::clamp<double>(std::ceil(q * v.size()), 1, v.size()));
  std::nth_element(v.begin(), v.begin() + (k - 1), v.end());
  return v[k - 1];
}

LatencyPercentiles Summarise(std::vector<double> v) {
  LatencyPercentiles p;
  if (v.empty()) return p;
  double sum = 0;
  for (double x : v) sum += x;
  p.mean_seconds = sum / v.size();
  p.p50_seconds = Percentile(v, 0.50);
  p.p90_seconds = Percentile(v, 0.90);
  p.p95_seconds = Percentile(v, 0.95);
  p.p99_seconds = Percentile(v, 0.99);
  return p;
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& c) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(c.model));
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(c.workload));
  // Validates the limits and that one mean request fits.
  absl::StatusOr<Slots> slots = ComputeSlots(c.limits, c.workload);
  if (!slots.ok()) return slots.status();
  if (c.concurrency.has_value() == c.arrival_rate_rps.has_value()) {
    return absl::InvalidArgumentError(
        "SimulationConfig: set exactly one of concurrency and "
        "arrival_rate_rps");
  }
  if (c.concurrency.has_value() &&
      (*c.concurrency < 1 || *c.concurrency > kMaxClosedLoopConcurrency)) {
    return Invalid("SimulationConfig.concurrency", *c.concurrency,
                   absl::StrCat("must be in [1, ", kMaxClosedLoopConcurrency,
                                "]"));
  }
  if (c.arrival_rate_rps.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckPositive("SimulationConfig.arrival_rate_rps", *c.arrival_rate_rps));
  }
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative(
      "SimulationConfig.think_time_seconds", c.think_time_seconds));
  if (c.measured_requests < 1 || c.warmup_requests < 0 ||
      c.measured_requests + static_cast<long>(c.warmup_requests) >
          kMaxSimulatedRequests) {
    return Invalid("SimulationConfig.measured_requests", c.measured_requests,
                   absl::StrCat("must be >= 1 with measured + warmup <= ",
                                kMaxSimulatedRequests));
  }

  const PerformanceModel& m = c.model;
  const Workload& w = c.workload;
  int max_running = std::numeric_limits<int>::max();
  if (c.limits.max_running_requests) max_running = *c.limits.max_running_requests;
  if (c.limits.operator_concurrency_gate) {
    max_running = std::min(max_running, *c.limits.operator_concurrency_gate);
  }
  const double kv_pool = c.limits.kv_pool_tokens.value_or(
      std::numeric_limits<double>::infinity());
  const int state_slots =
      c.limits.state_slots.value_or(std::numeric_limits<int>::max());
  // Fixed reservation, as ComputeSlots counts it.
  const double fixed_reservation = KvTokensPerRequest(c.limits, w);
  const bool fixed = c.kv_admission == KvAdmission::kReserveFixed;
  const int k_draft = m.speculative ? m.speculative->draft_tokens : 0;
  const double accept = m.speculative ? m.speculative->acceptance_rate : 0;
  const double tokens_per_decoder = m.speculative ? k_draft + 1 : 1;

  Rng rng(c.seed);
  const long total_requests = c.warmup_requests + c.measured_requests;
  long issued = 0;
  // Future arrivals (time, user); min-heap.
  using Arrival = std::pair<double, int>;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<Arrival>>
      future;
  if (c.concurrency) {
    for (int u = 0; u < *c.concurrency; ++u) future.push({0.0, u});
  } else {
    future.push({rng.Exponential(1.0 / *c.arrival_rate_rps), -1});
  }

  auto make_request = [&](double t, int user) {
    Request r;
    r.id = issued++;
    r.user = user;
    r.arrival = t;
    double in = std::max(1.0, std::round(rng.LogNormal(w.input_tokens,
                                                       w.input_tokens_cv)));
    double out = std::max(1.0, std::round(rng.LogNormal(w.output_tokens,
                                                        w.output_tokens_cv)));
    const double need = fixed ? 0.0 : in + out;
    if (need > kv_pool) {
      const double f = kv_pool / need;
      in = std::max(1.0, std::floor(in * f));
      out = std::max(1.0, std::floor(out * f));
    }
    r.input = in;
    r.output = out;
    r.cached = std::floor(in * w.prefix_cache_hit_rate);
    r.prefill_left = std::max(1.0, in - r.cached);
    if (r.cached >= in) r.cached = in - 1;
    r.kv_reserved = fixed ? fixed_reservation : std::min(kv_pool, in + out);
    return r;
  };

  std::deque<Request> waiting;
  size_t marked_prefix = 0;
  std::vector<Request> running;
  double kv_used = 0;
  double t = 0;
  SimulationResult res;
  std::vector<double> ttfts, e2es, tpots;
  const double measure_from_id = c.warmup_requests;
  double window_start = -1;
  double window_end = 0;
  long window_completions = 0;
  double window_output_tokens = 0;
  double batch_time = 0;
  double queue_time = 0;
  long measured_done = 0;
  long waited_count = 0;

  while (measured_done < c.measured_requests) {
    // 1. Arrivals due.
    while (!future.empty() && future.top().first <= t &&
           issued < total_requests) {
      const auto [at, user] = future.top();
      future.pop();
      if (issued == measure_from_id) window_start = at;
      waiting.push_back(make_request(at, user));
      if (!c.concurrency) {
        future.push({at + rng.Exponential(1.0 / *c.arrival_rate_rps), -1});
      }
    }
    if (static_cast<long>(waiting.size()) >= kSimulatorMaxWaiting) {
      res.saturated = true;
      break;
    }
    // 2. Admission, FCFS with head-of-line blocking.
    while (!waiting.empty() &&
           static_cast<int>(running.size()) < std::min(max_running, state_slots) &&
           kv_used + waiting.front().kv_reserved <= kv_pool + 1e-9) {
      kv_used += waiting.front().kv_reserved;
      running.push_back(std::move(waiting.front()));
      waiting.pop_front();
      if (marked_prefix > 0) --marked_prefix;
    }
    // Everyone still waiting has found no room at least once; marked ones
    // form a prefix of the FCFS queue, so this is amortised O(1).
    for (size_t i = marked_prefix; i < waiting.size(); ++i) {
      waiting[i].waited = true;
    }
    marked_prefix = waiting.size();
    if (running.empty()) {
      if (future.empty() || issued >= total_requests) break;  // nothing left
      t = std::max(t, future.top().first);
      continue;
    }
    // 3. Compose the iteration.
    StepShape shape;
    double decode_ctx = 0;
    std::vector<char> decoding(running.size(), 0);
    std::vector<double> chunk(running.size(), 0.0);
    for (size_t i = 0; i < running.size(); ++i) {
      if (running[i].prefill_left <= 0) {
        decoding[i] = 1;
        shape.decode_sequences += 1;
        decode_ctx += running[i].input + running[i].generated;
      }
    }
    double budget = m.scheduler.max_batched_tokens -
                    shape.decode_sequences * tokens_per_decoder;
    double span_tokens = 0;
    for (size_t i = 0; i < running.size() && budget > 0; ++i) {
      if (running[i].prefill_left <= 0) continue;
      const double ch = std::min(running[i].prefill_left, budget);
      chunk[i] = ch;
      budget -= ch;
      shape.prefill_tokens += ch;
      shape.prefill_sequences += 1;
      const double done = running[i].input - running[i].prefill_left;
      span_tokens += ch * (done + 0.5 * ch);
    }
    if (shape.decode_sequences > 0) {
      shape.decode_context_tokens = decode_ctx / shape.decode_sequences;
    }
    if (shape.prefill_tokens > 0) {
      shape.prefill_context_tokens = span_tokens / shape.prefill_tokens;
    }
    const double step = StepSeconds(
        m.coefficients, ComputeEngineStepFeatures(m.inputs, m.speculative, shape));
    if (!(step > 0) || !std::isfinite(step)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StepTimeCoefficients: step time = ", step,
          " s; coefficients must give positive step times"));
    }
    if (window_start >= 0) {
      batch_time += running.size() * step;
      queue_time += waiting.size() * step;
    }
    t += step;
    ++res.iterations;
    // 5. Progress.
    std::vector<Request> still;
    still.reserve(running.size());
    for (size_t i = 0; i < running.size(); ++i) {
      Request& r = running[i];
      if (decoding[i]) {
        double kept = 1;
        for (int d = 0; d < k_draft && rng.Uniform() < accept; ++d) kept += 1;
        r.generated = std::min(r.output, r.generated + kept);
      } else if (chunk[i] > 0) {
        r.prefill_left -= chunk[i];
        if (r.prefill_left <= 0) {
          r.prefill_left = 0;
          r.first_token = t;
          r.generated = 1;
        }
      }
      if (r.first_token >= 0 && r.generated >= r.output) {
        kv_used -= r.kv_reserved;
        if (window_start >= 0 && t >= window_start) {
          ++window_completions;
          window_output_tokens += r.output;
          window_end = t;
        }
        if (r.id >= measure_from_id) {
          ++measured_done;
          ttfts.push_back(r.first_token - r.arrival);
          waited_count += r.waited;
          e2es.push_back(t - r.arrival);
          if (r.output > 1) {
            tpots.push_back((t - r.first_token) / (r.output - 1));
          }
        }
        if (c.concurrency) {
          const double think = c.think_time_seconds > 0
                                   ? rng.Exponential(c.think_time_seconds)
                                   : 0.0;
          future.push({t + think, r.user});
        }
      } else {
        still.push_back(std::move(r));
      }
    }
    running = std::move(still);
  }
  if (kv_used < -1e-6) {
    return absl::InternalError("simulator: KV accounting went negative");
  }
  res.ttft = Summarise(ttfts);
  res.e2e = Summarise(e2es);
  double sum_tpot = 0;
  for (double x : tpots) sum_tpot += x;
  res.tpot_mean_seconds = tpots.empty() ? 0 : sum_tpot / tpots.size();
  res.completed_requests = static_cast<int>(measured_done);
  res.slot_wait_fraction =
      measured_done > 0 ? static_cast<double>(waited_count) / measured_done : 0;
  res.simulated_seconds = t;
  const double window = window_end - std::max(0.0, window_start);
  if (window > 0) {
    res.requests_per_second = window_completions / window;
    res.output_tokens_per_second = window_output_tokens / window;
  }
  const double avg_window = t - std::max(0.0, window_start);
  if (avg_window > 0) {
    res.mean_batch_size = batch_time / avg_window;
    res.mean_queue_length = queue_time / avg_window;
  }
  return res;
}

}  // namespace capplan::model
