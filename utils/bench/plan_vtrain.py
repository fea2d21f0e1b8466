#!/usr/bin/python3
"""Planner accuracy against 1440 measured A100 iterations (vTrain).

test/Planning/Inputs/vtrain-ground-truth.csv holds Megatron-DeepSpeed GPT
runs on 2-8 A100s of one node. This
  1. fits the cluster's device figures to every other run
     (`ober-calibrate --from-runs ... --holdout-every 2`: one value per figure
     for all runs, no per-run constants) and keeps the predictions;
  2. checks the runs left out of the fit: mean absolute error of the step
     time, the largest error, and per model the rank correlation of the
     configurations (predicted against measured);
  3. re-plans every --every-th run with `ober-opt --ober-plan` on the fitted
     cluster JSON and checks it predicts what ober-calibrate did (the file
     carries the fit).
Prints each model's figures and exits non-zero when a check fails.

The runs used Megatron's kernels, so the base cluster is the a100-80gb
preset with Megatron's fused-softmax rule (a100-80gb-megatron.json beside
this script: micro-batch x heads per GPU not a multiple of 4 falls back to
PyTorch's unfused softmax, 4 more kernels a pass).

  plan_vtrain.py --bin build/bin [--csv FILE] [--cluster FILE_OR_PRESET]
                 [--mean 0.08] [--max 0.25] [--rank 0.9] [--every 40]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "test", "Planning", "Inputs",
                           "vtrain-ground-truth.csv")


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else 1.0


def padded_vocab(tp):
    m = 128 * tp
    return (50257 + m - 1) // m * m


def replan(binary, cluster, row, tmp, index):
    """The row's step time (ms) from ober-opt --ober-plan on `cluster`."""
    step = os.path.join(tmp, f"step{index}.mlir")
    gpt = subprocess.run(
        [os.path.join(binary, "ober-translate"),
         f"--emit-gpt=layers={row['layers']} hidden={row['hidden']} "
         f"heads={row['heads']} seq={row['sequence']} "
         f"vocab={padded_vocab(int(row['tp']))} batch=1 dtype=f16 "
         "dropout=0.1"], capture_output=True, check=True)
    subprocess.run([os.path.join(binary, "ober-opt"),
                    "--ober-build-train-step=optimizer=adam", "-o", step],
                   input=gpt.stdout, check=True)
    report = os.path.join(tmp, f"report{index}.json")
    options = (f"cluster={cluster} gpus={row['gpus']} "
               f"global-batch={row['global_batch']} tp={row['tp']} "
               f"pp={row['pp']} dp={row['dp']} micro-batch={row['micro_batch']} "
               "recompute=full schedule=1f1b sequence-parallel=0 zero=0 "
               "precision=f16 partition=uniform")
    subprocess.run([os.path.join(binary, "ober-opt"), step,
                    "--ober-plan=" + options, "--ober-plan-report=" + report,
                    "-o", os.devnull], capture_output=True, check=True)
    with open(report) as f:
        return json.load(f)["step_time_s"] * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin"))
    p.add_argument("--csv", default=DEFAULT_CSV)
    p.add_argument("--cluster",
                   default=os.path.join(HERE, "a100-80gb-megatron.json"))
    p.add_argument("--mean", type=float, default=0.08)
    p.add_argument("--max", type=float, default=0.25)
    p.add_argument("--rank", type=float, default=0.9)
    p.add_argument("--every", type=int, default=40,
                   help="re-plan every k-th run through ober-opt (0: none)")
    p.add_argument("--keep", help="keep the fitted cluster JSON here")
    args = p.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        fitted = args.keep or os.path.join(tmp, "fitted.json")
        predictions = os.path.join(tmp, "predictions.csv")
        fit = subprocess.run(
            [os.path.join(args.bin, "ober-calibrate"), "--from-runs", args.csv,
             "--cluster", args.cluster, "--holdout-every", "2", "-o", fitted,
             "--predictions", predictions], capture_output=True, text=True)
        print(fit.stdout, end="")
        if fit.returncode != 0:
            sys.exit(f"ober-calibrate failed:\n{fit.stderr}")
        with open(predictions) as f:
            rows = list(csv.DictReader(f))
        held = [r for r in rows if r["held_out"] == "1"]
        err = [abs(float(r["predicted_ms"]) / float(r["measured_ms"]) - 1)
               for r in held]
        mean, worst = sum(err) / len(err), max(err)
        print(f"held-out check: {len(held)} runs, mean error {mean:.3f} "
              f"(at most {args.mean}), largest {worst:.3f} (at most {args.max})")
        failures += mean > args.mean
        failures += worst > args.max
        for key in sorted({(r["hidden"], r["layers"]) for r in rows}):
            mine = [r for r in rows if (r["hidden"], r["layers"]) == key]
            rho = spearman([float(r["predicted_ms"]) for r in mine],
                           [float(r["measured_ms"]) for r in mine])
            if rho < args.rank:
                print(f"h{key[0]} l{key[1]}: rank correlation {rho:.3f} "
                      f"below {args.rank}  FAIL")
                failures += 1
        if args.every:
            sample = rows[::args.every]
            with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
                again = list(pool.map(
                    lambda ir: replan(args.bin, fitted, ir[1], tmp, ir[0]),
                    enumerate(sample)))
            off = [abs(a / float(r["predicted_ms"]) - 1)
                   for a, r in zip(again, sample)]
            print(f"re-planned {len(sample)} runs through ober-opt on the "
                  f"fitted cluster: largest difference {max(off):.2e}")
            failures += max(off) > 1e-3
    print(f"{failures} check(s) failed" if failures else "all checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
