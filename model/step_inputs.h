#ifndef CAPPLAN_MODEL_STEP_INPUTS_H_
#define CAPPLAN_MODEL_STEP_INPUTS_H_

#include "model/architecture.h"
#include "model/memory_model.h"
#include "model/step_time.h"

namespace capplan::model {

// The parts of StepTimeInputs that follow from the model and its memory plan
// (per GPU, per step): weight bytes split into the always-read part and the
// routed experts, KV and state bytes, active parameters, attention FLOPs and
// TP all-reduce bytes. A step passes through every pipeline stage in turn, so
// per-GPU byte counts are multiplied by pp. The hardware's bandwidths and
// peak FLOP/s are left for the caller to fill.
StepTimeInputs StepInputsFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                        int tp, int pp);

// One draft pass of speculative decoding with an MTP / draft layer (k = 1,
// acceptance 0: the caller sets both): the draft layer's weights at the
// model's active share (a MoE draft layer reads only its routed experts'
// share) plus the LM head, and the matching active parameters per token on
// one of tp GPUs.
SpeculativeDecoding DraftPassFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                            int tp);

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
