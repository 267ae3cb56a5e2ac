// Queueing model of one replica (DESIGN §4 "Queueing").
//
// The GPU is a load-dependent server. With n requests in service (n <= S
// slots) a request's life is its prefill plus (o − 1) decode steps at batch n
// plus the stalls from the others' prefills (step_time.h,
// ComputeRequestPhaseFeatures); the station completes μ(n) = n / R(n)
// requests per second; above S requests wait for a slot.
//
//   S = min(running-request limit or operator gate, KV pool ÷ tokens per
//           request, state slots)
//
// Closed loop (N users, think time Z — what benchmarks run): exact
// mean-value analysis (Reiser–Lavenberg) for one load-dependent station plus
// a delay station, with the marginal queue-length probabilities, so TTFT
// percentiles come from the arrival theorem.
//
// Open loop (Poisson arrivals at λ): the birth–death chain with λ and
// μ(min(n, S)); stationary π_n in closed form (product of ratios below S, a
// geometric tail above); a request also holds its slot while it waits for the
// prefill path, so the chain's rates are μ_λ(n) (PrefillStageMeanWait) and it
// is stable iff λ < μ_λ(S). An arrival finding n >= S waits for n − S + 1
// completions.
//
// Waiting time for m completions: a sum of m inter-completion gaps, each
// modelled as κ exponential phases of rate κ·μ(S) (an Erlang-κ gap, κ from
// the request service-time variability: κ ≈ 1 / cv², 1 <= κ <= 16), so the
// wait is a mixture of Erlang(m·κ) laws; with κ = 1 this is the exact
// birth–death answer. In the open loop the mean wait is further scaled
// from M/M/S towards M/D/S by cv² (Cosmetatos' M/D/S approximation); in the
// closed loop the time to m completions is an Erlang law whose spread is set
// as kMaxErlangPhases describes. Percentiles come from the mixture's CDF
// (roots-of-unity filter for the geometric mixture; Poisson sums for
// Erlangs of fewer than 8 phases, a table per phase count with cubic
// Hermite interpolation, error < 2e-9, from 8 phases on), never a normal
// approximation.
//
// Prefill: the prefill path is a G/G/1 queue in front of decoding (Poisson
// arrivals in the open loop), which adds an exponential delay to TTFT. In a
// closed loop without think time users arrive at iteration boundaries, and
// those whose requests complete in the same iteration queue for the prefill
// path together (CoArrivalPositions).
#ifndef CAPPLAN_MODEL_QUEUEING_H_
#define CAPPLAN_MODEL_QUEUEING_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/budget.h"
#include "model/step_time.h"

namespace capplan::model {

inline constexpr int kMaxSlots = 65536;
inline constexpr int kMaxLoadPoints = 4096;
inline constexpr int kMaxClosedLoopConcurrency = 16384;
// Phases per inter-completion gap (see above).
inline constexpr int kMaxPhasesPerCompletion = 16;
// Closed loop: Erlang phases of the time to m completions. Without think
// time its squared cv is (1/m)·[φ·(1 − m/(S+1))⁺ + cv_R²·min(1, m/(S+1))]:
// the m-th order statistic of S residual lives (exponential-like when m << S,
// regular when m ≈ S), φ = kSaturatedPhaseSpreadShare; with think time it is
// the renewal count cv_R²/m (the product form's mixture over m carries the
// rest of the spread).
inline constexpr int kMaxErlangPhases = 64;
// Open loop: probability mass beyond which the stationary tail is ignored.
inline constexpr double kTailMassTolerance = 1e-12;

enum class SlotBound {
  kRunningRequestLimit,  // engine max_num_seqs / max_running_requests
  kOperatorGate,         // a concurrency gate in front of the engine
  kKvPool,               // KV pool tokens ÷ tokens per request
  kStateSlots,           // linear-attention / Mamba state slots
};
const char* SlotBoundName(SlotBound bound);

// How the engine holds KV for the requests it runs (data/engines presets,
// whose sources state each engine's rule).
enum class KvAdmission {
  // Each request reserves prompt + whole answer when admitted, and keeps it
  // (TensorRT-LLM's GUARANTEED_NO_EVICT): floor(pool ÷ (input + output)).
  kReserveFixed,
  // The same, each request reserving its own input + output (an engine that
  // knew each answer's length): the limit is soft when lengths vary.
  kReserveActualLength,
  // Blocks allocated as tokens appear; when the pool runs out the newest
  // running request is preempted and later recomputed (vLLM V0 and V1). A
  // request holds input + the tokens generated so far.
  kIncremental,
  // Tokens held plus a share r of each running request's remaining answer
  // are kept free before a new request is admitted; retract on overflow
  // (SGLang's new-token ratio at its floor).
  kReserveRemainingShare,
};
const char* KvAdmissionName(KvAdmission a);

// A KV pool paged as vLLM's hybrid allocator pages it: `groups` groups of
// layers share blocks of `block_tokens`, the pool's tokens are blocks ÷ groups
// × block_tokens, and a request holding T tokens takes whole blocks in every
// group: full_groups × ⌈T/b⌉ + window_groups × min(window_blocks, ⌈T/b⌉) +
// state_blocks (its recurrent states: one block per state group, or more).
struct KvPages {
  int64_t block_tokens = 1;
  int64_t full_groups = 1;
  int64_t window_groups = 0;
  int64_t window_blocks = 0;
  int64_t state_blocks = 0;
  int64_t groups = 1;
};
// The pool tokens a request holding `tokens` takes: its blocks × b ÷ groups.
double PagedKvTokens(const KvPages& pages, double tokens);

// Each limit is optional; at least one must be present.
struct SlotLimits {
  std::optional<int> max_running_requests;
  std::optional<int> operator_concurrency_gate;
  std::optional<double> kv_pool_tokens;
  // KV tokens one request holds. Default: input + output·(1 + cv_o²), the
  // mean over requests *in service* (long answers stay longer, so the
  // requests holding the pool are length-biased); input + output when the
  // output length does not vary.
  std::optional<double> kv_tokens_per_request;
  std::optional<int> state_slots;
  KvAdmission kv_admission = KvAdmission::kReserveFixed;
  // kReserveRemainingShare: r in [0, 1].
  double kv_remaining_share = 0;
  // The pool's paging (vLLM's hybrid allocator); absent: tokens are tokens.
  std::optional<KvPages> kv_pages;
};

struct Slots {
  int slots = 0;
  SlotBound bound = SlotBound::kRunningRequestLimit;
};

// KV tokens one request holds on average while in service:
// limits.kv_tokens_per_request, else by the admission rule, with o' = o·(1 +
// cv_o²) the length-biased answer of the requests in service: reserved
// up front, input + o'; allocated as tokens appear, input + o'/2 (a request
// holds input + the tokens generated so far, on average half its answer);
// with a share r of the remaining answer kept free, input + o'·(1 + r)/2.
// Requests of one fixed length in waves grow together: all hold input + o at
// the wave's end, so an incremental pool must hold that or preempt. With
// kv_pages, those tokens as the pool's pages count them (PagedKvTokens).
double KvTokensPerRequest(const SlotLimits& limits, const Workload& w);

// S and the limit that sets it (ties go to the first in SlotBound order).
// FAILED_PRECONDITION when the KV pool cannot hold one request.
absl::StatusOr<Slots> ComputeSlots(const SlotLimits& limits, const Workload& w);

// μ(n) and the phase times for n = 1..S.
class LoadDependentServer {
 public:
  // `budget` (optional, outlives the server) stops the work early: Create
  // and the curves return its status once it is stopped.
  static absl::StatusOr<LoadDependentServer> Create(const PerformanceModel& m, const Workload& w,
                                                    const Slots& slots, Budget* budget = nullptr);
  Budget* budget() const { return budget_; }

  int slots() const { return slots_.slots; }
  const Workload& workload() const { return workload_; }
  // μ(min(n, S)) for n >= 1, requests per second.
  double CompletionRate(int n) const;
  // Phase times with min(n, S) requests in service (n >= 1).
  const RequestPhaseTimes& Phase(int n) const;
  // μ(S): the largest sustainable request rate.
  double SaturationRate() const { return CompletionRate(slots_.slots); }
  // Coefficient of variation of one request's time in service at S.
  double ServiceTimeCv() const { return service_cv_; }
  // What a request taken in with min(n, S) − 1 others in service waits for
  // the batches the scheduler launched ahead (SchedulerConfig): one decode
  // step of the others each; 0 for n <= 1 (an idle server runs it next).
  double LaunchedAheadSeconds(int n) const;
  // Synchronized users come back in whole waves every round (SchedulerConfig).
  bool WavesEveryRound() const { return waves_every_round_; }
  // κ of the Erlang inter-completion gap.
  int PhasesPerCompletion() const { return phases_; }
  // Request-length spread: equal-probability nodes of the log-normal length
  // laws (one node at the mean when cv = 0). Prefill seconds of input node j
  // and life seconds of output node j with min(n, S) in service.
  int LengthNodes() const { return static_cast<int>(input_ratio_1_.size()); }
  double NodePrefillSeconds(int n, int j) const;
  double NodeLifeSeconds(int n, int j) const;
  // Time node j's prefill holds the prefill path: what its chunks add to
  // their iterations beyond the others' decoding (prefill is compute-bound,
  // so prefills packed into one iteration still take turns). The prefill
  // stage is modelled as a G/G/1 queue with these service times.
  double NodePrefillOccupancySeconds(int n, int j) const;

 private:
  Slots slots_;
  Workload workload_;
  std::vector<RequestPhaseTimes> phases_by_n_;  // index n − 1
  std::vector<double> rate_by_n_;
  double service_cv_ = 0;
  int phases_ = 1;
  int launched_ahead_ = 0;
  bool waves_every_round_ = false;
  // Prefill time of input node j relative to the mean input, at n = 1 and S.
  std::vector<double> input_ratio_1_;
  std::vector<double> input_ratio_s_;
  std::vector<double> budget_share_1_;
  std::vector<double> budget_share_s_;
  std::vector<double> output_nodes_;  // output tokens of node j
  Budget* budget_ = nullptr;
};

// Number of equal-probability nodes used for a length law with cv > 0.
inline constexpr int kLengthNodes = 8;

// Equal-probability nodes of a log-normal law with the given mean and cv
// (quantiles at (j + ½)/J, rescaled to keep the mean); {mean} when cv = 0.
std::vector<double> LogNormalNodes(double mean, double cv, int nodes);

struct LatencyPercentiles {
  double mean_seconds = 0;
  double p50_seconds = 0;
  double p90_seconds = 0;
  double p95_seconds = 0;
  double p99_seconds = 0;
};

// End-to-end latency: the figures the planner reports and checks (the SLO
// is on the p95); its p90 and p99 are not searched for.
struct EndToEndPercentiles {
  double mean_seconds = 0;
  double p50_seconds = 0;
  double p95_seconds = 0;
};

// One point of a load curve. Exactly one of concurrency / arrival_rate_rps.
struct LoadPoint {
  std::optional<int> concurrency;
  std::optional<double> arrival_rate_rps;
  // Open loop: λ < μ_λ(S). Closed loop: always true.
  bool stable = true;
  // Throughput ÷ μ(S) (closed loop); the offered ρ = λ / μ_λ(S) for
  // open-loop points.
  double utilization = 0;
  double requests_per_second = 0;
  double output_tokens_per_second = 0;
  double mean_batch_size = 0;  // requests in service
  // Requests waiting for a slot; absent when unstable.
  std::optional<double> mean_queue_length;
  // Share of arrivals that find every slot taken.
  double slot_wait_probability = 0;
  // Absent when unstable.
  std::optional<LatencyPercentiles> ttft;
  std::optional<EndToEndPercentiles> e2e;
  std::optional<double> tpot_seconds;
  // The curve was asked to stop its latency figures at the first unsafe
  // point (LatencyCutoff) and this point lies beyond it: ttft and e2e are
  // absent although the point may be stable.
  bool latencies_skipped = false;
  // The curve was asked for its safe point only (LatencyCutoff) and this
  // point lies before it or is the first to fail: of the latency figures
  // only the means and what the SLO check reads are computed (TTFT p95,
  // with its p50 where an adjustment is applied; the e2e p95 under an e2e
  // SLO); the others are 0.
  bool latencies_partial = false;
  double load() const;  // concurrency or arrival rate
};

struct Slo;
struct SafetyOptions;

// A change to each point's figures made before the curve's SLO checks and
// safe point see them (a configuration's measured rows:
// measured_correction.h).
class PointAdjustment {
 public:
  virtual ~PointAdjustment() = default;
  virtual void Apply(LoadPoint* point) const = 0;
};

// For callers that read only the safe operating point of a curve (Plan and
// the search): the latency laws, which are most of a point's cost, are
// computed up to and including the first point that fails the SLO or the
// slot-wait cap (PointFailure), in the curve's order, and skipped after it
// (latencies_skipped); throughput, batch, queue and slot-wait figures are
// computed at every point. Before the safe point a point carries only the
// latency figures the SLO check reads (latencies_partial); the safe point
// carries all of them. The safe point and its binding limit are the whole
// curve's (quantiles are points of a fixed lattice, whichever search found
// them).
// `adjust` (optional): the points are judged as adjusted.
struct LatencyCutoff {
  const Slo* slo = nullptr;
  const SafetyOptions* safety = nullptr;
  const PointAdjustment* adjust = nullptr;
};

// Closed loop at each concurrency (strictly increasing, 1..16384, at most
// 4096 points) with mean think time Z >= 0 seconds.
absl::StatusOr<std::vector<LoadPoint>> ClosedLoopCurve(
    const LoadDependentServer& server, absl::Span<const int> concurrencies,
    double think_time_seconds, std::optional<LatencyCutoff> cutoff = std::nullopt);

// Open loop at each arrival rate (strictly increasing, > 0, at most 4096).
// Points with λ >= μ_λ(S) come back stable = false, without latency figures.
absl::StatusOr<std::vector<LoadPoint>> OpenLoopCurve(
    const LoadDependentServer& server, absl::Span<const double> rates_rps,
    std::optional<LatencyCutoff> cutoff = std::nullopt);

// ---------------------------------------------------------------- analysis

// Which TTFT percentile the knee is measured on.
enum class KneeMetric { kTtftP95, kTtftP50 };

struct KneeOptions {
  // TTFT (the chosen percentile) above flat_ratio × its value at the lowest
  // load has left the flat region.
  double flat_ratio = 2.0;
  KneeMetric metric = KneeMetric::kTtftP95;
};

struct Knee {
  int last_flat_index = 0;
  int first_steep_index = 0;
  // Load where the TTFT percentile crosses flat_ratio × base, interpolated linearly
  // between the two points (the steep point's load when it is unstable).
  double load = 0;
};

// nullopt: TTFT stays flat over the whole curve. INVALID_ARGUMENT for an
// empty curve, flat_ratio <= 1, or a first point without TTFT.
absl::StatusOr<std::optional<Knee>> FindKnee(const std::vector<LoadPoint>& points,
                                             const KneeOptions& options = {});

struct Slo {
  std::optional<double> ttft_p95_seconds;
  std::optional<double> tpot_seconds;
  std::optional<double> e2e_p95_seconds;
};
absl::Status ValidateSlo(const Slo& slo);

enum class BindingLimit {
  kLoadRange,  // every point passes: the requested range ends first
  kTtftP95,
  kTpot,
  kE2eP95,
  kSlotWait,   // requests would wait for a slot
  kStability,  // λ >= μ_λ(S)
};
const char* BindingLimitName(BindingLimit limit);

struct SafetyOptions {
  // "Nothing waits for a slot": at most this share of arrivals may find all
  // slots busy (0 in a closed loop means N <= S when Z = 0).
  double max_slot_wait_probability = 0.01;
};

struct SafeOperatingPoint {
  // Last point of the initial run of points meeting every condition; absent
  // when the first point already fails.
  std::optional<int> index;
  // Why the next point (or the first) fails.
  BindingLimit binding = BindingLimit::kLoadRange;
};

// Why a point is not safe (nullopt: it is), checked in BindingLimit order:
// unstable or without TTFT, TTFT p95, TPOT, e2e p95, slot wait.
std::optional<BindingLimit> PointFailure(const LoadPoint& p, const Slo& slo,
                                         const SafetyOptions& options);

absl::StatusOr<SafeOperatingPoint> FindSafeOperatingPoint(const std::vector<LoadPoint>& points,
                                                          const Slo& slo,
                                                          const SafetyOptions& options = {});

// ------------------------------------------------------------- one call

// Everything PredictLoad needs in one call: S from the limits, the server,
// the curve, the knee and the safe operating point.
struct LoadCurveRequest {
  PerformanceModel model;
  Workload workload;
  SlotLimits limits;
  // Exactly one of the two load axes is non-empty.
  std::vector<int> concurrencies;  // closed loop
  double think_time_seconds = 0;
  std::vector<double> arrival_rates_rps;  // open loop
  Slo slo;
  KneeOptions knee;
  SafetyOptions safety;
  // Optional: stops the computation (its status is returned) when stopped.
  Budget* budget = nullptr;
  // Latency figures only up to the first unsafe point (LatencyCutoff); the
  // knee is then not sought.
  bool latencies_until_unsafe = false;
  // Optional: applied to every point before the safe point and the cutoff
  // judge it; the knee is sought on the points as the model gives them.
  const PointAdjustment* adjust = nullptr;
};

struct LoadCurve {
  bool closed_loop = true;
  Slots slots;
  double saturation_rps = 0;  // μ(S)
  std::vector<LoadPoint> points;
  std::optional<Knee> knee;
  SafeOperatingPoint safe;
};

// `server` (optional): the server of the request's model, workload and
// slots, built on the first call that finds it empty and reused by the next
// calls, which must give the same model, workload and limits (a caller that
// draws several curves of one deployment builds the server once).
absl::StatusOr<LoadCurve> PredictLoadCurve(const LoadCurveRequest& request,
                                           std::optional<LoadDependentServer>* server = nullptr);

// ----------------------------------------------------- distribution helpers
// Exposed for tests.

// Prefill stage as a G/G/1 queue: arrival rate λ with squared cv c_a² (1 for
// Poisson) and service times S_j with equal weights. Returns {P(wait) = ρ,
// rate of the conditional exponential wait} with the Pollaczek–Khinchine
// mean λ·E[S²] / (2(1 − ρ)) scaled by Kingman's (c_a² + c_s²)/(1 + c_s²);
// ρ = λ·E[S] capped at kMaxPrefillUtilization.
struct PrefillQueue {
  double wait_probability = 0;
  double wait_rate = 0;
};
PrefillQueue PrefillStageQueue(double arrival_rate_rps, const std::vector<double>& service_seconds,
                               double arrival_cv2);
inline constexpr double kMaxPrefillUtilization = 0.995;
// Closed loop without think time: the co-arrival positions reach the slot
// wait branches in at most this many groups of equal weight.
inline constexpr int kCoArrivalWaitBins = 16;
// Mean prefill-stage wait (Poisson arrivals at λ) with `population` in
// service. The open-loop chain counts it in the slot holding time:
// μ_λ(n) = n / (n/μ(n) + W_p(λ)), and stability is λ < μ_λ(S).
double PrefillStageMeanWait(const LoadDependentServer& server, double arrival_rate_rps,
                            int population);
// Closed loops without think time stagger themselves (each completion
// triggers the next arrival), so their prefill arrivals are far more regular
// than Poisson; squared cv used for them, chosen against the simulator.
inline constexpr double kClosedLoopPrefillArrivalCv2 = 0.1;
// Closed loops without think time, beyond saturation: an arriving user waits
// for m completions of S busy slots. Were the slots' phases independent, the
// m-th completion would be an order statistic of S residual lives (squared cv
// (1 − m/(S+1))/m); the slots are admitted one per completion and pushed
// apart by each other's prefills, so their phases are more even. Share of the
// independent-phase spread kept: chosen against the simulator on scenarios
// 200..599 of tests/model/perf_scenarios.h (0.25, 0.5, 1 tried; 1 overstates
// TTFT p95 by 15-36% in 11 of 60 such scenarios), checked on 600..999.
inline constexpr double kSaturatedPhaseSpreadShare = 0.5;

// Closed loops without think time: a user arrives the moment its previous
// request completes, at an iteration boundary, and each of the `others` in
// service completes at that same boundary with probability q (one iteration
// ÷ one life). The K ~ Binomial(others, q) co-arrivals are admitted with it
// in random order, so it waits for the prefills of U of them:
// P(U = u) = Σ_{k >= u} P(K = k) / (k + 1), E[U] = others·q / 2. Returns
// P(U = u) for u = 0, 1, ... (tail below 1e-15 dropped); {1} when others < 1.
std::vector<double> CoArrivalPositions(int others, double q);

// Share of a closed loop's requests that arrive in a wave of all `users`:
// every one when they are synchronized on an engine whose rounds stay waves (each round
// comes back whole), the first round's users ÷ num_prompts on an engine that
// serves decodes first (afterwards they come back on the steps their prefills
// completed, apart), none when they are not synchronized.
double SynchronizedWaveShare(const Workload &w, bool waves_every_round, int users);

// The position law of CoArrivalPositions for arrivals of which `wave_share`
// come in a wave (every other user co-arrives, q = 1) and the rest apart (q).
std::vector<double> CoArrivalPositionsWithWaves(int others, double q, double wave_share);

// Law of the waiting time W for a slot, in one of two forms:
//  * geometric (open loop): M completions with P(M = m) = (1 − r)·r^(m − 1),
//    each an Erlang(κ) gap of phase rate κ·θ, so W | M ~ Erlang(M·κ, κ·θ);
//    the CDF is E[1 − r^floor(N/κ)] with N ~ Poisson(κ·θ·t), summed exactly;
//  * explicit (closed loop): a mixture of Erlang laws, one per M.
struct WaitLaw {
  std::optional<double> geometric_ratio;
  double phase_rate = 0;  // κ·θ (per second), > 0
  int phases_per_completion = 1;
  struct Erlang {
    double weight = 0;
    int phases = 1;
    double rate = 0;  // per phase, per second
  };
  std::vector<Erlang> erlangs;
};
// P(Erlang(k, rate) <= t) = P(Poisson(rate·t) >= k).
double ErlangCdf(int phases, double rate, double t);
// P(W <= t).
double WaitCdf(const WaitLaw& law, double t);

// A TTFT (or e2e) law: a mixture of "offset + Uniform(0, width)" atoms for
// arrivals that find a free slot, and "offset + W" branches (one shared wait
// law W) for those that wait.
struct LatencyLaw {
  struct Atom {
    double weight = 0;
    double offset_seconds = 0;
    double uniform_width_seconds = 0;
  };
  struct WaitBranch {
    double weight = 0;
    double offset_seconds = 0;
  };
  std::vector<Atom> atoms;
  std::vector<WaitBranch> waits;
  WaitLaw wait;
  // Prefill-stage queueing added to every atom (the wait branches, admitted
  // one per completion, carry its mean in their offsets): with probability
  // prefill_wait_probability an Exp(prefill_wait_rate) delay (the G/G/1
  // waiting law of PrefillStageQueue).
  double prefill_wait_probability = 0;
  double prefill_wait_rate = 0;
  // Stops the quantile searches early (their result is then meaningless:
  // the caller returns the budget's status instead).
  Budget* budget = nullptr;
};
double LatencyCdf(const LatencyLaw& law, double t);
// Smallest t with CDF(t) >= q, to a relative 1e-3 (Brent's method: inverse
// quadratic interpolation with a bisection safeguard), ending on a fixed
// lattice (ratio 1.001): the smallest lattice point there, so the answer does
// not depend on where the search started.
double LatencyQuantile(const LatencyLaw& law, double q);
double LatencyMean(const LatencyLaw& law);
// An upper bound of LatencyQuantile(law, q) from the law's first two moments
// (Cantelli: P(X >= mean + k·sd) <= 1 / (1 + k²)), widened by the quantile
// lattice's rounding; +infinity where none holds (q at or above the law's
// total weight). It lets a check that only asks "below the SLO?" skip the
// quantile search.
double LatencyQuantileUpperBound(const LatencyLaw& law, double q);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_QUEUEING_H_
