#include "model/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
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
  double Uniform() { return (static_cast<double>(gen_() >> 11) + 0.5) * 0x1.0p-53; }
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
  std::optional<int> user;  // closed loop: who submits again on completion
  double arrival_seconds = 0;
  double input_tokens = 0;
  double cached_tokens = 0;        // prefix-cache hit tokens (not recomputed)
  double prefill_left_tokens = 0;  // tokens still to prefill
  double output_tokens = 0;        // tokens to emit
  double generated_tokens = 0;
  std::optional<double> first_token_seconds;  // set when its prefill completes
  double kv_reserved_tokens = 0;              // held now (incremental rules: input + generated)
  bool waited = false;                        // found no slot at its first admission attempt
  // The first iteration that may admit it: with an overlap scheduler
  // (batches_launched_ahead) a request arriving at a busy server misses the
  // batches already launched.
  long eligible_iteration = 0;
};

// A future submission; the heap pops the earliest (ties by user).
struct Arrival {
  double time_seconds = 0;
  std::optional<int> user;  // closed loop: the user; open loop: nullopt
};
struct LaterArrival {
  bool operator()(const Arrival& a, const Arrival& b) const {
    if (a.time_seconds != b.time_seconds) return a.time_seconds > b.time_seconds;
    return a.user > b.user;
  }
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(std::clamp<double>(std::ceil(q * v.size()), 1, v.size()));
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

// The checks ComputeSlots does not make: one load axis, its range, the
// request counts.
absl::Status ValidateLoad(const SimulationConfig& c) {
  if (c.concurrency.has_value() == c.arrival_rate_rps.has_value()) {
    return absl::InvalidArgumentError(
        "SimulationConfig: set exactly one of concurrency and "
        "arrival_rate_rps");
  }
  if (c.concurrency.has_value() &&
      (*c.concurrency < 1 || *c.concurrency > kMaxClosedLoopConcurrency)) {
    return Invalid("SimulationConfig.concurrency", *c.concurrency,
                   absl::StrCat("must be in [1, ", kMaxClosedLoopConcurrency, "]"));
  }
  if (c.arrival_rate_rps.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckPositive("SimulationConfig.arrival_rate_rps", *c.arrival_rate_rps));
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("SimulationConfig.think_time_seconds", c.think_time_seconds));
  if (c.measured_requests < 1 || c.warmup_requests < 0 ||
      c.measured_requests + static_cast<long>(c.warmup_requests) > kMaxSimulatedRequests) {
    return Invalid("SimulationConfig.measured_requests", c.measured_requests,
                   absl::StrCat("must be >= 1 with measured + warmup <= ", kMaxSimulatedRequests));
  }
  return absl::OkStatus();
}

// The admission limits resolved once: each absent limit does not bind.
struct AdmissionLimits {
  // min(running-request limit, operator gate, state slots).
  std::optional<int> running_requests;
  std::optional<double> kv_pool_tokens;
  KvAdmission rule = KvAdmission::kReserveFixed;
  double remaining_share = 0;  // kReserveRemainingShare
  // What each request reserves under kReserveFixed, as ComputeSlots counts.
  double fixed_reservation_tokens = 0;
  // The pool's paging (vLLM's hybrid allocator): what holding `tokens` costs
  // the pool.
  std::optional<KvPages> pages;
  double Charge(double tokens) const {
    return pages.has_value() ? PagedKvTokens(*pages, tokens) : tokens;
  }
  bool incremental() const {
    return rule == KvAdmission::kIncremental || rule == KvAdmission::kReserveRemainingShare;
  }
};

AdmissionLimits ResolveAdmissionLimits(const SimulationConfig& c) {
  AdmissionLimits out;
  for (const std::optional<int>& limit :
       {c.limits.max_running_requests, c.limits.operator_concurrency_gate, c.limits.state_slots}) {
    if (!limit.has_value()) continue;
    out.running_requests =
        out.running_requests.has_value() ? std::min(*out.running_requests, *limit) : *limit;
  }
  out.kv_pool_tokens = c.limits.kv_pool_tokens;
  out.rule = c.limits.kv_admission;
  out.remaining_share = c.limits.kv_remaining_share;
  out.pages = c.limits.kv_pages;
  SlotLimits fixed = c.limits;
  fixed.kv_admission = KvAdmission::kReserveFixed;
  fixed.kv_pages.reset();  // tokens held; Charge pages them
  out.fixed_reservation_tokens = KvTokensPerRequest(fixed, c.workload);
  return out;
}

// One iteration's composition (step 3 of the header): which admitted requests
// decode, the prefill chunk each of the others gets, and the step's shape.
struct Iteration {
  std::vector<char> decoding;
  std::vector<double> chunk_tokens;
  StepShape shape;
};

// What the measured requests and the measurement window have recorded.
struct Measurements {
  // Arrival of the first measured request: the window opens there.
  std::optional<double> window_start_seconds;
  double window_end_seconds = 0;  // last completion inside the window
  long window_completions = 0;
  double window_output_tokens = 0;
  // Time integrals over the window of the requests admitted / waiting.
  double batch_request_seconds = 0;
  double queue_request_seconds = 0;
  long measured_done = 0;
  long waited_count = 0;
  std::vector<double> ttft_seconds;
  std::vector<double> e2e_seconds;
  std::vector<double> tpot_seconds;
};

// The event loop of the header's steps 1-5 over one seeded run.
class EngineSimulation {
 public:
  explicit EngineSimulation(const SimulationConfig& c);
  absl::StatusOr<SimulationResult> Run();

 private:
  Request NewRequest(double arrival_seconds, std::optional<int> user);
  void EnqueueDueArrivals();
  void AdmitWaiting();
  bool KvAdmits(const Request& r) const;
  void MakeRoomForDecoders();
  void Preempt();
  Iteration ComposeIteration() const;
  absl::StatusOr<double> IterationSeconds(const StepShape& shape) const;
  void AdvanceRequests(const Iteration& iteration);
  void Complete(const Request& r);
  SimulationResult Summary(bool saturated) const;

  const SimulationConfig& c_;
  const AdmissionLimits limits_;
  const int draft_tokens_;
  const double acceptance_rate_;
  // Tokens a decoding request takes from the iteration's budget (k + 1 verified).
  const double tokens_per_decoder_;
  const long total_requests_;
  const long first_measured_id_;
  Rng rng_;
  std::priority_queue<Arrival, std::vector<Arrival>, LaterArrival> future_;
  long issued_ = 0;
  std::deque<Request> waiting_;
  size_t marked_prefix_ = 0;  // waiting_[0, marked_prefix_) have waited
  std::vector<Request> running_;
  double kv_used_tokens_ = 0;
  double now_seconds_ = 0;
  long preemptions_ = 0;
  int iterations_ = 0;
  Measurements m_;
};

// One request's life with the loop's users in service (the mean-step
// approximation), to spread the users' first submissions over.
double EstimatedLifeSeconds(const SimulationConfig& c) {
  const double n =
      std::max(1, std::min(*c.concurrency, c.limits.max_running_requests.value_or(*c.concurrency)));
  const RequestPhaseFeatures f = ComputeRequestPhaseFeatures(c.model.inputs, c.model.scheduler,
                                                             c.model.speculative, c.workload, n);
  return ToPhaseTimes(f, c.model.coefficients, c.workload.output_tokens).life_seconds;
}

EngineSimulation::EngineSimulation(const SimulationConfig& c)
    : c_(c),
      limits_(ResolveAdmissionLimits(c)),
      draft_tokens_(c.model.speculative ? c.model.speculative->draft_tokens : 0),
      acceptance_rate_(c.model.speculative ? c.model.speculative->acceptance_rate : 0),
      tokens_per_decoder_(c.model.speculative ? draft_tokens_ + 1 : 1),
      total_requests_(c.warmup_requests + c.measured_requests),
      first_measured_id_(c.warmup_requests),
      rng_(c.seed) {
  // Closed loop: users in waves (synchronized) all submit at t = 0; otherwise
  // their first submissions are spread evenly over one request life, as users
  // of real traffic (or of varied lengths) are; open loop: the first Poisson
  // arrival.
  if (c.concurrency) {
    const double spread = c.workload.synchronized ? 0.0 : EstimatedLifeSeconds(c);
    for (int u = 0; u < *c.concurrency; ++u) {
      future_.push({spread * u / *c.concurrency, u});
    }
  } else {
    future_.push({rng_.Exponential(1.0 / *c.arrival_rate_rps), std::nullopt});
  }
}

// Lengths drawn log-normal, then scaled down (actual-length reservation) so
// that one request fits the KV pool; the cached prefix is never all of it.
Request EngineSimulation::NewRequest(double arrival_seconds, std::optional<int> user) {
  const Workload& w = c_.workload;
  Request r;
  r.id = issued_++;
  r.user = user;
  r.arrival_seconds = arrival_seconds;
  double in = std::max(1.0, std::round(rng_.LogNormal(w.input_tokens, w.input_tokens_cv)));
  double out = std::max(1.0, std::round(rng_.LogNormal(w.output_tokens, w.output_tokens_cv)));
  const double need_tokens = limits_.rule == KvAdmission::kReserveFixed ? 0.0 : in + out;
  if (limits_.kv_pool_tokens.has_value() && need_tokens > 0 &&
      limits_.Charge(need_tokens) > *limits_.kv_pool_tokens) {
    // Cut to what the pool holds (whole pages: shrink until it fits).
    double f = *limits_.kv_pool_tokens / limits_.Charge(need_tokens);
    for (int i = 0; i < 64; ++i) {
      const double cut_in = std::max(1.0, std::floor(in * f));
      const double cut_out = std::max(1.0, std::floor(out * f));
      if (limits_.Charge(cut_in + cut_out) <= *limits_.kv_pool_tokens || cut_in + cut_out <= 2) {
        in = cut_in;
        out = cut_out;
        break;
      }
      f *= 0.9;
    }
  }
  r.input_tokens = in;
  r.output_tokens = out;
  r.cached_tokens = std::floor(in * w.prefix_cache_hit_rate);
  r.prefill_left_tokens = std::max(1.0, in - r.cached_tokens);
  if (r.cached_tokens >= in) r.cached_tokens = in - 1;
  switch (limits_.rule) {
    case KvAdmission::kReserveFixed:
      r.kv_reserved_tokens = limits_.fixed_reservation_tokens;
      break;
    case KvAdmission::kReserveActualLength:
      r.kv_reserved_tokens = limits_.kv_pool_tokens.has_value()
                                 ? std::min(*limits_.kv_pool_tokens, in + out)
                                 : in + out;
      break;
    case KvAdmission::kIncremental:
    case KvAdmission::kReserveRemainingShare:
      r.kv_reserved_tokens = in;  // the prompt's blocks; answer tokens as they appear
      break;
  }
  return r;
}

// Step 1: every arrival due by now joins the FCFS queue (open loop: each
// draws the next Poisson arrival).
void EngineSimulation::EnqueueDueArrivals() {
  while (!future_.empty() && future_.top().time_seconds <= now_seconds_ &&
         issued_ < total_requests_) {
    const Arrival a = future_.top();
    future_.pop();
    if (issued_ == first_measured_id_) m_.window_start_seconds = a.time_seconds;
    waiting_.push_back(NewRequest(a.time_seconds, a.user));
    waiting_.back().eligible_iteration =
        iterations_ + (running_.empty() ? 0 : c_.model.scheduler.batches_launched_ahead);
    if (!c_.concurrency) {
      future_.push({a.time_seconds + rng_.Exponential(1.0 / *c_.arrival_rate_rps), std::nullopt});
    }
  }
}

// Step 2: admission, FCFS with head-of-line blocking, while a slot is free
// and the KV pool holds the head's reservation; whoever is left has waited.
void EngineSimulation::AdmitWaiting() {
  auto slot_free = [this] {
    return !limits_.running_requests.has_value() ||
           static_cast<int>(running_.size()) < *limits_.running_requests;
  };
  auto eligible = [this](const Request& r) { return r.eligible_iteration <= iterations_; };
  while (!waiting_.empty() && eligible(waiting_.front()) && slot_free() &&
         KvAdmits(waiting_.front())) {
    kv_used_tokens_ += limits_.Charge(waiting_.front().kv_reserved_tokens);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    if (marked_prefix_ > 0) --marked_prefix_;
  }
  // Marked requests form a prefix of the FCFS queue, so this is amortised
  // O(1); the eligible ones form a prefix too (FCFS arrivals), and only they
  // have waited for a slot.
  size_t i = marked_prefix_;
  for (; i < waiting_.size() && eligible(waiting_[i]); ++i) waiting_[i].waited = true;
  marked_prefix_ = i;
}

// Whether the pool takes `r` now: its reservation fits; under the SGLang rule
// r's whole remaining answer and a share of every running request's stay free.
bool EngineSimulation::KvAdmits(const Request& r) const {
  if (!limits_.kv_pool_tokens.has_value()) return true;
  double need = kv_used_tokens_ + limits_.Charge(r.kv_reserved_tokens);
  if (limits_.incremental()) {
    // Room for the running decoders' next tokens comes first.
    for (const Request& o : running_) need += o.prefill_left_tokens <= 0 ? tokens_per_decoder_ : 0;
  }
  if (limits_.rule == KvAdmission::kReserveRemainingShare) {
    // The newcomer's whole remaining answer; the running ones' at the share.
    need += r.output_tokens - r.generated_tokens;
    for (const Request& o : running_) {
      need += limits_.remaining_share * (o.output_tokens - o.generated_tokens);
    }
  }
  return need <= *limits_.kv_pool_tokens + 1e-9;
}

// The newest running request gives its KV back and returns to the head of
// the queue; it recomputes its prompt and generated tokens when readmitted.
void EngineSimulation::Preempt() {
  Request r = std::move(running_.back());
  running_.pop_back();
  kv_used_tokens_ -= limits_.Charge(r.kv_reserved_tokens);
  r.prefill_left_tokens = std::max(1.0, r.input_tokens + r.generated_tokens - r.cached_tokens);
  r.kv_reserved_tokens = r.input_tokens + r.generated_tokens;
  ++preemptions_;
  waiting_.push_front(std::move(r));
  ++marked_prefix_;
}

// Incremental rules: each decoder needs room for the tokens it verifies this
// iteration; preempt the newest until they all have it (one is always kept).
void EngineSimulation::MakeRoomForDecoders() {
  if (!limits_.incremental() || !limits_.kv_pool_tokens.has_value()) return;
  auto needed = [this] {
    double decoders = 0;
    for (const Request& r : running_) decoders += r.prefill_left_tokens <= 0 ? 1 : 0;
    return kv_used_tokens_ + decoders * tokens_per_decoder_;
  };
  while (running_.size() > 1 && needed() > *limits_.kv_pool_tokens + 1e-9) Preempt();
}

// Step 3: every request past its prefill decodes; the budget left after the
// decoders goes to prefill chunks, FCFS. The shape carries the decoders'
// mean context and the prefill tokens' mean attention span.
Iteration EngineSimulation::ComposeIteration() const {
  Iteration it;
  it.decoding.assign(running_.size(), 0);
  it.chunk_tokens.assign(running_.size(), 0.0);
  StepShape& shape = it.shape;
  double decode_context_tokens = 0;
  for (size_t i = 0; i < running_.size(); ++i) {
    if (running_[i].prefill_left_tokens <= 0) {
      it.decoding[i] = 1;
      shape.decode_sequences += 1;
      decode_context_tokens += running_[i].input_tokens + running_[i].generated_tokens;
    }
  }
  double budget_tokens =
      c_.model.scheduler.max_batched_tokens - shape.decode_sequences * tokens_per_decoder_;
  double span_tokens = 0;
  for (size_t i = 0; i < running_.size() && budget_tokens > 0; ++i) {
    const Request& r = running_[i];
    if (r.prefill_left_tokens <= 0) continue;
    const double chunk = std::min(r.prefill_left_tokens, budget_tokens);
    it.chunk_tokens[i] = chunk;
    budget_tokens -= chunk;
    shape.prefill_tokens += chunk;
    shape.prefill_sequences += 1;
    const double done_tokens = std::max(0.0, r.input_tokens - r.prefill_left_tokens);
    span_tokens += chunk * (done_tokens + 0.5 * chunk);
  }
  if (shape.decode_sequences > 0) {
    shape.decode_context_tokens = decode_context_tokens / shape.decode_sequences;
  }
  if (shape.prefill_tokens > 0) shape.prefill_context_tokens = span_tokens / shape.prefill_tokens;
  return it;
}

// Step 4: the iteration lasts the step-time model's T for its composition.
absl::StatusOr<double> EngineSimulation::IterationSeconds(const StepShape& shape) const {
  const PerformanceModel& m = c_.model;
  const double step_seconds =
      StepSeconds(m.coefficients, ComputeEngineStepFeatures(m.inputs, m.speculative, shape));
  if (!(step_seconds > 0) || !std::isfinite(step_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("StepTimeCoefficients: step time = ", step_seconds,
                     " s; coefficients must give positive step times"));
  }
  return step_seconds;
}

// Step 5: decoders keep 1 + the run of accepted draft tokens; a prefill that
// completes emits the first token now; a request with all its output leaves.
void EngineSimulation::AdvanceRequests(const Iteration& it) {
  std::vector<Request> still;
  still.reserve(running_.size());
  for (size_t i = 0; i < running_.size(); ++i) {
    Request& r = running_[i];
    if (it.decoding[i]) {
      double kept_tokens = 1;
      for (int d = 0; d < draft_tokens_ && rng_.Uniform() < acceptance_rate_; ++d) {
        kept_tokens += 1;
      }
      const double before = r.generated_tokens;
      r.generated_tokens = std::min(r.output_tokens, r.generated_tokens + kept_tokens);
      if (limits_.incremental()) {
        const double charged = limits_.Charge(r.kv_reserved_tokens);
        r.kv_reserved_tokens += r.generated_tokens - before;
        kv_used_tokens_ += limits_.Charge(r.kv_reserved_tokens) - charged;
      }
    } else if (it.chunk_tokens[i] > 0) {
      r.prefill_left_tokens -= it.chunk_tokens[i];
      if (r.prefill_left_tokens <= 0) {
        r.prefill_left_tokens = 0;
        // A recomputed request already showed its first token.
        if (!r.first_token_seconds.has_value()) {
          r.first_token_seconds = now_seconds_;
          r.generated_tokens = 1;
          if (limits_.incremental()) {
            const double charged = limits_.Charge(r.kv_reserved_tokens);
            r.kv_reserved_tokens += 1;
            kv_used_tokens_ += limits_.Charge(r.kv_reserved_tokens) - charged;
          }
        }
      }
    }
    if (r.first_token_seconds.has_value() && r.generated_tokens >= r.output_tokens) {
      Complete(r);
    } else {
      still.push_back(std::move(r));
    }
  }
  running_ = std::move(still);
}

// Frees the request's KV, records it (window throughput; latencies when it
// is measured) and, in a closed loop, schedules its user's next submission.
void EngineSimulation::Complete(const Request& r) {
  kv_used_tokens_ -= limits_.Charge(r.kv_reserved_tokens);
  if (m_.window_start_seconds.has_value() && now_seconds_ >= *m_.window_start_seconds) {
    ++m_.window_completions;
    m_.window_output_tokens += r.output_tokens;
    m_.window_end_seconds = now_seconds_;
  }
  if (r.id >= first_measured_id_) {
    ++m_.measured_done;
    // The request's way in and out is outside the engine: it adds to what
    // the user sees (and, in a closed loop, to the user's cycle).
    const double latency = c_.model.coefficients.request_latency_seconds;
    m_.ttft_seconds.push_back(*r.first_token_seconds - r.arrival_seconds + latency);
    m_.waited_count += r.waited;
    m_.e2e_seconds.push_back(now_seconds_ - r.arrival_seconds + latency);
    if (r.output_tokens > 1) {
      m_.tpot_seconds.push_back((now_seconds_ - *r.first_token_seconds) / (r.output_tokens - 1));
    }
  }
  if (c_.concurrency) {
    const double think_seconds =
        c_.think_time_seconds > 0 ? rng_.Exponential(c_.think_time_seconds) : 0.0;
    future_.push(
        {now_seconds_ + c_.model.coefficients.request_latency_seconds + think_seconds, r.user});
  }
}

absl::StatusOr<SimulationResult> EngineSimulation::Run() {
  bool saturated = false;
  while (m_.measured_done < c_.measured_requests) {
    if (Stopped(c_.budget)) return c_.budget->status();
    EnqueueDueArrivals();
    if (static_cast<long>(waiting_.size()) >= kSimulatorMaxWaiting) {
      saturated = true;
      break;
    }
    MakeRoomForDecoders();
    AdmitWaiting();
    if (running_.empty()) {
      if (future_.empty() || issued_ >= total_requests_) break;  // nothing left
      now_seconds_ = std::max(now_seconds_, future_.top().time_seconds);
      continue;
    }
    const Iteration it = ComposeIteration();
    const absl::StatusOr<double> step_seconds = IterationSeconds(it.shape);
    if (!step_seconds.ok()) return step_seconds.status();
    if (m_.window_start_seconds.has_value()) {
      m_.batch_request_seconds += running_.size() * *step_seconds;
      m_.queue_request_seconds += waiting_.size() * *step_seconds;
    }
    now_seconds_ += *step_seconds;
    ++iterations_;
    AdvanceRequests(it);
  }
  if (kv_used_tokens_ < -1e-6) {
    return absl::InternalError("simulator: KV accounting went negative");
  }
  return Summary(saturated);
}

// Latencies over the measured requests; throughput over the window from the
// first measured arrival to the last completion in it; time averages from
// that arrival to the end.
SimulationResult EngineSimulation::Summary(bool saturated) const {
  SimulationResult res;
  res.saturated = saturated;
  res.iterations = iterations_;
  res.ttft = Summarise(m_.ttft_seconds);
  res.e2e = Summarise(m_.e2e_seconds);
  double sum_tpot_seconds = 0;
  for (double x : m_.tpot_seconds) sum_tpot_seconds += x;
  res.tpot_mean_seconds = m_.tpot_seconds.empty() ? 0 : sum_tpot_seconds / m_.tpot_seconds.size();
  res.completed_requests = static_cast<int>(m_.measured_done);
  res.preemptions = preemptions_;
  res.slot_wait_fraction =
      m_.measured_done > 0 ? static_cast<double>(m_.waited_count) / m_.measured_done : 0;
  res.simulated_seconds = now_seconds_;
  const double window_start_seconds = m_.window_start_seconds.value_or(0.0);
  const double window_seconds = m_.window_end_seconds - window_start_seconds;
  if (window_seconds > 0) {
    res.requests_per_second = m_.window_completions / window_seconds;
    res.output_tokens_per_second = m_.window_output_tokens / window_seconds;
  }
  const double average_seconds = now_seconds_ - window_start_seconds;
  if (average_seconds > 0) {
    res.mean_batch_size = m_.batch_request_seconds / average_seconds;
    res.mean_queue_length = m_.queue_request_seconds / average_seconds;
  }
  return res;
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationConfig& c) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(c.model));
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(c.workload));
  // Validates the limits and that one mean request fits.
  absl::StatusOr<Slots> slots = ComputeSlots(c.limits, c.workload);
  if (!slots.ok()) return slots.status();
  CAPPLAN_RETURN_IF_ERROR(ValidateLoad(c));
  return EngineSimulation(c).Run();
}

}  // namespace capplan::model
