#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/ (checked in; run again after
changing a seed here). RPC seeds are request messages in the binary wire
format (protoc --encode from the text below), with the selector byte the
target reads first where a target covers several RPCs; the parser seeds are
small real inputs from tests/data/ and data/.

Usage: tests/fuzz/make_seeds.py   (from anywhere; needs protoc)
"""
import glob
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

DEPLOYMENT = ('deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb" '
              'engine { max_model_len: 8192 } } ')
BASELINE_000 = "seed-000-122b-moe-int4-4gpu-pcie-sglang"
BASELINE_002 = "seed-002-qwen3-next-nvfp4-4x-rtx5090"

# target -> [(name, selector byte or None, message, text)]
RPC_SEEDS = {
    "rpc_catalog": [
        ("list_hardware", 0, "ListHardwareRequest", 'vendor: "nvidia"'),
        ("get_hardware", 1, "GetHardwareRequest", 'id: "nvidia-h100-sxm-80gb"'),
        ("list_models", 2, "ListModelsRequest", 'family: "qwen3"'),
        ("get_model", 3, "GetModelRequest", 'id: "meta-llama/Llama-3.1-8B-Instruct"'),
        ("list_baselines", 4, "ListBaselinesRequest",
         'hardware_id: "nvidia-h100-sxm-80gb" engine: ENGINE_KIND_VLLM'),
        ("get_baseline", 5, "GetBaselineRequest", f'id: "{BASELINE_000}"'),
    ],
    "rpc_memory": [
        ("catalogue_model", None, "PlanMemoryRequest", DEPLOYMENT + "mean_sequence_tokens: 1000"),
        ("baseline", None, "PlanMemoryRequest",
         f'deployment {{ baseline_id: "{BASELINE_002}" gpu_count: 8 }}'),
        ("tp_fp8", None, "PlanMemoryRequest",
         'deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" parallelism { tp: 2 } '
         'engine { kind: ENGINE_KIND_VLLM kv_cache_dtype: KV_CACHE_DTYPE_FP8 max_model_len: 32000 '
         'gpu_memory_utilization: 0.92 } }'),
    ],
    "rpc_load": [
        ("closed_loop", None, "PredictLoadRequest",
         DEPLOYMENT + 'workload { input_tokens: 500 output_tokens: 200 } '
         'closed_loop { concurrencies: [1, 2, 4, 8] } slo { ttft_p95_seconds: 1 }'),
        ("open_loop", None, "PredictLoadRequest",
         DEPLOYMENT + 'workload { input_tokens: 1000 output_tokens: 200 } '
         'open_loop { arrival_rates_rps: [0.5, 1, 2] }'),
        ("baseline", None, "PredictLoadRequest",
         f'deployment {{ baseline_id: "{BASELINE_000}" }} closed_loop {{ concurrencies: [1, 16] }}'),
    ],
    "rpc_plan": [
        ("rps", None, "PlanRequest",
         DEPLOYMENT + 'workload { input_tokens: 500 output_tokens: 200 } '
         'slo { ttft_p95_seconds: 1 } target_requests_per_second: 10'),
        ("users_price", None, "PlanRequest",
         f'deployment {{ baseline_id: "{BASELINE_002}" }} slo {{ ttft_p95_seconds: 1 }} '
         'target_concurrent_users: 40 price_per_gpu_hour: 1'),
        ("kv_tier", None, "PlanRequest",
         DEPLOYMENT + 'workload { input_tokens: 4000 output_tokens: 200 } '
         'kv_tier_id: "host-dram-pcie5-x16" kv_restore_context_tokens: [2048, 8192]'),
    ],
    "rpc_validate": [
        ("load", None, "ValidateRequest",
         DEPLOYMENT + 'workload { input_tokens: 500 output_tokens: 200 } '
         'slo { ttft_p95_seconds: 1 } expected_load { concurrent_users: 16 }'),
    ],
    "rpc_lint_accuracy": [
        ("lint_all", 0, "LintRequest", ""),
        ("lint_one", 0, "LintRequest", f'baseline_id: "{BASELINE_000}"'),
        ("accuracy_rows", 1, "AccuracyRequest", f'baseline_id: "{BASELINE_000}"'),
        ("accuracy_alternate", 1, "AccuracyRequest",
         f'mode: ACCURACY_MODE_ALTERNATE_ROWS baseline_id: "{BASELINE_002}"'),
    ],
}

LAUNCH_LINES = [
    "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 32768 "
    "--gpu-memory-utilization 0.9",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len=131072 -tp 2 -dp 4 "
    "--enable-expert-parallel --kv-cache-dtype fp8 --max-num-seqs 64",
    "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
    "--tp 2 --mem-fraction-static 0.85 --context-length 32768 2>&1 | tee log",
    "trtllm-serve meta-llama/Llama-3.1-8B-Instruct --tp_size 2 --max_batch_size 64 "
    "--kv_cache_free_gpu_memory_fraction 0.9",
    "vllm serve 'my model' --speculative-config '{\"method\": \"eagle\", "
    "\"num_speculative_tokens\": 3}' \\\n  --quantization fp8",
]


def encode(message, text):
    proto_dir = os.path.join(ROOT, "proto")
    done = subprocess.run(
        ["protoc", "-I", proto_dir, "--encode=capplan.v1." + message, "capplan/v1/planner.proto"],
        input=text.encode(), capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"{message} {{{text[:200]}}}: {done.stderr.decode()}")
    return done.stdout


def fresh(target):
    folder = os.path.join(CORPUS, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def copy_files(target, pattern, prefix=b""):
    folder = fresh(target)
    for path in sorted(p for p in glob.glob(os.path.join(ROOT, pattern)) if os.path.isfile(p)):
        with open(path, "rb") as f:
            write(folder, os.path.basename(path), prefix + f.read())


def main():
    for target, seeds in RPC_SEEDS.items():
        folder = fresh(target)
        for name, selector, message, text in seeds:
            data = encode(message, text)
            write(folder, name, (bytes([selector]) if selector is not None else b"") + data)
    folder = fresh("rpc_put_baseline")
    with open(os.path.join(ROOT, "data", "baselines", BASELINE_000 + ".txtpb")) as f:
        body = "".join(line for line in f if not line.startswith("#"))
    body = body.replace(f'id: "{BASELINE_000}"', 'id: "fuzz-put-baseline"', 1)
    write(folder, "new_baseline", encode("PutBaselineRequest", "baseline {\n" + body + "\n}"))

    # Catalogue text: selector 0..5 = hardware, model, baseline, engine, prior,
    # KV tier; the high bit hands the file over with its own header.
    folder = fresh("catalog_text")
    kinds = [("hardware", "nvidia-l4-24gb"), ("models", "qwen3-8b"),
             ("baselines", BASELINE_002), ("engines", "vllm-v1-0.11"),
             ("priors", None), ("tiers", "nvme-of-100gbe-rocev2")]
    for selector, (kind, stem) in enumerate(kinds):
        files = sorted(glob.glob(os.path.join(ROOT, "data", kind, "*.txtpb")))
        path = os.path.join(ROOT, "data", kind, stem + ".txtpb") if stem else files[0]
        with open(path, "rb") as f:
            text = f.read()
        write(folder, kind + "_raw", bytes([0x80 | selector]) + text)
        body = b"".join(l + b"\n" for l in text.split(b"\n") if not l.startswith(b"#"))
        write(folder, kind + "_body", bytes([selector]) + body)

    copy_files("hf_config", "tests/data/configs/*.json")
    copy_files("json_reader", "tests/data/configs/*.json")
    folder = fresh("launch_line")
    for i, line in enumerate(LAUNCH_LINES):
        write(folder, f"line_{i}", line.encode())

    formats = {"vllm_json": "vllm-json", "vllm_console": "vllm-console",
               "sglang_jsonl": "sglang-jsonl", "sglang_console": "sglang-console",
               "guidellm_json": "guidellm", "aiperf_json": "aiperf", "engine_log": "engine-log"}
    for name, folder_name in formats.items():
        copy_files("ingest_" + name, f"tests/data/ingest/{folder_name}/*")
    # The detector: the smallest file of each format.
    folder = fresh("ingest_auto")
    for folder_name in formats.values():
        paths = glob.glob(os.path.join(ROOT, "tests/data/ingest", folder_name, "*"))
        path = min(paths, key=os.path.getsize)
        shutil.copy(path, os.path.join(folder, folder_name + "_" + os.path.basename(path)))


if __name__ == "__main__":
    main()
