#!/usr/bin/env python3
"""Copies a fresh memory-calibration fit into data/engines/*.txtpb.

The fitted coefficients of the engine presets (activation, sampler, non-torch,
CUDA-graph, unified-memory, driver-rank and decoder terms) are not typed in:
tests/data/memory_calibration_test.cc refits them on the catalogue's start-up
logs and fails when data/engines/ drifts from the fit. This script runs that
test's fit and writes its values into the preset files, leaving every other
line (the engine facts and their sources) as it is.

Usage: apply_memory_fit.py BUILD_DIR [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys

FIELDS = ("activation_token_scale", "sampler_logit_copies", "native_sampler_logit_copies",
          "non_torch_base_bytes",
          "non_torch_per_extra_rank_bytes", "fast_link_multi_gpu_non_torch_bytes",
          "cuda_graph_bytes_per_capture_layer",
          "unified_memory_non_torch_bytes", "driver_rank_extra_non_torch_bytes",
          "decoder_logit_copies", "rocm_non_torch_bytes")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    source = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    run = subprocess.run([os.path.join(build, "bin", "data_memory_calibration_test"),
                          "--gtest_filter=*FitReproducesThePresets*"],
                         capture_output=True, text=True)
    fits = {}
    for line in run.stdout.splitlines():
        m = re.match(r"FIT (\S+) (\w+): (\S+)$", line)
        if m:
            fits.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    if not fits:
        sys.exit("no FIT lines in the test's output:\n" + run.stdout + run.stderr)
    engines = os.path.join(source, "data", "engines")
    for name in sorted(os.listdir(engines)):
        if not name.endswith(".txtpb"):
            continue
        path = os.path.join(engines, name)
        text = open(path).read()
        m = re.search(r'^id: "([^"]+)"', text, re.M)
        if not m or m.group(1) not in fits:
            continue
        for field in FIELDS:
            value = fits[m.group(1)][field]
            line = "%s: %s" % (field, value)
            text, n = re.subn(r"^%s: \S+$" % field, line, text, flags=re.M)
            # A coefficient the preset does not use (0, not in the file) is not added.
            if n == 0 and float(value) == 0:
                continue
            if n == 0:
                text = re.sub(r"^(fit_note: )", line + "\n" + r"\1", text, count=1, flags=re.M)
        open(path, "w").write(text)
        print("updated", name)


if __name__ == "__main__":
    main()
