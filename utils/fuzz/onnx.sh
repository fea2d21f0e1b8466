#!/usr/bin/env bash
#===- utils/fuzz/onnx.sh - a bounded fuzz run of the ONNX importer -------===#
#
#   utils/fuzz/onnx.sh FUZZER WORKDIR [SECONDS]
#
# Seeds the corpus with the models of ONNX's backend test data and fuzzes for
# SECONDS (default 30). Crashing inputs land in WORKDIR/artifacts; the exit
# status is non-zero when the fuzzer finds one.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
fuzzer="$1" work="$2" seconds="${3:-30}"
data=/usr/share/libonnx-testdata/data
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
if [[ -d "$data" && -z "$(ls -A "$work/seeds")" ]]; then
  for model in "$data"/{pytorch-converted,pytorch-operator,simple,node}/*/model.onnx; do
    cp "$model" "$work/seeds/$(basename "$(dirname "$model")").onnx"
  done
fi
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$work/seeds"
