#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang and
# -fsanitize=fuzzer,address,undefined (every library of ours sanitized) in
# build-fuzz/, then runs each target for a given time on a working copy of
# its seed corpus, and prints the executions and crashes per target.
#
# Usage: scripts/fuzz.sh [--seconds N] [--runs R] [--parallel P] [--build-only] [TARGET...]
#   --seconds N    run time per target (default 60; with --runs, the cap on it)
#   --runs R       stop each target after R executions (the long run:
#                  --runs 10000000 --seconds 7200)
#   --parallel P   targets run at once (default 1)
#   TARGET         names as in tests/fuzz/corpus/ (rpc_plan, ingest_vllm_json, ...);
#                  default: all of them
# Crash inputs of the latest run land in build-fuzz/artifacts/<target>/ (copy
# the ones you fix into tests/fuzz/regressions/<target>/); the summary in
# build-fuzz/fuzz-summary.txt. Exit status 1 when any target crashed.
# Not part of the default test command (the sanitized build takes a second
# full compile); the normal suite replays the corpora (ctest -R fuzz_replay).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

seconds=60
max_runs=-1
parallel=1
build_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) max_runs="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

# clang (with libFuzzer) is needed here only, not by the default build.
if ! command -v clang++ >/dev/null 2>&1; then
  CAPPLAN_PACKAGES+=(clang-14)
fi
capplan_install_packages
CLANGXX="$(command -v clang++ || command -v clang++-14)"
CLANG="$(command -v clang || command -v clang-14)"

FUZZ_BUILD="$CAPPLAN_ROOT/build-fuzz"
CC="$CLANG" CXX="$CLANGXX" cmake -S "$CAPPLAN_ROOT" -B "$FUZZ_BUILD" \
  -DCAPPLAN_FUZZ=ON -DCAPPLAN_BUILD_TESTS=OFF -DCAPPLAN_BUILD_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" >/dev/null
cmake --build "$FUZZ_BUILD" -j2 --target capplan_fuzz_targets
[ "$build_only" -eq 1 ] && exit 0

if [ "${#targets[@]}" -eq 0 ]; then
  for dir in "$CAPPLAN_ROOT"/tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

run_target() {
  local t="$1"
  local work="$FUZZ_BUILD/corpus/$t" artifacts="$FUZZ_BUILD/artifacts/$t"
  # The working corpus grows from run to run; the artifacts are this run's.
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts" "$FUZZ_BUILD/logs"
  local status=0
  "$FUZZ_BUILD/bin/fuzz_$t" -max_total_time="$seconds" -runs="$max_runs" -print_final_stats=1 \
    -timeout=30 -rss_limit_mb=3072 -artifact_prefix="$artifacts/" \
    "$work" "$CAPPLAN_ROOT/tests/fuzz/corpus/$t" >"$FUZZ_BUILD/logs/$t.log" 2>&1 || status=$?
  local runs crashes slow
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$FUZZ_BUILD/logs/$t.log" |
    tail -1 | awk '{print $2}' || true)
  # crash-, leak-, timeout- and oom- inputs; slow-unit- ones (above 10 s) are counted apart.
  crashes=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  slow=$(find "$artifacts" -type f -name 'slow-unit-*' | wc -l)
  printf '%-24s %12s executions %3d crash inputs %3d slow units  exit %d  %ss\n' \
    "$t" "${runs:-?}" "$crashes" "$slow" "$status" "$seconds"
}

summary="$FUZZ_BUILD/fuzz-summary.txt"
: >"$summary"
running=0
for t in "${targets[@]}"; do
  if [ ! -x "$FUZZ_BUILD/bin/fuzz_$t" ]; then
    echo "capplan: no fuzz target $t (see tests/fuzz/corpus/)" >&2
    exit 2
  fi
  run_target "$t" >>"$summary" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
sort "$summary"
if awk '$4 > 0 {bad = 1} END {exit !bad}' "$summary"; then
  echo "capplan: crashes found; inputs in $FUZZ_BUILD/artifacts/" >&2
  exit 1
fi
