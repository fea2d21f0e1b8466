#!/usr/bin/env bash
#===- utils/fuzz/onnx.sh - a bounded fuzz run of the ONNX importer -------===#
#
#   utils/fuzz/onnx.sh FUZZER WORKDIR [SECONDS]
#
# Seeds the corpus with the models of ONNX's backend test data and fuzzes
# for OBER_FUZZ_RUNS inputs (default 40000) with a fixed seed
# (OBER_FUZZ_SEED, default 1), at most SECONDS (default 60): the same run
# everywhere, so a test failure is a reproducible bug, not bad luck. Crashing
# inputs land in WORKDIR/artifacts; the exit status is non-zero when the
# fuzzer finds one. Longer exploratory runs: OBER_FUZZ_RUNS=-1 and a seed of
# 0 (random).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
fuzzer="$1" work="$2" seconds="${3:-60}"
runs="${OBER_FUZZ_RUNS:-40000}" seed="${OBER_FUZZ_SEED:-1}"
data=/usr/share/libonnx-testdata/data
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
if [[ -d "$data" && -z "$(ls -A "$work/seeds")" ]]; then
  for model in "$data"/{pytorch-converted,pytorch-operator,simple,node}/*/model.onnx; do
    cp "$model" "$work/seeds/$(basename "$(dirname "$model")").onnx"
  done
fi
exec "$fuzzer" -runs="$runs" -seed="$seed" -max_total_time="$seconds" \
  -rss_limit_mb=4096 -timeout=20 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$work/seeds"
