#!/usr/bin/env bash
#===- utils/gpu/check.sh - every GPU check in one go ---------------------===#
#
# On a machine with an NVIDIA GPU:
#   (a) the CUDA runtime's own test (memory, kernels, cuBLASLt, NCCL);
#   (b) parity: each bundled model trained for 5 steps on the GPU against
#       the CPU executable's losses and parameters (f32 within 1e-4, bf16
#       within 2e-2, relative to the largest value); the first model
#       checkpointed after step 2 and resumed ends bit for bit where its
#       uninterrupted run did (parameters and optimizer state live on the
#       GPU and come back for the checkpoint); where the machine has two
#       GPUs, data- and tensor-parallel plans (collectives through NCCL)
#       against the CPU executable's ranks; performance: the 125M GPT's
#       step time with attention in blocks of queries (cuBLASLt) and as
#       the fused loops, and the 1.3B GPT's (24 layers, hidden 2048,
#       sequence 2048) over 10 steps: tokens/s, MFU, the plan's prediction;
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

parity() { # name tolerance flags...: 5 steps on the GPU against the CPU's
  local name="$1" tol="$2"; shift 2
  cd "$bundle" || exit 1
  # Without a launcher the ranks of a plan for several GPUs are threads of
  # one process, a GPU each.
  timeout 180 "./$name" --steps 5 "$@" --lr 0.01 --save-params "$results/$name.gpu-params" \
    < /dev/null > "$results/$name.gpu-losses" 2> "$results/$name.gpu-err"
  local code=$?
  if ((code)); then
    echo "FAIL parity $name: exit $code: $(tail -3 "$results/$name.gpu-err")"; failed=1; return
  fi
  "$py" "$bundle/compare.py" "$name" "$tol" "$bundle/$name.cpu-losses" \
    "$results/$name.gpu-losses" "$bundle/$name.cpu-params" "$results/$name.gpu-params" || failed=1
}
echo "== (b) parity"
while read -r name tol _ flags; do
  # shellcheck disable=SC2086
  parity "$name" "$tol" $flags
done < "$bundle/models.txt"

echo "== (b) checkpoints of device-resident state"
# The first model again: 3 steps with a checkpoint after step 2 (the
# parameters and optimizer state brought back from the GPU), resumed to
# step 5; it must end where the uninterrupted run did, bit for bit.
read -r name _ _ flags < "$bundle/models.txt"
ckpt="$results/$name.ckpt" resumed="$results/$name.resumed-params"
rm -rf "$ckpt" "$resumed"
cd "$bundle" || exit 1
# shellcheck disable=SC2086
if timeout 120 "./$name" --steps 3 $flags --lr 0.01 --checkpoint-dir "$ckpt" \
     --checkpoint-every 2 > /dev/null 2> "$results/$name.ckpt-err" &&
   timeout 120 "./$name" --steps 5 $flags --lr 0.01 --checkpoint-dir "$ckpt" \
     --resume --save-params "$resumed" > "$results/$name.resumed-losses" \
     2>> "$results/$name.ckpt-err"; then
  "$py" - "$name" "$results/$name.gpu-losses" "$results/$name.resumed-losses" \
    "$results/$name.gpu-params" "$resumed" <<'PY' || failed=1
import os, sys
import numpy as np
name, whole_log, resumed_log, whole, resumed = sys.argv[1:]
def losses(path):
    return {line.split()[1]: line.split()[3] for line in open(path)
            if line.startswith("step ")}
a, b = losses(whole_log), losses(resumed_log)
bad = [s for s in b if a.get(s) != b[s]]
bad += [f for f in sorted(os.listdir(whole)) if not np.array_equal(
    np.load(os.path.join(whole, f)), np.load(os.path.join(resumed, f)))]
print(f"{'FAIL' if bad or not b else 'PASS'} resume {name}: steps "
      f"{sorted(b)} resumed, parameters equal to the uninterrupted run's"
      + (f" except {bad}" if bad else ""))
sys.exit(1 if bad or not b else 0)
PY
else
  echo "FAIL resume $name: $(tail -3 "$results/$name.ckpt-err")"; failed=1
fi

echo "== (b) parity on several GPUs (collectives through NCCL)"
gpus="$(nvidia-smi --list-gpus 2>/dev/null | grep -c '^GPU' || true)"
while read -r name tol need flags; do
  if ((gpus < need)); then
    echo "SKIP parity $name: needs $need GPUs, this machine has ${gpus:-0}"; continue
  fi
  # shellcheck disable=SC2086
  parity "$name" "$tol" $flags
done < "$bundle/models-multi.txt"
# The 125M GPT with attention in blocks of queries (through cuBLASLt, the
# default) and as the fused loops, 3 steps each; the 1.3B GPT, 10 steps.
for perf in "$bundle"/perf-gpt*-*; do
  [[ -x "$perf" ]] || continue
  exe="${perf##*/}" model="${exe%-*}"
  steps=3; [[ "$model" == perf-gpt1p3b ]] && steps=10
  echo "== (b) performance: ${model#perf-}, bf16, $steps steps, attention ${exe##*-}"
  cd "$bundle" || exit 1
  timeout 240 "$perf" --steps $steps --input "$model.in0.npy" --input "$model.in1.npy" \
    < /dev/null 2>&1 | tee "$results/$exe.log" | grep -E "step|measured|predicted|error" || {
    echo "FAIL performance run $exe"; failed=1; }
done

echo "== (c) GEMM, bandwidth and launch figures"
if timeout 120 "$bundle/ober-gpu-calibrate" -o "$results/gpu-cluster.json"; then
  echo "wrote $results/gpu-cluster.json"
else
  echo "FAIL ober-gpu-calibrate"; failed=1
fi

echo "== done in $((SECONDS - start)) s: $([[ $failed == 0 ]] && echo all passed || echo some checks failed)"
exit $failed
