#include "model/lint.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace capplan::model {
namespace {

LintFinding Make(LintCode code, LintSeverity severity, const std::string& path, double measured,
                 double expected, std::string message) {
  LintFinding f;
  f.code = code;
  f.severity = severity;
  f.field_path = path;
  f.measured = measured;
  f.expected = expected;
  f.message = std::move(message);
  return f;
}

bool Positive(const std::optional<double>& v) { return v.has_value() && *v > 0; }

// The first token cannot come after the whole response.
void CheckTtftBeforeE2e(const LintRow& r, std::vector<LintFinding>* out) {
  if (!Positive(r.ttft_seconds) || !Positive(r.e2e_seconds) || *r.ttft_seconds <= *r.e2e_seconds) {
    return;
  }
  out->push_back(Make(LintCode::kTtftAboveE2e, LintSeverity::kError, r.path + ".ttft",
                      *r.ttft_seconds, *r.e2e_seconds,
                      absl::StrFormat("TTFT %.4g s is above the end-to-end latency %.4g s of the "
                                      "same statistic",
                                      *r.ttft_seconds, *r.e2e_seconds)));
}

// In a closed loop a request lives at most concurrency ÷ req/s on average
// (Little's law with no think time); a latency far above it is a unit slip.
void CheckUnits(const LintRow& r, const LintOptions& o, std::vector<LintFinding>* out) {
  std::optional<double> in_flight =
      r.concurrency.has_value() ? r.concurrency : r.measured_in_flight;
  if (!Positive(in_flight) || !Positive(r.requests_per_second)) return;
  const double life_bound = *in_flight / *r.requests_per_second;
  for (const auto& [name, value] :
       {std::make_pair("ttft", r.ttft_seconds), std::make_pair("e2e", r.e2e_seconds)}) {
    if (!Positive(value) || *value <= o.unit_factor * life_bound) continue;
    out->push_back(
        Make(LintCode::kUnitSuspect, LintSeverity::kError, r.path + "." + name, *value, life_bound,
             absl::StrFormat("%s %.4g s is %.0f× the longest mean life %.4g in flight ÷ %.4g req/s "
                             "allow (%.4g s); a factor near 1000 means milliseconds were given as "
                             "seconds",
                             name, *value, *value / life_bound, *in_flight, *r.requests_per_second,
                             life_bound)));
  }
}

// Mean in flight = req/s × mean time in system.
void CheckLittle(const LintRow& r, bool closed_loop, const LintOptions& o,
                 std::vector<LintFinding>* out) {
  if (!Positive(r.requests_per_second) || !Positive(r.e2e_seconds)) return;
  const double in_flight = *r.requests_per_second * *r.e2e_seconds;
  std::optional<double> stated = closed_loop ? r.concurrency : r.measured_in_flight;
  if (!Positive(stated) || std::abs(in_flight / *stated - 1) <= o.little_law_tolerance) return;
  out->push_back(Make(
      LintCode::kLittleLaw, LintSeverity::kWarning, r.path, in_flight, *stated,
      absl::StrFormat("req/s × e2e = %.4g × %.4g s = %.3g in flight, but the %s is %.4g: the run "
                      "was not in steady state, or the figures are of different statistics",
                      *r.requests_per_second, *r.e2e_seconds, in_flight,
                      closed_loop ? "concurrency" : "measured concurrency", *stated)));
}

void CheckTokens(const LintRow& r, const LintOptions& o, std::vector<LintFinding>* out) {
  if (!Positive(r.requests_per_second) || !Positive(r.output_tokens_per_second) ||
      !Positive(r.output_tokens_per_request)) {
    return;
  }
  const double expected = *r.requests_per_second * *r.output_tokens_per_request;
  const double ratio = *r.output_tokens_per_second / expected;
  if (std::abs(ratio - 1) <= o.tokens_tolerance) return;
  out->push_back(Make(
      LintCode::kToksVsReqs, LintSeverity::kWarning, r.path + ".output_tokens_per_second",
      *r.output_tokens_per_second, expected,
      absl::StrFormat("output %.4g tok/s, but %.4g req/s × %.4g output tokens = %.4g tok/s: the "
                      "mean output per request was %.4g tokens, not %.4g",
                      *r.output_tokens_per_second, *r.requests_per_second,
                      *r.output_tokens_per_request, expected,
                      *r.output_tokens_per_second / *r.requests_per_second,
                      *r.output_tokens_per_request)));
}

std::optional<double> PerUser(const LintRow& r) {
  if (Positive(r.per_user_output_tokens_per_second)) return r.per_user_output_tokens_per_second;
  if (Positive(r.output_tokens_per_second) && Positive(r.concurrency)) {
    return *r.output_tokens_per_second / *r.concurrency;
  }
  return std::nullopt;
}

// Neighbouring closed-loop rows, in order of concurrency.
void CheckNeighbours(const LintRow& a, const LintRow& b, const LintOptions& o,
                     std::vector<LintFinding>* out) {
  if (Positive(a.output_tokens_per_second) && Positive(b.output_tokens_per_second) &&
      Positive(a.ttft_seconds) && Positive(b.ttft_seconds) &&
      *b.output_tokens_per_second < (1 - o.throughput_fall_share) * *a.output_tokens_per_second &&
      *b.ttft_seconds < o.ttft_flat_ratio * *a.ttft_seconds) {
    out->push_back(Make(
        LintCode::kNonMonotone, LintSeverity::kWarning, b.path + ".output_tokens_per_second",
        *b.output_tokens_per_second, *a.output_tokens_per_second,
        absl::StrFormat("throughput falls from %.4g to %.4g tok/s between concurrency %.4g and "
                        "%.4g while TTFT stays flat (%.4g → %.4g s): no queue explains the loss",
                        *a.output_tokens_per_second, *b.output_tokens_per_second, *a.concurrency,
                        *b.concurrency, *a.ttft_seconds, *b.ttft_seconds)));
  }
  const std::optional<double> ua = PerUser(a), ub = PerUser(b);
  if (ua.has_value() && ub.has_value() && *ua < (1 - o.per_user_rise_share) * *ub) {
    out->push_back(
        Make(LintCode::kOutlierRow, LintSeverity::kWarning, a.path, *ua, *ub,
             absl::StrFormat("%.4g tok/s per user at concurrency %.4g is slower than %.4g at %.4g: "
                             "adding users cannot make each faster, so one of the two rows is off",
                             *ua, *a.concurrency, *ub, *b.concurrency)));
  }
}

}  // namespace

const char* LintCodeName(LintCode code) {
  switch (code) {
    case LintCode::kLittleLaw:
      return "LITTLE_LAW";
    case LintCode::kToksVsReqs:
      return "TOKS_VS_REQS";
    case LintCode::kTtftAboveE2e:
      return "TTFT_ABOVE_E2E";
    case LintCode::kNonMonotone:
      return "NON_MONOTONE";
    case LintCode::kMemorySum:
      return "MEMORY_SUM";
    case LintCode::kKvTokensVsBytes:
      return "KV_TOKENS_VS_BYTES";
    case LintCode::kOutlierRow:
      return "OUTLIER_ROW";
    case LintCode::kMissingProvenance:
      return "MISSING_PROVENANCE";
    case LintCode::kUnitSuspect:
      return "UNIT_SUSPECT";
  }
  return "UNKNOWN";
}

std::vector<LintFinding> LintRows(absl::Span<const LintRow> rows, bool closed_loop,
                                  const LintOptions& options) {
  std::vector<LintFinding> out;
  for (const LintRow& r : rows) {
    CheckTtftBeforeE2e(r, &out);
    CheckUnits(r, options, &out);
    CheckLittle(r, closed_loop, options, &out);
    CheckTokens(r, options, &out);
  }
  if (!closed_loop) return out;
  std::vector<const LintRow*> ordered;
  for (const LintRow& r : rows) {
    if (Positive(r.concurrency)) ordered.push_back(&r);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const LintRow* a, const LintRow* b) {
    return *a->concurrency < *b->concurrency;
  });
  for (size_t i = 0; i + 1 < ordered.size(); ++i) {
    CheckNeighbours(*ordered[i], *ordered[i + 1], options, &out);
  }
  return out;
}

std::vector<LintFinding> LintMemory(const LintMemoryAccount& a, const LintOptions& options) {
  std::vector<LintFinding> out;
  const double parts = std::accumulate(a.part_bytes.begin(), a.part_bytes.end(), 0.0);
  if (Positive(a.used_bytes) && parts > (1 + options.kv_bytes_tolerance / 5) * *a.used_bytes) {
    out.push_back(Make(LintCode::kMemorySum, LintSeverity::kWarning, a.path, parts, *a.used_bytes,
                       absl::StrFormat("the parts of the account sum to %.4g GiB, more than the "
                                       "%.4g GiB it says are in use",
                                       parts / (1 << 30), *a.used_bytes / (1 << 30))));
  }
  const double used = Positive(a.used_bytes) ? *a.used_bytes : parts;
  if (Positive(a.capacity_bytes) && used > *a.capacity_bytes) {
    out.push_back(Make(LintCode::kMemorySum, LintSeverity::kError, a.path, used, *a.capacity_bytes,
                       absl::StrFormat("%.4g GiB in use on a card of %.4g GiB", used / (1 << 30),
                                       *a.capacity_bytes / (1 << 30))));
  }
  return out;
}

std::vector<LintFinding> LintShards(const std::string& path, double per_gpu_bytes, int gpus,
                                    double whole_model_bytes, const LintOptions& options) {
  std::vector<LintFinding> out;
  if (!(per_gpu_bytes > 0) || gpus < 1 || !(whole_model_bytes > 0)) return out;
  const double sum = per_gpu_bytes * gpus;
  if (sum >= options.shard_sum_share * whole_model_bytes) return out;
  out.push_back(Make(LintCode::kMemorySum, LintSeverity::kWarning, path, sum, whole_model_bytes,
                     absl::StrFormat("%d GPUs × %.4g GiB of weights = %.4g GiB, less than the "
                                     "model's %.4g GiB: the figures describe different variants "
                                     "or count differently",
                                     gpus, per_gpu_bytes / (1 << 30), sum / (1 << 30),
                                     whole_model_bytes / (1 << 30))));
  return out;
}

std::vector<LintFinding> LintKvPool(const std::string& path, double pool_tokens, double kv_bytes,
                                    double kv_bytes_per_token, const LintOptions& options) {
  std::vector<LintFinding> out;
  if (!(pool_tokens > 0) || !(kv_bytes > 0) || !(kv_bytes_per_token > 0)) return out;
  const double needed = pool_tokens * kv_bytes_per_token;
  const double ratio = needed / kv_bytes;
  if (ratio <= 1 + options.kv_bytes_tolerance && ratio >= 1 / (1 + options.kv_bytes_tolerance)) {
    return out;
  }
  out.push_back(Make(LintCode::kKvTokensVsBytes, LintSeverity::kWarning, path, needed, kv_bytes,
                     absl::StrFormat("%.0f tokens × %.0f bytes per token = %.4g GiB, but the KV "
                                     "cache is stated as %.4g GiB (%.2f×)",
                                     pool_tokens, kv_bytes_per_token, needed / (1 << 30),
                                     kv_bytes / (1 << 30), ratio)));
  return out;
}

std::vector<LintFinding> LintSource(const std::string& path, const std::string& source) {
  std::vector<LintFinding> out;
  if (absl::StripAsciiWhitespace(source).empty()) {
    out.push_back(Make(LintCode::kMissingProvenance, LintSeverity::kError, path, 0, 0,
                       "no source document: a baseline must say where its figures come from"));
    return out;
  }
  // https://github.com/OWNER/REPO/(blob|tree|raw)/REF/PATH
  std::vector<absl::string_view> parts = absl::StrSplit(source, '/');
  if (!absl::StartsWith(source, "https://github.com/") || parts.size() < 7) return out;
  const absl::string_view kind = parts[5], ref = parts[6];
  if (kind != "blob" && kind != "tree" && kind != "raw") return out;
  const bool commit = ref.size() == 40 && std::all_of(ref.begin(), ref.end(), [](char c) {
                        return absl::ascii_isxdigit(c);
                      });
  if (commit) return out;
  out.push_back(Make(LintCode::kMissingProvenance, LintSeverity::kWarning, path, 0, 0,
                     absl::StrFormat("source '%s' points at '%s', not a commit: the file can "
                                     "change under the link; pin it to a 40-hex commit",
                                     source.substr(0, 200), ref)));
  return out;
}

}  // namespace capplan::model
