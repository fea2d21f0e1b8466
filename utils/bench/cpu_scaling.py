#!/usr/bin/python3
"""Distributed training executables on this machine: measured against
predicted.

A GPT-style decoder from ober's generator (4 layers, hidden 256, 4 heads,
sequence 128, vocabulary 512, global batch 8, AdamW) is compiled by
`ober-compile` once per plan and launched with `mpirun -np <devices>`,
one thread per rank (`--threads 1`). For each plan, in the same run:

  * the measured step time: rank 0's mean of the steps after the first
    (`--timing`; start-up and the first step excluded), next to the step
    time the planner predicts for `cluster=cpu` (one core per device) and
    their ratio;
  * the bytes per step of each kind of collective, as the ranks of one
    replica count them (`traffic:` lines), next to the planner's report
    (its collectives' bytes times their count per step);
  * the speed-up over the same model on one rank with one thread at the
    same global batch (dp2 against 1 rank is the data-parallel scaling).

The machine has few cores: a plan with more ranks than cores runs
oversubscribed, and its measured time says so.

  utils/bench/cpu_scaling.py [--bin build/bin] [--steps 6]
      [--plans serial,dp2,tp2,pp2] [--gpt "layers=4 hidden=256 ..."]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_options import plan_option, predicted_bytes  # noqa: E402

# (name, dp, tp, pp, zero, micro-batches, schedule)
PLANS = [
    ("serial", 1, 1, 1, 0, 1, "1f1b"),
    ("dp2", 2, 1, 1, 0, 1, "1f1b"),
    ("tp2", 1, 2, 1, 0, 1, "1f1b"),
    ("pp2", 1, 1, 2, 0, 2, "1f1b"),
    ("dp2-zero1", 2, 1, 1, 1, 1, "1f1b"),
    ("dp2xtp2", 2, 2, 1, 0, 1, "1f1b"),
]
GPT = "layers=4 hidden=256 heads=4 seq=128 vocab=512"
BATCH = 8
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def run(cmd, env=None):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True, env=env)
    if proc.returncode:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr[-3000:]}")
    return proc


def measured_bytes(stderr):
    out = {}
    for line in stderr.splitlines():
        if not line.startswith("traffic: "):
            continue
        for kind, b in re.findall(r", ([a-z/-]+) (\d+)", line):
            out[kind] = out.get(kind, 0) + int(b)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/bin")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--plans", default=",".join(p[0] for p in PLANS))
    parser.add_argument("--gpt", default=GPT)
    args = parser.parse_args()
    bindir = os.path.abspath(args.bin)
    chosen = [p for p in PLANS if p[0] in args.plans.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        steps = {}
        rng = np.random.default_rng(0)
        vocab = int(re.search(r"vocab=(\d+)", args.gpt).group(1))
        seq = int(re.search(r"seq=(\d+)", args.gpt).group(1))
        inputs = []
        for name in ("tokens", "targets"):
            path = os.path.join(tmp, name + ".npy")
            np.save(path,
                    rng.integers(0, vocab, (BATCH, seq)).astype(np.int64))
            inputs += ["--input", path]
        for name, dp, tp, pp, zero, micro, schedule in chosen:
            if micro not in steps:
                per = BATCH // micro
                src = os.path.join(tmp, f"gpt{micro}.mlir")
                with open(src, "w") as f:
                    f.write(run([os.path.join(bindir, "ober-translate"),
                                 f"--emit-gpt={args.gpt} batch={per}"]).stdout)
                step = os.path.join(tmp, f"step{micro}.mlir")
                run([os.path.join(bindir, "ober-opt"), src,
                     "--ober-build-train-step=optimizer=adamw "
                     f"micro-batches={micro}", "-o", step])
                steps[micro] = step
            devices = dp * tp * pp
            report = os.path.join(tmp, name + ".json")
            exe = os.path.join(tmp, name)
            run([os.path.join(bindir, "ober-compile"), steps[micro],
                 "--plan=" + plan_option(BATCH, dp, tp, pp, zero, micro,
                                         schedule),
                 f"--plan-report={report}", "-o", exe])
            with open(report) as f:
                planned = json.load(f)
            if micro > 1:
                # The step takes [micro, batch / micro, ...].
                for k in (1, 3):
                    a = np.load(inputs[k])
                    path = os.path.join(tmp, f"m{micro}-{k}.npy")
                    np.save(path, a.reshape((micro, BATCH // micro)
                                            + a.shape[1:]))
                launch = list(inputs)
                launch[1] = os.path.join(tmp, f"m{micro}-1.npy")
                launch[3] = os.path.join(tmp, f"m{micro}-3.npy")
            else:
                launch = inputs
            cmd = [exe, "--steps", args.steps, "--threads", 1, "--timing",
                   "--lr", 1e-3] + launch
            if devices > 1:
                cmd = ["mpirun", "-np", devices, "--bind-to", "none"] + cmd
            proc = run(cmd, env=MPI_ENV)
            later = re.search(r"later steps ([0-9.e-]+) s", proc.stderr)
            measured = float(later.group(1))
            rows.append((name, devices, measured, planned["step_time_s"],
                         measured_bytes(proc.stderr),
                         predicted_bytes(planned["collectives"])))
            print(f"{name}: {measured:.4f} s", file=sys.stderr, flush=True)

    base = next((r[2] for r in rows if r[0] == "serial"), None)
    print(f"GPT {args.gpt}, global batch {BATCH}, AdamW, one thread per "
          f"rank, {os.cpu_count()} cores; mean of steps 2..{args.steps}")
    print(f"{'plan':<11}{'ranks':>6}{'measured s':>12}{'predicted s':>13}"
          f"{'meas/pred':>11}{'speed-up':>10}  collective bytes/step "
          "measured / predicted")
    for name, devices, measured, predicted, got, want in rows:
        kinds = sorted(set(got) | set(want))
        traffic = ", ".join(f"{k} {got.get(k, 0)} / {want.get(k, 0)}"
                            for k in kinds) or "none"
        speed = f"{base / measured:10.2f}" if base else f"{'':>10}"
        print(f"{name:<11}{devices:>6}{measured:>12.4f}{predicted:>13.4f}"
              f"{measured / predicted:>11.2f}{speed}  {traffic}")


if __name__ == "__main__":
    main()
