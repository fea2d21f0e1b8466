#!/usr/bin/env bash
#===- utils/gpu/bundle.sh - what utils/gpu/check.sh runs on a GPU ---------===#
#
# Builds, on a machine with the project built (MLIR, the CUDA toolkit's
# headers and ptxas; no GPU needed), everything the GPU checks run: the
# parity models compiled for the CPU and for CUDA with their inputs (the
# CPU executables compute the reference on the GPU machine, so the bundle
# carries no trained parameters), the performance GPTs, the CUDA runtime's
# GPU test and ober-gpu-calibrate, and the shared libraries the
# executables need beyond the C and C++ runtimes. A GPU machine without
# the toolchain runs the bundle as it is (utils/gpu/check.sh BUNDLE).
#
#   utils/gpu/bundle.sh [BUILD_DIR] OUT
#
# OUT is a folder, or a file ending in .tar.gz to pack the bundle into
# (about 32 MB: what travels to a GPU machine, e.g. as gpu-bundle.tar.gz
# in the checkout, which .gitignore leaves out). Executables are built for
# x86-64-v3 (AVX2, FMA), not this machine's CPU, so that they run on the
# GPU machine's. Weights over 4 MiB (resnet18's) are not carried: both
# executables then draw their parameters from the seed (--weights none).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if (($# == 2)); then build="$(cd "$1" && pwd)"; out="$2"; else build="$root/build"; out="$1"; fi
bin="$build/bin"
py=/usr/bin/python3
cpu=(--target-cpu=x86-64-v3)
pack=""
if [[ "$out" == *.tar.gz ]]; then
  pack="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/lib" "$out/work"
out="$(cd "$out" && pwd)"
work="$out/work"

# The models: name, how to make its step, ober-compile's extra options,
# the inputs' generator (numpy), the tolerance after check.sh's 5 steps. Adam's
# epsilon is 1e-3 (as in test/python/executable_parity_test.py): with the
# default 1e-8 a gradient that is zero but for rounding (an attention key's
# bias) moves its parameter by a full learning rate in a direction the
# rounding picks, on the CPU as on the GPU.
make_mlp() {
  "$py" "$root/utils/onnx/onnxtext.py" "$root/examples/mlp/model.onnxtext" "$work/mlp.onnx"
  echo "$work/mlp.onnx --onnx-dim=N=64 --train-step=eps=1e-3"
}
make_gpt() { # [name [extra train-step options]]
  local name="${1:-gpt}"
  "$bin/ober-translate" --emit-gpt="layers=2 hidden=64 heads=4 seq=16 vocab=64 batch=4" |
    "$bin/ober-opt" --ober-build-train-step="eps=1e-3${2:+ $2}" -o "$work/$name.mlir"
  echo "$work/$name.mlir"
}
make_resnet() { # torchvision's resnet18 (10 classes) on 4 images of 48x48
  PYTHONPATH="$root/utils/bench:$root/python" "$py" - "$work/resnet18.onnx" <<'PY'
import sys, warnings, ober, torch_models
warnings.filterwarnings("ignore")  # the ONNX exporter's notes on batch norm
model, inputs, _, _ = torch_models.build("resnet18", small=True)
ober.export(model.train(), inputs, sys.argv[1])
PY
  echo "$work/resnet18.onnx --train-step=eps=1e-3"
}
make_convnet() { # convolutions (strided, grouped), a max pool, no batch norm
  PYTHONPATH="$root/python" "$py" - "$work/convnet.onnx" <<'PY'
import sys, torch, ober
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(32, 32, 3, padding=1, groups=4), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
ober.export(model, (torch.randn(4, 3, 32, 32),), sys.argv[1])
PY
  echo "$work/convnet.onnx --train-step=eps=1e-3"
}
inputs() { # name: writes $work/<name>.in*.npy, prints the --input flags
  "$py" - "$1" "$work" <<'PY'
import sys, numpy as np
name, work = sys.argv[1], sys.argv[2]
r = np.random.default_rng(0)
arrays = {"mlp": [r.standard_normal((64, 8)).astype(np.float32),
                  r.integers(0, 4, (64,)).astype(np.int64)],
          "gpt": [r.integers(0, 64, (4, 16)).astype(np.int64),
                  r.integers(0, 64, (4, 16)).astype(np.int64)],
          "resnet18": [r.standard_normal((4, 3, 48, 48)).astype(np.float32),
                       r.integers(0, 10, (4,)).astype(np.int64)],
          "convnet": [r.standard_normal((4, 3, 32, 32)).astype(np.float32),
                      r.integers(0, 10, (4,)).astype(np.int64)],
          "perf-gpt125m": [r.integers(0, 50304, (8, 1024)).astype(np.int64),
                           r.integers(0, 50304, (8, 1024)).astype(np.int64)],
          "perf-gpt1p3b": [r.integers(0, 50304, (8, 2048)).astype(np.int64),
                           r.integers(0, 50304, (8, 2048)).astype(np.int64)]}
arrays = arrays[name] if name in arrays else arrays[name.split("-")[0]]
flags = []
for i, a in enumerate(arrays):
    path = f"{work}/{name}.in{i}.npy"
    np.save(path, a)
    flags += ["--input", path]
print(" ".join(flags))
PY
}

: > "$out/models.txt"
: > "$out/models-multi.txt"
# $run: the model's own flags for both runs (after check.sh's --lr 0.01).
model() { # name, step source (with options), tolerance, GPUs, ober-compile's extra options...
  local name="$1" src="$2" tol="$3" gpus="$4"
  shift 4
  # The CPU reference computes attention as by default where the GPU runs
  # the flash kernels (CUDA only).
  local reference=()
  for f in "$@"; do [[ "$f" == --attention=flash ]] || reference+=("$f"); done
  # shellcheck disable=SC2086
  "$bin/ober-compile" $src "${reference[@]}" "${cpu[@]}" -o "$out/$name.cpu" >/dev/null
  # shellcheck disable=SC2086
  "$bin/ober-compile" $src "$@" "${cpu[@]}" --target=cuda -o "$out/$name" >/dev/null
  local flags weights=""; flags="$(inputs "$name")"
  if [[ -f "$out/$name.safetensors" ]] &&
     (($(stat -c %s "$out/$name.safetensors") > 4 * 1024 * 1024)); then
    rm -f "$out/$name.safetensors" "$out/$name.cpu.safetensors"
    weights="--weights none"
  fi
  for f in $flags; do [[ "$f" == --input ]] || cp "$f" "$out/"; done
  local list="$out/models.txt"
  ((gpus > 1)) && list="$out/models-multi.txt"
  echo "$name $tol $gpus ${run:-} $weights $(for f in $flags; do [[ "$f" == --input ]] && printf -- '--input ' || printf '%s ' "$(basename "$f")"; done)" >> "$list"
  echo "bundle: $name"
}

mlp="$(make_mlp)"
gpt="$(make_gpt)"
fused="$(make_gpt gpt-fused fused-attention=true)"
# bf16 compute (mixed precision as the planner applies it on one GPU).
bf16() { # step, name
  "$bin/ober-opt" "$1" --ober-plan="cluster=h200-sxm gpus=1 global-batch=4 precision=bf16" \
    -o "$work/$2.mlir" 2>/dev/null
  echo "$work/$2.mlir"
}
model mlp-f32 "$mlp" 1e-4 1
# Attention decomposed by the training step (its products on cuBLASLt).
model gpt-f32 "$gpt" 1e-4 1
model gpt-bf16 "$(bf16 "$work/gpt.mlir" gpt-bf16)" 2e-2 1
# Attention kept as one op in the step (fused-attention=true), lowered
# as the performance GPTs' is: in blocks of queries (here 4 blocks of 4:
# causal masks shifted by each block's offset, products of every block's
# width on cuBLASLt, dK and dV summed over blocks), and as the fused loops.
model gpt-blocked-f32 "$fused" 1e-4 1 --attention=blocked --attention-block=4
model gpt-blocked-bf16 "$(bf16 "$fused" gpt-blocked-bf16)" 2e-2 1 \
  --attention=blocked --attention-block=4
model gpt-fused-f32 "$fused" 1e-4 1 --attention=fused
# The CUDA library's flash kernels (tensor cores, bf16; FlashAttention.cu).
model gpt-flash-bf16 "$(bf16 "$fused" gpt-flash-bf16)" 2e-2 1 --attention=flash
# A smaller learning rate: 5 steps of 0.01 on 4 images swing the loss
# (1.9, 1.0, 3.0, 0.02), where rounding differences grow.
run="--lr 1e-3" model resnet18-f32 "$(make_resnet)" 1e-4 1
# Convolutions as bf16 GEMMs on the tensor cores (each product rounded
# once, then the bias added or the data gradient's windows summed) against
# the CPU's widened ones. No batch norm: in bf16, 5 steps of a batch-norm
# bias whose gradient is rounding noise differ by more than 2e-2 between
# any two summation orders (resnet18's do, the CPU against the CUDA
# mapping run on it). That mapping agrees within 5e-3 here at this rate.
run="--lr 1e-3" model convnet-bf16 "$(make_convnet)" 2e-2 1 \
  "--plan=cluster=h200-sxm gpus=1 global-batch=4 precision=bf16"
# Several GPUs (run where the machine has them): data parallel with ZeRO-1,
# tensor parallel (collectives through NCCL) and two pipeline stages (a
# communicator and stream per pair of stages; 1F1B with four micro-batches,
# the stash's slots on the host).
for plan in "dp=2 tp=1 pp=1 zero=1" "dp=1 tp=2 pp=1 zero=0" \
  "dp=1 tp=1 pp=2 zero=0 micro-batch=1 schedule=1f1b"; do
  model "gpt-$(echo "$plan" | cut -d' ' -f1-3 | tr -d ' =')-f32" "$gpt" 1e-4 2 \
    "--plan=cluster=h200-sxm gpus=2 global-batch=4 precision=f32 $plan"
done
# (b) performance. Attention stays one op in these steps
# (fused-attention=true), so that --attention decides how it runs; the
# executables print the measured step time and MFU next to the plan's.
# A GPT of 125M parameters (12 layers, hidden 768, sequence 1024, batch
# 8, bf16) with attention in blocks of queries (the default) and as the
# fused loops, and the issue's GPT of 1.3B (24 layers, hidden 2048,
# sequence 2048, batch 8, bf16), both planned for one H200.
perf() { # name, --emit-gpt's options, attention
  "$bin/ober-translate" --emit-gpt="$2" |
    "$bin/ober-opt" --ober-build-train-step=fused-attention=true -o "$work/$1.mlir"
  "$bin/ober-compile" "$work/$1.mlir" --target=cuda --attention="$3" "${cpu[@]}" \
    --plan="cluster=h200-sxm gpus=1 global-batch=8 precision=bf16" \
    --plan-report="$out/$1-$3-plan.json" -o "$out/$1-$3" >/dev/null 2>&1
  echo "bundle: $1-$3"
}
for attention in blocked fused; do
  perf perf-gpt125m "layers=12 hidden=768 heads=12 seq=1024 vocab=50304 batch=8" $attention
done
for attention in blocked flash; do
  perf perf-gpt1p3b "layers=24 hidden=2048 heads=16 seq=2048 vocab=50304 batch=8" $attention
done
for name in perf-gpt125m perf-gpt1p3b; do inputs $name > /dev/null; done
cp "$work"/perf-*.in*.npy "$out/"

cp "$build/unittests/ober-rt-cuda-gpu-test" "$bin/ober-gpu-calibrate" "$root/utils/gpu/compare.py" "$out/"
# Shared libraries beyond libc, libm, libstdc++, libgcc_s (Open MPI's, for
# the executables' MPI transport; not started under one process).
for exe in "$out"/mlp-f32 "$out"/resnet18-f32.cpu "$out/ober-gpu-calibrate"; do
  ldd "$exe" | awk '/=> \//{print $3}' |
    { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|ld-linux[^/]*)\.so' || true; } |
    while read -r lib; do cp -L "$lib" "$out/lib/"; done
done
rm -rf "$work"
if [[ -n "$pack" ]]; then
  tar -C "$out" -czf "$pack" .
  echo "bundle: $(du -sh "$pack" | cut -f1) in $pack"
else
  echo "bundle: $(du -sh "$out" | cut -f1) in $out"
fi
