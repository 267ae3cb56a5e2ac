#ifndef CAPPLAN_TESTS_TEST_COMMON_TEST_CATALOG_H_
#define CAPPLAN_TESTS_TEST_COMMON_TEST_CATALOG_H_

// Helpers for tests that need a catalogue directory of their own.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "service/catalog/catalog.h"

namespace capplan::testing {

// A fresh temporary directory, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            ("capplan-test-" + std::to_string(seed()) + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::path file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

 private:
  std::filesystem::path path_;
};

// Ids of the seed baselines the tests lean on (data/baselines/).
inline constexpr char k000[] = "seed-000-122b-moe-int4-4gpu-pcie-sglang";
inline constexpr char k002[] = "seed-002-qwen3-next-nvfp4-4x-rtx5090";

// The bundled catalogue of the source tree.
inline std::string BundledDataDir() { return std::string(CAPPLAN_SOURCE_DIR) + "/data"; }

// The bundled catalogue, loaded once per test binary.
inline const service::Catalog& BundledCatalogue() {
  static const auto* const catalog = [] {
    auto loaded = service::Catalog::LoadFromDirectory(BundledDataDir());
    if (!loaded.ok()) {
      // Every test of the binary needs it: stop with the reason, not a crash later.
      std::fprintf(stderr, "the bundled catalogue does not load: %s\n",
                   std::string(loaded.status().message()).c_str());
      std::abort();
    }
    return new std::shared_ptr<const service::Catalog>(*loaded);
  }();
  return **catalog;
}

// A minimal valid catalogue: one GPU, one model, one baseline.
inline void WriteMiniCatalogue(const TempDir& dir) {
  dir.Write("hardware/test-gpu-24gb.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Hardware
id: "test-gpu-24gb"
vendor: "Test"
name: "Test GPU 24GB"
memory_bytes: 25769803776
usable_memory_bytes: 25393364992
memory_bandwidth_bytes_per_second: 1e12
peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 1.5e14 }
sources { fields: "memory_bytes" fields: "usable_memory_bytes"
          fields: "memory_bandwidth_bytes_per_second" fields: "peak_compute"
          document: "test fixture" }
)");
  dir.Write("models/test-model.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Model
id: "test-model"
hf_repo_id: "Test/Test-Model-1B"
family: "test"
hidden_size: 2048
intermediate_size: 8192
num_attention_heads: 16
num_kv_heads: 4
head_dim: 128
vocab_size: 32000
layer_blocks { repeat: 1 layers { count: 16 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_DENSE } }
native_context_tokens: 8192
native_dtype: NUMBER_FORMAT_BF16
sources { fields: "hidden_size" fields: "intermediate_size" fields: "num_attention_heads"
          fields: "num_kv_heads" fields: "head_dim" fields: "vocab_size"
          fields: "layer_blocks" fields: "native_context_tokens" document: "test fixture" }
)");
  dir.Write("baselines/test-baseline.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "test-baseline"
title: "fixture"
provenance { source_document: "test fixture" }
deployment {
  hardware_id: "test-gpu-24gb"
  gpu_count: 1
  model_id: "test-model"
  engine { kind: ENGINE_KIND_VLLM version: "0.11.0" }
}
kv_pools { name: "default" tokens: 100000 }
sweeps { name: "s" closed_loop: true
  rows { concurrency: 1 output_tokens_per_second: 50 ttft { p50_seconds: 0.1 } }
  rows { concurrency: 4 output_tokens_per_second: 180 ttft { p50_seconds: 0.12 } } }
)");
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_TEST_CATALOG_H_
