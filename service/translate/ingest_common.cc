// The pieces every ingest parser shares: building one run's SweepRow and
// note, the load classification, number and date reading.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

v1::LatencyFigures* FiguresOf(v1::SweepRow& row, LatencyMetric metric) {
  switch (metric) {
    case LatencyMetric::kTtft:
      return row.mutable_ttft();
    case LatencyMetric::kTpot:
      return row.mutable_tpot();
    case LatencyMetric::kItl:
      return row.mutable_itl();
    case LatencyMetric::kE2e:
      return row.mutable_e2e();
  }
  return row.mutable_e2e();
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string LoadNote(const IngestedRun& run) {
  std::string prompts =
      run.num_prompts ? absl::StrCat(*run.num_prompts, " prompts") : "number of prompts not stated";
  switch (run.load) {
    case LoadKind::kClosedLoop:
      return absl::StrCat("closed loop: concurrency ", *run.max_concurrency, ", ", prompts);
    case LoadKind::kOpenLoop: {
      std::string note =
          absl::StrCat("open loop: request_rate ", FormatFigure(*run.request_rate_rps), " req/s");
      if (run.burstiness) {
        absl::StrAppend(&note, ", burstiness ", FormatFigure(*run.burstiness),
                        *run.burstiness == 1.0 ? " (Poisson)" : "");
      }
      if (run.max_concurrency) {
        absl::StrAppend(&note, ", in flight capped at max_concurrency ", *run.max_concurrency);
      }
      return absl::StrCat(note, ", ", prompts);
    }
    case LoadKind::kBurst: {
      std::string note = "burst: request_rate inf without a concurrency cap, ";
      if (run.num_prompts) return absl::StrCat(note, prompts, " sent at once");
      const std::optional<uint32_t> sent = BurstSize(run);
      if (!sent) return absl::StrCat(note, prompts);
      return absl::StrCat(note, prompts, ": ", *sent, " sent at once = completed",
                          run.row.has_failed_requests() ? " + failed" : "", " requests");
    }
    case LoadKind::kUnknown:
      break;
  }
  return "load not stated (neither a concurrency nor a request rate)";
}

absl::string_view LatencyMetricLabel(LatencyMetric metric) {
  switch (metric) {
    case LatencyMetric::kTtft:
      return "TTFT";
    case LatencyMetric::kTpot:
      return "TPOT";
    case LatencyMetric::kItl:
      return "ITL";
    case LatencyMetric::kE2e:
      return "E2E";
  }
  return "E2E";
}

RunBuilder::RunBuilder(std::string source) { run_.source = std::move(source); }

void RunBuilder::SetLatency(LatencyMetric metric, absl::string_view stat, double seconds) {
  const std::string name = absl::AsciiStrToLower(stat);
  const bool field = name == "mean" || name == "avg" || name == "median" || name == "p50" ||
                     name == "p90" || name == "p95" || name == "p99" || name == "min" ||
                     name == "max";
  if (field && !(seconds > 0)) {
    stat_notes_.push_back(absl::StrCat(stat, " ", LatencyMetricLabel(metric), " ",
                                       FormatFigure(seconds),
                                       " s (as reported; a latency figure must be positive)"));
    return;
  }
  v1::LatencyFigures* f = FiguresOf(run_.row, metric);
  auto set = [&](bool has, double current, auto setter) {
    if (!has) {
      (f->*setter)(seconds);
    } else if (current != seconds) {
      stat_notes_.push_back(absl::StrCat(stat, " ", LatencyMetricLabel(metric), " ",
                                         FormatFigure(seconds), " s (differs from the ",
                                         FormatFigure(current), " s kept)"));
    }
  };
  if (name == "mean" || name == "avg") {
    set(f->has_mean_seconds(), f->mean_seconds(), &v1::LatencyFigures::set_mean_seconds);
  } else if (name == "median" || name == "p50") {
    set(f->has_p50_seconds(), f->p50_seconds(), &v1::LatencyFigures::set_p50_seconds);
  } else if (name == "p90") {
    set(f->has_p90_seconds(), f->p90_seconds(), &v1::LatencyFigures::set_p90_seconds);
  } else if (name == "p95") {
    set(f->has_p95_seconds(), f->p95_seconds(), &v1::LatencyFigures::set_p95_seconds);
  } else if (name == "p99") {
    set(f->has_p99_seconds(), f->p99_seconds(), &v1::LatencyFigures::set_p99_seconds);
  } else if (name == "min") {
    set(f->has_min_seconds(), f->min_seconds(), &v1::LatencyFigures::set_min_seconds);
  } else if (name == "max") {
    set(f->has_max_seconds(), f->max_seconds(), &v1::LatencyFigures::set_max_seconds);
  } else {
    stat_notes_.push_back(
        absl::StrCat(stat, " ", LatencyMetricLabel(metric), " ", FormatFigure(seconds), " s"));
  }
}

void RunBuilder::AddNote(std::string note) { notes_.push_back(std::move(note)); }

void RunBuilder::SetTokenTotals(std::optional<uint64_t> input, std::optional<uint64_t> output) {
  total_input_tokens_ = input;
  if (output) run_.row.set_output_tokens_total(*output);
}

std::optional<uint32_t> BurstSize(const IngestedRun& run) {
  if (run.num_prompts) return run.num_prompts;
  if (!run.row.has_requests()) return std::nullopt;
  const uint64_t sent = uint64_t{run.row.requests()} + run.row.failed_requests();
  if (sent > 0xffffffffu) return std::nullopt;
  return static_cast<uint32_t>(sent);
}

void SetRowLoad(IngestedRun& run) {
  v1::SweepRow& row = run.row;
  row.clear_concurrency();
  row.clear_arrival_rate_rps();
  row.clear_burst_requests();
  if (run.load == LoadKind::kClosedLoop && run.max_concurrency) {
    row.set_concurrency(*run.max_concurrency);
  }
  if (run.load == LoadKind::kOpenLoop && run.request_rate_rps) {
    row.set_arrival_rate_rps(*run.request_rate_rps);
  }
  if (run.load == LoadKind::kBurst) {
    if (std::optional<uint32_t> n = BurstSize(run)) row.set_burst_requests(*n);
  }
}

namespace {

// Rates of 0 stay in the note: the catalogue's rate and duration fields are
// positive.
void MoveZeroRatesToNotes(v1::SweepRow& row, std::vector<std::string>& notes) {
  struct Rate {
    bool (v1::SweepRow::*has)() const;
    double (v1::SweepRow::*get)() const;
    void (v1::SweepRow::*clear)();
    absl::string_view label;
  };
  using R = v1::SweepRow;
  static constexpr Rate kRates[] = {
      {&R::has_requests_per_second, &R::requests_per_second, &R::clear_requests_per_second,
       "request throughput 0 req/s"},
      {&R::has_output_tokens_per_second, &R::output_tokens_per_second,
       &R::clear_output_tokens_per_second, "output throughput 0 tok/s"},
      {&R::has_total_tokens_per_second, &R::total_tokens_per_second,
       &R::clear_total_tokens_per_second, "total throughput 0 tok/s"},
      {&R::has_per_user_output_tokens_per_second, &R::per_user_output_tokens_per_second,
       &R::clear_per_user_output_tokens_per_second, "per-user output throughput 0 tok/s"},
      {&R::has_wall_seconds, &R::wall_seconds, &R::clear_wall_seconds, "duration 0 s"},
  };
  for (const Rate& rate : kRates) {
    if (!(row.*rate.has)() || (row.*rate.get)() > 0) continue;
    (row.*rate.clear)();
    notes.push_back(absl::StrCat(rate.label, " (as reported; the field must be positive)"));
  }
}

}  // namespace

IngestedRun RunBuilder::Finish() {
  IngestedRun& r = run_;
  MoveZeroRatesToNotes(r.row, stat_notes_);
  const uint32_t completed = r.row.has_requests() ? r.row.requests() : 0;
  if (!r.mean_input_tokens && total_input_tokens_ && completed > 0) {
    r.mean_input_tokens = static_cast<double>(*total_input_tokens_) / completed;
  }
  if (!r.mean_output_tokens && r.row.has_output_tokens_total() && completed > 0) {
    r.mean_output_tokens = static_cast<double>(r.row.output_tokens_total()) / completed;
  }
  if (r.mean_input_tokens && *r.mean_input_tokens > 0) {
    r.row.set_mean_input_tokens(*r.mean_input_tokens);
  }
  if (r.mean_output_tokens && *r.mean_output_tokens > 0) {
    r.row.set_mean_output_tokens(*r.mean_output_tokens);
  }
  if (r.load == LoadKind::kUnknown) {
    r.load = ClassifyLoad(r.max_concurrency, infinite_rate_, r.request_rate_rps);
  }
  SetRowLoad(r);

  std::vector<std::string> parts = {LoadNote(r)};
  if (r.mean_input_tokens) {
    parts.push_back(
        absl::StrCat("mean input ", FormatFigure(*r.mean_input_tokens), " tokens/request"));
  }
  if (r.mean_output_tokens) {
    parts.push_back(
        absl::StrCat("mean output ", FormatFigure(*r.mean_output_tokens), " tokens/request"));
  }
  if (r.measured_mean_in_flight) {
    parts.push_back(absl::StrCat("measured mean in flight ",
                                 FormatFigure(*r.measured_mean_in_flight),
                                 " (the tool's measurement, not a setting)"));
  }
  parts.insert(parts.end(), stat_notes_.begin(), stat_notes_.end());
  parts.insert(parts.end(), notes_.begin(), notes_.end());
  parts.push_back(absl::StrCat("source ", r.source));
  r.row.set_note(absl::StrJoin(parts, "; "));
  return std::move(run_);
}

namespace {

absl::Status Differs(const IngestedRun& run, absl::string_view stated, absl::string_view flag) {
  return absl::InvalidArgumentError(
      absl::StrCat(run.source, ": the file states ", stated, "; ", flag, " differs"));
}

// The conflicts of ApplyStatedLoad: a setting the file states otherwise.
absl::Status CheckStatedLoad(const StatedLoad& load, const IngestedRun& run) {
  const std::string conc =
      load.max_concurrency ? absl::StrCat("--max-concurrency ", *load.max_concurrency) : "";
  if (load.max_concurrency && run.max_concurrency &&
      *run.max_concurrency != *load.max_concurrency) {
    return Differs(run, absl::StrCat("max_concurrency ", *run.max_concurrency), conc);
  }
  const std::string rate =
      load.infinite_rate ? "--request-rate inf"
      : load.request_rate_rps
          ? absl::StrCat("--request-rate ", FormatFigure(*load.request_rate_rps))
          : "";
  if (load.request_rate_rps && run.request_rate_rps &&
      *run.request_rate_rps != *load.request_rate_rps) {
    return Differs(run, absl::StrCat("request_rate ", FormatFigure(*run.request_rate_rps)), rate);
  }
  if (load.request_rate_rps && run.load == LoadKind::kBurst) {
    return Differs(run, "request_rate inf", rate);
  }
  if (load.infinite_rate && run.request_rate_rps) {
    return Differs(run, absl::StrCat("request_rate ", FormatFigure(*run.request_rate_rps)), rate);
  }
  if (load.num_prompts && run.num_prompts && *run.num_prompts != *load.num_prompts) {
    return Differs(run, absl::StrCat("num_prompts ", *run.num_prompts),
                   absl::StrCat("--num-prompts ", *load.num_prompts));
  }
  return absl::OkStatus();
}

void ApplyToRun(const StatedLoad& load, IngestedRun& run) {
  const std::string old_note = LoadNote(run);
  std::vector<std::string> given;
  bool infinite = run.load == LoadKind::kBurst;
  if (load.max_concurrency && !run.max_concurrency) {
    run.max_concurrency = load.max_concurrency;
    given.push_back(absl::StrCat("--max-concurrency ", *load.max_concurrency));
  }
  if (load.request_rate_rps && !run.request_rate_rps) {
    run.request_rate_rps = load.request_rate_rps;
    given.push_back(absl::StrCat("--request-rate ", FormatFigure(*load.request_rate_rps)));
  }
  if (load.infinite_rate && !infinite) {
    infinite = true;
    given.push_back("--request-rate inf");
  }
  if (load.num_prompts && !run.num_prompts) {
    run.num_prompts = load.num_prompts;
    given.push_back(absl::StrCat("--num-prompts ", *load.num_prompts));
  }
  if (given.empty()) return;
  run.load = ClassifyLoad(run.max_concurrency, infinite, run.request_rate_rps);
  SetRowLoad(run);
  std::string note = run.row.note();
  if (absl::StartsWith(note, old_note)) note.erase(0, old_note.size());
  run.row.set_note(
      absl::StrCat(LoadNote(run), " (stated by the user: ", absl::StrJoin(given, ", "), ")", note));
}

}  // namespace

LoadKind ClassifyLoad(std::optional<uint32_t> max_concurrency, bool infinite_rate,
                      std::optional<double> finite_rate) {
  if (finite_rate) return LoadKind::kOpenLoop;
  if (max_concurrency) return LoadKind::kClosedLoop;
  if (infinite_rate) return LoadKind::kBurst;
  return LoadKind::kUnknown;
}

std::string FormatFigure(double value) { return absl::StrFormat("%.7g", value); }

std::optional<std::string> NormalizeDate(absl::string_view text) {
  std::string y, m, d;
  if (text.size() >= 8 && AllDigits(text.substr(0, 8)) &&
      (text.size() == 8 || !absl::ascii_isdigit(static_cast<unsigned char>(text[8])))) {
    y = std::string(text.substr(0, 4));
    m = std::string(text.substr(4, 2));
    d = std::string(text.substr(6, 2));
  } else if (text.size() >= 10 && AllDigits(text.substr(0, 4)) && text[4] == '-' &&
             AllDigits(text.substr(5, 2)) && text[7] == '-' && AllDigits(text.substr(8, 2))) {
    y = std::string(text.substr(0, 4));
    m = std::string(text.substr(5, 2));
    d = std::string(text.substr(8, 2));
  } else {
    return std::nullopt;
  }
  int month = 0, day = 0;
  if (!absl::SimpleAtoi(m, &month) || !absl::SimpleAtoi(d, &day) || month < 1 || month > 12 ||
      day < 1 || day > 31) {
    return std::nullopt;
  }
  return absl::StrCat(y, "-", m, "-", d);
}

std::optional<double> ParseDecimal(absl::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = 0;
  while (i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) {
      ++i, ++digits;
    }
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (i >= text.size() || !AllDigits(text.substr(i))) return std::nullopt;
    i = text.size();
  }
  if (i != text.size()) return std::nullopt;
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<uint64_t> ParseGroupedInteger(absl::string_view text) {
  if (text.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(text[0]))) {
    return std::nullopt;
  }
  std::string digits;
  for (char c : text) {
    if (c == ',') continue;
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    digits.push_back(c);
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value)) return std::nullopt;
  return value;
}

}  // namespace capplan::service::ingest_internal

namespace capplan::service {

absl::Status ApplyStatedLoad(const StatedLoad& load, absl::Span<IngestedFile> files) {
  if (load.empty()) return absl::OkStatus();
  for (IngestedFile& f : files) {
    for (IngestedRun& run : f.runs)
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::CheckStatedLoad(load, run));
  }
  for (IngestedFile& f : files) {
    for (IngestedRun& run : f.runs) ingest_internal::ApplyToRun(load, run);
  }
  return absl::OkStatus();
}

}  // namespace capplan::service
