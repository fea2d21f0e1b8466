#!/usr/bin/python3
"""Rewrites synthetic-runs.csv: each run's step time as the planner predicts
it on the A100 preset with known figures (a 30 us launch, 0.8 overlap,
0.5 ms pipeline transfers), planned as ober-calibrate --from-runs plans
runs (GPT of the run's sizes, f16, dropout 0.1, Adam, vocabulary 50257
padded to 128 x tp, full recomputation of every layer, 1F1B, uniform
layers per stage). from-runs.test fits these figures back. Run it after a
change to the cost model:

  make-synthetic-runs.py --bin build/bin
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "synthetic-runs.csv")
FIGURES = {"launch_overhead": 30e-6, "launch_overlap": 0.8,
           "transfer_overhead": 0.5e-3}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw).stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    opt = os.path.join(args.bin, "ober-opt")
    with open(CSV) as f:
        lines = f.read().splitlines()
    header, rows = lines[0], list(csv.reader(lines[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        cluster = json.loads(run([opt, "--test-ober-cluster=cluster=a100-80gb",
                                  "-o", os.devnull], input=b"module {}"))
        cluster["device"].update(FIGURES)
        path = os.path.join(tmp, "cluster.json")
        with open(path, "w") as f:
            json.dump(cluster, f)
        out = [header]
        for r in rows:
            gpus, batch, mb, h, heads, layers, seq, tp, dp, pp = map(int, r[:10])
            m = 128 * tp
            vocab = (50257 + m - 1) // m * m
            gpt = run([os.path.join(args.bin, "ober-translate"),
                       f"--emit-gpt=layers={layers} hidden={h} heads={heads} "
                       f"seq={seq} vocab={vocab} batch=1 dtype=f16 dropout=0.1"])
            step = run([opt, "--ober-build-train-step=optimizer=adam"], input=gpt)
            report = os.path.join(tmp, "report.json")
            run([opt, "--ober-plan=" + (
                f"cluster={path} gpus={gpus} global-batch={batch} tp={tp} "
                f"pp={pp} dp={dp} micro-batch={mb} recompute=full "
                "recompute-groups=0 schedule=1f1b sequence-parallel=0 zero=0 "
                "precision=f16 partition=uniform"),
                 "--ober-plan-report=" + report, "-o", os.devnull], input=step)
            with open(report) as f:
                ms = json.load(f)["step_time_s"] * 1e3
            out.append(",".join(r[:10] + [f"{ms:.6f}"]))
    with open(CSV, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
