#!/usr/bin/env bash
#===- utils/run-example.sh - the main job on the bundled example ---------===#
#
# Sets up and builds Ober-Train, then takes the bundled ONNX model
# (examples/mlp/model.onnxtext, a two-layer MLP with its weights): imports
# it into ober IR and runs it on the reference interpreter on a seeded batch,
# printing the class scores (logits); then builds its training step
# (cross-entropy, AdamW) and trains it for 8 steps on the reference
# interpreter, printing the losses; then plans it for 4 devices, partitions
# it into the program each device runs, and trains that on 4 simulated
# devices, printing the plan, the losses next to the serial ones, and the
# bytes of each collective; then compiles the model into a training
# executable (ober-compile: the CPU pipeline, oneDNN kernels, linked with the
# runtime) and trains it, next to the interpreter's losses. Later stages of
# the pipeline extend this command.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OBER_BUILD_DIR:-$root/build}"
"$root/utils/setup.sh" >&2

work="$build/examples/mlp"
mkdir -p "$work"
/usr/bin/python3 "$root/utils/onnx/onnxtext.py" \
  "$root/examples/mlp/model.onnxtext" "$work/model.onnx"
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(0)
np.save('$work/x.npy', r.standard_normal((4, 8)).astype(np.float32))
np.save('$work/y.npy', r.integers(0, 4, 4).astype(np.int64))"

echo "== ober-translate --import-onnx examples/mlp (ONNX -> ober IR)"
"$build/bin/ober-translate" --import-onnx "$work/model.onnx"
echo "== ober-run: class scores (logits) for a batch of 4"
"$build/bin/ober-run" "$work/model.onnx" --input "$work/x.npy" \
  --output-dir "$work/out" --print --run-stats
echo "== ober-opt --ober-build-train-step (cross-entropy, AdamW)"
"$build/bin/ober-opt" "$work/model.onnx" --onnx-dim=N=4 \
  --ober-build-train-step="loss=cross-entropy optimizer=adamw" -o "$work/step.mlir"
grep -o 'func.func @train_step([^)]*)' "$work/step.mlir" | cut -c1-200
echo "== ober-run --train-steps 8: AdamW on one batch (lr 0.05)"
"$build/bin/ober-run" "$work/step.mlir" --train-steps 8 --lr 0.05 \
  --input "$work/x.npy" --input "$work/y.npy" --save-params "$work/trained"
echo "== ober-opt --ober-plan --ober-partition: the step on 4 simulated devices"
# The planner chooses freely for a global batch of 4 with 2 samples per
# micro-batch on each replica; the partitioner builds the step (one
# micro-batch of 4) again for whatever micro-batch count it picks.
"$build/bin/ober-opt" "$work/step.mlir" \
  --ober-plan="cluster=cpu gpus=4 global-batch=4 micro-batch=2" \
  --ober-plan-explain --ober-partition -o "$work/partitioned.mlir"
echo "== ober-run --train-steps 8 on the 4 devices, next to the serial losses"
"$build/bin/ober-run" "$work/partitioned.mlir" --train-steps 8 --lr 0.05 \
  --input "$work/x.npy" --input "$work/y.npy" \
  --save-params "$work/trained-4" --run-stats > "$work/losses-4.txt" \
  2> "$work/stats-4.txt"
"$build/bin/ober-run" "$work/step.mlir" --train-steps 8 --lr 0.05 \
  --input "$work/x.npy" --input "$work/y.npy" > "$work/losses-1.txt"
paste "$work/losses-1.txt" "$work/losses-4.txt" |
  awk '{ printf "step %s  serial %s  4 devices %s\n", $2, $4, $8 }'
grep -E '^(devices|collective)' "$work/stats-4.txt"
echo "== ober-compile: the model to a training executable (train + train.safetensors)"
"$build/bin/ober-compile" "$work/model.onnx" --onnx-dim=N=4 \
  --train-step="loss=cross-entropy optimizer=adamw" -o "$work/train"
"$work/train" --help | sed -n '1,8p'
echo "== ./train --steps 8: the executable, next to the interpreter's losses"
"$work/train" --input "$work/x.npy" --input "$work/y.npy" --steps 8 --lr 0.05 \
  > "$work/losses-exe.txt"
paste "$work/losses-1.txt" "$work/losses-exe.txt" |
  awk '{ printf "step %s  interpreter %s  executable %s\n", $2, $4, $8 }'
