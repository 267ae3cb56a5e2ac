#include "service/translate/request_validation.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "model/queueing.h"

namespace capplan::service {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr uint64_t kMaxExactInteger = uint64_t{1} << 53;

absl::Status Invalid(const std::string& field, const std::string& value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, "; ", rule));
}

std::string Num(double v) { return absl::StrFormat("%g", v); }

// ---------------------------------------------------------------- structure

size_t StringCap(const FieldDescriptor& f) {
  if (f.name() == "model_config_json") return kMaxConfigJsonBytes;
  if (f.name() == "launch_line") return kMaxLaunchLineBytes;
  return kMaxStringBytes;
}

// The values' names without the prefix they share ("WEIGHT_FORMAT_").
std::string EnumNames(const EnumDescriptor& e) {
  std::string prefix;
  for (char c : e.name()) {
    if (absl::ascii_isupper(static_cast<unsigned char>(c)) && !prefix.empty()) prefix += '_';
    prefix += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  prefix += '_';
  std::vector<std::string> names;
  for (int i = 0; i < e.value_count(); ++i) {
    names.push_back(std::string(absl::StripPrefix(e.value(i)->name(), prefix)));
  }
  std::string all = absl::StrJoin(names, ", ");
  if (all.size() > kMaxEchoBytes) all = absl::StrCat(all.substr(0, kMaxEchoBytes), "…");
  return all;
}

absl::Status CheckScalar(const Message& m, const Reflection& r, const FieldDescriptor& f, int index,
                         const std::string& path);
absl::Status CheckMessage(const Message& m, const std::string& path, int depth);

absl::Status CheckEnum(const FieldDescriptor& f, int value, const std::string& path) {
  if (f.enum_type()->FindValueByNumber(value) != nullptr) return absl::OkStatus();
  return Invalid(path, absl::StrCat(value),
                 absl::StrCat("not a known ", f.enum_type()->name(), " value (",
                              EnumNames(*f.enum_type()), ")"));
}

absl::Status CheckScalar(const Message& m, const Reflection& r, const FieldDescriptor& f, int index,
                         const std::string& path) {
  const bool rep = index >= 0;
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const double v = f.cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                           ? (rep ? r.GetRepeatedDouble(m, &f, index) : r.GetDouble(m, &f))
                           : (rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f));
      if (!std::isfinite(v)) return Invalid(path, Num(v), "must be a finite number");
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM:
      return CheckEnum(f, rep ? r.GetRepeatedEnumValue(m, &f, index) : r.GetEnumValue(m, &f), path);
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f);
      if (v > kMaxExactInteger) {
        return Invalid(path, absl::StrCat(v), "must be at most 9007199254740992 (2^53)");
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f);
      if (v > static_cast<int64_t>(kMaxExactInteger) ||
          v < -static_cast<int64_t>(kMaxExactInteger)) {
        return Invalid(path, absl::StrCat(v), "must be within ±9007199254740992 (2^53)");
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t v = rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f);
      if (v > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
        return Invalid(path, absl::StrCat(v), "must be at most 2147483647 (2^31 - 1)");
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& v = rep ? r.GetRepeatedStringReference(m, &f, index, &scratch)
                                 : r.GetStringReference(m, &f, &scratch);
      if (v.size() > StringCap(f)) {
        return Invalid(path, EchoString(v),
                       absl::StrCat("must be at most ", StringCap(f), " bytes"));
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return CheckMessage(rep ? r.GetRepeatedMessage(m, &f, index) : r.GetMessage(m, &f), path, 0);
    default:
      return absl::OkStatus();
  }
}

absl::Status CheckMessage(const Message& m, const std::string& path, int depth) {
  // Protobuf's parser stops at 100 levels; the schema nests far less.
  if (depth > 64) return absl::InvalidArgumentError(absl::StrCat(path, ": nested too deeply"));
  const Reflection& r = *m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string fp = absl::StrCat(path, ".", f->name());
    if (!f->is_repeated()) {
      CAPPLAN_RETURN_IF_ERROR(CheckScalar(m, r, *f, -1, fp));
      continue;
    }
    const int n = r.FieldSize(m, f);
    if (n > kMaxRepeatedEntries) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s has %d entries; must be at most %d", fp, n, kMaxRepeatedEntries));
    }
    for (int i = 0; i < n; ++i) {
      CAPPLAN_RETURN_IF_ERROR(CheckScalar(m, r, *f, i, absl::StrCat(fp, "[", i, "]")));
    }
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------------ fields

absl::Status CheckCount(const std::string& field, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi) {
    return Invalid(field, absl::StrCat(v), absl::StrCat("must be in [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

// (lo, hi] or [lo, hi] by `lo_open`; the rule names the bound it breaks.
absl::Status CheckReal(const std::string& field, double v, double lo, bool lo_open, double hi) {
  if (!std::isfinite(v)) return Invalid(field, Num(v), "must be a finite number");
  if (lo_open ? !(v > lo) : !(v >= lo)) {
    return Invalid(field, Num(v), absl::StrCat("must be ", lo_open ? "> " : ">= ", Num(lo)));
  }
  if (v > hi) return Invalid(field, Num(v), absl::StrCat("must be at most ", Num(hi)));
  return absl::OkStatus();
}

absl::Status CheckFraction(const std::string& field, double v) {
  return CheckReal(field, v, 0, true, 1);
}

absl::Status CheckCalibration(const google::protobuf::RepeatedPtrField<v1::Sweep>& sweeps,
                              const std::string& path) {
  int rows = 0;
  for (const v1::Sweep& s : sweeps) rows += s.rows_size();
  if (rows > kMaxCalibrationRows) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has %d rows in all; must be at most %d",
                                                      path, rows, kMaxCalibrationRows));
  }
  return absl::OkStatus();
}

}  // namespace

std::string EchoString(absl::string_view value) {
  if (value.size() <= kMaxEchoBytes - 2) return absl::StrCat("\"", value, "\"");
  // Cut on a UTF-8 character boundary, leaving room for the quote and size.
  size_t cut = kMaxEchoBytes - 48;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("\"", value.substr(0, cut), "…\" (", value.size(), " bytes)");
}

absl::Status ValidateStructure(const Message& message, const std::string& path) {
  return CheckMessage(message, path, 0);
}

absl::Status ValidateId(absl::string_view id, const std::string& path) {
  if (id.size() > kMaxIdBytes) {
    return Invalid(path, EchoString(id), absl::StrCat("must be at most ", kMaxIdBytes, " bytes"));
  }
  for (char c : id) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) {
      return Invalid(path, EchoString(id),
                     "must be printable ASCII without blanks (a catalogue id or a Hugging Face "
                     "repo id)");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateParallelism(const v1::DeploymentParallelism& p, const std::string& path) {
  if (p.has_tp()) CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".tp", p.tp(), 1, kMaxParallelSize));
  if (p.has_pp()) CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".pp", p.pp(), 1, kMaxParallelSize));
  if (p.has_ep()) CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".ep", p.ep(), 1, kMaxParallelSize));
  return absl::OkStatus();
}

absl::Status ValidateEngineSettings(const v1::EngineSettings& e, const std::string& path) {
  if (e.version().size() > 64) {
    return Invalid(path + ".version", EchoString(e.version()), "must be at most 64 bytes");
  }
  if (e.has_gpu_memory_utilization()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckFraction(path + ".gpu_memory_utilization", e.gpu_memory_utilization()));
  }
  if (e.has_mem_fraction_static()) {
    CAPPLAN_RETURN_IF_ERROR(CheckFraction(path + ".mem_fraction_static", e.mem_fraction_static()));
  }
  if (e.has_kv_cache_free_gpu_memory_fraction()) {
    CAPPLAN_RETURN_IF_ERROR(CheckFraction(path + ".kv_cache_free_gpu_memory_fraction",
                                          e.kv_cache_free_gpu_memory_fraction()));
  }
  if (e.has_max_model_len()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckCount(path + ".max_model_len", e.max_model_len(), 1, kMaxContextTokens));
  }
  if (e.has_max_num_batched_tokens()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".max_num_batched_tokens", e.max_num_batched_tokens(),
                                       1, kMaxContextTokens));
  }
  if (e.has_max_num_seqs()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckCount(path + ".max_num_seqs", e.max_num_seqs(), 1, kMaxBatchSequences));
  }
  if (e.has_max_cudagraph_batch_size()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".max_cudagraph_batch_size",
                                       e.max_cudagraph_batch_size(), 0, kMaxBatchSequences));
  }
  if (e.has_block_size()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".block_size", e.block_size(), 1, kMaxBlockSize));
  }
  if (e.has_num_speculative_tokens()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".num_speculative_tokens", e.num_speculative_tokens(),
                                       0, kMaxSpeculativeTokens));
  }
  return absl::OkStatus();
}

absl::Status ValidateDeployment(const v1::Deployment& d, const std::string& path) {
  CAPPLAN_RETURN_IF_ERROR(ValidateId(d.baseline_id(), path + ".baseline_id"));
  CAPPLAN_RETURN_IF_ERROR(ValidateId(d.model_id(), path + ".model_id"));
  CAPPLAN_RETURN_IF_ERROR(ValidateId(d.hardware_id(), path + ".hardware_id"));
  if (d.has_gpu_count()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".gpu_count", d.gpu_count(), 1, kMaxGpuCount));
  }
  if (d.has_weight_group_size()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckCount(path + ".weight_group_size", d.weight_group_size(), 1, kMaxGroupSize));
  }
  CAPPLAN_RETURN_IF_ERROR(ValidateParallelism(d.parallelism(), path + ".parallelism"));
  return ValidateEngineSettings(d.engine(), path + ".engine");
}

absl::Status ValidateWorkloadSpec(const v1::WorkloadSpec& w, const std::string& path) {
  CAPPLAN_RETURN_IF_ERROR(
      CheckReal(path + ".input_tokens", w.input_tokens(), 0, true, kMaxRequestTokens));
  CAPPLAN_RETURN_IF_ERROR(
      CheckReal(path + ".output_tokens", w.output_tokens(), 0, true, kMaxRequestTokens));
  if (w.has_input_tokens_cv()) {
    CAPPLAN_RETURN_IF_ERROR(CheckReal(path + ".input_tokens_cv", w.input_tokens_cv(), 0, false, 4));
  }
  if (w.has_output_tokens_cv()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(path + ".output_tokens_cv", w.output_tokens_cv(), 0, false, 4));
  }
  if (w.has_prefix_cache_hit_rate()) {
    const double h = w.prefix_cache_hit_rate();
    if (!(std::isfinite(h) && h >= 0 && h < 1)) {
      return Invalid(path + ".prefix_cache_hit_rate", Num(h), "must be in [0, 1)");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSlo(const v1::Slo& slo, const std::string& path) {
  if (slo.has_ttft_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(path + ".ttft_p95_seconds", slo.ttft_p95_seconds(), 0, true, kMaxSeconds));
  }
  if (slo.has_tpot_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(path + ".tpot_seconds", slo.tpot_seconds(), 0, true, kMaxSeconds));
  }
  if (slo.has_e2e_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(path + ".e2e_p95_seconds", slo.e2e_p95_seconds(), 0, true, kMaxSeconds));
  }
  return absl::OkStatus();
}

absl::Status ValidateClosedLoopAxis(const v1::ClosedLoopAxis& axis, const std::string& path) {
  if (axis.concurrencies_size() > model::kMaxLoadPoints) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.concurrencies has %d entries; must be at most %d", path,
                        axis.concurrencies_size(), model::kMaxLoadPoints));
  }
  for (int i = 0; i < axis.concurrencies_size(); ++i) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(absl::StrCat(path, ".concurrencies[", i, "]"),
                                       axis.concurrencies(i), 1, model::kMaxClosedLoopConcurrency));
  }
  if (axis.has_think_time_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(path + ".think_time_seconds", axis.think_time_seconds(), 0, false, kMaxSeconds));
  }
  return absl::OkStatus();
}

absl::Status ValidateOpenLoopAxis(const v1::OpenLoopAxis& axis, const std::string& path) {
  if (axis.arrival_rates_rps_size() > model::kMaxLoadPoints) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.arrival_rates_rps has %d entries; must be at most %d", path,
                        axis.arrival_rates_rps_size(), model::kMaxLoadPoints));
  }
  for (int i = 0; i < axis.arrival_rates_rps_size(); ++i) {
    CAPPLAN_RETURN_IF_ERROR(CheckReal(absl::StrCat(path, ".arrival_rates_rps[", i, "]"),
                                      axis.arrival_rates_rps(i), 0, true, kMaxRequestRateRps));
  }
  return absl::OkStatus();
}

absl::Status ValidateExpectedLoad(const v1::ExpectedLoad& load, const std::string& path) {
  if (load.has_concurrent_users()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(path + ".concurrent_users", load.concurrent_users(), 1,
                                       model::kMaxClosedLoopConcurrency));
  }
  if (load.has_requests_per_second()) {
    CAPPLAN_RETURN_IF_ERROR(CheckReal(path + ".requests_per_second", load.requests_per_second(), 0,
                                      true, kMaxRequestRateRps));
  }
  return absl::OkStatus();
}

absl::Status ValidatePlanMemoryRequest(const v1::PlanMemoryRequest& r) {
  const std::string p = "PlanMemoryRequest";
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, p));
  CAPPLAN_RETURN_IF_ERROR(ValidateDeployment(r.deployment(), p + ".deployment"));
  if (r.has_mean_sequence_tokens()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckCount(p + ".mean_sequence_tokens", r.mean_sequence_tokens(), 1, kMaxContextTokens));
  }
  return absl::OkStatus();
}

absl::Status ValidatePredictLoadRequest(const v1::PredictLoadRequest& r) {
  const std::string p = "PredictLoadRequest";
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, p));
  CAPPLAN_RETURN_IF_ERROR(ValidateDeployment(r.deployment(), p + ".deployment"));
  if (r.has_workload())
    CAPPLAN_RETURN_IF_ERROR(ValidateWorkloadSpec(r.workload(), p + ".workload"));
  if (r.has_closed_loop()) {
    CAPPLAN_RETURN_IF_ERROR(ValidateClosedLoopAxis(r.closed_loop(), p + ".closed_loop"));
  }
  if (r.has_open_loop()) {
    CAPPLAN_RETURN_IF_ERROR(ValidateOpenLoopAxis(r.open_loop(), p + ".open_loop"));
  }
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(r.slo(), p + ".slo"));
  CAPPLAN_RETURN_IF_ERROR(CheckCalibration(r.calibration(), p + ".calibration"));
  if (r.has_operator_concurrency_gate()) {
    CAPPLAN_RETURN_IF_ERROR(CheckCount(p + ".operator_concurrency_gate",
                                       r.operator_concurrency_gate(), 1, model::kMaxSlots));
  }
  return absl::OkStatus();
}

absl::Status ValidatePlanRequest(const v1::PlanRequest& r) {
  const std::string p = "PlanRequest";
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, p));
  CAPPLAN_RETURN_IF_ERROR(ValidateDeployment(r.deployment(), p + ".deployment"));
  if (r.has_workload())
    CAPPLAN_RETURN_IF_ERROR(ValidateWorkloadSpec(r.workload(), p + ".workload"));
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(r.slo(), p + ".slo"));
  switch (r.target_case()) {
    case v1::PlanRequest::kTargetRequestsPerSecond:
      CAPPLAN_RETURN_IF_ERROR(CheckReal(p + ".target_requests_per_second",
                                        r.target_requests_per_second(), 0, true,
                                        kMaxRequestRateRps));
      break;
    case v1::PlanRequest::kTargetConcurrentUsers:
      CAPPLAN_RETURN_IF_ERROR(CheckCount(p + ".target_concurrent_users",
                                         r.target_concurrent_users(), 1, kMaxTargetUsers));
      break;
    case v1::PlanRequest::kTargetTokensPerMonth:
      CAPPLAN_RETURN_IF_ERROR(CheckReal(p + ".target_tokens_per_month", r.target_tokens_per_month(),
                                        0, true, kMaxTokensPerMonth));
      break;
    default:
      break;
  }
  if (r.has_duty_factor())
    CAPPLAN_RETURN_IF_ERROR(CheckFraction(p + ".duty_factor", r.duty_factor()));
  if (r.has_price_per_gpu_hour()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(p + ".price_per_gpu_hour", r.price_per_gpu_hour(), 0, true, kMaxPricePerGpuHour));
  }
  if (r.has_think_time_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckReal(p + ".think_time_seconds", r.think_time_seconds(), 0, false, kMaxSeconds));
  }
  return CheckCalibration(r.calibration(), p + ".calibration");
}

absl::Status ValidateValidateRequest(const v1::ValidateRequest& r) {
  const std::string p = "ValidateRequest";
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, p));
  CAPPLAN_RETURN_IF_ERROR(ValidateDeployment(r.deployment(), p + ".deployment"));
  if (r.has_workload())
    CAPPLAN_RETURN_IF_ERROR(ValidateWorkloadSpec(r.workload(), p + ".workload"));
  CAPPLAN_RETURN_IF_ERROR(ValidateSlo(r.slo(), p + ".slo"));
  CAPPLAN_RETURN_IF_ERROR(ValidateExpectedLoad(r.expected_load(), p + ".expected_load"));
  if (r.allow_size() > kMaxAllowCodes) {
    return absl::InvalidArgumentError(absl::StrFormat("%s.allow has %d entries; must be at most %d",
                                                      p, r.allow_size(), kMaxAllowCodes));
  }
  for (int i = 0; i < r.allow_size(); ++i) {
    CAPPLAN_RETURN_IF_ERROR(ValidateId(r.allow(i), absl::StrCat(p, ".allow[", i, "]")));
  }
  return absl::OkStatus();
}

absl::Status ValidateAccuracyRequest(const v1::AccuracyRequest& r) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, "AccuracyRequest"));
  return ValidateId(r.baseline_id(), "AccuracyRequest.baseline_id");
}

absl::Status ValidateLintRequest(const v1::LintRequest& r) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, "LintRequest"));
  return ValidateId(r.baseline_id(), "LintRequest.baseline_id");
}

absl::Status ValidatePutBaselineRequest(const v1::PutBaselineRequest& r) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, "PutBaselineRequest"));
  CAPPLAN_RETURN_IF_ERROR(ValidateId(r.baseline().id(), "PutBaselineRequest.baseline.id"));
  return ValidateId(r.model().id(), "PutBaselineRequest.model.id");
}

absl::Status ValidateLookupRequest(const Message& r) {
  const std::string p = r.GetDescriptor()->name();
  CAPPLAN_RETURN_IF_ERROR(ValidateStructure(r, p));
  const Reflection& refl = *r.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  refl.ListFields(r, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_STRING || f->is_repeated()) continue;
    // A document (GetModelRequest.model_config_json) is read by its own parser,
    // bounded by the message size.
    if (absl::EndsWith(f->name(), "_json")) continue;
    const std::string field = absl::StrCat(p, ".", f->name());
    const std::string value = refl.GetString(r, f);
    if (f->name() == "id" || absl::EndsWith(f->name(), "_id")) {
      CAPPLAN_RETURN_IF_ERROR(ValidateId(value, field));
    } else if (value.size() > kMaxIdBytes) {  // a filter: a vendor or family name
      return Invalid(field, EchoString(value),
                     absl::StrCat("must be at most ", kMaxIdBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace capplan::service
