#!/usr/bin/env python3
"""Runs the README's ingest example block as written and checks what it claims.

The block between <!-- readme-ingest-begin --> and <!-- readme-ingest-end --> is run with
bash in a scratch folder that holds links to the source tree's data/ and tests/ and to the
built CLI, so the commands are the README's, unchanged. Then, against the files the block
ingested (read here independently of the CLI's parsers):
  - each baseline file exists in the copy and the source catalogue did not change;
  - `baselines get` holds every row of the JSON set with TTFT in seconds (ms / 1000);
  - `sweep --baseline` reproduces the JSON set's output throughput and the console block's
    within a few percent (each row within 3%: the curve is the model corrected by the rows'
    residuals, drawn at the sweep's mean lengths, while each row ran its own);
  - the start-up log's KV pool (its "GPU KV cache size: N tokens" line) is the baseline's;
  - lint over the copy finds no error.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def readme_block(readme):
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"<!-- readme-ingest-begin -->\s*```\n(.*?)```\s*<!-- readme-ingest-end -->",
                  text, re.S)
    if not m:
        sys.exit("README.md has no readme-ingest block")
    return m.group(1)


def run_json(cli, *args):
    out = subprocess.run([cli, "--json", *args], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"capplan {' '.join(args)} failed: {out.stderr}")
    return json.loads(out.stdout)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    src = os.path.abspath(a.source_dir)
    block = readme_block(os.path.join(src, "README.md"))
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.join(src, "data"), os.path.join(tmp, "data"))
        os.symlink(os.path.join(src, "tests"), os.path.join(tmp, "tests"))
        os.makedirs(os.path.join(tmp, "build", "bin"))
        os.symlink(os.path.abspath(a.cli), os.path.join(tmp, "build", "bin", "capplan"))
        before = sorted(os.listdir(os.path.join(src, "data", "baselines")))
        # cp -r of a symbolic link copies the link; the block's copy must be a real folder.
        block = block.replace("cp -r data my-data", "cp -rL data my-data")
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp,
                             capture_output=True, text=True, timeout=300)
        print(run.stdout)
        if run.returncode != 0:
            fail(f"the README block exited {run.returncode}: {run.stderr}")
        if sorted(os.listdir(os.path.join(src, "data", "baselines"))) != before:
            fail("the README block changed the source catalogue")
        data = os.path.join(tmp, "my-data")
        for bid in ("my-qwen35-b300x4-cc", "my-dsr1-h200x8-vllm", "my-qwen2-7b-a100-log"):
            if not os.path.isfile(os.path.join(data, "baselines", bid + ".txtpb")):
                fail(f"{bid}.txtpb was not written into the copy")
        cli = a.cli

        # 1. The JSON set: rows in seconds, throughput reproduced.
        files = sorted(glob.glob(os.path.join(
            src, "tests/data/ingest/vllm-json/datacrunch_qwen35_cc_1024_1024/*.json")))
        runs = {}
        for f in files:
            d = json.load(open(f))
            runs[int(d["max_concurrency"])] = d
        got = run_json(cli, "--data-dir", data, "baselines", "get", "my-qwen35-b300x4-cc")
        rows = {int(r["concurrency"]): r for r in got["sweeps"][0]["rows"]}
        if sorted(rows) != sorted(runs):
            fail(f"rows {sorted(rows)} vs files {sorted(runs)}")
        for c, d in runs.items():
            want = d["median_ttft_ms"] / 1000
            have = rows[c]["ttft"]["p50_seconds"]
            if abs(have - want) > 1e-9 * max(1, want):
                fail(f"c={c}: TTFT p50 {have} s, the file states {d['median_ttft_ms']} ms")
        sweep = run_json(cli, "--data-dir", data, "sweep", "--baseline", "my-qwen35-b300x4-cc")
        errs = []
        for p in sweep["points"]:
            c = int(p["concurrency"])
            want = runs[c]["output_throughput"]
            errs.append(abs(p["output_tokens_per_second"] / want - 1))
            print(f"c={c}: predicted {p['output_tokens_per_second']:.1f} tok/s, "
                  f"measured {want:.1f} ({100 * errs[-1]:.1f}%)")
        if len(errs) != len(runs):
            fail(f"sweep predicted {len(errs)} points for {len(runs)} rows")
        if max(errs) > 0.03:
            fail(f"JSON set throughput: worst {max(errs):.3f}, median {statistics.median(errs):.3f}")

        # 2. The console block.
        text = open(os.path.join(src, "tests/data/ingest/vllm-console/gpustack_dsr1_h200_c4.txt")).read()
        want = float(re.search(r"Output token throughput \(tok/s\):\s+([\d.]+)", text).group(1))
        sweep = run_json(cli, "--data-dir", data, "sweep", "--baseline", "my-dsr1-h200x8-vllm")
        have = sweep["points"][0]["output_tokens_per_second"]
        print(f"console block: predicted {have:.1f} tok/s, measured {want}")
        if abs(have / want - 1) > 0.03:
            fail(f"console block throughput {have} vs {want}")

        # 3. The start-up log's KV pool.
        text = open(os.path.join(
            src, "tests/data/ingest/engine-log/dennislee_vllm_v1_qwen2_7b_a100.log")).read()
        pool = int(re.search(r"GPU KV cache size: ([\d,]+) tokens", text).group(1).replace(",", ""))
        got = run_json(cli, "--data-dir", data, "baselines", "get", "my-qwen2-7b-a100-log")
        pools = [int(p["tokens"]) for p in got.get("kv_pools", [])]
        if pools != [pool]:
            fail(f"the log's pool is {pool} tokens; the baseline holds {pools}")

        # 4. Lint over the copy.
        if not re.search(r"\b0 errors\b", run.stdout):
            fail("lint over the copy reports errors")
    print("README ingest block: OK")


if __name__ == "__main__":
    main()
