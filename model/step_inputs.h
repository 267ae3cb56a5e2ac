#ifndef CAPPLAN_MODEL_STEP_INPUTS_H_
#define CAPPLAN_MODEL_STEP_INPUTS_H_

#include <vector>

#include "model/architecture.h"
#include "model/memory_model.h"
#include "model/step_time.h"
#include "model/weight_format.h"

namespace capplan::model {

// The parts of StepTimeInputs that follow from the model and its memory plan
// (per GPU, per step): weight bytes split into the always-read part and the
// routed experts, KV and state bytes, active parameters, attention FLOPs and
// TP all-reduce bytes. A step passes through every pipeline stage in turn, so
// per-GPU byte counts are multiplied by pp. The hardware's bandwidths and
// peak FLOP/s are left for the caller to fill.
StepTimeInputs StepInputsFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                        int tp, int pp);
// The same with the architecture's parameter counts computed once by the
// caller (ComputeParameterCounts(arch): a search bounds many candidates of
// one model).
StepTimeInputs StepInputsFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                        int tp, int pp, const ParameterCounts& counts);

// One draft pass of speculative decoding with an MTP / draft layer (k = 1,
// acceptance 0: the caller sets both): the draft layer's weights at the
// model's active share (a MoE draft layer reads only its routed experts'
// share) plus the LM head, and the matching active parameters per token on
// one of tp GPUs.
SpeculativeDecoding DraftPassFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                            int tp);

// Number formats a GEMM can run in on tensor cores.
enum class GemmFormat { kFp4, kFp8, kFp16, kBf16 };

// The formats a checkpoint's GEMMs can run in, most preferred first (the
// caller takes the first its card states a peak for): FP8 checkpoints in
// FP8, NVFP4/MXFP4 in FP4, and every checkpoint in the 16-bit activation
// format (int4/int8 weight-only kernels dequantize to it): fp16 first for an
// fp16 checkpoint, else bf16 then fp16.
std::vector<GemmFormat> GemmFormatPreference(WeightFormat weights, NumberType native_dtype);

// Bandwidth a TP all-reduce gets from the intra-node link: PCIe without
// peer-to-peer stages the traffic through host memory, so every byte crosses
// the bus twice.
double AllReduceLinkBandwidth(double link_bytes_per_second, bool pcie_without_peer_to_peer);

// Attention FLOPs one new token spends per token of context, per GPU:
// 2 · heads/tp · (d_qk + d_v) per full or sliding-window layer (QKᵀ and PV),
// with MLA's (qk_nope + qk_rope + v) head dims on MLA layers; linear-attention
// and Mamba layers do no per-context-token work.
double AttentionFlopsPerContextToken(const ModelArchitecture& arch, int tp);

// Bytes one token sends per GPU in TP all-reduces: two per layer (attention
// and MLP outputs) of hidden_size activations in the model's dtype; a ring
// all-reduce moves 2·(tp − 1)/tp of the buffer. 0 when tp = 1.
double AllReduceBytesPerToken(const ModelArchitecture& arch, int tp);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_STEP_INPUTS_H_
