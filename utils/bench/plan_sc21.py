#!/usr/bin/python3
"""Planner benchmark against Narayanan et al. SC21 Table 1 (Megatron-LM).

For every row of the table: emit the GPT model, build its AdamW train step,
then
  * "pinned": plan with the row's tensor/pipeline/data sizes, global batch
    and full recomputation pinned (the paper's setting), and compare the
    predicted hardware TFLOP/s per GPU with the published figure;
  * "free": search freely on the row's GPU count and global batch, and
    compare its predicted model throughput with the pinned plan's (the
    baseline measured in the same run).
The runs used Megatron-LM's kernels and its activation checkpointing, so
the cluster is the a100-80gb preset with Megatron's rules
(a100-80gb-megatron.json beside this script: the fused softmax's limits,
and full recomputation running each layer's whole forward pass again).

Prints one line per row and exits non-zero when a check fails:
pinned within --tolerance of the published figure and within --mean on
average, free at least as fast as pinned and fitting in memory, and (with
--max-plan-seconds) the free search of each row within that many seconds.

  plan_sc21.py --bin build/bin [--csv FILE] [--rows 145.6,1008]
               [--tolerance 0.10] [--mean 0.05] [--cluster FILE]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "test", "Planning", "Inputs",
                           "megatron-sc21-table1.csv")


def rows(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines))


def emit_step(binary, row, path):
    """The row's GPT (bf16, Megatron's dropout sites) as an AdamW step."""
    gpt = subprocess.run(
        [os.path.join(binary, "ober-translate"),
         f"--emit-gpt=layers={row['layers']} hidden={row['hidden']} "
         f"heads={row['heads']} seq=2048 vocab=51200 batch=1 dtype=bf16 "
         "dropout=0.1"], capture_output=True, check=True)
    subprocess.run([os.path.join(binary, "ober-opt"), "--ober-build-train-step",
                    "-o", path], input=gpt.stdout, check=True)


def steps(args, tmp):
    """Yields (row, step file) for the rows --rows names (all without it)."""
    wanted = set(args.rows.split(",")) if args.rows else None
    for r in rows(args.csv):
        if wanted and r["params_billion"] not in wanted:
            continue
        step = os.path.join(tmp, "step.mlir")
        emit_step(args.bin, r, step)
        yield r, step


def plan(binary, step, options, report, preexec_fn=None):
    """Runs --ober-plan; returns the report and the wall time of ober-opt."""
    start = time.perf_counter()
    run = subprocess.run(
        [os.path.join(binary, "ober-opt"), step, "--ober-plan=" + options,
         "--ober-plan-report=" + report, "-o", os.devnull],
        capture_output=True, text=True, preexec_fn=preexec_fn)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"ober-opt --ober-plan='{options}' failed:\n{run.stderr}")
    with open(report) as f:
        return json.load(f), wall


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin"))
    p.add_argument("--csv", default=DEFAULT_CSV)
    p.add_argument("--rows", default="", help="params_billion values to run")
    p.add_argument("--tolerance", type=float, default=0.10)
    p.add_argument("--max-plan-seconds", type=float, default=0)
    p.add_argument("--mean", type=float, default=0.05)
    p.add_argument("--cluster",
                   default=os.path.join(HERE, "a100-80gb-megatron.json"))
    args = p.parse_args()
    failures = 0
    errors = []
    print(f"{'params':>8} {'gpus':>5} {'t/p/d':>9} | {'published':>9} "
          f"{'pinned':>7} {'ratio':>6} | {'free plan':<44} {'speedup':>7} "
          f"{'plan s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for r, step in steps(args, tmp):
            gpus, batch = int(r["gpus"]), int(r["global_batch"])
            t, pp = int(r["tensor_parallel"]), int(r["pipeline_parallel"])
            d = gpus // (t * pp)
            base = f"cluster={args.cluster} gpus={gpus} global-batch={batch}"
            pinned, _ = plan(args.bin, step,
                             f"{base} tp={t} pp={pp} dp={d} recompute=full sequence-parallel=0 zero=0",
                             os.path.join(tmp, "pinned.json"))
            free, wall = plan(args.bin, step, base, os.path.join(tmp, "free.json"))
            published = float(r["tflops_per_gpu"])
            ratio = pinned["hardware_tflops_per_gpu"] / published
            speedup = pinned["step_time_s"] / free["step_time_s"]
            desc = (f"t{free['tp']} p{free['pp']} d{free['dp']} "
                    f"mb{free['micro_batch']} {free['schedule']}"
                    f"{'x' + str(free['chunks']) if free['chunks'] > 1 else ''} "
                    f"rc={free['recompute']} sp={int(free['sequence_parallel'])} "
                    f"z{free['zero_stage']}")
            errors.append(abs(ratio - 1))
            ok = abs(ratio - 1) <= args.tolerance
            ok &= speedup >= 1 - 1e-9
            ok &= free["peak_memory_bytes"] <= free["memory_limit_bytes"]
            if args.max_plan_seconds:
                ok &= free["plan_time_s"] <= args.max_plan_seconds
            failures += not ok
            print(f"{r['params_billion']:>8} {gpus:>5} {t:>3}/{pp:>2}/{d:<3} | "
                  f"{published:>9.1f} {pinned['hardware_tflops_per_gpu']:>7.1f} "
                  f"{ratio:>6.3f} | {desc:<44} {speedup:>7.3f} "
                  f"{free['plan_time_s']:>6.3f}{'' if ok else '  FAIL'}",
                  flush=True)
    mean = sum(errors) / max(1, len(errors))
    print(f"mean TFLOP/s error {mean:.3f} (at most {args.mean})")
    failures += mean > args.mean
    print(f"{failures} check(s) failed" if failures else "all checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
