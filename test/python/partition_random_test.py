#!/usr/bin/python3
"""Partitioned steps of generated models against the serial step.

Models no one wrote by hand: chains and residual blocks of linear layers
(with and without bias), RMS and layer norms, GELU, tanh, ReLU, softmax,
two-layer MLPs and two-head self-attention, on [batch, tokens, hidden] or [rows, hidden] inputs, drawn
from a seed. Each is trained 3 AdamW steps (mean-squared error) serially and
under every plan of PLANS (tensor parallelism with and without sequence
parallelism, pipelines, ZeRO 1 and 3, recomputation) on the simulated
devices of `ober-run`. Checked for every plan:
  * every step's loss within 1e-5 relative of the serial run;
  * the bytes of each kind of collective the run moves equal those the
    planner's report lists.

  partition_random_test.py --bin build/bin [--first 0] [--count 24]
A failure names the seed; `--keep DIR` keeps each seed's files.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from partition_test import losses_of, measured_bytes, predicted_bytes  # noqa: E402

# (dp, tp, pp, zero, micro-batch, recompute, sequence parallelism)
PLANS = [
    (1, 2, 1, 0, 4, "none", 0),
    (2, 2, 1, 1, 1, "selective", 0),
    (1, 2, 2, 0, 2, "none", 0),
    (1, 2, 2, 0, 2, "full", 0),
    (2, 2, 1, 3, 1, "full", 0),
    (2, 1, 2, 3, 1, "full", 0),
    (1, 2, 1, 0, 2, "none", 1),
    (2, 2, 1, 1, 1, "selective", 1),
    (1, 2, 2, 0, 2, "full", 1),
    (1, 4, 1, 0, 4, "none", 1),
]


class Model:
    """A random model as MLIR text: `main(x, params...) -> y`."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.hidden = self.r.choice([8, 16])
        rows = self.r.random() < 0.3
        self.shape = (16, self.hidden) if rows else (4, 4, self.hidden)
        self.axis = len(self.shape) - 1
        self.params, self.lines, self.count = [], [], 0

    def type(self, width):
        return "tensor<" + "x".join(map(str, self.shape[:-1])) + f"x{width}xf32>"

    def value(self):
        self.count += 1
        return f"%v{self.count}"

    def param(self, prefix, dims):
        name = f"{prefix}{len(self.params)}"
        t = "tensor<" + "x".join(map(str, dims)) + "xf32>"
        self.params.append(f'%{name}: {t} {{ober.param = "{name}"}}')
        return f"%{name}", t

    def emit(self, text):
        out = self.value()
        self.lines.append(f"  {out} = {text}")
        return out

    def linear(self, h, din, dout):
        w, wt = self.param("w", [din, dout])
        out = self.emit(f"ober.matmul {h}, {w} : ({self.type(din)}, {wt}) -> "
                        f"{self.type(dout)}")
        if self.r.random() < 0.5:
            b, bt = self.param("b", [dout])
            out = self.emit(f"ober.add {out}, {b} : ({self.type(dout)}, {bt}) "
                            f"-> {self.type(dout)}")
        return out

    def norm(self, h):
        d, t = self.hidden, self.type(self.hidden)
        g, gt = self.param("g", [d])
        attrs = f"{{axis = {self.axis} : i64, epsilon = 1.0e-5 : f64}}"
        if self.r.random() < 0.5:
            return self.emit(f"ober.rms_norm {h} scale {g} {attrs} : "
                             f"({t}, {gt}) -> {t}")
        b, bt = self.param("n", [d])
        return self.emit(f"ober.layer_norm {h} scale {g} bias {b} {attrs} : "
                         f"({t}, {gt}, {bt}) -> {t}")

    def activation(self, h, width):
        t = self.type(width)
        kind = self.r.choice(["gelu", "tanh", "relu", "softmax"])
        if kind == "gelu":
            return self.emit(f"ober.gelu {h} {{approximate = "
                             f"#ober.gelu_approximation<tanh>}} : {t}")
        if kind == "softmax":
            return self.emit(f"ober.softmax {h} {{axis = {self.axis} : i64}} : {t}")
        return self.emit(f"ober.{kind} {h} : {t}")

    def attention(self, h):
        """Two-head self-attention on [batch, tokens, hidden]."""
        b, s, d = self.shape
        e = d // 2
        t = f"tensor<{b}x{s}x{d}xf32>"
        split = f"tensor<{b}x{s}x2x{e}xf32>"
        heads = f"tensor<{b}x2x{s}x{e}xf32>"

        def head(w_in, perm, shape):
            x = self.linear(h, d, d) if w_in else h
            x = self.emit(f"ober.reshape {x} : {t} to {split}")
            return self.emit(f"ober.transpose {x} {{permutation = array<i64: "
                             f"{perm}>}} : {split} -> {shape}")
        q = head(True, "0, 2, 1, 3", heads)
        k = head(True, "0, 2, 3, 1", f"tensor<{b}x2x{e}x{s}xf32>")
        v = head(True, "0, 2, 1, 3", heads)
        scores = f"tensor<{b}x2x{s}x{s}xf32>"
        a = self.emit(f"ober.matmul {q}, {k} : ({heads}, tensor<{b}x2x{e}x{s}xf32>)"
                      f" -> {scores}")
        a = self.emit(f"ober.softmax {a} {{axis = 3 : i64}} : {scores}")
        o = self.emit(f"ober.matmul {a}, {v} : ({scores}, {heads}) -> {heads}")
        o = self.emit(f"ober.transpose {o} {{permutation = array<i64: 0, 2, 1, 3>}}"
                      f" : {heads} -> {split}")
        o = self.emit(f"ober.reshape {o} : {split} to {t}")
        return self.linear(o, d, d)

    def block(self, h, depth):
        kinds = ["mlp", "norm", "linear", "act"] + (["res"] * 2 if depth < 2 else [])
        if len(self.shape) == 3:
            kinds.append("attention")
        kind = self.r.choice(kinds)
        d = self.hidden
        if kind == "attention":
            return self.attention(h)
        if kind == "linear":
            return self.linear(h, d, d)
        if kind == "norm":
            return self.norm(h)
        if kind == "act":
            return self.activation(h, d)
        if kind == "mlp":
            inner = self.activation(self.linear(h, d, 2 * d), 2 * d)
            return self.linear(inner, 2 * d, d)
        inner = h
        for _ in range(self.r.randint(1, 2)):
            inner = self.block(inner, depth + 1)
        t = self.type(d)
        return self.emit(f"ober.add {h}, {inner} : ({t}, {t}) -> {t}")

    def text(self):
        h = "%x"
        for _ in range(self.r.randint(2, 4)):
            h = self.block(h, 0)
        w, wt = self.param("w", [self.hidden, self.hidden])
        t = self.type(self.hidden)
        out = self.emit(f"ober.matmul {h}, {w} : ({t}, {wt}) -> {t}")
        args = ", ".join([f"%x: {t}"] + self.params)
        return (f"func.func @main({args}) -> {t} {{\n" + "\n".join(self.lines) +
                f"\n  return {out} : {t}\n}}\n")


def run(args, cwd):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def check_seed(bin_dir, seed, tmp):
    """Failures of one generated model, as strings."""
    model = Model(seed)
    with open(os.path.join(tmp, "model.mlir"), "w") as f:
        f.write(model.text())
    rng = np.random.default_rng(seed)
    for name in ("x", "y"):
        np.save(os.path.join(tmp, name + ".npy"),
                rng.standard_normal(model.shape).astype(np.float32))
    opt, ober_run = (os.path.join(bin_dir, t) for t in ("ober-opt", "ober-run"))
    inputs = ["--input", "x.npy", "--input", "y.npy"]
    train = ["--train-steps", "3", "--lr", "0.01", "--init-seed", "1"]
    rc, _, err = run([opt, "model.mlir", "--ober-build-train-step=loss=mse "
                      "optimizer=adamw", "-o", "step.mlir"], tmp)
    if rc:
        return [f"seed {seed}: building the step failed: {err[-400:]}"]
    rc, out, err = run([ober_run, "step.mlir"] + train + inputs, tmp)
    if rc:
        return [f"seed {seed}: the serial run failed: {err[-400:]}"]
    serial = losses_of(out)
    failures = []
    for k, (dp, tp, pp, zero, mb, recompute, sp) in enumerate(PLANS):
        plan = (f"cluster=cpu gpus={dp * tp * pp} precision=f32 dp={dp} "
                f"tp={tp} pp={pp} zero={zero} micro-batch={mb} "
                f"recompute={recompute} sequence-parallel={sp}")
        what = f"seed {seed}, plan {plan}"
        report = f"plan{k}.json"
        rc, _, err = run([opt, "step.mlir", f"--ober-plan={plan}",
                          f"--ober-plan-report={report}", "--ober-partition",
                          "-o", f"parts{k}.mlir"], tmp)
        if rc:
            failures.append(f"{what}: partitioning failed: {err[-400:]}")
            continue
        rc, out, err = run([ober_run, f"parts{k}.mlir", "--run-stats"] +
                           train + inputs, tmp)
        if rc:
            failures.append(f"{what}: the run failed: {err[-400:]}")
            continue
        losses = losses_of(out)
        if len(losses) != len(serial) or any(
                abs(a - b) > 1e-5 * abs(b) for a, b in zip(losses, serial)):
            failures.append(f"{what}: losses {losses} vs serial {serial}")
        with open(os.path.join(tmp, report)) as f:
            planned = predicted_bytes(json.load(f)["collectives"])
        moved = measured_bytes(err)
        if moved != planned:
            failures.append(f"{what}: moved {moved}, the report lists {planned}")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--count", type=int, default=24)
    p.add_argument("--keep", help="keep each seed's files under this folder")
    args = p.parse_args()
    failures = []
    for seed in range(args.first, args.first + args.count):
        tmp = tempfile.mkdtemp(prefix=f"seed{seed}-", dir=args.keep)
        try:
            failures += check_seed(os.path.abspath(args.bin), seed, tmp)
        finally:
            if not args.keep:
                shutil.rmtree(tmp)
    for f in failures:
        print("FAILED", f)
    print(f"{args.count} models x {len(PLANS)} plans: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
