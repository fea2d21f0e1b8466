#!/usr/bin/env bash
#===- utils/gpu/check.sh - every GPU check in one go ---------------------===#
#
# On a machine with an NVIDIA GPU:
#   (a) the CUDA runtime's own test (memory, kernels, cuBLASLt, NCCL);
#   (b) parity: each bundled model trained for 5 steps on the GPU against
#       the CPU executable's losses and parameters (f32 within 1e-4, bf16
#       within 2e-2, relative to the largest value);
#   (c) the GPU's GEMM, bandwidth and launch figures (ober-gpu-calibrate),
#       written as a cluster file the planner reads: $OUT/gpu-cluster.json
#       (or ./gpu-cluster.json).
# Exits non-zero when a check fails.
#
#   utils/gpu/check.sh [BUNDLE]
#
# BUNDLE is what utils/gpu/bundle.sh makes; without it the bundle is made
# here first (this needs the project built: build/bin/ober-compile).
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="${1:-}"
if [[ -z "$bundle" ]]; then
  bundle="$(mktemp -d)"
  "$root/utils/gpu/bundle.sh" "$bundle" || exit 1
fi
bundle="$(cd "$bundle" && pwd)"
results="${OUT:-$PWD}"
mkdir -p "$results"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
py="$(command -v python3)"
failed=0
start=$SECONDS

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

echo "== (a) CUDA runtime"
if timeout 120 "$bundle/ober-rt-cuda-gpu-test" > "$results/runtime-test.log" 2>&1; then
  echo "PASS runtime: $(tail -1 "$results/runtime-test.log")"
else
  echo "FAIL runtime:"; grep -v '^PASS' "$results/runtime-test.log" | tail -20; failed=1
fi

echo "== (b) parity"
while read -r name tol flags; do
  cd "$bundle" || exit 1
  # shellcheck disable=SC2086
  timeout 120 "./$name" --steps 5 $flags --lr 0.01 --save-params "$results/$name.gpu-params" \
    > "$results/$name.gpu-losses" 2> "$results/$name.gpu-err"
  code=$?
  if ((code)); then
    echo "FAIL parity $name: exit $code: $(tail -3 "$results/$name.gpu-err")"; failed=1; continue
  fi
  "$py" "$bundle/compare.py" "$name" "$tol" "$bundle/$name.cpu-losses" \
    "$results/$name.gpu-losses" "$bundle/$name.cpu-params" "$results/$name.gpu-params" || failed=1
done < "$bundle/models.txt"

if [[ -x "$bundle/perf-gpt125m" ]]; then
  echo "== (b) performance: GPT 125M, bf16, 3 steps"
  cd "$bundle" || exit 1
  timeout 150 ./perf-gpt125m --steps 3 --input perf.in0.npy --input perf.in1.npy \
    2>&1 | tee "$results/perf.log" | grep -E "step|measured|error" || {
    echo "FAIL performance run"; failed=1; }
fi

echo "== (c) GEMM, bandwidth and launch figures"
if timeout 120 "$bundle/ober-gpu-calibrate" -o "$results/gpu-cluster.json"; then
  echo "wrote $results/gpu-cluster.json"
else
  echo "FAIL ober-gpu-calibrate"; failed=1
fi

echo "== done in $((SECONDS - start)) s: $([[ $failed == 0 ]] && echo all passed || echo some checks failed)"
exit $failed
