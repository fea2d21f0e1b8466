#!/usr/bin/env bash
#===- utils/run-example.sh - the main job on the bundled example ---------===#
#
# Sets up and builds Ober-Train, then compiles the bundled example model
# (examples/gpt-block/model.mlir): parses and verifies it, canonicalizes it and
# decomposes its fused attention, printing the result. Later stages of the
# pipeline extend this command.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OBER_BUILD_DIR:-$root/build}"
"$root/utils/setup.sh" >&2
example="${1:-$root/examples/gpt-block/model.mlir}"
echo "== ober-opt: parse and verify $example" >&2
"$build/bin/ober-opt" "$example" -o /dev/null
echo "== ober-opt: canonicalize and decompose attention" >&2
"$build/bin/ober-opt" "$example" -canonicalize -ober-decompose-attention -canonicalize
