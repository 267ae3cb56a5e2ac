#ifndef CAPPLAN_SERVICE_CLI_CATALOG_PRINT_H_
#define CAPPLAN_SERVICE_CLI_CATALOG_PRINT_H_

// The human-readable views of catalogue entries: `capplan hardware get`,
// `capplan models get` and `capplan baselines get`. Every figure carries
// its unit; a baseline shows every part it holds (memory accounts, KV
// pools, weights, sweeps, sustained runs, speculative variants,
// long-context runs, KV-tier runs, the multi-node method, quality gates,
// capacity claims, findings and consistency notes).

#include <cstdint>
#include <ostream>
#include <string>

#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"

namespace capplan::service {

// "NVLink 900 GB/s", "PCIe 5 no-P2P".
std::string LinkName(const v1::Interconnect& link);

// "mtp, 3 draft tokens", "none", "not stated".
std::string SpeculationText(const v1::SpeculativeDecoding& s);

// "p50 0.527 s, p95 0.676 s"; "0.170 s (statistic not stated)"; "-".
std::string LatencyText(const v1::LatencyFigures& f);

// Parameters in billions ("70.55"), "-" for none.
std::string BillionsText(uint64_t params);
// The model's weight format: "bf16", "fp8_block", "int4_awq".
std::string WeightsText(const v1::Model& m);

void PrintHardware(const v1::Hardware& h, std::ostream& out);
void PrintModelInfo(const v1::ModelInfo& info, std::ostream& out);
void PrintBaseline(const v1::Baseline& b, std::ostream& out);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_CATALOG_PRINT_H_
