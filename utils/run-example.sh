#!/usr/bin/env bash
#===- utils/run-example.sh - the main job on the bundled example ---------===#
#
# Sets up and builds Ober-Train, then takes the bundled ONNX model
# (examples/mlp/model.onnxtext, a two-layer MLP with its weights): imports
# it into ober IR and runs it on the reference interpreter on a seeded batch,
# printing the class probabilities. Later stages of the pipeline extend this
# command.
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
np.save('$work/x.npy', np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))"

echo "== ober-translate --import-onnx examples/mlp (ONNX -> ober IR)"
"$build/bin/ober-translate" --import-onnx "$work/model.onnx"
echo "== ober-run: class probabilities for a batch of 4"
"$build/bin/ober-run" "$work/model.onnx" --input "$work/x.npy" \
  --output-dir "$work/out" --print --run-stats
