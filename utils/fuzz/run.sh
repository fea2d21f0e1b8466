#!/usr/bin/env bash
#===- utils/fuzz/run.sh - fuzz the project's input readers ---------------===#
#
#   utils/fuzz/run.sh [--minutes N | --seconds N] [--target T] [--seed S]
#                     [--bin DIR] [--work DIR]
#
# Runs each fuzz target (or only T) for the given time (default 1 minute
# each) with a fresh random seed that it prints, so that a failure can be
# replayed with --seed. Every target starts from the cases in the
# repository (test/fuzz/<target>: seeds and the inputs that once crashed,
# run first every time, so they stay fixed) and grows its corpus in
# WORK/<target>/corpus (default build/fuzz). An input that crashes, hangs,
# leaks or trips a sanitizer is saved in WORK/<target>/artifacts; add it to
# test/fuzz/<target> with the fix. Exits non-zero when any target found
# one. The targets (bin/ober-fuzz-<target> of the AddressSanitizer tree
# <build>-asan, which `utils/sanitize.sh build` makes):
#   onnx         ONNX models (the importer; seeds: ONNX's backend test data)
#   torchscript  TorchScript .pt files (the importer; with libtorch)
#   mlir         MLIR text through the pipeline passes and their options
#   npy          .npy arrays          safetensors  weights and shard files
#   program      executables' program manifests
#   checkpoint   checkpoint manifests and shards
#   dataset      Megatron .idx/.bin token data sets and .npy folders
#   options      executables' command lines
#   launch       ober-launch's command line
#   cluster      cluster JSON files and gpus/nodes counts (the planner)
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds=60 target="" seed="" bin="$root/build-asan/bin" work="$root/build/fuzz"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) seconds=$(( $2 * 60 )); shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
all=()
for f in "$bin"/ober-fuzz-*; do
  [[ -x "$f" ]] && all+=("${f##*/ober-fuzz-}")
done
targets=("${all[@]}")
[[ -n "$target" ]] && targets=("$target")
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "run.sh: no fuzz targets in $bin (utils/sanitize.sh build makes them)" >&2
  exit 2
fi
failed=0
for t in "${targets[@]}"; do
  fuzzer="$bin/ober-fuzz-$t"
  if [[ ! -x "$fuzzer" ]]; then
    echo "run.sh: no fuzz target '$t' ($fuzzer; built: ${all[*]:-none};" \
      "utils/sanitize.sh build makes them)" >&2
    exit 2
  fi
  s="${seed:-$(( $(od -An -N4 -tu4 /dev/urandom) % 2147483647 + 1 ))}"
  dir="$work/$t"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  corpora=("$dir/corpus" "$root/test/fuzz/$t")
  if [[ "$t" == onnx ]]; then
    data=/usr/share/libonnx-testdata/data
    mkdir -p "$dir/seeds"
    if [[ -d "$data" && -z "$(ls -A "$dir/seeds")" ]]; then
      for model in "$data"/{pytorch-converted,pytorch-operator,simple,node}/*/model.onnx; do
        cp "$model" "$dir/seeds/$(basename "$(dirname "$model")").onnx"
      done
    fi
    corpora+=("$dir/seeds")
  fi
  echo "fuzz $t: seed $s, ${seconds} s (replay: utils/fuzz/run.sh --target $t --seed $s --seconds $seconds)"
  log="$dir/last.log"
  # The code under test's stderr (its diagnostics, on every input) is closed
  # (-close_fd_mask=2); libFuzzer's and the sanitizers' reports still show.
  # Run bin/ober-fuzz-T FILE to see everything a case prints.
  ASAN_OPTIONS="allow_user_poisoning=0:${ASAN_OPTIONS:-}" \
  "$fuzzer" -seed="$s" -max_total_time="$seconds" -rss_limit_mb=4096 \
    -timeout=20 -close_fd_mask=2 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "${corpora[@]}" > "$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $status -ne 0 ]]; then
    failed=1
    echo "fuzz $t: FAILED after ${runs:-?} inputs (exit $status); the last lines of $log:"
    tail -40 "$log"
  else
    echo "fuzz $t: ${runs:-?} inputs, no crash, no sanitizer report"
  fi
done
exit $failed
