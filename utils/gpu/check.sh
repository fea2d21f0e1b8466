#!/usr/bin/env bash
#===- utils/gpu/check.sh - every GPU check in one go ---------------------===#
#
# On a machine with an NVIDIA GPU, in this order (the most wanted first, as
# a GPU machine may be lent for minutes):
#   (a) the CUDA runtime's own test (memory, kernels, cuBLASLt, NCCL);
#   (b) parity: each bundled model trained for 5 steps on the GPU against
#       its CPU executable, run here first (f32 within 1e-4, bf16 within
#       2e-2, relative to the largest value);
#       performance: the 1.3B GPT (24 layers, hidden 2048, sequence 2048)
#       over 10 steps, then the 125M GPT's step time with attention in
#       blocks of queries (cuBLASLt) and as the fused loops: tokens/s,
#       MFU, the plan's prediction;
#   (c) the GPU's GEMM, bandwidth and launch figures (ober-gpu-calibrate),
#       written as a cluster file the planner reads;
#   then the first model checkpointed after step 2 and resumed must end
#   bit for bit where its uninterrupted run did (parameters and optimizer
#   state live on the GPU and come back for the checkpoint); where the
#   machine has two GPUs, data- and tensor-parallel plans (collectives
#   through NCCL) against the CPU executable's ranks.
# Every step has a time limit, and all of them together stop at
# OBER_CHECK_SECONDS (default 450): what is left is reported as skipped.
# Exits non-zero when a check fails or is skipped for time.
#
#   utils/gpu/check.sh [BUNDLE]
#
# BUNDLE is what utils/gpu/bundle.sh makes, a folder or a .tar.gz; without
# it the bundle is made here first (this needs the project built). Into
# $OUT (or ./gpu-check) go at most 8 files: gpu-cluster.json, the runtime
# test's log, the performance runs' logs (and the 1.3B GPT's GPU time by
# kernel, --profile-kernels) and results.tar.gz with every other log and
# loss.
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
start=$SECONDS
deadline=$((start + ${OBER_CHECK_SECONDS:-450}))
bundle="${1:-}"
if [[ -z "$bundle" ]]; then
  bundle="$(mktemp -d)"
  "$root/utils/gpu/bundle.sh" "$bundle" || exit 1
elif [[ "$bundle" == *.tar.gz ]]; then
  packed="$bundle" bundle="$(mktemp -d)"
  tar -C "$bundle" -xzf "$packed" || { echo "FAIL: cannot unpack $packed"; exit 1; }
fi
bundle="$(cd "$bundle" && pwd)"
out="${OUT:-$PWD/gpu-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
results="$(mktemp -d)"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
py="$(command -v python3)"
failed=0

# `limited SECONDS command...`: runs the command under the smaller of its
# own limit and the time left; refuses (status 124) when none is left.
limited() {
  local want="$1" left=$((deadline - SECONDS))
  shift
  if ((left <= 0)); then
    echo "SKIP (out of time, OBER_CHECK_SECONDS): $*" >&2
    touch "$results/.skipped"
    return 124
  fi
  timeout "$((want < left ? want : left))" "$@"
}
pack_results() { # the logs and losses (parameters stay: resnet18's are 45 MB)
  tar -C "$results" --exclude='*-params' --exclude='*.ckpt' \
    -czf "$out/results.tar.gz" . 2>/dev/null
}

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

echo "== (a) CUDA runtime"
if limited 120 "$bundle/ober-rt-cuda-gpu-test" > "$out/runtime-test.log" 2>&1; then
  echo "PASS runtime: $(tail -1 "$out/runtime-test.log")"
else
  echo "FAIL runtime:"; grep -v '^PASS' "$out/runtime-test.log" | tail -20; failed=1
fi

# `run_model NAME SUFFIX EXE flags...`: 5 steps, losses and parameters
# into $results/NAME.SUFFIX-*.
run_model() {
  local name="$1" side="$2" exe="$3"; shift 3
  # Without a launcher the ranks of a plan for several devices are
  # threads of one process, a device each.
  limited 180 "$exe" --steps 5 --lr 0.01 "$@" --save-params "$results/$name.$side-params" \
    < /dev/null > "$results/$name.$side-losses" 2> "$results/$name.$side-err"
}
parity() { # name tolerance flags...: 5 steps on the GPU against the CPU's
  local name="$1" tol="$2" code; shift 2
  cd "$bundle" || exit 1
  run_model "$name" cpu "./$name.cpu" "$@"; code=$?
  if ((code)); then
    echo "FAIL parity $name: the CPU reference exited $code: $(tail -3 "$results/$name.cpu-err")"
    failed=1; return
  fi
  run_model "$name" gpu "./$name" "$@"; code=$?
  if ((code)); then
    echo "FAIL parity $name: exit $code: $(tail -3 "$results/$name.gpu-err")"; failed=1
    # Launches are queued: a kernel's fault surfaces at a later call. Once
    # more with every launch waited for, to name the kernel.
    CUDA_LAUNCH_BLOCKING=1 run_model "$name" gpu-blocking "./$name" "$@"
    echo "  with CUDA_LAUNCH_BLOCKING=1: $(tail -3 "$results/$name.gpu-blocking-err")"
    return
  fi
  "$py" "$bundle/compare.py" "$name" "$tol" "$results/$name.cpu-losses" \
    "$results/$name.gpu-losses" "$results/$name.cpu-params" "$results/$name.gpu-params" || failed=1
}
echo "== (b) parity"
while read -r name tol _ flags; do
  # shellcheck disable=SC2086
  parity "$name" "$tol" $flags
done < "$bundle/models.txt"
pack_results

# The 1.3B GPT over 10 steps with attention in blocks of queries (through
# cuBLASLt, the default) and on the flash kernels, then the 125M GPT in
# blocks and as the fused loops, 3 steps each.
for perf in "$bundle"/perf-gpt1p3b-* "$bundle"/perf-gpt125m-*; do
  [[ -x "$perf" ]] || continue
  exe="${perf##*/}" model="${exe%-*}"
  steps=3; [[ "$model" == perf-gpt1p3b ]] && steps=10
  echo "== (b) performance: ${model#perf-}, bf16, $steps steps, attention ${exe##*-}"
  cd "$bundle" || exit 1
  limited 200 "$perf" --steps $steps --input "$model.in0.npy" --input "$model.in1.npy" \
    < /dev/null 2>&1 | tee "$out/$exe.log" | grep -E "step|measured|predicted|error|SKIP" || {
    echo "FAIL performance run $exe"; failed=1; }
  # Where the 1.3B GPT's time goes: 3 more steps with every launch and
  # cuBLASLt call timed (the table the next optimization starts from).
  if [[ "$model" == perf-gpt1p3b ]]; then
    echo "== (b) performance: ${model#perf-}, GPU time by kernel"
    limited 150 "$perf" --steps 3 --profile-kernels --input "$model.in0.npy" \
      --input "$model.in1.npy" < /dev/null > "$out/$exe-kernels.log" 2>&1
    grep -A 16 "GPU time by kernel" "$out/$exe-kernels.log" || {
      echo "FAIL kernel profile $exe: $(tail -3 "$out/$exe-kernels.log")"; failed=1; }
  fi
done

echo "== (c) GEMM, bandwidth and launch figures"
if limited 120 "$bundle/ober-gpu-calibrate" -o "$out/gpu-cluster.json"; then
  echo "wrote $out/gpu-cluster.json"
else
  echo "FAIL ober-gpu-calibrate"; failed=1
fi

echo "== (b) checkpoints of device-resident state"
# The first model again: 3 steps with a checkpoint after step 2 (the
# parameters and optimizer state brought back from the GPU), resumed to
# step 5; it must end where the uninterrupted run did, bit for bit.
read -r name _ _ flags < "$bundle/models.txt"
ckpt="$results/$name.ckpt" resumed="$results/$name.resumed-params"
cd "$bundle" || exit 1
# shellcheck disable=SC2086
if limited 120 "./$name" --steps 3 --lr 0.01 $flags --checkpoint-dir "$ckpt" \
     --checkpoint-every 2 > /dev/null 2> "$results/$name.ckpt-err" &&
   limited 120 "./$name" --steps 5 --lr 0.01 $flags --checkpoint-dir "$ckpt" \
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

pack_results
[[ -e "$results/.skipped" ]] && { echo "some checks were skipped for time"; failed=1; }
echo "== done in $((SECONDS - start)) s: $([[ $failed == 0 ]] && echo all passed || echo some checks failed)"
exit $failed
