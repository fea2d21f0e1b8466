#!/usr/bin/python3
"""Gradient rules at randomized shapes: for each seed, draws shapes (and
attributes) for a family of ops, writes the f64 loss functions, and checks
them with `ober-run --grad-check` against central finite differences.

  grad_check_random_test.py --ober-run build/bin/ober-run [--seeds 3]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def t(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + "f64>"


def loss(value, shape):
    axes = ", ".join(str(i) for i in range(len(shape)))
    return (f"  %cw = ober.mul {value}, %c : {t(shape)}\n"
            f"  %l = ober.reduce_sum %cw {{axes = array<i64: {axes}>, keepdims = false}}"
            f" : ({t(shape)}) -> tensor<f64>\n  return %l : tensor<f64>")


def functions(rng):
    out = []

    def fn(name, params, extra, body, shape):
        args = ", ".join(f'%{n}: {t(s)} {{ober.param = "{n}"}}' for n, s in params)
        out.append(f"func.func @{name}({args}{extra}, %c: {t(shape)}) -> tensor<f64> {{\n"
                   f"{body}\n{loss('%y', shape)}\n}}\n")

    # Broadcasting binary ops.
    rank = rng.randint(1, 3)
    a = [rng.randint(1, 4) for _ in range(rank)]
    b = [d if rng.random() < 0.5 else 1 for d in a][rng.randint(0, rank - 1):]
    for op in ["add", "mul", "sub", "max"]:
        fn(f"{op}_bcast", [("a", a), ("b", b)], "",
           f"  %y = ober.{op} %a, %b : ({t(a)}, {t(b)}) -> {t(a)}", a)
    # Batched matmul with broadcast batch dimensions.
    m, k, n = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
    batch = [rng.randint(1, 3)]
    fn("matmul_", [("a", batch + [m, k]), ("b", [k, n])], "",
       f"  %y = ober.matmul %a, %b : ({t(batch + [m, k])}, {t([k, n])}) -> {t(batch + [m, n])}",
       batch + [m, n])
    # Convolution with random stride, padding, dilation and groups.
    groups = rng.choice([1, 2])
    cin, cout = 2 * groups, 2 * groups
    while True:  # draw until the window fits
        ksz, stride, dil = rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 2)
        pad = [rng.randint(0, 1) for _ in range(4)]
        h, w = rng.randint(4, 6), rng.randint(4, 6)
        oh = (h + pad[0] + pad[2] - dil * (ksz - 1) - 1) // stride + 1
        ow = (w + pad[1] + pad[3] - dil * (ksz - 1) - 1) // stride + 1
        if oh >= 1 and ow >= 1:
            break
    x, wt, y = [1, cin, h, w], [cout, cin // groups, ksz, ksz], [1, cout, oh, ow]
    fn("conv_", [("x", x), ("w", wt)], "",
       f"  %y = ober.conv %x, %w {{strides = array<i64: {stride}, {stride}>, "
       f"padding = array<i64: {', '.join(map(str, pad))}>, dilations = array<i64: {dil}, {dil}>, "
       f"groups = {groups} : i64}} : ({t(x)}, {t(wt)}) -> {t(y)}", y)
    # Pooling.
    kp, sp = rng.randint(2, 3), rng.randint(1, 2)
    ph, pw = (h - kp) // sp + 1, (w - kp) // sp + 1
    for op, extra in [("max_pool", f"dilations = array<i64: 1, 1>, ceil_mode = false"),
                      ("avg_pool", "ceil_mode = false, count_include_pad = false")]:
        fn(f"{op}_", [("x", x)], "",
           f"  %y = ober.{op} %x {{kernel = array<i64: {kp}, {kp}>, strides = array<i64: {sp}, {sp}>, "
           f"padding = array<i64: 0, 0, 0, 0>, {extra}}} : ({t(x)}) -> {t([1, cin, ph, pw])}",
           [1, cin, ph, pw])
    # Normalisations and softmax over random trailing axes.
    s = [rng.randint(2, 4) for _ in range(3)]
    axis = rng.randint(1, 2)
    fn("layer_norm_", [("x", s), ("g", s[axis:]), ("b", s[axis:])], "",
       f"  %y = ober.layer_norm %x scale %g bias %b {{axis = {axis} : i64, epsilon = 1.0e-5 : f64}}"
       f" : ({t(s)}, {t(s[axis:])}, {t(s[axis:])}) -> {t(s)}", s)
    fn("softmax_", [("x", s)], "",
       f"  %y = ober.softmax %x {{axis = {axis} : i64}} : {t(s)}", s)
    # Reductions over a random axis subset.
    axes = sorted(rng.sample(range(3), rng.randint(1, 2)))
    kept = [d for i, d in enumerate(s) if i not in axes]
    fn("reduce_mean_", [("x", s)], "",
       f"  %y = ober.reduce_mean %x {{axes = array<i64: {', '.join(map(str, axes))}>, keepdims = false}}"
       f" : ({t(s)}) -> {t(kept)}", kept)
    # Attention (checked through its decomposition and by attention_grad):
    # [batch, heads, L, D] with other key lengths and value widths when not
    # causal; no mask, causal, or an i1 mask that keeps each query's first
    # keys (no row is all masked).
    bh = [rng.randint(1, 2), rng.randint(1, 2)]
    lq, d, dv = rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3)
    for kind in ["plain", "causal", "mask"]:
        lk = lq if kind == "causal" else rng.randint(1, 4)
        q, k, v, o = bh + [lq, d], bh + [lk, d], bh + [lk, dv], bh + [lq, dv]
        attrs, mask, body = "", "", ""
        if kind == "causal":
            attrs = " {is_causal}"
        if kind == "mask":
            keep = rng.randint(0, 2)
            ti = f"tensor<{lq}x{lk}xi64>"
            body = (f"  %i = ober.iota {{dimension = 0 : i64}} : {ti}\n"
                    f"  %j = ober.iota {{dimension = 1 : i64}} : {ti}\n"
                    f"  %n = ober.constant dense<{keep}> : tensor<i64>\n"
                    f"  %in = ober.add %i, %n : ({ti}, tensor<i64>) -> {ti}\n"
                    f"  %m = ober.cmp ge, %in, %j : ({ti}, {ti}) -> tensor<{lq}x{lk}xi1>\n")
            mask = ", %m"
        types = f"{t(q)}, {t(k)}, {t(v)}" + (f", tensor<{lq}x{lk}xi1>" if mask else "")
        fn(f"attention_{kind}_", [("q", q), ("k", k), ("v", v)], "",
           body + f"  %y = ober.attention %q, %k, %v{mask}{attrs} : ({types}) -> {t(o)}", o)
    # Transpose by a random permutation.
    perm = list(range(3))
    rng.shuffle(perm)
    fn("transpose_", [("x", s)], "",
       f"  %y = ober.transpose %x {{permutation = array<i64: {', '.join(map(str, perm))}>}}"
       f" : {t(s)} -> {t([s[p] for p in perm])}", [s[p] for p in perm])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ober-run", required=True)
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args()
    failures = 0
    checked = 0
    for seed in range(args.seeds):
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"random{seed}.mlir")
            with open(path, "w") as f:
                f.write("\n".join(functions(rng)))
            proc = subprocess.run([args.ober_run, path, "--grad-check",
                                   "--init-seed", str(seed)],
                                  capture_output=True, text=True)
            print(proc.stdout, end="")
            checked += proc.stdout.count("grad-check @")
            if proc.returncode:
                failures += 1
                print(f"seed {seed} failed:\n{proc.stderr}")
                with open(path) as f:
                    print(f.read())
    print(f"grad-check-random: {checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
