#include "model/queueing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "model/perf_checks.h"
#include "model/scratch.h"

namespace capplan::model {

using perf_internal::CheckInRange;
using perf_internal::CheckNonNegative;
using perf_internal::CheckPositive;
using perf_internal::Invalid;

namespace {
// Poisson sums are taken over mean ± kPoissonSpanSigmas·sqrt(mean) + slack.
constexpr double kPoissonSpanSigmas = 12.0;
constexpr double kPoissonSpanSlack = 20.0;
// Quantiles to 0.1% relative (the figures carry error bands of several %).
constexpr double kQuantileRelativeTolerance = 1e-3;
// Populations beyond this many are pooled into bins for the TTFT atoms.
constexpr int kMaxAtomStates = 256;
// exp(−kExpSaturation) is below double precision relative to 1.
constexpr double kExpSaturation = 40.0;
// The open loop's stationary products are rescaled by 2^±this (StationaryLaw).
constexpr int kStationaryShiftBits = 512;
// Mixture atoms lighter than this are dropped (their total is < 1e-10).
constexpr double kNegligibleWeight = 1e-15;
// Below this geometric ratio the closed form cancels badly; sum instead.
constexpr double kRootsOfUnityMinRatio = 0.05;
constexpr int kQuantileMaxIterations = 200;
// A quantile search given a guess (the previous load point's quantile,
// scaled by the means) brackets ±0.5% around it first.
constexpr double kGuessSpan = 0.005;
}  // namespace

const char *SlotBoundName(SlotBound bound) {
  switch (bound) {
    case SlotBound::kRunningRequestLimit:
      return "RUNNING_REQUEST_LIMIT";
    case SlotBound::kOperatorGate:
      return "OPERATOR_GATE";
    case SlotBound::kKvPool:
      return "KV_POOL";
    case SlotBound::kStateSlots:
      return "STATE_SLOTS";
  }
  return "UNKNOWN";
}

const char *BindingLimitName(BindingLimit limit) {
  switch (limit) {
    case BindingLimit::kLoadRange:
      return "LOAD_RANGE";
    case BindingLimit::kTtftP95:
      return "TTFT_P95";
    case BindingLimit::kTpot:
      return "TPOT";
    case BindingLimit::kE2eP95:
      return "E2E_P95";
    case BindingLimit::kSlotWait:
      return "SLOT_WAIT";
    case BindingLimit::kStability:
      return "STABILITY";
  }
  return "UNKNOWN";
}

const char *KvAdmissionName(KvAdmission a) {
  switch (a) {
    case KvAdmission::kReserveFixed:
      return "reserve input + output at admission";
    case KvAdmission::kReserveActualLength:
      return "reserve each request's own input + output";
    case KvAdmission::kIncremental:
      return "allocate as tokens appear, preempt when full";
    case KvAdmission::kReserveRemainingShare:
      return "hold tokens + a share of the remaining answer, retract when full";
  }
  return "unknown";
}

double PagedKvTokens(const KvPages &p, double tokens) {
  const double b = static_cast<double>(std::max<int64_t>(1, p.block_tokens));
  const double blocks = std::ceil(std::max(1.0, tokens) / b);
  const double held = static_cast<double>(p.full_groups) * blocks +
                      static_cast<double>(p.window_groups) *
                          std::min(static_cast<double>(p.window_blocks), blocks) +
                      static_cast<double>(p.state_blocks);
  return held * b / static_cast<double>(std::max<int64_t>(1, p.groups));
}

namespace {

double LogicalKvTokensPerRequest(const SlotLimits &limits, const Workload &w) {
  const double biased_output = w.output_tokens * (1.0 + w.output_tokens_cv * w.output_tokens_cv);
  switch (limits.kv_admission) {
    case KvAdmission::kReserveFixed:
    case KvAdmission::kReserveActualLength:
      return w.input_tokens + biased_output;
    case KvAdmission::kIncremental:
      if (w.synchronized) return w.input_tokens + w.output_tokens;
      return w.input_tokens + 0.5 * biased_output;
    case KvAdmission::kReserveRemainingShare:
      if (w.synchronized) return w.input_tokens + w.output_tokens;
      return w.input_tokens + 0.5 * biased_output * (1.0 + limits.kv_remaining_share);
  }
  return w.input_tokens + biased_output;
}

}  // namespace

double KvTokensPerRequest(const SlotLimits &limits, const Workload &w) {
  if (limits.kv_tokens_per_request.has_value()) return *limits.kv_tokens_per_request;
  const double tokens = LogicalKvTokensPerRequest(limits, w);
  return limits.kv_pages.has_value() ? PagedKvTokens(*limits.kv_pages, tokens) : tokens;
}

absl::StatusOr<Slots> ComputeSlots(const SlotLimits &limits, const Workload &w) {
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(w));
  std::optional<Slots> best;
  auto consider = [&best](double value, SlotBound bound) {
    const int v = static_cast<int>(std::min<double>(value, kMaxSlots + 1.0));
    if (!best.has_value() || v < best->slots) best = Slots{v, bound};
  };
  if (limits.max_running_requests.has_value()) {
    if (*limits.max_running_requests < 1) {
      return Invalid("SlotLimits.max_running_requests", *limits.max_running_requests,
                     "must be >= 1");
    }
    consider(*limits.max_running_requests, SlotBound::kRunningRequestLimit);
  }
  if (limits.operator_concurrency_gate.has_value()) {
    if (*limits.operator_concurrency_gate < 1) {
      return Invalid("SlotLimits.operator_concurrency_gate", *limits.operator_concurrency_gate,
                     "must be >= 1");
    }
    consider(*limits.operator_concurrency_gate, SlotBound::kOperatorGate);
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckInRange("SlotLimits.kv_remaining_share", limits.kv_remaining_share, 0.0, 1.0));
  if (limits.kv_pool_tokens.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("SlotLimits.kv_pool_tokens", *limits.kv_pool_tokens));
    const double per_request = KvTokensPerRequest(limits, w);
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("SlotLimits.kv_tokens_per_request", per_request));
    const double fit = std::floor(*limits.kv_pool_tokens / per_request);
    if (fit < 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("SlotLimits.kv_pool_tokens = ", *limits.kv_pool_tokens,
                       "; cannot hold one request of ", per_request, " tokens"));
    }
    consider(fit, SlotBound::kKvPool);
  } else if (limits.kv_tokens_per_request.has_value()) {
    return absl::InvalidArgumentError(
        "SlotLimits.kv_tokens_per_request is set but kv_pool_tokens is absent");
  }
  if (limits.state_slots.has_value()) {
    if (*limits.state_slots < 1) {
      return Invalid("SlotLimits.state_slots", *limits.state_slots, "must be >= 1");
    }
    consider(*limits.state_slots, SlotBound::kStateSlots);
  }
  if (!best.has_value()) {
    return absl::InvalidArgumentError(
        "SlotLimits: every limit is absent; give at least one of "
        "max_running_requests, operator_concurrency_gate, kv_pool_tokens, "
        "state_slots");
  }
  if (best->slots > kMaxSlots) {
    return Invalid("Slots.slots", best->slots,
                   absl::StrCat("must be <= ", kMaxSlots, " (set max_running_requests)"));
  }
  return *best;
}

absl::StatusOr<LoadDependentServer> LoadDependentServer::Create(const PerformanceModel &m,
                                                                const Workload &w,
                                                                const Slots &slots,
                                                                Budget *budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(m));
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(w));
  if (slots.slots < 1 || slots.slots > kMaxSlots) {
    return Invalid("Slots.slots", slots.slots, absl::StrCat("must be in [1, ", kMaxSlots, "]"));
  }
  LoadDependentServer s;
  s.slots_ = slots;
  s.workload_ = w;
  s.budget_ = budget;
  s.launched_ahead_ = m.scheduler.batches_launched_ahead;
  s.waves_every_round_ = m.scheduler.waves_every_round;
  s.phases_by_n_.reserve(slots.slots);
  s.rate_by_n_.reserve(slots.slots);
  for (int n = 1; n <= slots.slots; ++n) {
    if (Stopped(budget)) return budget->status();
    const RequestPhaseFeatures f =
        ComputeRequestPhaseFeatures(m.inputs, m.scheduler, m.speculative, w, n);
    const RequestPhaseTimes t = ToPhaseTimes(f, m.coefficients, w.output_tokens);
    if (!std::isfinite(t.life_seconds) || !(t.life_seconds > 0) || !(t.prefill_seconds > 0) ||
        !(t.mean_step_seconds > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("StepTimeCoefficients: request life = ", t.life_seconds, " s with ", n,
                       " in service; coefficients must give positive step times for "
                       "this workload (alpha or a beta of a non-zero feature > 0)"));
    }
    s.phases_by_n_.push_back(t);
    s.rate_by_n_.push_back(n / t.life_seconds);
  }
  const RequestPhaseTimes &full = s.phases_by_n_.back();
  const double decode_seconds = full.life_seconds - full.prefill_seconds;
  const double var = std::pow(decode_seconds * w.output_tokens_cv, 2) +
                     std::pow(full.prefill_seconds * w.input_tokens_cv, 2);
  s.service_cv_ = std::sqrt(var) / full.life_seconds;
  const double cv2 = s.service_cv_ * s.service_cv_;
  // Length nodes.
  const std::vector<double> in_nodes =
      LogNormalNodes(w.input_tokens, w.input_tokens_cv, kLengthNodes);
  s.output_nodes_ = LogNormalNodes(w.output_tokens, w.output_tokens_cv, kLengthNodes);
  if (s.output_nodes_.size() < in_nodes.size()) {
    s.output_nodes_.assign(in_nodes.size(), w.output_tokens);
  }
  const std::vector<double> base_in =
      in_nodes.size() < s.output_nodes_.size()
          ? std::vector<double>(s.output_nodes_.size(), w.input_tokens)
          : in_nodes;
  for (const bool at_s : {false, true}) {
    const int n = at_s ? slots.slots : 1;
    std::vector<double> &ratio = at_s ? s.input_ratio_s_ : s.input_ratio_1_;
    std::vector<double> &share = at_s ? s.budget_share_s_ : s.budget_share_1_;
    const double mean_prefill = s.Phase(n).prefill_seconds;
    for (double input : base_in) {
      Workload wj = w;
      wj.input_tokens = std::max(1.0, input);
      const RequestPhaseFeatures f =
          ComputeRequestPhaseFeatures(m.inputs, m.scheduler, m.speculative, wj, n);
      const double prefill = StepSeconds(m.coefficients, f.prefill);
      ratio.push_back(prefill / mean_prefill);
      share.push_back(
          prefill > 0
              ? std::clamp(StepSeconds(m.coefficients, f.prefill_marginal) / prefill, 0.0, 1.0)
              : 0.0);
      if (!std::isfinite(ratio.back())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Workload.input_tokens = ", input,
                         "; gives a non-finite prefill time with these coefficients"));
      }
    }
  }
  s.phases_ =
      cv2 <= 1.0 / kMaxPhasesPerCompletion
          ? kMaxPhasesPerCompletion
          : std::clamp(static_cast<int>(std::lround(1.0 / cv2)), 1, kMaxPhasesPerCompletion);
  return s;
}

double LoadDependentServer::LaunchedAheadSeconds(int n) const {
  const int k = std::clamp(n, 1, slots_.slots);
  if (launched_ahead_ <= 0 || k <= 1) return 0.0;
  return launched_ahead_ * Phase(k - 1).decode_step_seconds;
}

double LoadDependentServer::NodePrefillSeconds(int n, int j) const {
  const int k = std::clamp(n, 1, slots_.slots);
  const double f = slots_.slots > 1 ? static_cast<double>(k - 1) / (slots_.slots - 1) : 0.0;
  const double ratio = (1 - f) * input_ratio_1_[j] + f * input_ratio_s_[j];
  return ratio * Phase(k).prefill_seconds;
}

double LoadDependentServer::NodePrefillOccupancySeconds(int n, int j) const {
  const int k = std::clamp(n, 1, slots_.slots);
  const double f = slots_.slots > 1 ? static_cast<double>(k - 1) / (slots_.slots - 1) : 0.0;
  const double share = (1 - f) * budget_share_1_[j] + f * budget_share_s_[j];
  return share * NodePrefillSeconds(n, j);
}

PrefillQueue PrefillStageQueue(double arrival_rate_rps, const std::vector<double> &service_seconds,
                               double arrival_cv2) {
  PrefillQueue q;
  if (service_seconds.empty() || !(arrival_rate_rps > 0)) return q;
  double m1 = 0;
  double m2 = 0;
  for (double x : service_seconds) {
    m1 += x;
    m2 += x * x;
  }
  m1 /= service_seconds.size();
  m2 /= service_seconds.size();
  if (!(m1 > 0)) return q;
  const double rho = std::min(arrival_rate_rps * m1, kMaxPrefillUtilization);
  const double cs2 = std::max(0.0, m2 / (m1 * m1) - 1.0);
  const double kingman = (std::clamp(arrival_cv2, 0.0, 1.0) + cs2) / (1.0 + cs2);
  const double mean_wait = std::max(1e-300, arrival_rate_rps * m2 / (2 * (1 - rho)) * kingman);
  q.wait_probability = rho;
  q.wait_rate = rho / mean_wait;
  return q;
}

double LoadDependentServer::NodeLifeSeconds(int n, int j) const {
  const RequestPhaseTimes &p = Phase(n);
  return p.life_seconds + (output_nodes_[j] - workload_.output_tokens) * p.tpot_seconds;
}

namespace {

// Φ⁻¹((j + ½)/nodes), j = 0..nodes − 1, by bisection on Φ(z) = erfc(−z/√2)/2.
std::vector<double> StandardNormalNodes(int nodes) {
  std::vector<double> z;
  for (int j = 0; j < nodes; ++j) {
    const double p = (j + 0.5) / nodes;
    double lo = -40;
    double hi = 40;
    for (int it = 0; it < 200 && hi - lo > 1e-13; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    z.push_back(0.5 * (lo + hi));
  }
  return z;
}

}  // namespace

std::vector<double> LogNormalNodes(double mean, double cv, int nodes) {
  if (cv <= 0 || nodes <= 1) return {mean};
  const double s2 = std::log1p(cv * cv);
  const double sigma = std::sqrt(s2);
  // The standard normal's nodes for the usual count are computed once.
  static const std::vector<double> usual = StandardNormalNodes(kLengthNodes);
  const std::vector<double> other =
      nodes == kLengthNodes ? std::vector<double>{} : StandardNormalNodes(nodes);
  const std::vector<double> &z = nodes == kLengthNodes ? usual : other;
  std::vector<double> out;
  double sum = 0;
  for (int j = 0; j < nodes; ++j) {
    out.push_back(std::exp(sigma * z[j] - 0.5 * s2));
    sum += out.back();
  }
  for (double &v : out) v *= mean * nodes / sum;
  return out;
}

double LoadDependentServer::CompletionRate(int n) const {
  const int k = std::clamp(n, 1, slots_.slots);
  return rate_by_n_[k - 1];
}

const RequestPhaseTimes &LoadDependentServer::Phase(int n) const {
  const int k = std::clamp(n, 1, slots_.slots);
  return phases_by_n_[k - 1];
}

double LoadPoint::load() const {
  if (concurrency.has_value()) return *concurrency;
  return arrival_rate_rps.value_or(0.0);
}

// ------------------------------------------------------------ distributions

namespace {

template <typename G>
double PoissonExpectation(double x, int kappa, const G &g) {
  // E[g(floor(N / κ))], N ~ Poisson(x); g is a CDF in its argument (<= 1).
  if (x <= 0) return g(0);
  const double span = kPoissonSpanSigmas * std::sqrt(x) + kPoissonSpanSlack;
  const long lo = static_cast<long>(std::max(0.0, std::floor(x - span)));
  const long hi = static_cast<long>(std::ceil(x + span));
  const long mode = static_cast<long>(std::floor(x));
  const double log_x = std::log(x);
  const double pmf_mode = std::exp(-x + mode * log_x - std::lgamma(static_cast<double>(mode) + 1));
  double sum = 0;
  double pmf = pmf_mode;
  for (long i = mode; i <= hi; ++i) {
    sum += pmf * g(i / kappa);
    pmf *= x / (i + 1);
  }
  pmf = pmf_mode;
  for (long i = mode - 1; i >= lo; --i) {
    pmf *= (i + 1) / x;
    sum += pmf * g(i / kappa);
  }
  // Mass below lo has g ≈ g(0) = 0 for M >= 1; mass above hi is < 1e-30.
  return std::clamp(sum, 0.0, 1.0);
}

}  // namespace

double ErlangCdf(int phases, double rate, double t) {
  if (!(t > 0) || !(rate > 0)) return 0;
  const double x = rate * t;
  const int k = std::max(1, phases);
  if (k == 1) return -std::expm1(-x);
  // 1 − P(N <= k − 1), N ~ Poisson(x); only terms within the Poisson span
  // around x contribute (outside it the mass is < 1e-30).
  const double span = kPoissonSpanSigmas * std::sqrt(x) + kPoissonSpanSlack;
  if (k > x + span) return 0.0;
  const long lo = static_cast<long>(std::max(0.0, std::floor(x - span)));
  if (k - 1 < lo) return 1.0;
  double pmf = lo == 0 ? std::exp(-x) : std::exp(-x + lo * std::log(x) - std::lgamma(lo + 1.0));
  double below = 0;
  for (long i = lo; i <= k - 1; ++i) {
    below += pmf;
    pmf *= x / (i + 1);
  }
  return std::clamp(1.0 - below, 0.0, 1.0);
}

double WaitCdf(const WaitLaw &law, double t) {
  if (!(t > 0)) return 0;
  if (law.geometric_ratio.has_value()) {
    const double x = law.phase_rate * t;
    const int kappa = std::max(1, law.phases_per_completion);
    const double r = *law.geometric_ratio;
    if (kappa == 1) return -std::expm1(-x * (1 - r));  // exact: Exp(θ(1−r))
    if (r >= kRootsOfUnityMinRatio) {
      // 1 − E[r^floor(N/κ)], N ~ Poisson(x), by the roots-of-unity filter:
      // E = (1/κ) Σ_j exp(x(s·ω^j − 1)) · (1 − 1/r) / (1 − ω^(−j)/s),
      // s = r^(1/κ), ω = e^(2πi/κ). O(κ), exact.
      const double sr = std::pow(r, 1.0 / kappa);
      std::complex<double> e = 0;
      for (int j = 0; j < kappa; ++j) {
        const std::complex<double> w = std::polar(1.0, 2.0 * M_PI * j / kappa);
        e += std::exp(x * (sr * w - 1.0)) * (1.0 - 1.0 / r) / (1.0 - std::conj(w) / sr);
      }
      return std::clamp(1.0 - e.real() / kappa, 0.0, 1.0);
    }
    const double log_r = std::log(r);
    return PoissonExpectation(x, kappa,
                              [log_r](long k) { return k <= 0 ? 0.0 : -std::expm1(k * log_r); });
  }
  double cdf = 0;
  for (const WaitLaw::Erlang &e : law.erlangs) {
    cdf += e.weight * ErlangCdf(e.phases, e.rate, t);
  }
  return std::clamp(cdf, 0.0, 1.0);
}

namespace {

// E[W] and E[W²] of the shared wait: a geometric number G >= 1 of
// completions (P(G > g) = r^g) of κ Exp(phase_rate) phases each, or an
// Erlang mixture. A sum of M phases at rate λ has E[W²] = E[M(M + 1)] / λ².
std::pair<double, double> WaitMoments(const WaitLaw &law) {
  if (law.geometric_ratio.has_value()) {
    const double r = *law.geometric_ratio;
    const double kappa = std::max(1, law.phases_per_completion);
    const double lambda = law.phase_rate;
    const double g1 = 1.0 / (1.0 - r);                  // E[G]
    const double g2 = (1.0 + r) / ((1 - r) * (1 - r));  // E[G²]
    return {law.phases_per_completion / (lambda * (1.0 - r)),
            (kappa * kappa * g2 + kappa * g1) / (lambda * lambda)};
  }
  double m1 = 0, m2 = 0;
  for (const WaitLaw::Erlang &e : law.erlangs) {
    m1 += e.weight * e.phases / e.rate;
    m2 += e.weight * e.phases * (e.phases + 1.0) / (e.rate * e.rate);
  }
  return {m1, m2};
}

// An atom's mean: offset + Uniform(0, width) + the prefill wait's mean.
double AtomMean(const LatencyLaw::Atom &a, double queue_mean) {
  return a.offset_seconds + 0.5 * a.uniform_width_seconds + queue_mean;
}

}  // namespace

namespace {

// The atoms' part of a latency CDF in O(log A) per evaluation. An atom
// (weight p, offset o, width w, end e = o + w, a = p/w; a = 0 when w = 0) with
// the prefill stage's Exp(ν) wait taken with probability π contributes at t
//   t <= o (t < o when w = 0): 0,
//   o < t < e:  a·(t − o) − (π/ν)·a·(1 − e^(−ν(t − o))),
//   t >= e:     p − π·p·K·e^(−ν(t − e)),  K = (1 − e^(−νw))/(νw) (1 when w =
//   0).
// Sums over "o < t" and "e <= t" are prefix sums over the atoms sorted by
// offset and by end; the exponential ones are kept scaled to the last atom
// (S_i = S_(i−1)·e^(−ν(x_i − x_(i−1))) + c_i), so they neither overflow nor
// cancel. Used only where the linear terms cannot cancel badly (Usable()).
// The order that sorts `keys` ascending, ties in index order (what sorting
// (key, index) pairs gives): a least-significant-digit radix sort of the
// keys' bits mapped to unsigned integers in the doubles' order, a byte per
// pass, passes where every key has the same byte skipped. Inputs below
// kMinRadixSortKeys use a comparison sort (a pass costs its 256 buckets).
constexpr size_t kMinRadixSortKeys = 128;
constexpr size_t kMaxInsertionSortKeys = 32;
// `order` is filled (its capacity reused; the radix passes borrow scratch).
void SortedOrder(const std::vector<double> &keys, std::vector<uint32_t> *out) {
  const size_t n = keys.size();
  std::vector<uint32_t> &order = *out;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  if (n < kMaxInsertionSortKeys) {  // insertion sort: stable, no allocation
    for (size_t i = 1; i < n; ++i) {
      const uint32_t v = order[i];
      size_t j = i;
      for (; j > 0 && keys[order[j - 1]] > keys[v]; --j) order[j] = order[j - 1];
      order[j] = v;
    }
    return;
  }
  if (std::is_sorted(keys.begin(), keys.end())) return;
  if (n < kMinRadixSortKeys) {  // eight radix passes cost more than a comparison sort here
    std::vector<std::pair<double, uint32_t>> pairs(n);
    for (size_t i = 0; i < n; ++i) pairs[i] = {keys[i], static_cast<uint32_t>(i)};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < n; ++i) order[i] = pairs[i].second;
    return;
  }
  ScratchVector<uint64_t> bits_scratch;
  std::vector<uint64_t> &bits = *bits_scratch;
  bits.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t u;
    std::memcpy(&u, &keys[i], sizeof u);
    // Negative doubles order backwards: flip them all; positive ones above.
    bits[i] = (u >> 63) != 0 ? ~u : u | (uint64_t{1} << 63);
  }
  ScratchVector<uint32_t> next_scratch;
  std::vector<uint32_t> &next = *next_scratch;
  next.resize(n);
  for (int shift = 0; shift < 64; shift += 8) {
    std::array<uint32_t, 257> count{};
    for (size_t i = 0; i < n; ++i) ++count[((bits[i] >> shift) & 0xff) + 1];
    if (std::find(count.begin() + 1, count.end(), n) != count.end()) continue;
    for (int b = 1; b < 257; ++b) count[b] += count[b - 1];
    for (uint32_t i : order) next[count[(bits[i] >> shift) & 0xff]++] = i;
    order.swap(next);
  }
}

class AtomPrefixSums {
 public:
  AtomPrefixSums(const std::vector<LatencyLaw::Atom> &atoms, double pq, double nu)
      : pq_(nu > 0 ? pq : 0), nu_(nu) {
    for (std::vector<double> *v : Arrays()) *v = TakeScratch<double>();
    const size_t n = atoms.size();
    auto end_of = [&atoms](size_t i) {
      return atoms[i].offset_seconds + atoms[i].uniform_width_seconds;
    };
    ScratchVector<double> off_keys_scratch;
    std::vector<double> &off_keys = *off_keys_scratch;
    off_keys.resize(n);
    bool one_width = true;
    bool any_slope = false;
    for (size_t i = 0; i < n; ++i) {
      off_keys[i] = atoms[i].offset_seconds;
      one_width = one_width && atoms[i].uniform_width_seconds == atoms[0].uniform_width_seconds;
      any_slope = any_slope || atoms[i].uniform_width_seconds > 0;
    }
    ScratchVector<uint32_t> by_off_scratch;
    const std::vector<uint32_t> &by_off = *by_off_scratch;
    SortedOrder(off_keys, &*by_off_scratch);
    // Atoms of one width end in the order they start (o + w is monotone in o).
    ScratchVector<uint32_t> by_end_scratch;
    if (!one_width) {
      // The offsets' keys are not needed any more: they become the ends'.
      for (size_t i = 0; i < n; ++i) off_keys[i] = end_of(i);
      SortedOrder(off_keys, &*by_end_scratch);
    }
    const std::vector<uint32_t> &by_end = one_width ? by_off : *by_end_scratch;
    auto slope = [&atoms](size_t i) {
      const double w = atoms[i].uniform_width_seconds;
      return w > 0 ? atoms[i].weight / w : 0.0;
    };
    off_.resize(n);
    end_.resize(n);
    a_off_.assign(n + 1, 0.0);
    b_off_.assign(n + 1, 0.0);
    a_end_.assign(n + 1, 0.0);
    b_end_.assign(n + 1, 0.0);
    w_end_.assign(n + 1, 0.0);
    e_off_.assign(n, 0.0);
    c_end_.assign(n, 0.0);
    f_end_.assign(n, 0.0);
    // The exponential sums of slopes are zero when every atom is a point.
    const bool slope_sums = pq_ > 0 && any_slope;
    double slope_total = 0;
    for (size_t r = 0; r < n; ++r) {
      const size_t i = by_off[r];
      off_[r] = atoms[i].offset_seconds;
      a_off_[r + 1] = a_off_[r] + slope(i);
      b_off_[r + 1] = b_off_[r] + slope(i) * off_[r];
      if (slope_sums) {
        const double decay = r > 0 ? std::exp(-nu_ * (off_[r] - off_[r - 1])) : 0.0;
        e_off_[r] = (r > 0 ? e_off_[r - 1] * decay : 0.0) + slope(i);
      }
      slope_total += slope(i);
    }
    double last_end = 0;
    // (1 − e^(−νw))/(νw) and e^(−νw) per atom, in the order the atoms come
    // (each population's few widths in turn: the last two seen are kept).
    ScratchVector<double> full_factor_scratch, width_decay_scratch;
    std::vector<double> &full_factor = *full_factor_scratch;
    std::vector<double> &width_decay = *width_decay_scratch;
    full_factor.assign(pq_ > 0 ? n : 0, 1.0);
    width_decay.assign(pq_ > 0 ? n : 0, 1.0);
    if (pq_ > 0) {
      std::array<double, 2> seen = {std::nan(""), std::nan("")};
      std::array<double, 2> seen_factor = {1, 1}, seen_decay = {1, 1};
      size_t next = 0;
      for (size_t i = 0; i < n; ++i) {
        const double w = atoms[i].uniform_width_seconds;
        if (!(w > 0)) continue;
        size_t k = w == seen[0] ? 0 : w == seen[1] ? 1 : 2;
        if (k == 2) {
          k = next;
          next = 1 - next;
          seen[k] = w;
          seen_factor[k] = -std::expm1(-nu_ * w) / (nu_ * w);
          seen_decay[k] = std::exp(-nu_ * w);
        }
        full_factor[i] = seen_factor[k];
        width_decay[i] = seen_decay[k];
      }
    }
    for (size_t r = 0; r < n; ++r) {
      const size_t i = by_end[r];
      end_[r] = end_of(i);
      last_end = std::max(last_end, std::fabs(end_[r]));
      a_end_[r + 1] = a_end_[r] + slope(i);
      b_end_[r + 1] = b_end_[r] + slope(i) * atoms[i].offset_seconds;
      w_end_[r + 1] = w_end_[r] + atoms[i].weight;
      if (pq_ > 0) {
        const double gap = r > 0 ? end_[r] - end_[r - 1] : 0.0;
        const double decay = r == 0 ? 0.0 : gap == 0 ? 1.0 : std::exp(-nu_ * gap);
        c_end_[r] = (r > 0 ? c_end_[r - 1] * decay : 0.0) + atoms[i].weight * full_factor[i];
        if (slope_sums) {
          f_end_[r] = (r > 0 ? f_end_[r - 1] * decay : 0.0) + slope(i) * width_decay[i];
        }
      }
    }
    // The linear and π/ν terms are differences of sums of this size.
    const double scale = slope_total * std::max(last_end, pq_ > 0 ? 1.0 / nu_ : 0.0);
    usable_ = std::isfinite(scale) && scale < kMaxCancellingScale;
  }

  ~AtomPrefixSums() {
    for (std::vector<double> *v : Arrays()) GiveBackScratch(std::move(*v));
  }
  AtomPrefixSums(const AtomPrefixSums &) = delete;
  AtomPrefixSums &operator=(const AtomPrefixSums &) = delete;

  bool Usable() const { return usable_; }

  double operator()(double t) const {
    const size_t io = std::lower_bound(off_.begin(), off_.end(), t) - off_.begin();
    const size_t ie = std::upper_bound(end_.begin(), end_.end(), t) - end_.begin();
    if (ie == end_.size()) {  // every atom complete: no partial terms to cancel
      return ie == 0 ? 0.0
                     : w_end_[ie] - pq_ * c_end_[ie - 1] * std::exp(-nu_ * (t - end_[ie - 1]));
    }
    const double partial_a = a_off_[io] - a_end_[ie];
    double cdf = w_end_[ie] + partial_a * t - (b_off_[io] - b_end_[ie]);
    if (pq_ > 0) {
      cdf -= pq_ / nu_ * partial_a;
      if (ie > 0) {
        const double d = std::exp(-nu_ * (t - end_[ie - 1]));
        cdf -= (pq_ * c_end_[ie - 1] + pq_ / nu_ * f_end_[ie - 1]) * d;
      }
      if (io > 0) cdf += pq_ / nu_ * e_off_[io - 1] * std::exp(-nu_ * (t - off_[io - 1]));
    }
    return cdf;
  }

 private:
  // Beyond this the differences of prefix sums lose more than ~1e-10.
  static constexpr double kMaxCancellingScale = 1e5;
  double pq_ = 0;
  double nu_ = 0;
  bool usable_ = false;
  std::vector<double> off_, end_;              // sorted
  std::vector<double> a_off_, b_off_;          // prefix Σa, Σa·o by offset
  std::vector<double> a_end_, b_end_, w_end_;  // prefix Σa, Σa·o, Σp by end
  std::vector<double> e_off_, c_end_, f_end_;  // scaled exponential sums
  // The arrays above, borrowed from the thread's scratch pool.
  std::array<std::vector<double> *, 10> Arrays() {
    return {&off_, &end_, &a_off_, &b_off_, &a_end_, &b_end_, &w_end_, &e_off_, &c_end_, &f_end_};
  }
};

// LatencyCdf prepared for many evaluations of one law (a quantile search):
// the atoms sorted by offset, with the running sum of their weights, so an
// evaluation at t adds the weight of the atoms already complete (every
// atom starting before t − the widest width − kExpSaturation / ν, where both
// parts of its CDF are 1), evaluates the atoms in the window up to t, and
// stops at the first atom starting after t (its CDF is 0 there).
class CdfEvaluator {
 public:
  explicit CdfEvaluator(const LatencyLaw &law)
      : law_(law), prefix_(law.atoms, law.prefill_wait_probability, law.prefill_wait_rate) {
    pq_ = law.prefill_wait_rate > 0 ? law.prefill_wait_probability : 0;
    nu_ = law.prefill_wait_rate;
    for (const LatencyLaw::WaitBranch &b : law.waits) total_weight_ += b.weight;
    for (const LatencyLaw::Atom &a : law.atoms) total_weight_ += a.weight;
    // The atoms one by one only where the prefix sums cannot serve.
    if (!prefix_.Usable()) PrepareDirectAtoms();
    // Explicit Erlang waits of few phases are evaluated for all branches at
    // once (BatchedWaitCdf).
    batched_waits_ = !law.waits.empty() && !law.wait.geometric_ratio.has_value();
    for (const WaitLaw::Erlang &e : law.wait.erlangs) {
      if (e.phases < 1 || e.phases > kMaxErlangPhases || !(e.rate > 0)) batched_waits_ = false;
    }
    PrepareRootsOfUnity();
    if (batched_waits_) {
      x_.resize(law.waits.size());
      acc_.resize(law.waits.size());
      weight_.resize(law.waits.size());
      // Erlangs of many phases are read from their table (one per k, in
      // units of the phase rate: shared by every law).
      for (const WaitLaw::Erlang &e : law.wait.erlangs) {
        tables_.push_back(e.phases >= kMinTablePhases ? &TableFor(e.phases) : nullptr);
      }
    }
  }

  // A quantile search starts where the previous one ended: the last few
  // values are kept.
  double operator()(double t) const {
    for (const auto &[at, value] : recent_) {
      if (at == t) return value;
    }
    const double value = Evaluate(t);
    recent_[next_recent_] = {t, value};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return value;
  }

  const LatencyLaw &law() const { return law_; }
  double total_weight() const { return total_weight_; }

 private:
  double Evaluate(double t) const {
    double cdf = prefix_.Usable() ? prefix_(t) : DirectAtomCdf(t);
    if (batched_waits_) return cdf + BatchedWaitCdf(t);
    if (!roots_.empty()) return cdf + RootsOfUnityWaitCdf(t);
    for (const LatencyLaw::WaitBranch &b : law_.waits) {
      cdf += b.weight * WaitCdf(law_.wait, t - b.offset_seconds);
    }
    return cdf;
  }

  void PrepareDirectAtoms() {
    const LatencyLaw &law = law_;
    atoms_.reserve(law.atoms.size());
    double widest = 0;
    for (const LatencyLaw::Atom &a : law.atoms) {
      const double w = a.uniform_width_seconds;
      widest = std::max(widest, w);
      // P(U + E <= x) for x >= w is 1 − e^(−ν(x − w))·(1 − e^(−νw))/(νw).
      const double k = pq_ > 0 && w > 0 ? -std::expm1(-nu_ * w) / (nu_ * w) : 0.0;
      atoms_.push_back({a.offset_seconds, w, a.weight, k});
    }
    std::sort(atoms_.begin(), atoms_.end(),
              [](const Entry &a, const Entry &b) { return a.offset < b.offset; });
    complete_weight_.resize(atoms_.size() + 1, 0.0);
    for (size_t i = 0; i < atoms_.size(); ++i) {
      complete_weight_[i + 1] = complete_weight_[i] + atoms_[i].weight;
    }
    complete_lag_ = widest + (pq_ > 0 ? kExpSaturation / nu_ : 0.0);
  }

  // The atoms one by one (the window that is not yet complete).
  double DirectAtomCdf(double t) const {
    // Atoms with offset < t − complete_lag_ are complete.
    const auto first = std::lower_bound(atoms_.begin(), atoms_.end(), t - complete_lag_,
                                        [](const Entry &a, double v) { return a.offset < v; });
    double cdf = complete_weight_[first - atoms_.begin()];
    for (auto it = first; it != atoms_.end(); ++it) {
      const double x = t - it->offset;
      if (x < 0) break;
      // At its offset only a deterministic atom without prefill wait counts.
      if (x == 0) {
        if (it->width <= 0) cdf += it->weight * (1 - pq_);
        continue;
      }
      cdf += it->weight * AtomCdf(*it, x);
    }
    return cdf;
  }

  struct Entry {
    double offset;
    double width;
    double weight;
    double full_factor;  // (1 − e^(−νw)) / (νw)
  };

  // CDF of one atom at x = t − offset > 0: the uniform residual, and with
  // probability pq the uniform plus the Exp(ν) prefill-stage wait.
  double AtomCdf(const Entry &a, double x) const {
    const double w = a.width;
    double c = (1 - pq_) * (w <= 0 ? 1.0 : std::min(1.0, x / w));
    if (pq_ > 0) {
      double e;
      if (nu_ * (x - w) > kExpSaturation) {
        e = 1.0;
      } else if (w <= 0) {
        e = -std::expm1(-nu_ * x);
      } else if (x >= w) {
        e = 1.0 - std::exp(-nu_ * (x - w)) * a.full_factor;
      } else {
        e = (x + std::expm1(-nu_ * x) / nu_) / w;
      }
      c += pq_ * e;
    }
    return c;
  }

  // Σ_b weight_b · Σ_e weight_e · P(Erlang(k_e, rate_e) <= t − offset_b),
  // each Erlang CDF 1 − e^(−x)·Σ_{i<k} x^i/i! (x = rate·(t − offset)) by
  // Horner's rule run over all branches together (independent
  // multiply-adds), instead of one Poisson sum with its log-gamma per
  // branch. The cut-offs are ErlangCdf's: 0 when k > x + span, 1 when the
  // span's lower end passes k − 1.
  double BatchedWaitCdf(double t) const {
    double cdf = 0;
    for (size_t ei = 0; ei < law_.wait.erlangs.size(); ++ei) {
      const WaitLaw::Erlang &e = law_.wait.erlangs[ei];
      if (tables_[ei] != nullptr) {
        const ErlangTable &table = *tables_[ei];
        double part = 0;
        for (const LatencyLaw::WaitBranch &b : law_.waits) {
          part += b.weight * table(e.rate * (t - b.offset_seconds));
        }
        cdf += e.weight * part;
        continue;
      }
      const int k = e.phases;
      size_t live = 0;
      double sure = 0;
      for (const LatencyLaw::WaitBranch &b : law_.waits) {
        const double tau = t - b.offset_seconds;
        if (!(tau > 0)) continue;
        const double x = e.rate * tau;
        const double span = kPoissonSpanSigmas * std::sqrt(x) + kPoissonSpanSlack;
        if (k > x + span) continue;
        if (k - 1 < std::floor(x - span)) {
          sure += b.weight;
          continue;
        }
        x_[live] = x;
        weight_[live] = b.weight;
        ++live;
      }
      HornerInverseFactorials(k, live);
      double part = sure;
      for (size_t j = 0; j < live; ++j) {
        part += weight_[j] * std::clamp(1.0 - std::exp(-x_[j]) * acc_[j], 0.0, 1.0);
      }
      cdf += e.weight * part;
    }
    return cdf;
  }

  // The geometric wait's roots-of-unity filter (WaitCdf) with its terms
  // prepared once per law: z_j = s·ω^j − 1 and c_j = (1 − 1/r)/(1 − ω^(−j)/s),
  // j = 0..κ/2 (terms j and κ − j are conjugate: their real parts are equal).
  void PrepareRootsOfUnity() {
    const WaitLaw &w = law_.wait;
    if (law_.waits.empty() || !w.geometric_ratio.has_value()) return;
    const int kappa = std::max(1, w.phases_per_completion);
    const double r = *w.geometric_ratio;
    if (kappa == 1 || r < kRootsOfUnityMinRatio) return;
    const double sr = std::pow(r, 1.0 / kappa);
    const std::vector<std::complex<double>> omegas = RootsOfUnity(kappa);
    for (int j = 0; 2 * j <= kappa; ++j) {
      const std::complex<double> om = omegas[j];
      const double twice = (j == 0 || 2 * j == kappa) ? 1.0 : 2.0;
      roots_.push_back({sr * om - 1.0, twice * (1.0 - 1.0 / r) / (1.0 - std::conj(om) / sr)});
    }
    kappa_ = kappa;
  }

  // ω^j = e^(2πij/κ), j = 0..κ/2: from a table built once for the κ a gap
  // can have (kMaxPhasesPerCompletion at most), computed for a law built by
  // hand with more.
  static std::vector<std::complex<double>> HalfRootsOfUnity(int kappa) {
    std::vector<std::complex<double>> w;
    for (int j = 0; 2 * j <= kappa; ++j) w.push_back(std::polar(1.0, 2.0 * M_PI * j / kappa));
    return w;
  }
  static std::vector<std::complex<double>> RootsOfUnity(int kappa) {
    static const auto *const table = [] {
      auto *t = new std::array<std::vector<std::complex<double>>, kMaxPhasesPerCompletion + 1>;
      for (int k = 1; k <= kMaxPhasesPerCompletion; ++k) (*t)[k] = HalfRootsOfUnity(k);
      return t;
    }();
    return kappa <= kMaxPhasesPerCompletion ? (*table)[kappa] : HalfRootsOfUnity(kappa);
  }

  double RootsOfUnityWaitCdf(double t) const {
    double cdf = 0;
    for (const LatencyLaw::WaitBranch &b : law_.waits) {
      const double tau = t - b.offset_seconds;
      if (!(tau > 0)) continue;
      const double x = law_.wait.phase_rate * tau;
      double e = 0;
      for (const RootTerm &term : roots_) e += (std::exp(x * term.z) * term.c).real();
      cdf += b.weight * std::clamp(1.0 - e / kappa_, 0.0, 1.0);
    }
    return cdf;
  }

  // acc_[j] = Σ_{i<k} x_[j]^i / i! for j < live, kLanes branches at a time
  // in registers (independent chains hide the multiply-add latency).
  void HornerInverseFactorials(int k, size_t live) const {
    constexpr size_t kLanes = 8;
    size_t j = 0;
    for (; j + kLanes <= live; j += kLanes) {
      double x[kLanes];
      double a[kLanes];
      for (size_t l = 0; l < kLanes; ++l) {
        x[l] = x_[j + l];
        a[l] = 0;
      }
      for (int i = k - 1; i >= 0; --i) {
        const double c = InverseFactorial(i);
        for (size_t l = 0; l < kLanes; ++l) a[l] = a[l] * x[l] + c;
      }
      for (size_t l = 0; l < kLanes; ++l) acc_[j + l] = a[l];
    }
    for (; j < live; ++j) {
      double a = 0;
      for (int i = k - 1; i >= 0; --i) a = a * x_[j] + InverseFactorial(i);
      acc_[j] = a;
    }
  }

  // 1/i! for i < kMaxErlangPhases.
  static double InverseFactorial(int i) {
    static const std::array<double, kMaxErlangPhases> table = [] {
      std::array<double, kMaxErlangPhases> t{};
      t[0] = 1;
      for (int j = 1; j < kMaxErlangPhases; ++j) t[j] = t[j - 1] / j;
      return t;
    }();
    return table[i];
  }

  // P(Erlang(k, 1) <= x) on a uniform grid of x between ErlangCdf's two
  // cut-offs (x_lo: k > x + span; x_hi: k − 1 < x − span), with its density,
  // read by cubic Hermite interpolation (error h^4·max|F''''|/384: below
  // 2e-9 measured for k = 9..64 against ErlangCdf, far inside the
  // quantiles' 1e-3).
  class ErlangTable {
   public:
    ErlangTable() = default;
    explicit ErlangTable(int k) {
      // The cut-offs in y = √x: y² ∓ 12y ∓ 20 = k.
      const double half = kPoissonSpanSigmas / 2;
      const double y_lo = std::sqrt(half * half - kPoissonSpanSlack + k) - half;
      const double y_hi = std::sqrt(half * half + kPoissonSpanSlack + k) + half;
      x_lo_ = std::max(0.0, y_lo) * std::max(0.0, y_lo);
      x_hi_ = y_hi * y_hi;
      h_ = (x_hi_ - x_lo_) / kTableIntervals;
      cdf_.resize(kTableIntervals + 1);
      slope_.resize(kTableIntervals + 1);
      const double step = std::exp(-h_);
      double ex = std::exp(-x_lo_);
      for (int i = 0; i <= kTableIntervals; ++i, ex *= step) {
        const double x = x_lo_ + i * h_;
        double sum = 0;
        double term = 1;  // x^m / m!
        for (int m = 0; m < k; ++m) {
          sum += term;
          if (m + 1 < k) term *= x / (m + 1);
        }
        cdf_[i] = std::clamp(1.0 - ex * sum, 0.0, 1.0);
        slope_[i] = h_ * ex * term;  // h · x^(k−1) e^(−x) / (k − 1)!
      }
    }
    double operator()(double x) const {
      if (!(x > x_lo_)) return 0.0;
      if (x >= x_hi_) return 1.0;
      const double u = (x - x_lo_) / h_;
      const int i = std::min(static_cast<int>(u), kTableIntervals - 1);
      const double s = u - i;
      const double s2 = s * s;
      const double s3 = s2 * s;
      const double v = (2 * s3 - 3 * s2 + 1) * cdf_[i] + (s3 - 2 * s2 + s) * slope_[i] +
                       (3 * s2 - 2 * s3) * cdf_[i + 1] + (s3 - s2) * slope_[i + 1];
      return std::clamp(v, 0.0, 1.0);
    }

   private:
    static constexpr int kTableIntervals = 1024;
    double x_lo_ = 0;
    double x_hi_ = 0;
    double h_ = 1;
    std::vector<double> cdf_;
    std::vector<double> slope_;
  };
  static constexpr int kMinTablePhases = 8;

  // The table of Erlang(k), built on first use (thread-safe).
  static const ErlangTable &TableFor(int k) {
    static std::array<std::once_flag, kMaxErlangPhases + 1> once;
    static std::array<ErlangTable, kMaxErlangPhases + 1> tables;
    std::call_once(once[k], [k] { tables[k] = ErlangTable(k); });
    return tables[k];
  }

  struct RootTerm {
    std::complex<double> z;
    std::complex<double> c;  // times 2 for a conjugate pair
  };

  const LatencyLaw &law_;
  mutable std::array<std::pair<double, double>, 4> recent_{
      {{std::nan(""), 0}, {std::nan(""), 0}, {std::nan(""), 0}, {std::nan(""), 0}}};
  mutable size_t next_recent_ = 0;
  AtomPrefixSums prefix_;
  std::vector<RootTerm> roots_;  // empty: not a roots-of-unity wait
  int kappa_ = 1;
  bool batched_waits_ = false;
  std::vector<const ErlangTable *> tables_;  // per Erlang of the wait law; null: none
  // Scratch of BatchedWaitCdf: the branches whose Erlang CDF is strictly
  // between 0 and 1.
  mutable std::vector<double> x_;
  mutable std::vector<double> acc_;
  mutable std::vector<double> weight_;
  double pq_ = 0;
  double nu_ = 0;
  double total_weight_ = 0;
  double complete_lag_ = 0;
  std::vector<Entry> atoms_;
  std::vector<double> complete_weight_;  // index i: the weight of atoms_[0..i)
};

}  // namespace

double LatencyCdf(const LatencyLaw &law, double t) { return CdfEvaluator(law)(t); }

double LatencyMean(const LatencyLaw &law) {
  double mean = 0;
  const double queue_mean =
      law.prefill_wait_rate > 0 ? law.prefill_wait_probability / law.prefill_wait_rate : 0.0;
  for (const LatencyLaw::Atom &a : law.atoms) mean += a.weight * AtomMean(a, queue_mean);
  const double wait_mean = law.waits.empty() ? 0.0 : WaitMoments(law.wait).first;
  for (const LatencyLaw::WaitBranch &b : law.waits) mean += b.weight * (b.offset_seconds + wait_mean);
  return mean;
}

namespace {

// Smallest t >= lo with CDF(t) >= q. A guess (> lo; 0: none) starts the
// bracket just around it instead of at lo.
double QuantileFrom(const CdfEvaluator &cdf, double q, double lo, double guess = 0);

}  // namespace

double LatencyQuantile(const LatencyLaw &law, double q) {
  return QuantileFrom(CdfEvaluator(law), q, 0.0);
}

double LatencyQuantileUpperBound(const LatencyLaw &law, double q) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Each part's mean and variance: an atom is offset + Uniform(0, w) + (with
  // probability π) Exp(ν); a wait branch is offset + W.
  const double pi = law.prefill_wait_rate > 0 ? law.prefill_wait_probability : 0.0;
  const double nu = law.prefill_wait_rate;
  const double q_mean = pi > 0 ? pi / nu : 0.0;
  const double q_var = pi > 0 ? 2 * pi / (nu * nu) - q_mean * q_mean : 0.0;
  const auto [w1, w2] = law.waits.empty() ? std::pair<double, double>{0, 0} : WaitMoments(law.wait);
  const double w_var = std::max(0.0, w2 - w1 * w1);
  double total = 0, mean = 0;
  for (const LatencyLaw::Atom &a : law.atoms) {
    total += a.weight;
    mean += a.weight * AtomMean(a, q_mean);
  }
  for (const LatencyLaw::WaitBranch &b : law.waits) {
    total += b.weight;
    mean += b.weight * (b.offset_seconds + w1);
  }
  if (!(total > 0)) return kInf;
  mean /= total;
  // Σ p_i (Var_i + (m_i − mean)²): no cancellation of large second moments.
  double var = 0;
  for (const LatencyLaw::Atom &a : law.atoms) {
    const double m = AtomMean(a, q_mean);
    const double w = a.uniform_width_seconds;
    var += a.weight * (w * w / 12.0 + q_var + (m - mean) * (m - mean));
  }
  for (const LatencyLaw::WaitBranch &b : law.waits) {
    const double m = b.offset_seconds + w1;
    var += b.weight * (w_var + (m - mean) * (m - mean));
  }
  var /= total;
  // The search's target on the unnormalised CDF, as a share of the weight.
  const double target = std::min(q, total) * (1 - 1e-12) / total;
  if (!(target < 1) || !std::isfinite(mean) || !std::isfinite(var)) return kInf;
  const double k = std::sqrt(target / (1 - target));
  const double bound = mean + k * std::sqrt(std::max(0.0, var));
  // The answer is a lattice point at most 1 + tolerance above the quantile;
  // a search left wide by its iteration cap is allowed four tolerances.
  return bound * (1 + 4 * kQuantileRelativeTolerance) * (1 + 1e-9);
}

namespace {

// The smallest lattice point t_k = e^(k·ln(1 + tol)) above `below` (where
// CDF < target) with CDF(t_k) >= target; `above` is known to reach it.
double SnapToLattice(const CdfEvaluator &cdf, double target, double below, double above) {
  // A bracket the search left wide (its iteration cap) is not snapped.
  if (!(below > 0) || !(above > below) || above > below * (1 + 4 * kQuantileRelativeTolerance)) {
    return above;
  }
  const double step = std::log1p(kQuantileRelativeTolerance);
  const double first = std::floor(std::log(below) / step) + 1;
  for (double k = first;; k += 1) {
    const double t = std::exp(k * step);
    if (!(t > below)) continue;  // rounding of the logarithm
    if (t >= above) return t;
    if (cdf(t) >= target) return t;
  }
}

double QuantileFrom(const CdfEvaluator &cdf, double q, double lo_bound, double guess) {
  const LatencyLaw &law = cdf.law();
  // Guard against weights summing to slightly under 1.
  const double target = std::min(q, cdf.total_weight()) * (1 - 1e-12);
  double lo = lo_bound, f_lo = 0, hi = 0, f_hi = 0;
  if (guess > lo_bound && std::isnormal(guess) && std::isnormal(kGuessSpan * guess)) {
    // A bracket of ±kGuessSpan around the guess, widened (doubling its
    // step) on the side where the root lies; lo_bound is the floor.
    double step = kGuessSpan * guess;
    lo = std::max(lo_bound, guess - step);
    f_lo = cdf(lo) - target;
    if (f_lo >= 0) {
      hi = lo;
      f_hi = f_lo;
      for (int i = 0; f_lo >= 0; ++i) {
        if (hi == lo_bound) return lo_bound;
        if (i >= kQuantileMaxIterations || Stopped(law.budget)) return hi;
        step *= 2;
        lo = std::max(lo_bound, hi - step);
        f_lo = cdf(lo) - target;
        if (f_lo >= 0) {
          hi = lo;
          f_hi = f_lo;
        }
      }
    } else {
      hi = guess + step;
      f_hi = cdf(hi) - target;
      for (int i = 0; f_hi < 0; ++i) {
        if (i >= kQuantileMaxIterations || Stopped(law.budget)) return hi;
        lo = hi;
        f_lo = f_hi;
        step *= 2;
        hi += step;
        f_hi = cdf(hi) - target;
      }
    }
  } else {
    f_lo = cdf(lo) - target;
    if (f_lo >= 0) return lo;
    // Bracket within a factor of two: from just above the previous quantile
    // (or the mean), doubling until the CDF reaches the target.
    hi = lo_bound > 0 ? 1.25 * lo_bound : std::max(LatencyMean(law), 1e-12);
    f_hi = cdf(hi) - target;
    for (int i = 0; i < kQuantileMaxIterations && f_hi < 0; ++i) {
      if (Stopped(law.budget)) return hi;
      lo = hi;
      f_lo = f_hi;
      hi *= 2;
      f_hi = cdf(hi) - target;
    }
    if (f_hi < 0) return hi;
  }
  // Brent's method on g(t) = CDF(t) − target over [lo, hi], g(lo) < 0 <=
  // g(hi): inverse quadratic interpolation or a secant step where it stays
  // well inside the bracket, bisection where it does not; a step is never
  // shorter than the tolerance, so the last one brackets the root from the
  // other side. b is the best estimate, c the other end of the bracket, a
  // the previous b. Stops when the bracket is narrower than
  // kQuantileRelativeTolerance·b, and returns its end with g >= 0.
  double a = lo, fa = f_lo, b = hi, fb = f_hi;
  double upper = hi;  // the lowest point seen with g >= 0 (the answer if the cap is reached)
  double c = a, fc = fa;
  double d = b - a, e = d;
  for (int i = 0; i < kQuantileMaxIterations; ++i) {
    if ((fb >= 0) == (fc >= 0)) {
      c = a;
      fc = fa;
      d = e = b - a;
    }
    if (std::fabs(fc) < std::fabs(fb)) {
      a = b;
      b = c;
      c = a;
      fa = fb;
      fb = fc;
      fc = fa;
    }
    const double tol = 0.5 * kQuantileRelativeTolerance * std::fabs(b);
    const double m = 0.5 * (c - b);
    if (std::fabs(m) <= tol || Stopped(law.budget)) break;
    bool interpolated = false;
    if (std::fabs(e) >= tol && std::fabs(fa) > std::fabs(fb) && fa != 0 && fc != 0) {
      const double sb = fb / fa;
      double p, qd;
      if (a == c) {
        p = 2 * m * sb;
        qd = 1 - sb;
      } else {
        const double qa = fa / fc;
        const double rb = fb / fc;
        p = sb * (2 * m * qa * (qa - rb) - (b - a) * (rb - 1));
        qd = (qa - 1) * (rb - 1) * (sb - 1);
      }
      if (p > 0) {
        qd = -qd;
      } else {
        p = -p;
      }
      if (2 * p < std::min(3 * m * qd - std::fabs(tol * qd), std::fabs(e * qd))) {
        e = d;
        d = p / qd;
        interpolated = std::isfinite(d);
      }
    }
    if (!interpolated) {
      d = m;
      e = m;
    }
    a = b;
    fa = fb;
    b += std::fabs(d) > tol ? d : (m > 0 ? tol : -tol);
    fb = cdf(b) - target;
    if (fb >= 0) upper = std::min(upper, b);
  }
  // The root is between b and c. The answer is the smallest point of a
  // fixed lattice (ratio 1 + kQuantileRelativeTolerance) above the end with
  // g < 0 where g >= 0: the same whichever bracket the search started from
  // (a guess or none), so a point's quantiles do not depend on its curve.
  const bool signs_differ = (fb >= 0) != (fc >= 0);
  if (!signs_differ || Stopped(law.budget)) return fb >= 0 ? b : (fc >= 0 ? c : upper);
  const double below = fb >= 0 ? c : b;  // g < 0 here
  const double above = fb >= 0 ? b : c;  // g >= 0 here
  return SnapToLattice(cdf, target, std::max(below, lo_bound), above);
}

}  // namespace

namespace {

// The previous point of the curve guesses each quantile: its quantile times
// the ratio of the two laws' means (0: no guess).
double Guess(double previous_quantile, double previous_mean, double mean) {
  return previous_mean > 0 && mean > 0 ? previous_quantile * (mean / previous_mean) : 0.0;
}

// The latency figures a point needs: all of them, or (before a cutoff's
// safe point) only what the SLO check reads.
struct Figures {
  bool all = true;
  bool ttft_p50 = true;
  bool ttft_p95 = true;
  bool e2e_p95 = true;
  // Where the check asks only "below this?" of a p95 (no adjustment): a
  // moment bound under it settles the check without the search, and the
  // p95 stays 0 (not computed).
  std::optional<double> ttft_p95_below;
  std::optional<double> e2e_p95_below;
};

bool ProvenBelow(const LatencyLaw &law, const std::optional<double> &limit) {
  return limit.has_value() && LatencyQuantileUpperBound(law, 0.95) < *limit;
}

LatencyPercentiles Summarise(const LatencyLaw &law, const LatencyPercentiles *previous,
                             const Figures &figures) {
  LatencyPercentiles p;
  p.mean_seconds = LatencyMean(law);
  const double pm = previous != nullptr ? previous->mean_seconds : 0.0;
  auto guess = [&](double LatencyPercentiles::*field) {
    return previous != nullptr ? Guess(previous->*field, pm, p.mean_seconds) : 0.0;
  };
  if (!figures.all && !figures.ttft_p50 && !figures.ttft_p95) return p;
  if (!figures.all && !figures.ttft_p50 && ProvenBelow(law, figures.ttft_p95_below)) return p;
  // Quantiles are monotone in q: each search starts at the previous one.
  const CdfEvaluator cdf(law);
  if (!figures.all) {
    if (figures.ttft_p50) {
      p.p50_seconds = QuantileFrom(cdf, 0.50, 0.0, guess(&LatencyPercentiles::p50_seconds));
    }
    if (figures.ttft_p95) {
      p.p95_seconds =
          QuantileFrom(cdf, 0.95, p.p50_seconds, guess(&LatencyPercentiles::p95_seconds));
    }
    return p;
  }
  p.p50_seconds = QuantileFrom(cdf, 0.50, 0.0, guess(&LatencyPercentiles::p50_seconds));
  p.p90_seconds = QuantileFrom(cdf, 0.90, p.p50_seconds, guess(&LatencyPercentiles::p90_seconds));
  p.p95_seconds = QuantileFrom(cdf, 0.95, p.p90_seconds, guess(&LatencyPercentiles::p95_seconds));
  p.p99_seconds = QuantileFrom(cdf, 0.99, p.p95_seconds, guess(&LatencyPercentiles::p99_seconds));
  return p;
}

EndToEndPercentiles SummariseEndToEnd(const LatencyLaw &law, const EndToEndPercentiles *previous,
                                      const Figures &figures) {
  EndToEndPercentiles p;
  p.mean_seconds = LatencyMean(law);
  const double pm = previous != nullptr ? previous->mean_seconds : 0.0;
  if (!figures.all && !figures.e2e_p95) return p;
  if (!figures.all && ProvenBelow(law, figures.e2e_p95_below)) return p;
  const CdfEvaluator cdf(law);
  if (figures.all) {
    p.p50_seconds = QuantileFrom(
        cdf, 0.50, 0.0, previous != nullptr ? Guess(previous->p50_seconds, pm, p.mean_seconds) : 0);
  }
  p.p95_seconds =
      QuantileFrom(cdf, 0.95, p.p50_seconds,
                   previous != nullptr ? Guess(previous->p95_seconds, pm, p.mean_seconds) : 0);
  return p;
}

absl::Status CheckIncreasing(absl::Span<const double> loads, absl::string_view field) {
  if (loads.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is empty; give at least one load point"));
  }
  if (loads.size() > static_cast<size_t>(kMaxLoadPoints)) {
    return Invalid(absl::StrCat(field, ".size"), loads.size(),
                   absl::StrCat("must be <= ", kMaxLoadPoints));
  }
  for (size_t i = 0; i < loads.size(); ++i) {
    const std::string name = absl::StrCat(field, "[", i, "]");
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(name, loads[i]));
    if (i > 0 && !(loads[i] > loads[i - 1])) {
      return Invalid(name, loads[i],
                     absl::StrCat("must be > ", field, "[", i - 1, "] = ", loads[i - 1],
                                  " (strictly increasing)"));
    }
  }
  return absl::OkStatus();
}

// A load point's TTFT and end-to-end laws, their arrays borrowed from the
// thread's scratch pool (scratch.h) and given back when the point is done.
struct ScratchLaws {
  LatencyLaw ttft;
  LatencyLaw e2e;
  ScratchLaws() {
    for (LatencyLaw *law : {&ttft, &e2e}) {
      law->atoms = TakeScratch<LatencyLaw::Atom>();
      law->waits = TakeScratch<LatencyLaw::WaitBranch>();
      law->wait.erlangs = TakeScratch<WaitLaw::Erlang>();
    }
  }
  ~ScratchLaws() {
    for (LatencyLaw *law : {&ttft, &e2e}) {
      GiveBackScratch(std::move(law->atoms));
      GiveBackScratch(std::move(law->waits));
      GiveBackScratch(std::move(law->wait.erlangs));
    }
  }
  ScratchLaws(const ScratchLaws &) = delete;
  ScratchLaws &operator=(const ScratchLaws &) = delete;
};

// Atoms for arrivals admitted at once into population n (n − 1 others in
// service): one per length node, each split by the iteration the arrival
// lands in — a prefill-carrying one (time share f = min(1, rate × prefill
// seconds)) or a decode one — whose residual is Uniform(0, its length).
void AddAtoms(const LoadDependentServer &server, int n, double weight, double rate_rps,
              bool residual, LatencyLaw *ttft, LatencyLaw *e2e) {
  if (weight < kNegligibleWeight) return;
  const int nodes = server.LengthNodes();
  const bool busy = residual && n > 1;
  const RequestPhaseTimes &p = server.Phase(std::max(1, n - 1));
  const double f = busy ? std::min(1.0, rate_rps * server.Phase(n).prefill_seconds) : 0.0;
  // The batches the scheduler launched before taking the request in.
  const double ahead = server.LaunchedAheadSeconds(n);
  for (int j = 0; j < nodes; ++j) {
    const double w = weight / nodes;
    const double pre = server.NodePrefillSeconds(n, j) + ahead;
    const double life = server.NodeLifeSeconds(n, j) + ahead;
    const double dec_width = busy ? p.decode_step_seconds : 0.0;
    ttft->atoms.push_back({w * (1 - f), pre, dec_width});
    e2e->atoms.push_back({w * (1 - f), life, dec_width});
    if (f > 0) {
      ttft->atoms.push_back({w * f, pre, p.prefill_step_seconds});
      e2e->atoms.push_back({w * f, life, p.prefill_step_seconds});
    }
  }
}

// Atoms for arrivals finding k = 0..size−1 others in service with weights
// w[k]. Above kMaxAtomStates populations, consecutive ones are pooled (phase
// times vary smoothly with n), which bounds the work per CDF evaluation.
void AddBinnedAtoms(const LoadDependentServer &server, absl::Span<const double> w,
                    double rate_rps, bool residual, LatencyLaw *ttft, LatencyLaw *e2e) {
  const int size = static_cast<int>(w.size());
  const int bin = std::max(1, (size + kMaxAtomStates - 1) / kMaxAtomStates);
  for (int start = 0; start < size; start += bin) {
    double weight = 0;
    double moment = 0;
    for (int k = start; k < std::min(size, start + bin); ++k) {
      weight += w[k];
      moment += k * w[k];
    }
    if (weight < kNegligibleWeight) continue;
    const int others = bin == 1 ? start : static_cast<int>(std::lround(moment / weight));
    AddAtoms(server, others + 1, weight, rate_rps, residual, ttft, e2e);
  }
}

// Branches for arrivals that wait, then enter population S.
void AddWaitBranches(const LoadDependentServer &server, double weight, LatencyLaw *ttft,
                     LatencyLaw *e2e) {
  const int nodes = server.LengthNodes();
  const int s = server.slots();
  // Admitted at a completion, with the others still served: it waits for
  // the batches launched ahead too.
  const double ahead = server.LaunchedAheadSeconds(s);
  for (int j = 0; j < nodes; ++j) {
    ttft->waits.push_back({weight / nodes, server.NodePrefillSeconds(s, j) + ahead});
    e2e->waits.push_back({weight / nodes, server.NodeLifeSeconds(s, j) + ahead});
  }
}

}  // namespace

namespace {

// Prefill-path occupancy of each length node with `population` in service.
std::vector<double> PrefillOccupancies(const LoadDependentServer &server, int population) {
  std::vector<double> out;
  out.reserve(server.LengthNodes());
  for (int j = 0; j < server.LengthNodes(); ++j) {
    out.push_back(server.NodePrefillOccupancySeconds(population, j));
  }
  return out;
}

}  // namespace

double PrefillStageMeanWait(const LoadDependentServer &server, double arrival_rate_rps,
                            int population) {
  const PrefillQueue q =
      PrefillStageQueue(arrival_rate_rps, PrefillOccupancies(server, population), 1.0);
  return q.wait_rate > 0 ? q.wait_probability / q.wait_rate : 0.0;
}

double SynchronizedWaveShare(const Workload &w, bool waves_every_round, int users) {
  if (!w.synchronized) return 0.0;
  if (waves_every_round) return 1.0;
  const double prompts = static_cast<double>(std::max<int64_t>(1, w.num_prompts));
  return std::min(1.0, std::max(0, users) / prompts);
}

// In a wave every other user comes back at the same boundary (q = 1); the
// rest of the arrivals come back apart (q).
std::vector<double> CoArrivalPositionsWithWaves(int others, double q, double wave_share) {
  if (!(wave_share > 0)) return CoArrivalPositions(others, q);
  std::vector<double> pu = CoArrivalPositions(others, 1.0);
  if (wave_share >= 1.0) return pu;
  const std::vector<double> apart = CoArrivalPositions(others, q);
  pu.resize(std::max(pu.size(), apart.size()), 0.0);
  for (size_t u = 0; u < pu.size(); ++u) {
    pu[u] = wave_share * pu[u] + (1.0 - wave_share) * (u < apart.size() ? apart[u] : 0.0);
  }
  return pu;
}

std::vector<double> CoArrivalPositions(int others, double q) {
  if (others < 1 || !(q > 0)) return {1.0};
  q = std::min(q, 1.0);
  // K ~ Binomial(others, q): only k within the span around the mean carry
  // mass above 1e-30.
  const double mean = others * q;
  const int kmax = static_cast<int>(std::min<double>(
      others, std::ceil(mean + kPoissonSpanSigmas * std::sqrt(mean) + kPoissonSpanSlack)));
  std::vector<double> pk(kmax + 1, 0.0);
  if (q >= 1.0) {
    pk[kmax] = 1.0;  // every other user co-arrives (kmax = others)
  } else {
    // The mode's probability in log space, the others by the ratio
    // P(k + 1) / P(k) = (others − k)/(k + 1) · q/(1 − q) outwards from it.
    const int mode = std::clamp(static_cast<int>(std::floor((others + 1) * q)), 0, kmax);
    double log_p =
        std::lgamma(others + 1.0) - std::lgamma(mode + 1.0) - std::lgamma(others - mode + 1.0);
    if (mode > 0) log_p += mode * std::log(q);
    if (others - mode > 0) log_p += (others - mode) * std::log1p(-q);
    const double odds = q / (1.0 - q);
    pk[mode] = std::exp(log_p);
    for (int k = mode; k < kmax; ++k) pk[k + 1] = pk[k] * (others - k) / (k + 1.0) * odds;
    for (int k = mode; k > 0; --k) pk[k - 1] = pk[k] * k / ((others - k + 1.0) * odds);
  }
  // P(U = u) = Σ_{k >= u} P(K = k) / (k + 1).
  std::vector<double> pu(kmax + 1, 0.0);
  double tail = 0;
  for (int u = kmax; u >= 0; --u) {
    tail += pk[u] / (u + 1.0);
    pu[u] = tail;
  }
  while (pu.size() > 1 && pu.back() < kNegligibleWeight) pu.pop_back();
  return pu;
}

namespace {

// The prefill stage's queueing, evaluated at the mean population, for
// arrivals with squared cv `arrival_cv2`: Poisson (1) in the open loop and in
// closed loops with think time (over the short time scale of a prefill the
// superposition of many users' cycles looks Poisson), far more regular
// without think time (kClosedLoopPrefillArrivalCv2).
void ApplyPrefillQueue(const LoadDependentServer &server, double rate_rps, double mean_in_service,
                       double arrival_cv2, LatencyLaw *ttft, LatencyLaw *e2e) {
  const int n = std::clamp(static_cast<int>(std::lround(mean_in_service)), 1, server.slots());
  const PrefillQueue q = PrefillStageQueue(rate_rps, PrefillOccupancies(server, n), arrival_cv2);
  if (!(q.wait_rate > 0)) return;
  // Arrivals that waited for a slot are admitted one per completion, spaced
  // out: the prefill stage's waiting law applies to the atoms. The admitted
  // waiters still queue for the same prefill stage (they hold their slot
  // while they do, HoldingRate): they get its mean wait after their
  // completion wait, so TTFT does not fall when the population passes the
  // slots.
  const double mean_wait = q.wait_probability / q.wait_rate;
  for (LatencyLaw *law : {ttft, e2e}) {
    law->prefill_wait_probability = q.wait_probability;
    law->prefill_wait_rate = q.wait_rate;
    for (LatencyLaw::WaitBranch &branch : law->waits) branch.offset_seconds += mean_wait;
  }
}

// Token-weighted TPOT over in-service populations with weights w(n).
double TokenWeightedTpot(const LoadDependentServer &s,
                         const std::vector<std::pair<int, double>> &w) {
  double tokens = 0;
  double time = 0;
  for (const auto &[n, weight] : w) {
    const RequestPhaseTimes &p = s.Phase(n);
    if (weight <= 0 || p.mean_decode_batch <= 0) continue;
    tokens += weight * p.mean_decode_batch;
    time += weight * p.mean_decode_batch * p.tpot_seconds;
  }
  return tokens > 0 ? time / tokens : s.Phase(1).tpot_seconds;
}

}  // namespace

namespace {

// Marginal queue-length law p(j | n), j = 0..n, of the closed network
// (one load-dependent station + a delay station of mean Z), from its product
// form in log space: p(j | n) ∝ Z^(n−j)/(n−j)! · Π_{i<=j} 1/μ(i). Stable
// where the textbook recursion's p(0 | n) = 1 − Σ p(j | n) is not.
// log_factorial[k] = log k! for k <= n.
// `out` is filled (its capacity reused).
void ClosedMarginals(const std::vector<double> &log_mu_prefix,
                     const std::vector<double> &log_factorial, double z, int n,
                     std::vector<double> *out) {
  std::vector<double> &p = *out;
  p.assign(n + 1, 0.0);
  if (z <= 0) {
    p[n] = 1.0;
    return;
  }
  const double log_z = std::log(z);
  double mx = -std::numeric_limits<double>::infinity();
  for (int j = 0; j <= n; ++j) {
    p[j] = (n - j) * log_z - log_factorial[n - j] - log_mu_prefix[j];  // log p(j | n) + c
    mx = std::max(mx, p[j]);
  }
  double total = 0;
  for (int j = 0; j <= n; ++j) {
    p[j] = std::exp(p[j] - mx);
    total += p[j];
  }
  for (double &v : p) v /= total;
}

// The time to m completions at rate μ(S) as an Erlang law whose squared cv is
// (1/m)·[φ·(1 − m/(S+1))⁺ + cv_R²·min(1, m/(S+1))],
// φ = kSaturatedPhaseSpreadShare: the order-statistic term of S independent
// residual lives, shrunk because the slots' phases are more even than
// independent ones. With think time the arrival-theorem mixture over m
// already carries the exponential-like spread of the product form, so the m
// completions are taken as a renewal count of the saturated slots:
// cv² = cv_R² / m (renewal CLT).
WaitLaw::Erlang CompletionWait(int m, int s, double cv_r, double mu_s, double weight,
                               bool think_time) {
  const double frac = std::min(1.0, m / (s + 1.0));
  const double cv2 =
      think_time
          ? cv_r * cv_r / m
          : (kSaturatedPhaseSpreadShare * std::max(0.0, 1.0 - m / (s + 1.0)) + cv_r * cv_r * frac) /
                m;
  const int k = cv2 > 0 ? std::clamp(static_cast<int>(std::lround(1.0 / cv2)), 1, kMaxErlangPhases)
                        : kMaxErlangPhases;
  return WaitLaw::Erlang{weight, k, k * mu_s / m};
}

// Each part (an atom or a wait branch) split by the position u of the user
// among its co-arrivals (weights pu[u]), u prefill occupancies later.
template <typename Part>
void SplitByPositions(const std::vector<double> &pu, double occupancy, std::vector<Part> *parts) {
  std::vector<Part> split = TakeScratch<Part>();
  split.reserve(parts->size() * pu.size());
  for (const Part &part : *parts) {
    for (size_t u = 0; u < pu.size(); ++u) {
      const double w = part.weight * pu[u];
      if (w < kNegligibleWeight) continue;
      Part moved = part;
      moved.weight = w;
      moved.offset_seconds += u * occupancy;
      split.push_back(moved);
    }
  }
  parts->swap(split);
  GiveBackScratch(std::move(split));
}

// The position law pu in at most `bins` consecutive groups of about equal
// weight: (weight, weighted mean position) per group.
std::vector<std::pair<double, double>> PositionBins(const std::vector<double> &pu, int bins) {
  std::vector<std::pair<double, double>> out;
  double total = 0;
  for (double w : pu) total += w;
  if (!(total > 0)) return out;
  double weight = 0;
  double moment = 0;
  for (size_t u = 0; u < pu.size(); ++u) {
    weight += pu[u];
    moment += u * pu[u];
    const bool last = u + 1 == pu.size();
    if (weight >= total / bins || last) {
      if (weight > 0) out.emplace_back(weight, moment / weight);
      weight = moment = 0;
    }
  }
  return out;
}

// Closed loop without think time: every atom is split by the number U of
// co-arrivals admitted ahead of the user (CoArrivalPositions), each adding
// one mean prefill occupancy at population n to TTFT and end-to-end time.
// The wait branches are split alike: a user who waited for a slot is
// admitted at a completion, and the others whose slots free in the same
// step are admitted with it and prefill before or after it; without this
// TTFT fell from the co-arrival queue to the bare slot wait when the
// population passed the slots.
void AddCoArrivals(const LoadDependentServer &server, int n, int others, LatencyLaw *ttft,
                   LatencyLaw *e2e) {
  if (others < 1) return;
  const RequestPhaseTimes &p = server.Phase(n);
  const double q = std::clamp(p.mean_step_seconds / p.life_seconds, 0.0, 1.0);
  const std::vector<double> occupancies = PrefillOccupancies(server, n);
  const double occupancy =
      std::accumulate(occupancies.begin(), occupancies.end(), 0.0) / occupancies.size();
  const double wave_share =
      SynchronizedWaveShare(server.workload(), server.WavesEveryRound(), n);
  if (!(occupancy > 0) || (!(q > 0) && !(wave_share > 0))) return;
  const std::vector<double> pu = CoArrivalPositionsWithWaves(others, q, wave_share);
  // The wait branches are few but each costs an Erlang-mixture evaluation:
  // the positions come to them in at most kCoArrivalWaitBins groups of equal
  // weight, each at its mean position (the spread, p95, is kept).
  const std::vector<std::pair<double, double>> bins = PositionBins(pu, kCoArrivalWaitBins);
  for (LatencyLaw *law : {ttft, e2e}) {
    SplitByPositions(pu, occupancy, &law->atoms);
    std::vector<LatencyLaw::WaitBranch> waits;
    waits.reserve(law->waits.size() * bins.size());
    for (const LatencyLaw::WaitBranch &b : law->waits) {
      for (const auto &[weight, position] : bins) {
        waits.push_back({b.weight * weight, b.offset_seconds + position * occupancy});
      }
    }
    law->waits = std::move(waits);
  }
}

}  // namespace

namespace {

absl::Status ValidateClosedLoop(absl::Span<const int> concurrencies, double think_time_seconds) {
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("ClosedLoop.think_time_seconds", think_time_seconds));
  std::vector<double> loads(concurrencies.begin(), concurrencies.end());
  CAPPLAN_RETURN_IF_ERROR(CheckIncreasing(loads, "ClosedLoop.concurrency"));
  if (concurrencies.back() > kMaxClosedLoopConcurrency) {
    return Invalid(absl::StrCat("ClosedLoop.concurrency[", concurrencies.size() - 1, "]"),
                   concurrencies.back(), absl::StrCat("must be <= ", kMaxClosedLoopConcurrency));
  }
  return absl::OkStatus();
}

// Σ_{i<=j} log μ(i) for j = 0..n_max: the product form's denominators.
std::vector<double> LogCompletionRatePrefix(const LoadDependentServer &server, int n_max) {
  std::vector<double> log_mu_prefix(n_max + 1, 0.0);
  for (int j = 1; j <= n_max; ++j) {
    log_mu_prefix[j] = log_mu_prefix[j - 1] + std::log(server.CompletionRate(j));
  }
  return log_mu_prefix;
}

// Share of arriving users who find all S slots taken (j >= S others in
// service; populations of negligible weight left out, as the wait law does).
double SlotWaitProbability(const std::vector<double> &arrival, int s, int n) {
  double p = 0;
  for (int j = s; j < n; ++j) {
    if (arrival[j] >= kNegligibleWeight) p += arrival[j];
  }
  return p;
}

// The closed loop's TTFT and e2e laws at population n with throughput x: an
// arrival that finds j < S others in service is admitted at once (atoms);
// one that finds j >= S waits for j − S + 1 completions at μ(S). Without
// think time the co-arrivals queue for the prefill path together; every
// atom then sees the prefill stage's queueing on the others' arrivals.
void SetClosedLoopLatencies(const LoadDependentServer &server, const std::vector<double> &arrival,
                            int n, double x, double z, double in_service, const LoadPoint *previous,
                            const Figures &figures, LoadPoint &pt) {
  const int s = server.slots();
  const double mu_s = server.SaturationRate();
  const double cv_r = server.ServiceTimeCv();
  ScratchLaws laws;
  LatencyLaw &ttft = laws.ttft;
  LatencyLaw &e2e = laws.e2e;
  ttft.budget = e2e.budget = server.budget();
  double wait_w = 0;
  AddBinnedAtoms(server, absl::MakeConstSpan(arrival.data(), std::min(n, s)), x,
                 z > 0, &ttft, &e2e);
  for (int j = s; j < n; ++j) {
    const double w = arrival[j];
    if (w < kNegligibleWeight) continue;
    wait_w += w;
    ttft.wait.erlangs.push_back(CompletionWait(j - s + 1, s, cv_r, mu_s, w, z > 0));
  }
  if (wait_w > 0) {
    for (WaitLaw::Erlang &e : ttft.wait.erlangs) e.weight /= wait_w;
    e2e.wait = ttft.wait;
    AddWaitBranches(server, wait_w, &ttft, &e2e);
  }
  if (z == 0) {
    AddCoArrivals(server, std::min(n, s), std::min(n - 1, s), &ttft, &e2e);
  }
  // Others' arrivals only: a user never queues behind itself.
  ApplyPrefillQueue(server, x * (n - 1) / n, in_service, z > 0 ? 1.0 : kClosedLoopPrefillArrivalCv2,
                    &ttft, &e2e);
  const bool guess = previous != nullptr && previous->ttft.has_value() && previous->e2e.has_value();
  pt.ttft = Summarise(ttft, guess ? &*previous->ttft : nullptr, figures);
  pt.e2e = SummariseEndToEnd(e2e, guess ? &*previous->e2e : nullptr, figures);
  pt.latencies_partial = !figures.all;
}

// The throughput figures of ClosedLoopPoint at Z = 0 without its latency
// laws: p(j − 1 | n − 1) and p(j | n) are 1 at j = n and 0 elsewhere, so
// each of its sums is its one term (the same figures, in O(1)).
LoadPoint ClosedLoopPointWithoutThinkTime(const LoadDependentServer &server, int n) {
  const int s = server.slots();
  const double r = n / server.CompletionRate(n);
  const double ahead = server.LaunchedAheadSeconds(std::min(n, s));
  const double x = n / (0.0 + ahead + r);
  LoadPoint pt;
  pt.concurrency = n;
  pt.requests_per_second = x;
  pt.output_tokens_per_second = x * server.workload().output_tokens;
  pt.utilization = x / server.SaturationRate();
  pt.mean_batch_size = std::min(n, s);
  pt.mean_queue_length = std::max(0, n - s);
  const std::vector<std::pair<int, double>> tpot_w = {{std::min(n, s), 1.0}};
  pt.tpot_seconds = TokenWeightedTpot(server, tpot_w);
  pt.slot_wait_probability = n - 1 >= s ? 1.0 : 0.0;
  pt.latencies_skipped = true;
  return pt;
}

// One MVA step: by the arrival theorem an arriving user sees p(· | n − 1),
// so R(n) = Σ_j j/μ(j) · p(j − 1 | n − 1) and X(n) = n / (Z + R(n)); the
// occupancy comes from p(· | n).
LoadPoint ClosedLoopPoint(const LoadDependentServer &server,
                          const std::vector<double> &log_mu_prefix,
                          const std::vector<double> &log_factorial, double z, int n, bool latencies,
                          const LoadPoint *previous, const Figures &figures) {
  const int s = server.slots();
  ScratchVector<double> arrival_scratch;
  const std::vector<double> &arrival = *arrival_scratch;
  // Without think time every user is at the station: p(· | n) is all at n,
  // and the sums below have one term each; the arrival law is drawn only for
  // the latency laws.
  if (z <= 0) {
    LoadPoint pt = ClosedLoopPointWithoutThinkTime(server, n);
    if (!latencies) return pt;
    ClosedMarginals(log_mu_prefix, log_factorial, z, n - 1, &*arrival_scratch);
    pt.latencies_skipped = false;
    SetClosedLoopLatencies(server, arrival, n, pt.requests_per_second, z, pt.mean_batch_size,
                           previous, figures, pt);
    return pt;
  }
  ScratchVector<double> cur_scratch;
  const std::vector<double> &cur = *cur_scratch;
  ClosedMarginals(log_mu_prefix, log_factorial, z, n - 1, &*arrival_scratch);
  ClosedMarginals(log_mu_prefix, log_factorial, z, n, &*cur_scratch);
  double r = 0;
  // A request taken in with j others in service first waits for the batches
  // launched ahead (LaunchedAheadSeconds): outside the station, a delay of
  // the user's cycle like the think time, so it lowers the throughput.
  double ahead = 0;
  // (Populations of probability 0, all but one without think time, add 0.)
  for (int j = 1; j <= n; ++j) {
    if (arrival[j - 1] == 0) continue;
    r += j / server.CompletionRate(j) * arrival[j - 1];
    ahead += arrival[j - 1] * server.LaunchedAheadSeconds(std::min(j, s));
  }
  const double x = n / (z + ahead + r);
  LoadPoint pt;
  pt.concurrency = n;
  pt.requests_per_second = x;
  pt.output_tokens_per_second = x * server.workload().output_tokens;
  pt.utilization = x / server.SaturationRate();
  double in_service = 0;
  double queue = 0;
  ScratchVector<std::pair<int, double>> tpot_scratch;
  std::vector<std::pair<int, double>> &tpot_w = *tpot_scratch;
  for (int j = 1; j <= n; ++j) {
    if (cur[j] == 0) continue;
    in_service += std::min(j, s) * cur[j];
    queue += std::max(0, j - s) * cur[j];
    tpot_w.emplace_back(std::min(j, s), cur[j]);
  }
  pt.mean_batch_size = in_service;
  pt.mean_queue_length = queue;
  pt.tpot_seconds = TokenWeightedTpot(server, tpot_w);
  pt.slot_wait_probability = SlotWaitProbability(arrival, s, n);
  if (latencies) {
    SetClosedLoopLatencies(server, arrival, n, x, z, in_service, previous, figures, pt);
  } else {
    pt.latencies_skipped = true;
  }
  return pt;
}

// μ_λ(n) = n / (n/μ(n) + W_p): a request holds its slot while it waits for
// the prefill stage too.
struct HoldingRate {
  const LoadDependentServer &server;
  double prefill_wait_seconds = 0;
  double operator()(int n) const {
    return n / (n / server.CompletionRate(n) + prefill_wait_seconds);
  }
};

// Past saturation: the server completes `rate_rps` requests per second with
// every slot busy; no latency figures.
LoadPoint SaturatedOpenLoopPoint(const LoadDependentServer &server, double lambda,
                                 double utilization, double rate_rps) {
  LoadPoint pt;
  pt.arrival_rate_rps = lambda;
  pt.stable = false;
  pt.utilization = utilization;
  pt.requests_per_second = rate_rps;
  pt.output_tokens_per_second = rate_rps * server.workload().output_tokens;
  pt.mean_batch_size = server.slots();
  pt.slot_wait_probability = 1.0;
  return pt;
}

// Stationary law of the birth–death chain with rates λ and μ_λ(min(n, S)),
// ρ = λ / μ_λ(S) < 1: π_n for n < S from the product of ratios (rescaled to
// avoid overflow), the tail n >= S geometric in ρ; with the point's mean
// number in service and token-weighted TPOT over it.
struct OpenLoopStationary {
  std::vector<double> pi;  // π_n, n = 0..S − 1 (only when asked for)
  double p_wait = 0;       // P(n >= S)
  double pi_s = 0;         // π_S
  double in_service = 0;   // Σ min(n, S) π_n
  double tpot_seconds = 0;
};

// What a curve's stationary laws read per population n = 1..S (index
// n − 1), computed once per curve: 1/μ(n) and 1/n for the ratios
// λ / μ_λ(n) = λ · (1/μ(n) + W_p/n), and the decode-token weights of the
// token-weighted TPOT (TokenWeightedTpot): the mean decode batch b_n (0
// where it is not positive) and b_n · TPOT_n.
struct OpenLoopTables {
  std::vector<double> inverse_rate;
  std::vector<double> inverse_n;
  std::vector<double> decode_tokens;
  std::vector<double> decode_time;
  double idle_tpot_seconds = 0;  // TPOT with one in service: the fallback
};

OpenLoopTables TablesOf(const LoadDependentServer &server) {
  OpenLoopTables t;
  const int s = server.slots();
  t.inverse_rate.resize(s);
  t.inverse_n.resize(s);
  t.decode_tokens.resize(s);
  t.decode_time.resize(s);
  for (int n = 1; n <= s; ++n) {
    t.inverse_rate[n - 1] = 1 / server.CompletionRate(n);
    t.inverse_n[n - 1] = 1.0 / n;
    const RequestPhaseTimes &p = server.Phase(n);
    const double b = p.mean_decode_batch > 0 ? p.mean_decode_batch : 0.0;
    t.decode_tokens[n - 1] = b;
    t.decode_time[n - 1] = b > 0 ? b * p.tpot_seconds : 0.0;
  }
  t.idle_tpot_seconds = server.Phase(1).tpot_seconds;
  return t;
}

OpenLoopStationary StationaryLaw(const HoldingRate &rate, const OpenLoopTables &tables,
                                 double lambda, int s, double rho, bool keep_pi) {
  // π_n ∝ Π_{i<=n} λ / μ_λ(i), kept as value · 2^(kStationaryShiftBits ·
  // shift): the running product is rescaled by an exact power of two only
  // when it leaves [2^−k, 2^k], so long products neither overflow nor
  // underflow, with no logarithm or exponent split per population.
  ScratchVector<double> mant_scratch;
  ScratchVector<int> shift_scratch;
  std::vector<double> &mant = *mant_scratch;
  std::vector<int> &shift = *shift_scratch;
  mant.resize(s + 1);
  shift.resize(s + 1);
  const double up = std::ldexp(1.0, kStationaryShiftBits);
  const double down = std::ldexp(1.0, -kStationaryShiftBits);
  mant[0] = 1.0;
  shift[0] = 0;
  const double wait = rate.prefill_wait_seconds;
  double value = 1.0;
  int k = 0;
  int top = 0;
  for (int n = 1; n <= s; ++n) {
    value *= lambda * (tables.inverse_rate[n - 1] + wait * tables.inverse_n[n - 1]);
    while (value > up && value < std::numeric_limits<double>::infinity()) {
      value *= down;
      ++k;
    }
    while (value > 0 && value < down) {
      value *= up;
      --k;
    }
    mant[n] = value;
    shift[n] = k;
    top = std::max(top, k);
  }
  // The tail Σ_{n >= S} = π_S / (1 − ρ); the largest shift sets the scale,
  // a value two shifts below it is under 2^−k of the largest (0 here).
  auto scaled = [&](int n) {
    const int d = shift[n] - top;
    return d == 0 ? mant[n] : d == -1 ? mant[n] * down : 0.0;
  };
  OpenLoopStationary out;
  if (keep_pi) out.pi.resize(s);
  const double tail = scaled(s) / (1 - rho);
  double total = tail;
  double in_service = 0, tokens = 0, time = 0;
  for (int n = 0; n < s; ++n) {
    const double v = scaled(n);
    if (keep_pi) out.pi[n] = v;
    total += v;
    if (n == 0) continue;
    in_service += n * v;
    tokens += v * tables.decode_tokens[n - 1];
    time += v * tables.decode_time[n - 1];
  }
  for (double &p : out.pi) p /= total;
  out.p_wait = tail / total;
  out.pi_s = out.p_wait * (1 - rho);
  out.in_service = s * out.p_wait + in_service / total;
  tokens = tokens / total + out.p_wait * tables.decode_tokens[s - 1];
  time = time / total + out.p_wait * tables.decode_time[s - 1];
  out.tpot_seconds = tokens > 0 ? time / tokens : tables.idle_tpot_seconds;
  return out;
}

// The open loop's TTFT and e2e laws: atoms for arrivals finding n < S in
// service; the geometric number of completions an arrival finding all S busy
// waits for, each an Erlang-κ gap at μ_λ(S) (Cosmetatos' M/G/S correction
// below); the prefill stage's queueing for Poisson arrivals.
void SetOpenLoopLatencies(const LoadDependentServer &server, const OpenLoopStationary &law,
                          double lambda, double rho, double saturated_rate_rps, double in_service,
                          const LoadPoint *previous, const Figures &figures, LoadPoint &pt) {
  const int s = server.slots();
  const int kappa = server.PhasesPerCompletion();
  const double cv = server.ServiceTimeCv();
  const double cv2 = std::min(1.0, cv * cv);
  ScratchLaws laws;
  LatencyLaw &ttft = laws.ttft;
  LatencyLaw &e2e = laws.e2e;
  ttft.budget = e2e.budget = server.budget();
  AddBinnedAtoms(server, law.pi, lambda, true, &ttft, &e2e);
  // M/G/S correction of the M/M/S wait (Cosmetatos 1976 for M/D/S,
  // interpolated in cv² towards M/M/S): at cv = 0 the wait is half the
  // M/M/S one times 1 + (1 − ρ)(S − 1)(√(4 + 5S) − 2)/(16ρS).
  const double md_factor =
      0.5 * (1 + (1 - rho) * (s - 1) * (std::sqrt(4.0 + 5.0 * s) - 2) / (16 * rho * s));
  const double wait_scale = cv2 + (1 - cv2) * md_factor;
  if (law.p_wait > kTailMassTolerance) {
    for (LatencyLaw *l : {&ttft, &e2e}) {
      l->wait.phase_rate = kappa * saturated_rate_rps / wait_scale;
      l->wait.phases_per_completion = kappa;
      l->wait.geometric_ratio = rho;
    }
    AddWaitBranches(server, law.p_wait, &ttft, &e2e);
  } else {
    AddAtoms(server, s, law.p_wait, lambda, true, &ttft, &e2e);
  }
  ApplyPrefillQueue(server, lambda, in_service, 1.0, &ttft, &e2e);
  const bool guess = previous != nullptr && previous->ttft.has_value() && previous->e2e.has_value();
  pt.ttft = Summarise(ttft, guess ? &*previous->ttft : nullptr, figures);
  pt.e2e = SummariseEndToEnd(e2e, guess ? &*previous->e2e : nullptr, figures);
  pt.latencies_partial = !figures.all;
}

// One arrival rate: saturated when λ >= μ(S) or, with the prefill-stage wait
// counted in the holding time, λ >= μ_λ(S); else the stationary chain.
LoadPoint OpenLoopPoint(const LoadDependentServer &server, const OpenLoopTables &tables,
                        double lambda, bool latencies, const LoadPoint *previous,
                        const Figures &figures) {
  const int s = server.slots();
  const double mu_s = server.SaturationRate();
  const double rho = lambda / mu_s;
  if (!(rho < 1.0)) return SaturatedOpenLoopPoint(server, lambda, rho, mu_s);
  // The prefill wait at the population the offered load suggests.
  const HoldingRate rate{
      server, PrefillStageMeanWait(server, lambda,
                                   std::clamp(static_cast<int>(std::lround(rho * s)), 1, s))};
  const double rho2 = lambda / rate(s);
  if (rho2 >= 1) return SaturatedOpenLoopPoint(server, lambda, rho2, rate(s));
  const OpenLoopStationary law = StationaryLaw(rate, tables, lambda, s, rho2, latencies);
  LoadPoint pt;
  pt.arrival_rate_rps = lambda;
  pt.utilization = rho2;
  pt.requests_per_second = lambda;
  pt.output_tokens_per_second = lambda * server.workload().output_tokens;
  const double in_service = law.in_service;
  pt.mean_batch_size = in_service;
  pt.mean_queue_length = law.pi_s * rho2 / ((1 - rho2) * (1 - rho2));
  pt.slot_wait_probability = law.p_wait;
  pt.tpot_seconds = law.tpot_seconds;
  if (latencies) {
    SetOpenLoopLatencies(server, law, lambda, rho2, rate(s), in_service, previous, figures, pt);
  } else {
    pt.latencies_skipped = true;
  }
  return pt;
}

}  // namespace

namespace {

// Whether the points after `p` still need their latency laws.
bool LatenciesNeededAfter(const LoadPoint &p, const std::optional<LatencyCutoff> &cutoff) {
  if (!cutoff.has_value() || p.latencies_skipped) return !p.latencies_skipped;
  if (cutoff->adjust != nullptr) {
    LoadPoint adjusted = p;
    cutoff->adjust->Apply(&adjusted);
    return !PointFailure(adjusted, *cutoff->slo, *cutoff->safety).has_value();
  }
  return !PointFailure(p, *cutoff->slo, *cutoff->safety).has_value();
}

// Before a cutoff's safe point: what PointFailure reads, as adjusted (an
// adjustment keeps the TTFT tail at or above the corrected median).
Figures FiguresBeforeSafePoint(const std::optional<LatencyCutoff> &cutoff) {
  if (!cutoff.has_value()) return Figures{};
  Figures f;
  f.all = false;
  f.ttft_p95 = cutoff->slo->ttft_p95_seconds.has_value();
  f.ttft_p50 = f.ttft_p95 && cutoff->adjust != nullptr;
  f.e2e_p95 = cutoff->slo->e2e_p95_seconds.has_value();
  if (cutoff->adjust == nullptr) {
    f.ttft_p95_below = cutoff->slo->ttft_p95_seconds;
    f.e2e_p95_below = cutoff->slo->e2e_p95_seconds;
  }
  return f;
}

absl::Status CheckCutoff(const std::optional<LatencyCutoff> &cutoff) {
  if (!cutoff.has_value()) return absl::OkStatus();
  if (cutoff->slo == nullptr || cutoff->safety == nullptr) {
    return absl::InvalidArgumentError(
        "LatencyCutoff.slo / LatencyCutoff.safety: give both the SLO and the safety options");
  }
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(*cutoff->slo));
  return perf_internal::CheckInRange("LatencyCutoff.safety.max_slot_wait_probability",
                                     cutoff->safety->max_slot_wait_probability, 0.0, 1.0);
}

}  // namespace

namespace {

// Point i of a curve: with its latency laws or not, the figures asked for, a
// previous point whose quantiles guess the searches (optional).
using PointAt =
    absl::FunctionRef<LoadPoint(int i, bool latencies, const LoadPoint *previous, const Figures &)>;

// Every point in order; with a cutoff, latencies up to the first point that
// fails, then the safe point again with all its figures.
absl::StatusOr<std::vector<LoadPoint>> WalkCurve(int count, PointAt point,
                                                 const std::optional<LatencyCutoff> &cutoff,
                                                 Budget *budget) {
  std::vector<LoadPoint> out;
  out.reserve(count);
  const Figures figures = FiguresBeforeSafePoint(cutoff);
  bool latencies = true;
  int safe = -1;  // the last point that passes
  for (int i = 0; i < count; ++i) {
    const LoadPoint *previous = out.empty() ? nullptr : &out.back();
    out.push_back(point(i, latencies, previous, figures));
    latencies = LatenciesNeededAfter(out.back(), cutoff);
    if (latencies) safe = i;
    if (Stopped(budget)) return budget->status();
  }
  if (!figures.all && safe >= 0) {  // the safe point with all its figures
    out[safe] = point(safe, true, safe > 0 ? &out[safe - 1] : nullptr, Figures{});
    if (Stopped(budget)) return budget->status();
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<LoadPoint>> ClosedLoopCurve(const LoadDependentServer &server,
                                                       absl::Span<const int> concurrencies,
                                                       double think_time_seconds,
                                                       std::optional<LatencyCutoff> cutoff) {
  CAPPLAN_RETURN_IF_ERROR(ValidateClosedLoop(concurrencies, think_time_seconds));
  CAPPLAN_RETURN_IF_ERROR(CheckCutoff(cutoff));
  const std::vector<double> log_mu_prefix = LogCompletionRatePrefix(server, concurrencies.back());
  std::vector<double> log_factorial(concurrencies.back() + 1, 0.0);
  if (think_time_seconds > 0) {
    for (size_t k = 1; k < log_factorial.size(); ++k) log_factorial[k] = std::lgamma(k + 1.0);
  }
  auto point = [&](int i, bool latencies, const LoadPoint *previous, const Figures &figures) {
    return ClosedLoopPoint(server, log_mu_prefix, log_factorial, think_time_seconds,
                           concurrencies[i], latencies, previous, figures);
  };
  return WalkCurve(static_cast<int>(concurrencies.size()), point, cutoff, server.budget());
}

absl::StatusOr<std::vector<LoadPoint>> OpenLoopCurve(const LoadDependentServer &server,
                                                     absl::Span<const double> rates_rps,
                                                     std::optional<LatencyCutoff> cutoff) {
  CAPPLAN_RETURN_IF_ERROR(CheckIncreasing(rates_rps, "OpenLoop.arrival_rate_rps"));
  CAPPLAN_RETURN_IF_ERROR(CheckCutoff(cutoff));
  const OpenLoopTables tables = TablesOf(server);
  auto point = [&](int i, bool latencies, const LoadPoint *previous, const Figures &figures) {
    return OpenLoopPoint(server, tables, rates_rps[i], latencies, previous, figures);
  };
  return WalkCurve(static_cast<int>(rates_rps.size()), point, cutoff, server.budget());
}

// ----------------------------------------------------------------- analysis

absl::StatusOr<std::optional<Knee>> FindKnee(const std::vector<LoadPoint> &points,
                                             const KneeOptions &options) {
  if (points.empty()) {
    return absl::InvalidArgumentError("FindKnee.points is empty");
  }
  if (!std::isfinite(options.flat_ratio) || !(options.flat_ratio > 1)) {
    return Invalid("KneeOptions.flat_ratio", options.flat_ratio, "must be finite and > 1");
  }
  if (!points[0].ttft.has_value()) {
    return absl::InvalidArgumentError(
        "FindKnee.points[0] has no TTFT (unstable first point); no flat "
        "region to measure from");
  }
  auto ttft = [&options](const LoadPoint &p) {
    return options.metric == KneeMetric::kTtftP50 ? p.ttft->p50_seconds : p.ttft->p95_seconds;
  };
  const double limit = options.flat_ratio * ttft(points[0]);
  for (size_t i = 1; i < points.size(); ++i) {
    const bool steep = !points[i].ttft.has_value() || ttft(points[i]) > limit;
    if (!steep) continue;
    Knee k;
    k.last_flat_index = static_cast<int>(i) - 1;
    k.first_steep_index = static_cast<int>(i);
    const LoadPoint &a = points[i - 1];
    const LoadPoint &b = points[i];
    if (!b.ttft.has_value()) {
      k.load = b.load();
    } else {
      const double ya = ttft(a);
      const double yb = ttft(b);
      const double f = yb > ya ? std::clamp((limit - ya) / (yb - ya), 0.0, 1.0) : 1.0;
      k.load = a.load() + f * (b.load() - a.load());
    }
    return std::optional<Knee>(k);
  }
  return std::optional<Knee>();
}

absl::Status ValidateSlo(const Slo &slo) {
  if (slo.ttft_p95_seconds.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("Slo.ttft_p95_seconds", *slo.ttft_p95_seconds));
  }
  if (slo.tpot_seconds.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("Slo.tpot_seconds", *slo.tpot_seconds));
  }
  if (slo.e2e_p95_seconds.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("Slo.e2e_p95_seconds", *slo.e2e_p95_seconds));
  }
  return absl::OkStatus();
}

std::optional<BindingLimit> PointFailure(const LoadPoint &p, const Slo &slo,
                                         const SafetyOptions &options) {
  if (!p.stable || !p.ttft.has_value()) return BindingLimit::kStability;
  if (slo.ttft_p95_seconds.has_value() && p.ttft->p95_seconds > *slo.ttft_p95_seconds) {
    return BindingLimit::kTtftP95;
  }
  if (slo.tpot_seconds.has_value() && p.tpot_seconds.has_value() &&
      *p.tpot_seconds > *slo.tpot_seconds) {
    return BindingLimit::kTpot;
  }
  if (slo.e2e_p95_seconds.has_value() && p.e2e.has_value() &&
      p.e2e->p95_seconds > *slo.e2e_p95_seconds) {
    return BindingLimit::kE2eP95;
  }
  if (p.slot_wait_probability > options.max_slot_wait_probability) {
    return BindingLimit::kSlotWait;
  }
  return std::nullopt;
}

absl::StatusOr<SafeOperatingPoint> FindSafeOperatingPoint(const std::vector<LoadPoint> &points,
                                                          const Slo &slo,
                                                          const SafetyOptions &options) {
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(slo));
  CAPPLAN_RETURN_IF_ERROR(perf_internal::CheckInRange("SafetyOptions.max_slot_wait_probability",
                                                      options.max_slot_wait_probability, 0.0, 1.0));
  if (points.empty()) {
    return absl::InvalidArgumentError("FindSafeOperatingPoint.points is empty");
  }
  SafeOperatingPoint out;
  for (size_t i = 0; i < points.size(); ++i) {
    const std::optional<BindingLimit> f = PointFailure(points[i], slo, options);
    if (f.has_value()) {
      out.binding = *f;
      return out;
    }
    out.index = static_cast<int>(i);
  }
  out.binding = BindingLimit::kLoadRange;
  return out;
}

absl::StatusOr<LoadCurve> PredictLoadCurve(const LoadCurveRequest &r,
                                           std::optional<LoadDependentServer> *server_cache) {
  const bool closed = !r.concurrencies.empty();
  if (closed == !r.arrival_rates_rps.empty()) {
    return absl::InvalidArgumentError(
        "LoadCurveRequest: give exactly one of concurrencies (closed loop) and "
        "arrival_rates_rps (open loop)");
  }
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(r.slo));
  absl::StatusOr<Slots> slots = ComputeSlots(r.limits, r.workload);
  if (!slots.ok()) return slots.status();
  std::optional<LoadDependentServer> own;
  std::optional<LoadDependentServer> &server = server_cache != nullptr ? *server_cache : own;
  if (server.has_value() &&
      (server->slots() != slots->slots || server->budget() != r.budget)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PredictLoadCurve.server: built for ", server->slots(),
        " slots or another budget; this request has ", slots->slots,
        " (give the same model, workload, limits and budget)"));
  }
  if (!server.has_value()) {
    absl::StatusOr<LoadDependentServer> created =
        LoadDependentServer::Create(r.model, r.workload, *slots, r.budget);
    if (!created.ok()) return created.status();
    server = *std::move(created);
  }
  std::optional<LatencyCutoff> cutoff;
  if (r.latencies_until_unsafe) cutoff = LatencyCutoff{&r.slo, &r.safety, r.adjust};
  absl::StatusOr<std::vector<LoadPoint>> points =
      closed ? ClosedLoopCurve(*server, r.concurrencies, r.think_time_seconds, cutoff)
             : OpenLoopCurve(*server, r.arrival_rates_rps, cutoff);
  if (!points.ok()) return points.status();
  LoadCurve out;
  out.closed_loop = closed;
  out.slots = *slots;
  out.saturation_rps = server->SaturationRate();
  out.points = *std::move(points);
  // The knee on the model's own TTFT shape: an adjustment moves figures to
  // measured rows, it does not say where queueing sets in (a measured step
  // between two loads, such as a wave of prefills, is not a knee).
  if (!r.latencies_until_unsafe && out.points.front().ttft.has_value()) {
    absl::StatusOr<std::optional<Knee>> knee = FindKnee(out.points, r.knee);
    if (!knee.ok()) return knee.status();
    out.knee = *knee;
  }
  if (r.adjust != nullptr) {
    for (LoadPoint &p : out.points) r.adjust->Apply(&p);
  }
  absl::StatusOr<SafeOperatingPoint> safe = FindSafeOperatingPoint(out.points, r.slo, r.safety);
  if (!safe.ok()) return safe.status();
  out.safe = *safe;
  return out;
}

}  // namespace capplan::model
