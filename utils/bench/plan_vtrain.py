#!/usr/bin/python3
"""Planner benchmark against 1440 measured A100 iterations (vTrain).

For every row of test/Planning/Inputs/vtrain-ground-truth.csv (Megatron-
DeepSpeed GPT runs on 2-8 A100s of one node): emit the row's GPT (fp16
mixed precision, Megatron's dropout, the vocabulary padded as Megatron pads
it), build its Adam train step, plan it with the row's tensor, pipeline and
data-parallel sizes, micro-batch, full recomputation and 1F1B pinned, and
compare the predicted step time with the measured one.

Prints each model's mean and largest error and the rank correlation of its
configurations (predicted vs measured), then the totals; exits non-zero when
a check fails: mean absolute error above --mean, any row above --max, or a
model's rank correlation below --rank.

  plan_vtrain.py --bin build/bin [--csv FILE] [--cluster a100-80gb]
                 [--mean 0.08] [--max 0.25] [--rank 0.9] [--rows-out FILE]
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
GPT2_VOCAB = 50257


def read_rows(path):
    with open(path, encoding="utf-8-sig") as f:
        out = []
        for r in csv.reader(f):
            if not r or not r[0].strip() or r[0].startswith("#"):
                continue
            v = [int(x) for x in r[:10]]
            out.append({"gpus": v[0], "batch": v[1], "micro": v[2],
                        "hidden": v[3], "heads": v[4], "layers": v[5],
                        "seq": v[6], "tp": v[7], "dp": v[8], "pp": v[9],
                        "ms": float(r[10])})
        return out


def padded_vocab(tp):
    """Megatron pads the vocabulary to a multiple of 128 x tensor-parallel
    size."""
    m = 128 * tp
    return (GPT2_VOCAB + m - 1) // m * m


def model_key(r):
    return (r["hidden"], r["heads"], r["layers"], r["seq"], padded_vocab(r["tp"]))


def emit_step(binary, key, path):
    hidden, heads, layers, seq, vocab = key
    gpt = subprocess.run(
        [os.path.join(binary, "ober-translate"),
         f"--emit-gpt=layers={layers} hidden={hidden} heads={heads} seq={seq} "
         f"vocab={vocab} batch=1 dtype=f16 dropout=0.1"],
        capture_output=True, check=True)
    subprocess.run([os.path.join(binary, "ober-opt"), "--ober-build-train-step=optimizer=adam",
                    "-o", path], input=gpt.stdout, check=True)


def predict(binary, step, r, cluster, report):
    options = (f"cluster={cluster} gpus={r['gpus']} global-batch={r['batch']} "
               f"tp={r['tp']} pp={r['pp']} dp={r['dp']} "
               f"micro-batch={r['micro']} recompute=full schedule=1f1b "
               f"sequence-parallel=0 zero=0 precision=f16")
    run = subprocess.run(
        [os.path.join(binary, "ober-opt"), step, "--ober-plan=" + options,
         "--ober-plan-report=" + report, "-o", os.devnull],
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ober-opt --ober-plan='{options}' failed:\n{run.stderr}")
    with open(report) as f:
        return json.load(f)["step_time_s"] * 1e3


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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin"))
    p.add_argument("--csv", default=DEFAULT_CSV)
    p.add_argument("--cluster", default="a100-80gb")
    p.add_argument("--mean", type=float, default=0.08)
    p.add_argument("--max", type=float, default=0.25)
    p.add_argument("--rank", type=float, default=0.9)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--every", type=int, default=1,
                   help="check every k-th row only (a quick look)")
    p.add_argument("--rows-out", help="write each row with its prediction")
    args = p.parse_args()
    rows = read_rows(args.csv)[::args.every]
    with tempfile.TemporaryDirectory() as tmp:
        steps = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            keys = sorted({model_key(r) for r in rows})
            for i, key in enumerate(keys):
                steps[key] = os.path.join(tmp, f"step{i}.mlir")
            list(pool.map(lambda k: emit_step(args.bin, k, steps[k]), keys))
            preds = list(pool.map(
                lambda ir: predict(args.bin, steps[model_key(ir[1])], ir[1],
                                   args.cluster,
                                   os.path.join(tmp, f"r{ir[0]}.json")),
                enumerate(rows)))
    if args.rows_out:
        with open(args.rows_out, "w") as f:
            w = csv.writer(f)
            w.writerow(["gpus", "batch", "micro", "hidden", "layers", "tp",
                        "dp", "pp", "measured_ms", "predicted_ms", "ratio"])
            for r, ms in zip(rows, preds):
                w.writerow([r["gpus"], r["batch"], r["micro"], r["hidden"],
                            r["layers"], r["tp"], r["dp"], r["pp"], r["ms"],
                            f"{ms:.3f}", f"{ms / r['ms']:.4f}"])
    errors = [abs(ms / r["ms"] - 1) for r, ms in zip(rows, preds)]
    bias = sum(ms / r["ms"] - 1 for r, ms in zip(rows, preds)) / len(rows)
    failures = 0
    print(f"{'model':<16} {'rows':>5} {'mean err':>9} {'max err':>8} "
          f"{'bias':>7} {'rank corr':>9}")
    for hidden, layers in sorted({(r["hidden"], r["layers"]) for r in rows}):
        idx = [i for i, r in enumerate(rows)
               if (r["hidden"], r["layers"]) == (hidden, layers)]
        e = [errors[i] for i in idx]
        b = sum(preds[i] / rows[i]["ms"] - 1 for i in idx) / len(idx)
        rho = spearman([preds[i] for i in idx], [rows[i]["ms"] for i in idx])
        ok = rho >= args.rank
        failures += not ok
        print(f"h{hidden} l{layers:<10} {len(idx):>5} {sum(e) / len(e):>9.3f} "
              f"{max(e):>8.3f} {b:>+7.3f} {rho:>9.3f}{'' if ok else '  FAIL'}")
    worst = max(range(len(rows)), key=lambda i: errors[i])
    mean = sum(errors) / len(errors)
    print(f"{'all':<16} {len(rows):>5} {mean:>9.3f} {max(errors):>8.3f} "
          f"{bias:>+7.3f}")
    w = rows[worst]
    print(f"worst: {w['gpus']} GPUs h{w['hidden']} l{w['layers']} "
          f"t{w['tp']} p{w['pp']} d{w['dp']} mb{w['micro']} gb{w['batch']}: "
          f"measured {w['ms']:.1f} ms, predicted {preds[worst]:.1f} ms")
    failures += mean > args.mean
    failures += max(errors) > args.max
    print(f"{failures} check(s) failed" if failures else "all checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
