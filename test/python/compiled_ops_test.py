#!/usr/bin/python3
"""Every op the CPU pipeline lowers, compiled against the interpreter.

Each case is one function run twice by `ober-run`: by the reference
interpreter and with `--engine=cpu` (convert-ober-to-linalg and the CPU
pipeline, compiled in process). Float results agree within a tolerance of
their type (the interpreter computes in double and rounds once; compiled
code computes in f32), integer and boolean results exactly. Inputs include
NaN, infinities and values at the edges of each op's domain.

Then training steps (cross-entropy with AdamW, label smoothing and
clipping; MSE with Nesterov momentum; two micro-batches), and a GPT from
ober's generator with AdamW, train 5 steps on
both engines: losses within 1e-5 relative, each parameter within 1e-4 of
its largest magnitude (see train_parity).

  compiled_ops_test.py --bin build/bin [--keep DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

BIN = None
RNG = np.random.default_rng(7)
TOL = {"f32": (2e-5, 1e-6), "f16": (2e-3, 1e-3), "bf16": (1.6e-2, 1e-2)}
NP = {"f32": np.float32, "f16": np.float16, "bf16": np.float32,
      "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def floats(shape, low=-3.0, high=3.0, special=True):
    x = RNG.uniform(low, high, shape).astype(np.float32)
    if special and x.size >= 4:
        flat = x.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, 0.0]
    return x


def ints(shape, low=-50, high=50, nonzero=False):
    x = RNG.integers(low, high, shape).astype(np.int64)
    if nonzero:
        x[x == 0] = 7
    return x


class Case:
    """A function `body` of `args` [(name, shape, dtype, array)] returning
    `results` [(value, shape, dtype)]; `cpu_flags`: ober-run's flags for
    the compiled run."""

    def __init__(self, name, args, body, results, cpu_flags=(),
                 of_largest=False):
        self.name, self.args, self.body, self.results = name, args, body, results
        self.cpu_flags = list(cpu_flags)
        # Float results within their type's tolerance of the result's
        # largest magnitude (sums of many terms that cancel), not of each
        # element.
        self.of_largest = of_largest

    def module(self):
        params = ", ".join(f"%{n}: {tensor_type(s, d)}"
                           for n, s, d, _ in self.args)
        types = ", ".join(tensor_type(s, d) for _, s, d in self.results)
        values = ", ".join(v for v, _, _ in self.results)
        return (f"func.func @main({params}) -> ({types}) {{\n{self.body}"
                f"  return {values} : {types}\n}}\n")


def unary_cases():
    ops = {"neg": {}, "abs": {}, "exp": {}, "tanh": {}, "sigmoid": {},
           "relu": {}, "silu": {}, "erf": {}, "reciprocal": {}, "sin": {},
           "cos": {}, "tan": dict(low=-1.2, high=1.2), "atan": {}, "sinh": {},
           "cosh": {}, "asinh": {}, "floor": {}, "ceil": {}, "round": {},
           "sign": {}, "log": dict(low=0.01, high=9.0),
           "sqrt": dict(low=0.0, high=9.0), "rsqrt": dict(low=0.05, high=9.0),
           "asin": dict(low=-0.99, high=0.99),
           "acos": dict(low=-0.99, high=0.99),
           "acosh": dict(low=1.0, high=9.0),
           "atanh": dict(low=-0.95, high=0.95)}
    for op, rng in ops.items():
        x = floats((5, 8), **rng, special=not rng)
        if op == "round":
            x[0, 4:8] = [0.5, 1.5, 2.5, -2.5]
        body, results = "", []
        for dtype in ["f32", "bf16", "f16"]:
            t = tensor_type((5, 8), dtype)
            src = "%x" if dtype == "f32" else f"%x_{dtype}"
            if dtype != "f32":
                body += (f"  {src} = ober.cast %x : "
                         f"{tensor_type((5, 8), 'f32')} to {t}\n")
            body += f"  %{op}_{dtype} = ober.{op} {src} : {t}\n"
            results.append((f"%{op}_{dtype}", (5, 8), dtype))
        yield Case(op, [("x", (5, 8), "f32", x)], body, results)
    for approx in ["none", "tanh"]:
        x = floats((4, 6))
        body = (f"  %g = ober.gelu %x {{approximate = "
                f"#ober.gelu_approximation<{approx}>}} : tensor<4x6xf32>\n")
        yield Case(f"gelu-{approx}", [("x", (4, 6), "f32", x)], body,
                   [("%g", (4, 6), "f32")])
    i = ints((3, 5))
    i[0, :3] = [np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]
    body = "".join(f"  %{op} = ober.{op} %i : tensor<3x5xi64>\n"
                   for op in ["neg", "abs", "sign"])
    yield Case("int-unary", [("i", (3, 5), "i64", i)], body,
               [(f"%{op}", (3, 5), "i64") for op in ["neg", "abs", "sign"]])
    b = RNG.integers(0, 2, (6,)).astype(np.bool_)
    yield Case("not", [("b", (6,), "i1", b)],
               "  %n = ober.not %b : tensor<6xi1>\n", [("%n", (6,), "i1")])


def binary_cases():
    a, row, col = floats((4, 3)), floats((3,)), floats((4, 1), special=False)
    for op in ["add", "sub", "mul", "div", "max", "min", "rem"]:
        body = (f"  %r = ober.{op} %a, %row : (tensor<4x3xf32>, tensor<3xf32>)"
                f" -> tensor<4x3xf32>\n"
                f"  %c = ober.{op} %col, %a : (tensor<4x1xf32>, tensor<4x3xf32>)"
                f" -> tensor<4x3xf32>\n")
        yield Case(op, [("a", (4, 3), "f32", a), ("row", (3,), "f32", row),
                        ("col", (4, 1), "f32", col)], body,
                   [("%r", (4, 3), "f32"), ("%c", (4, 3), "f32")])
    base, power = floats((4, 3), 0.1, 3.0, special=False), floats((4, 3))
    yield Case("pow", [("a", (4, 3), "f32", base), ("b", (4, 3), "f32", power)],
               "  %p = ober.pow %a, %b : tensor<4x3xf32>\n",
               [("%p", (4, 3), "f32")])
    h = floats((4, 3), special=False)
    body = ("  %hb = ober.cast %h : tensor<4x3xf32> to tensor<4x3xbf16>\n"
            "  %s = ober.mul %hb, %hb : tensor<4x3xbf16>\n")
    yield Case("bf16-mul", [("h", (4, 3), "f32", h)], body,
               [("%s", (4, 3), "bf16")])
    x, y = ints((3, 4)), ints((4,), -9, 9, nonzero=True)
    y[0] = -1
    x[0, 0] = np.iinfo(np.int64).min
    ops = ["add", "sub", "mul", "div", "rem", "max", "min"]
    body = "".join(f"  %{op} = ober.{op} %x, %y : (tensor<3x4xi64>, "
                   f"tensor<4xi64>) -> tensor<3x4xi64>\n" for op in ops)
    yield Case("int-binary", [("x", (3, 4), "i64", x), ("y", (4,), "i64", y)],
               body, [(f"%{op}", (3, 4), "i64") for op in ops])
    p, q = (RNG.integers(0, 2, s).astype(np.bool_) for s in [(3, 4), (4,)])
    logic = ["and", "or", "xor"]
    body = "".join(f"  %{op} = ober.{op} %p, %q : (tensor<3x4xi1>, "
                   f"tensor<4xi1>) -> tensor<3x4xi1>\n" for op in logic)
    yield Case("logic", [("p", (3, 4), "i1", p), ("q", (4,), "i1", q)], body,
               [(f"%{op}", (3, 4), "i1") for op in logic])


def compare_select_cast_cases():
    a, b = floats((3, 4)), floats((3, 4))
    b[0, :2] = [np.nan, 1.0]
    a[0, 1] = 1.0
    dirs = ["eq", "ne", "lt", "le", "gt", "ge"]
    body = "".join(f"  %{d} = ober.cmp {d}, %a, %b : (tensor<3x4xf32>, "
                   f"tensor<3x4xf32>) -> tensor<3x4xi1>\n" for d in dirs)
    body += ("  %s = ober.select %lt, %a, %z : (tensor<3x4xi1>, "
             "tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>\n")
    yield Case("compare-select",
               [("a", (3, 4), "f32", a), ("b", (3, 4), "f32", b),
                ("z", (), "f32", np.array(-7.0, np.float32))], body,
               [(f"%{d}", (3, 4), "i1") for d in dirs] + [("%s", (3, 4), "f32")])
    f = floats((2, 5), -1e3, 1e3)
    f[1, :2] = [3e19, -3e19]
    i = ints((2, 5), -3_000_000_000, 3_000_000_000)
    body = ("  %fi = ober.cast %f : tensor<2x5xf32> to tensor<2x5xi64>\n"
            "  %fb = ober.cast %f : tensor<2x5xf32> to tensor<2x5xbf16>\n"
            "  %bf = ober.cast %fb : tensor<2x5xbf16> to tensor<2x5xf32>\n"
            "  %f1 = ober.cast %f : tensor<2x5xf32> to tensor<2x5xi1>\n"
            "  %if = ober.cast %i : tensor<2x5xi64> to tensor<2x5xf32>\n"
            "  %i32 = ober.cast %i : tensor<2x5xi64> to tensor<2x5xi32>\n"
            "  %back = ober.cast %i32 : tensor<2x5xi32> to tensor<2x5xi64>\n"
            "  %one = ober.cast %f1 : tensor<2x5xi1> to tensor<2x5xf32>\n")
    yield Case("cast", [("f", (2, 5), "f32", f), ("i", (2, 5), "i64", i)], body,
               [("%fi", (2, 5), "i64"), ("%bf", (2, 5), "f32"),
                ("%f1", (2, 5), "i1"), ("%if", (2, 5), "f32"),
                ("%back", (2, 5), "i64"), ("%one", (2, 5), "f32")])


def reduction_cases():
    x = floats((2, 3, 4), special=False)
    x[1, 2, 3] = np.nan
    out = {(0, 2): (1, 3, 1), (1,): (2, 4), (0, 1, 2): ()}
    body, results = "", []
    for op in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]:
        for axes, shape in out.items():
            keep = "true" if len(shape) == 3 else "false"
            name = f"%{op}_{len(axes)}"
            body += (f"  {name} = ober.{op} %x {{axes = array<i64: "
                     f"{', '.join(map(str, axes))}>, keepdims = {keep}}} : "
                     f"(tensor<2x3x4xf32>) -> {tensor_type(shape, 'f32')}\n")
            results.append((name, shape, "f32"))
    yield Case("reductions", [("x", (2, 3, 4), "f32", x)], body, results)
    h, i = floats((6, 5), special=False), ints((6, 5))
    body = ("  %hb = ober.cast %h : tensor<6x5xf32> to tensor<6x5xbf16>\n"
            "  %hs = ober.reduce_sum %hb {axes = array<i64: 0>, keepdims = "
            "false} : (tensor<6x5xbf16>) -> tensor<5xbf16>\n"
            "  %is = ober.reduce_sum %i {axes = array<i64: 1>, keepdims = "
            "false} : (tensor<6x5xi64>) -> tensor<6xi64>\n"
            "  %im = ober.reduce_max %i {axes = array<i64: 0, 1>, keepdims = "
            "false} : (tensor<6x5xi64>) -> tensor<i64>\n")
    yield Case("typed-reductions", [("h", (6, 5), "f32", h),
                                    ("i", (6, 5), "i64", i)], body,
               [("%hs", (5,), "bf16"), ("%is", (6,), "i64"), ("%im", (), "i64")])


def view_cases():
    x = floats((2, 3, 4))
    body = ("  %a = ober.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>\n"
            "  %b = ober.reshape %x : tensor<2x3x4xf32> to tensor<4x3x2xf32>\n"
            "  %c = ober.reshape %x : tensor<2x3x4xf32> to tensor<2x3x2x2xf32>\n"
            "  %t = ober.transpose %x {permutation = array<i64: 2, 0, 1>} : "
            "tensor<2x3x4xf32> -> tensor<4x2x3xf32>\n"
            "  %s = ober.reshape %one : tensor<1xf32> to tensor<f32>\n"
            "  %e = ober.broadcast_to %s : tensor<f32> to tensor<2x2xf32>\n"
            "  %k = ober.constant dense<[[1, 2, 3]]> : tensor<1x3xi64>\n"
            "  %kb = ober.broadcast_to %k : tensor<1x3xi64> to tensor<2x3xi64>\n")
    yield Case("views", [("x", (2, 3, 4), "f32", x),
                         ("one", (1,), "f32", np.array([2.5], np.float32))],
               body, [("%a", (6, 4), "f32"), ("%b", (4, 3, 2), "f32"),
                      ("%c", (2, 3, 2, 2), "f32"), ("%t", (4, 2, 3), "f32"),
                      ("%e", (2, 2), "f32"), ("%kb", (2, 3), "i64")])


def matmul_cases():
    shapes = [((4, 3), (3, 5), (4, 5)), ((2, 4, 3), (3, 5), (2, 4, 5)),
              ((2, 2, 4, 3), (2, 2, 3, 5), (2, 2, 4, 5)),
              ((3,), (2, 3, 5), (2, 5)), ((2, 4, 3), (3,), (2, 4)),
              ((3,), (3,), ()), ((1, 4, 3), (2, 3, 5), (2, 4, 5)),
              ((4, 3), (2, 3, 5), (2, 4, 5))]
    for k, (ls, rs, out) in enumerate(shapes):
        a, b = floats(ls, special=False), floats(rs, special=False)
        body = (f"  %m = ober.matmul %a, %b : ({tensor_type(ls, 'f32')}, "
                f"{tensor_type(rs, 'f32')}) -> {tensor_type(out, 'f32')}\n")
        yield Case(f"matmul-{k}", [("a", ls, "f32", a), ("b", rs, "f32", b)],
                   body, [("%m", out, "f32")])
    a, b = floats((3, 4, 8), special=False), floats((8, 2), special=False)
    body = ("  %ab = ober.cast %a : tensor<3x4x8xf32> to tensor<3x4x8xbf16>\n"
            "  %bb = ober.cast %b : tensor<8x2xf32> to tensor<8x2xbf16>\n"
            "  %m = ober.matmul %ab, %bb : (tensor<3x4x8xbf16>, "
            "tensor<8x2xbf16>) -> tensor<3x4x2xbf16>\n")
    yield Case("matmul-bf16", [("a", (3, 4, 8), "f32", a),
                               ("b", (8, 2), "f32", b)], body,
               [("%m", (3, 4, 2), "bf16")])
    # As the CUDA target calls it: the library's bf16 and f16 products.
    for t in ["bf16", "f16"]:
        yield Case(f"matmul-{t}-library",
                   [("a", (3, 4, 8), "f32", a), ("b", (8, 2), "f32", b)],
                   body.replace("bf16", t), [("%m", (3, 4, 2), t)],
                   ["--low-precision-products"])
    # The weight gradient of a matrix a batch shares: one product.
    x, y = floats((3, 5, 4), special=False), floats((3, 5, 2), special=False)
    body = ("  %t = ober.transpose %x {permutation = array<i64: 0, 2, 1>} : "
            "tensor<3x5x4xf32> -> tensor<3x4x5xf32>\n"
            "  %m = ober.matmul %t, %y : (tensor<3x4x5xf32>, tensor<3x5x2xf32>)"
            " -> tensor<3x4x2xf32>\n"
            "  %s = ober.reduce_sum %m {axes = array<i64: 0>, keepdims = false}"
            " : (tensor<3x4x2xf32>) -> tensor<4x2xf32>\n")
    yield Case("matmul-batch-sum", [("x", (3, 5, 4), "f32", x),
                                    ("y", (3, 5, 2), "f32", y)], body,
               [("%s", (4, 2), "f32")])
    i, j = ints((3, 4), -9, 9), ints((4, 2), -9, 9)
    yield Case("matmul-i64", [("i", (3, 4), "i64", i), ("j", (4, 2), "i64", j)],
               "  %m = ober.matmul %i, %j : (tensor<3x4xi64>, tensor<4x2xi64>)"
               " -> tensor<3x2xi64>\n", [("%m", (3, 2), "i64")])


def loss_cases():
    x = floats((4, 3, 6), special=False)
    body = ("  %s = ober.softmax %x {axis = 2 : i64} : tensor<4x3x6xf32>\n"
            "  %l = ober.log_softmax %x {axis = 1 : i64} : tensor<4x3x6xf32>\n"
            "  %xb = ober.cast %x : tensor<4x3x6xf32> to tensor<4x3x6xbf16>\n"
            "  %sb = ober.softmax %xb {axis = 2 : i64} : tensor<4x3x6xbf16>\n")
    yield Case("softmax", [("x", (4, 3, 6), "f32", x)], body,
               [("%s", (4, 3, 6), "f32"), ("%l", (4, 3, 6), "f32"),
                ("%sb", (4, 3, 6), "bf16")])
    logits = floats((5, 4), special=False)
    t = np.array([0, 3, 1, 2, 3], np.int64)
    seq_logits, seq_t = floats((2, 3, 4), special=False), ints((2, 3), 0, 4)
    q = RNG.dirichlet(np.ones(4), 5).astype(np.float32)
    body, results = "", []
    for k, (red, smooth, ignore) in enumerate(
            [("mean", 0.0, None), ("sum", 0.1, None), ("none", 0.0, None),
             ("mean", 0.2, 3), ("none", 0.0, 1)]):
        shape = (5,) if red == "none" else ()
        attrs = (f"label_smoothing = {smooth} : f64, reduction = "
                 f"#ober.reduction<{red}>"
                 + (f", ignore_index = {ignore} : i64" if ignore is not None
                    else ""))
        body += (f"  %ce{k} = ober.cross_entropy %logits, %t {{{attrs}}} : "
                 f"(tensor<5x4xf32>, tensor<5xi64>) -> "
                 f"{tensor_type(shape, 'f32')}\n")
        results.append((f"%ce{k}", shape, "f32"))
    body += ("  %cq = ober.cross_entropy %logits, %q {label_smoothing = 0.1 : "
             "f64, reduction = #ober.reduction<mean>} : (tensor<5x4xf32>, "
             "tensor<5x4xf32>) -> tensor<f32>\n"
             "  %cs = ober.cross_entropy %sl, %st {label_smoothing = 0.0 : "
             "f64, reduction = #ober.reduction<mean>} : (tensor<2x3x4xf32>, "
             "tensor<2x3xi64>) -> tensor<f32>\n"
             "  %ms = ober.mse_loss %logits, %q {reduction = "
             "#ober.reduction<mean>} : (tensor<5x4xf32>, tensor<5x4xf32>) -> "
             "tensor<f32>\n"
             "  %mn = ober.mse_loss %logits, %q {reduction = "
             "#ober.reduction<none>} : (tensor<5x4xf32>, tensor<5x4xf32>) -> "
             "tensor<5x4xf32>\n")
    results += [("%cq", (), "f32"), ("%cs", (), "f32"), ("%ms", (), "f32"),
                ("%mn", (5, 4), "f32")]
    yield Case("losses", [("logits", (5, 4), "f32", logits),
                          ("t", (5,), "i64", t), ("q", (5, 4), "f32", q),
                          ("sl", (2, 3, 4), "f32", seq_logits),
                          ("st", (2, 3), "i64", seq_t)], body, results)
    idx = np.array([[0, 2, -1], [3, 5, -6]], np.int64)
    body = ("  %a = ober.one_hot %i {axis = 2 : i64, depth = 4 : i64} : "
            "(tensor<2x3xi64>) -> tensor<2x3x4xf32>\n"
            "  %b = ober.one_hot %i {axis = 0 : i64, depth = 4 : i64} : "
            "(tensor<2x3xi64>) -> tensor<4x2x3xi1>\n")
    yield Case("one-hot", [("i", (2, 3), "i64", idx)], body,
               [("%a", (2, 3, 4), "f32"), ("%b", (4, 2, 3), "i1")])


def gather_cases():
    x, i = floats((3, 4, 2), special=False), np.array([[2, -1], [0, 1]], np.int64)
    body = ("  %g = ober.gather %x, %i {axis = 1 : i64} : (tensor<3x4x2xf32>, "
            "tensor<2x2xi64>) -> tensor<3x2x2x2xf32>\n"
            "  %s = ober.gather %x, %k {axis = 0 : i64} : (tensor<3x4x2xf32>, "
            "tensor<i64>) -> tensor<4x2xf32>\n")
    yield Case("gather", [("x", (3, 4, 2), "f32", x), ("i", (2, 2), "i64", i),
                          ("k", (), "i64", np.array(-1, np.int64))], body,
               [("%g", (3, 2, 2, 2), "f32"), ("%s", (4, 2), "f32")])


def norm_and_shape_cases():
    x, g, b = floats((2, 3, 8), special=False), floats((8,)), floats((8,))
    g, b = np.abs(g) + 0.5, b * 0.1
    g[:4] = 1.0
    b[:4] = 0.0
    body = ("  %ln = ober.layer_norm %x scale %g bias %b {axis = 2 : i64, "
            "epsilon = 1.0e-05 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, "
            "tensor<8xf32>) -> tensor<2x3x8xf32>\n"
            "  %l2 = ober.layer_norm %x {axis = 1 : i64, epsilon = 1.0e-03 : "
            "f64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>\n"
            "  %rn = ober.rms_norm %x scale %g {axis = 2 : i64, epsilon = "
            "1.0e-06 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>) -> "
            "tensor<2x3x8xf32>\n"
            "  %xb = ober.cast %x : tensor<2x3x8xf32> to tensor<2x3x8xbf16>\n"
            "  %lb = ober.layer_norm %xb {axis = 2 : i64, epsilon = 1.0e-05 : "
            "f64} : (tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16>\n")
    yield Case("norms", [("x", (2, 3, 8), "f32", x), ("g", (8,), "f32", g),
                         ("b", (8,), "f32", b)], body,
               [("%ln", (2, 3, 8), "f32"), ("%l2", (2, 3, 8), "f32"),
                ("%rn", (2, 3, 8), "f32"), ("%lb", (2, 3, 8), "bf16")])
    y = floats((4, 6), special=False)
    body = ("  %s = ober.slice %y {starts = array<i64: 1, 0>, limits = "
            "array<i64: 4, 6>, strides = array<i64: 2, 3>} : tensor<4x6xf32> "
            "-> tensor<2x2xf32>\n"
            "  %r = ober.slice %y {starts = array<i64: 3, 5>, limits = "
            "array<i64: -1, 0>, strides = array<i64: -1, -2>} : "
            "tensor<4x6xf32> -> tensor<4x3xf32>\n"
            "  %p:3 = ober.split %y {axis = 1 : i64, sizes = array<i64: 1, 2, 3>}"
            " : (tensor<4x6xf32>) -> (tensor<4x1xf32>, tensor<4x2xf32>, "
            "tensor<4x3xf32>)\n"
            "  %c = ober.concat %p#2, %p#0, %y {axis = 1 : i64} : "
            "(tensor<4x3xf32>, tensor<4x1xf32>, tensor<4x6xf32>) -> "
            "tensor<4x10xf32>\n"
            "  %i = ober.iota {dimension = 1 : i64} : tensor<2x5xi64>\n"
            "  %f = ober.iota {dimension = 0 : i64} : tensor<3x2xf32>\n")
    yield Case("slices", [("y", (4, 6), "f32", y)], body,
               [("%s", (2, 2), "f32"), ("%r", (4, 3), "f32"),
                ("%p#1", (4, 2), "f32"), ("%c", (4, 10), "f32"),
                ("%i", (2, 5), "i64"), ("%f", (3, 2), "f32")])
    table, ids = floats((7, 3), special=False), np.array([[6, 0], [2, 2]])
    rows = np.array([1, 3, 1, -1], np.int64)
    upd = floats((4, 3), special=False)
    body = ("  %e = ober.embedding %t, %ids : (tensor<7x3xf32>, "
            "tensor<2x2xi64>) -> tensor<2x2x3xf32>\n"
            "  %sa = ober.scatter_add %t, %rows, %u {axis = 0 : i64} : "
            "(tensor<7x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> "
            "tensor<7x3xf32>\n"
            "  %sc = ober.scatter %t, %rows, %u {axis = 0 : i64} : "
            "(tensor<7x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> "
            "tensor<7x3xf32>\n"
            "  %cols = ober.constant dense<[2, 0]> : tensor<2xi64>\n"
            "  %v = ober.slice %u {starts = array<i64: 0, 0>, limits = "
            "array<i64: 4, 2>, strides = array<i64: 1, 1>} : tensor<4x3xf32> "
            "-> tensor<4x2xf32>\n"
            "  %s1 = ober.scatter_add %u, %cols, %v {axis = 1 : i64} : "
            "(tensor<4x3xf32>, tensor<2xi64>, tensor<4x2xf32>) -> "
            "tensor<4x3xf32>\n")
    yield Case("lookups", [("t", (7, 3), "f32", table),
                           ("ids", (2, 2), "i64", ids),
                           ("rows", (4,), "i64", rows),
                           ("u", (4, 3), "f32", upd)], body,
               [("%e", (2, 2, 3), "f32"), ("%sa", (7, 3), "f32"),
                ("%sc", (7, 3), "f32"), ("%s1", (4, 3), "f32")])


def _arr(name, values):
    return f"{name} = array<i64: {', '.join(map(str, values))}>"


def _conv_out(size, k, s, pb, pe, d):
    return (size + pb + pe - d * (k - 1) - 1) // s + 1


def conv_cases():
    """Convolutions through the kernel library: 1-, 2- and 3-D, groups,
    strides, dilations, asymmetric padding; the data gradient
    (conv_transpose, with output padding and a bias) and the weight
    gradient, including geometries whose last windows leave input unread;
    each also as matrix products over gathered windows (what the CUDA
    target compiles: `--convolutions=gemm`)."""
    geoms = [  # (n, c, o, groups, in, kernel, stride, dilation, pads)
        (2, 3, 4, 1, (9,), (3,), (2,), (1,), (1, 0)),
        (2, 4, 6, 2, (7, 8), (3, 2), (1, 2), (1, 1), (1, 0, 2, 1)),
        (1, 3, 5, 1, (9, 9), (3, 3), (2, 2), (2, 1), (0, 1, 1, 0)),
        (2, 4, 4, 4, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
        (1, 2, 3, 1, (4, 5, 4), (2, 3, 2), (2, 1, 1), (1, 1, 1),
         (0, 1, 1, 1, 0, 0)),
    ]
    for k, (n, c, o, g, size, ker, st, dil, pads) in enumerate(geoms):
        r = len(size)
        out = tuple(_conv_out(size[i], ker[i], st[i], pads[i], pads[r + i],
                              dil[i]) for i in range(r))
        xs, ws, ys = (n, c) + size, (o, c // g) + ker, (n, o) + out
        attrs = (f"{_arr('strides', st)}, {_arr('padding', pads)}, "
                 f"{_arr('dilations', dil)}, groups = {g} : i64")
        tx, tw, ty = (tensor_type(t, "f32") for t in (xs, ws, ys))
        body = (f"  %y = ober.conv %x, %w, %b {{{attrs}}} : ({tx}, {tw}, "
                f"tensor<{o}xf32>) -> {ty}\n"
                f"  %y0 = ober.conv %x, %w {{{attrs}}} : ({tx}, {tw}) -> {ty}\n"
                f"  %dw = ober.conv_weight_grad %x, %gy {{{_arr('kernel', ker)},"
                f" {attrs}}} : ({tx}, {ty}) -> {tw}\n")
        results = [("%y", ys, "f32"), ("%y0", ys, "f32"), ("%dw", ws, "f32")]
        # The data gradient: conv_transpose of gy back to the input size
        # (output padding makes up what the stride's floor dropped).
        back = tuple((out[i] - 1) * st[i] - pads[i] - pads[r + i]
                     + dil[i] * (ker[i] - 1) + 1 for i in range(r))
        opad = tuple(size[i] - back[i] for i in range(r))
        if all(0 <= p < max(st[i], dil[i]) for i, p in enumerate(opad)):
            # conv's weight [O, C / groups, K...] is conv_transpose's
            # [C_in, C_out / groups, K...] from gy back to x.
            body += (f"  %dx = ober.conv_transpose %gy, %w, %bc "
                     f"{{{attrs}, {_arr('output_padding', opad)}}} : ({ty}, "
                     f"{tw}, tensor<{c}xf32>) -> {tx}\n")
            results.append(("%dx", xs, "f32"))
        args = [("x", xs, "f32", floats(xs, special=False)),
                ("w", ws, "f32", floats(ws, special=False)),
                ("b", (o,), "f32", floats((o,), special=False)),
                ("gy", ys, "f32", floats(ys, special=False)),
                ("bc", (c,), "f32", floats((c,), special=False))]
        yield Case(f"conv-{k}", args, body, results)
        yield Case(f"conv-gemm-{k}", args, body, results,
                   ["--convolutions=gemm"])
    x = floats((2, 3, 6, 6), special=False)
    w = floats((4, 3, 3, 3), special=False)
    body = ("  %xb = ober.cast %x : tensor<2x3x6x6xf32> to tensor<2x3x6x6xbf16>\n"
            "  %wb = ober.cast %w : tensor<4x3x3x3xf32> to tensor<4x3x3x3xbf16>\n"
            "  %y = ober.conv %xb, %wb {strides = array<i64: 1, 1>, padding = "
            "array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 "
            ": i64} : (tensor<2x3x6x6xbf16>, tensor<4x3x3x3xbf16>) -> "
            "tensor<2x4x6x6xbf16>\n")
    for name, flags in [("conv-bf16", []),
                        ("conv-gemm-bf16", ["--convolutions=gemm"])]:
        yield Case(name, [("x", (2, 3, 6, 6), "f32", x),
                          ("w", (4, 3, 3, 3), "f32", w)], body,
                   [("%y", (2, 4, 6, 6), "bf16")], flags)
    # As the CUDA target compiles them: bf16 products over bf16 columns
    # (each product rounded once before the bias or the data gradient's
    # sum over the windows; within bf16's tolerance of the largest value).
    n, c, o, g, size, ker, st, dil, pads = (2, 4, 6, 2, (7, 8), (3, 2),
                                            (1, 2), (1, 1), (1, 0, 2, 1))
    out = tuple(_conv_out(size[i], ker[i], st[i], pads[i], pads[2 + i],
                          dil[i]) for i in range(2))
    xs, ws, ys = (n, c) + size, (o, c // g) + ker, (n, o) + out
    attrs = (f"{_arr('strides', st)}, {_arr('padding', pads)}, "
             f"{_arr('dilations', dil)}, groups = {g} : i64")
    opad = tuple(size[i] - ((out[i] - 1) * st[i] - pads[i] - pads[2 + i]
                            + dil[i] * (ker[i] - 1) + 1) for i in range(2))
    f32, b16 = ({s: tensor_type(s, t) for s in (xs, ws, ys, (o,), (c,))}
                for t in ("f32", "bf16"))
    body = "".join(f"  %{v}b = ober.cast %{v} : {f32[s]} to {b16[s]}\n"
                   for v, s in [("x", xs), ("w", ws), ("b", (o,)),
                                ("gy", ys), ("bc", (c,))])
    body += (f"  %y = ober.conv %xb, %wb, %bb {{{attrs}}} : ({b16[xs]}, "
             f"{b16[ws]}, {b16[(o,)]}) -> {b16[ys]}\n"
             f"  %dw = ober.conv_weight_grad %xb, %gyb {{{_arr('kernel', ker)},"
             f" {attrs}}} : ({b16[xs]}, {b16[ys]}) -> {b16[ws]}\n"
             f"  %dx = ober.conv_transpose %gyb, %wb, %bcb {{{attrs}, "
             f"{_arr('output_padding', opad)}}} : ({b16[ys]}, {b16[ws]}, "
             f"{b16[(c,)]}) -> {b16[xs]}\n")
    yield Case("conv-gemm-bf16-library",
               [(v, s, "f32", floats(s, special=False))
                for v, s in [("x", xs), ("w", ws), ("b", (o,)), ("gy", ys),
                             ("bc", (c,))]], body,
               [("%y", ys, "bf16"), ("%dw", ws, "bf16"), ("%dx", xs, "bf16")],
               ["--convolutions=gemm", "--low-precision-products"],
               of_largest=True)


def _pool_out(size, k, s, pb, pe, d, ceil):
    span = size + pb + pe - d * (k - 1) - 1
    out = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + pb:
        out -= 1
    return out


def pool_cases():
    """Pooling and its gradients: padding, strides, dilations, ceil mode,
    count_include_pad, NaN in a window, overlapping windows."""
    geoms = [  # (in, kernel, stride, dilation, pads, ceil)
        ((9,), (3,), (2,), (1,), (1, 1), False),
        ((7, 8), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
        ((7, 7), (3, 2), (2, 2), (1, 1), (0, 1, 1, 0), True),
        ((8, 7), (2, 3), (1, 2), (2, 1), (1, 0, 0, 1), False),
        ((4, 5, 5), (2, 2, 3), (2, 1, 2), (1, 1, 1), (0, 1, 1, 1, 0, 1), True),
    ]
    for k, (size, ker, st, dil, pads, ceil) in enumerate(geoms):
        r = len(size)
        out = tuple(_pool_out(size[i], ker[i], st[i], pads[i], pads[r + i],
                              dil[i], ceil) for i in range(r))
        xs, ys = (2, 3) + size, (2, 3) + out
        x = floats(xs, special=False)
        x.reshape(-1)[5] = np.nan
        x.reshape(-1)[9] = x.reshape(-1)[10]  # a tie
        tx, ty = tensor_type(xs, "f32"), tensor_type(ys, "f32")
        common = (f"{_arr('kernel', ker)}, {_arr('strides', st)}, "
                  f"{_arr('padding', pads)}")
        mx = f"{common}, {_arr('dilations', dil)}, ceil_mode = {str(ceil).lower()}"
        body = (f"  %m = ober.max_pool %x {{{mx}}} : ({tx}) -> {ty}\n"
                f"  %mg = ober.max_pool_grad %x, %g {{{mx}}} : ({tx}, {ty}) -> "
                f"{tx}\n")
        results = [("%m", ys, "f32"), ("%mg", xs, "f32")]
        if all(d == 1 for d in dil):
            for inc in ["true", "false"]:
                av = (f"{common}, ceil_mode = {str(ceil).lower()}, "
                      f"count_include_pad = {inc}")
                body += (f"  %a{inc} = ober.avg_pool %x {{{av}}} : ({tx}) -> "
                         f"{ty}\n"
                         f"  %ag{inc} = ober.avg_pool_grad %x, %g {{{av}}} : "
                         f"({tx}, {ty}) -> {tx}\n")
                results += [(f"%a{inc}", ys, "f32"), (f"%ag{inc}", xs, "f32")]
        yield Case(f"pool-{k}", [("x", xs, "f32", x),
                                 ("g", ys, "f32", floats(ys, special=False))],
                   body, results)
    i = ints((1, 2, 5, 5))
    body = ("  %m = ober.max_pool %i {kernel = array<i64: 2, 2>, strides = "
            "array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, dilations = "
            "array<i64: 1, 1>, ceil_mode = false} : (tensor<1x2x5x5xi64>) -> "
            "tensor<1x2x3x3xi64>\n")
    yield Case("pool-i64", [("i", (1, 2, 5, 5), "i64", i)], body,
               [("%m", (1, 2, 3, 3), "i64")])


def batch_norm_cases():
    x = floats((4, 3, 5), special=False)
    c = [floats((3,), special=False) for _ in range(4)]
    c[3] = np.abs(c[3]) + 0.1  # a variance
    names = ["s", "b", "m", "v"]
    args = [("x", (4, 3, 5), "f32", x)] + [(n, (3,), "f32", v)
                                           for n, v in zip(names, c)]
    body = ("  %t:3 = ober.batch_norm_training %x, %s, %b, %m, %v {epsilon = "
            "1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<4x3x5xf32>, "
            "tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
            "(tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)\n"
            "  %i = ober.batch_norm_inference %x, %s, %b, %m, %v {epsilon = "
            "1.0e-3 : f64} : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, "
            "tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x5xf32>\n"
            "  %x2 = ober.reshape %x : tensor<4x3x5xf32> to tensor<4x3xf32x5>\n")
    body = body.replace("  %x2 = ober.reshape %x : tensor<4x3x5xf32> to "
                        "tensor<4x3xf32x5>\n", "")
    yield Case("batch-norm", args, body,
               [("%t#0", (4, 3, 5), "f32"), ("%t#1", (3,), "f32"),
                ("%t#2", (3,), "f32"), ("%i", (4, 3, 5), "f32")])


def index_cases():
    x = floats((3, 4), special=False)
    body = "".join(
        f"  %p{mode} = ober.pad %x {{low = array<i64: 1, 2>, high = array<i64: "
        f"2, 3>, mode = #ober.pad_mode<{mode}>, value = 1.5 : f64}} : "
        f"tensor<3x4xf32> -> tensor<6x9xf32>\n"
        for mode in ["constant", "reflect", "edge"])
    yield Case("pad", [("x", (3, 4), "f32", x)], body,
               [(f"%p{m}", (6, 9), "f32") for m in ["constant", "reflect",
                                                    "edge"]])
    y, i = floats((3, 5), special=False), ints((3, 5), -9, 9)
    y[1, 2] = np.nan
    body, results = "", []
    for k, (axis, ex, rev) in enumerate([(1, "false", "false"),
                                         (0, "true", "false"),
                                         (1, "true", "true")]):
        body += (f"  %c{k} = ober.cumsum %y {{axis = {axis} : i64, exclusive = "
                 f"{ex}, reverse = {rev}}} : tensor<3x5xf32>\n"
                 f"  %d{k} = ober.cumsum %i {{axis = {axis} : i64, exclusive = "
                 f"{ex}, reverse = {rev}}} : tensor<3x5xi64>\n")
        results += [(f"%c{k}", (3, 5), "f32"), (f"%d{k}", (3, 5), "i64")]
    z = floats((4, 6), special=False)
    z[0, 3] = np.nan
    z[1, 2] = z[1, 4] = 9.0
    z[2, 1] = z[2, 5] = -9.0
    z[3, 0] = z[3, 4] = np.nan
    for op in ["argmax", "argmin"]:
        for last in ["false", "true"]:
            body += (f"  %{op}{last} = ober.{op} %z {{axis = 1 : i64, keepdims "
                     f"= false, select_last_index = {last}}} : "
                     f"(tensor<4x6xf32>) -> tensor<4xi64>\n")
            results.append((f"%{op}{last}", (4,), "i64"))
    body += ("  %ai = ober.argmax %i {axis = 0 : i64, keepdims = true, "
             "select_last_index = false} : (tensor<3x5xi64>) -> "
             "tensor<1x5xi64>\n"
             "  %pr = ober.reduce_prod %y {axes = array<i64: 0>, keepdims = "
             "false} : (tensor<3x5xf32>) -> tensor<5xf32>\n"
             "  %pi = ober.reduce_prod %i {axes = array<i64: 1>, keepdims = "
             "false} : (tensor<3x5xi64>) -> tensor<3xi64>\n")
    results += [("%ai", (1, 5), "i64"), ("%pr", (5,), "f32"),
                ("%pi", (3,), "i64")]
    yield Case("scans", [("y", (3, 5), "f32", y), ("i", (3, 5), "i64", i),
                         ("z", (4, 6), "f32", z)], body, results)
    t = floats((3, 4), special=False)
    idx = np.array([[0, 3, -1], [2, 2, 0]], np.int64)
    u = floats((2, 3), special=False)
    body = ("  %g = ober.gather_elements %t, %idx {axis = 1 : i64} : "
            "(tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>\n"
            "  %s = ober.scatter_elements_add %t, %idx, %u {axis = 1 : i64} : "
            "(tensor<3x4xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> "
            "tensor<3x4xf32>\n"
            "  %i0 = ober.constant dense<[[2, 0, 1], [1, 1, 0]]> : "
            "tensor<2x3xi64>\n"
            "  %s0 = ober.scatter_elements_add %t, %i0, %u {axis = 0 : i64} : "
            "(tensor<3x4xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> "
            "tensor<3x4xf32>\n")
    yield Case("elements", [("t", (3, 4), "f32", t), ("idx", (2, 3), "i64", idx),
                            ("u", (2, 3), "f32", u)], body,
               [("%g", (2, 3), "f32"), ("%s", (3, 4), "f32"),
                ("%s0", (3, 4), "f32")])
    d = floats((4, 6, 5), special=False)
    body = ("  %r:2 = ober.dropout %d, %seed {ratio = 0.3 : f64} : "
            "(tensor<4x6x5xf32>, tensor<i64>) -> (tensor<4x6x5xf32>, "
            "tensor<4x6x5xi1>)\n"
            "  %off = ober.constant dense<[2, 0, 1]> : tensor<3xi64>\n"
            "  %b:2 = ober.dropout %d, %seed offsets %off {ratio = 0.5 : f64, "
            "global_shape = array<i64: 8, 6, 7>, major_dim = 1 : i64} : "
            "(tensor<4x6x5xf32>, tensor<i64>, tensor<3xi64>) -> "
            "(tensor<4x6x5xf32>, tensor<4x6x5xi1>)\n")
    yield Case("dropout", [("d", (4, 6, 5), "f32", d),
                           ("seed", (), "i64", np.array(1234567, np.int64))],
               body, [("%r#0", (4, 6, 5), "f32"), ("%r#1", (4, 6, 5), "i1"),
                      ("%b#0", (4, 6, 5), "f32"), ("%b#1", (4, 6, 5), "i1")])


def threaded_cases():
    """Ops large enough that the CPU pipeline splits them into chunks for
    threads (at least 32768 iterations): elementwise, broadcast, row and
    column reductions, a softmax, a norm, a transpose."""
    x = floats((96, 512), special=False)
    b = floats((512,), special=False)
    t = "tensor<96x512xf32>"
    body = (f"  %a = ober.add %x, %b : ({t}, tensor<512xf32>) -> {t}\n"
            f"  %g = ober.gelu %a {{approximate = #ober.gelu_approximation<none>}}"
            f" : {t}\n"
            f"  %s = ober.softmax %g {{axis = 1 : i64}} : {t}\n"
            f"  %n = ober.layer_norm %x scale %b bias %b {{axis = 1 : i64, "
            f"epsilon = 1.0e-05 : f64}} : ({t}, tensor<512xf32>, "
            f"tensor<512xf32>) -> {t}\n"
            f"  %c = ober.reduce_sum %g {{axes = array<i64: 0>, keepdims = "
            f"false}} : ({t}) -> tensor<512xf32>\n"
            f"  %r = ober.reduce_max %x {{axes = array<i64: 1>, keepdims = "
            f"false}} : ({t}) -> tensor<96xf32>\n"
            f"  %p = ober.transpose %g {{permutation = array<i64: 1, 0>}} : "
            f"{t} -> tensor<512x96xf32>\n")
    # Batch-norm statistics broadcast back over the batch (their producers
    # are also read elsewhere): the patterns of a batch norm's gradient.
    y = floats((8, 32, 12, 12), special=False)
    t4 = "tensor<8x32x12x12xf32>"
    c4 = "tensor<1x32x1x1xf32>"
    red = "{axes = array<i64: 0, 2, 3>, keepdims = true}"
    body_bn = (f"  %m = ober.reduce_mean %y {red} : ({t4}) -> {c4}\n"
               f"  %d = ober.sub %y, %m : ({t4}, {c4}) -> {t4}\n"
               f"  %q = ober.mul %d, %d : {t4}\n"
               f"  %v = ober.reduce_mean %q {red} : ({t4}) -> {c4}\n"
               f"  %r = ober.rsqrt %v : {c4}\n"
               f"  %d2 = ober.sub %y, %m : ({t4}, {c4}) -> {t4}\n"
               f"  %n = ober.mul %d2, %r : ({t4}, {c4}) -> {t4}\n"
               f"  %g = ober.mul %n, %y : {t4}\n"
               f"  %s = ober.reduce_mean %g {red} : ({t4}) -> {c4}\n"
               f"  %o = ober.mul %n, %s : ({t4}, {c4}) -> {t4}\n"
               f"  %w = ober.mul %o, %r : ({t4}, {c4}) -> {t4}\n")
    yield Case("threaded-norm", [("y", (8, 32, 12, 12), "f32", y)], body_bn,
               [("%w", (8, 32, 12, 12), "f32")])
    yield Case("threaded", [("x", (96, 512), "f32", x),
                            ("b", (512,), "f32", b)], body,
               [("%s", (96, 512), "f32"), ("%n", (96, 512), "f32"),
                ("%c", (512,), "f32"), ("%r", (96,), "f32"),
                ("%p", (512, 96), "f32")])


def attention_cases():
    """ober.attention and ober.attention_grad compiled three ways: whole
    (--attention=decomposed), a block of queries at a time (blocked, the
    default, here with blocks small enough that there are three) and as the
    fused loops (--attention=fused): plain and causal (queries fewer and more than keys), an i1
    mask broadcast over batch and heads with a fully masked row, a float
    mask (also causal), a mask over keys only, no head dimension, bf16, and
    rows long enough for threads."""
    def att(name, b, lq, lk, d, dv, dtype="f32", causal=False, mask=None,
            scale=None, grad=True):
        q = floats(b + (lq, d), -1.5, 1.5, special=False)
        k = floats(b + (lk, d), -1.5, 1.5, special=False)
        v = floats(b + (lk, dv), special=False)
        g = floats(b + (lq, dv), special=False)
        # The gradient's output operand is an input of its own: the forward
        # result differs by rounding between the engines, and D = rowsum(dO
        # * O) against dO . v cancels where a row attends to one key.
        out = floats(b + (lq, dv), special=False)
        attrs = []
        if causal:
            attrs.append("is_causal")
        if scale is not None:
            attrs.append(f"scale = {scale} : f64")
        attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
        args = [("q", b + (lq, d), dtype, q), ("k", b + (lk, d), dtype, k),
                ("v", b + (lk, dv), dtype, v)]
        types = [tensor_type(a[1], dtype) for a in args]
        operands = "%q, %k, %v"
        if mask is not None:
            mshape, mtype, mvalue = mask
            args.append(("m", mshape, mtype, mvalue))
            types.append(tensor_type(mshape, mtype))
            operands += ", %m"
        tq, tk, tv = (tensor_type(s, dtype) for s in
                      (b + (lq, d), b + (lk, d), b + (lk, dv)))
        to = tensor_type(b + (lq, dv), dtype)
        body = (f"  %o = ober.attention {operands}{attr} : "
                f"({', '.join(types)}) -> {to}\n")
        results = [("%o", b + (lq, dv), dtype)]
        if grad and (mask is None or mask[1] == "i1"):
            args += [("out", b + (lq, dv), dtype, out),
                     ("g", b + (lq, dv), dtype, g)]
            gtypes = types[:3] + [to, to] + types[3:]
            gops = "%q, %k, %v, %out, %g" + (", %m" if mask is not None
                                             else "")
            body += (f"  %r:3 = ober.attention_grad {gops}{attr} : "
                     f"({', '.join(gtypes)}) -> ({tq}, {tk}, {tv})\n")
            results += [("%r#0", b + (lq, d), dtype),
                        ("%r#1", b + (lk, d), dtype),
                        ("%r#2", b + (lk, dv), dtype)]
        # bf16 decomposed rounds the probabilities and dS to bf16 (as
        # PyTorch's math path does): only the fused loops, which round
        # once, meet the bf16 tolerance. Blocked: three blocks of queries
        # (the last smaller where they do not divide).
        block = f"--attention-block={(lq + 2) // 3}"
        flags = {"decomposed": ["--attention=decomposed"],
                 "blocked": ["--attention=blocked", block],
                 "fused": ["--attention=fused"]}
        for how in ["fused"] if dtype == "bf16" else flags:
            yield Case(f"attention-{name}-{how}", args, body, results,
                       cpu_flags=flags[how], of_largest=True)

    yield from att("plain", (2, 3), 5, 7, 8, 6, scale=0.3)
    yield from att("causal-wide", (2, 2), 5, 7, 4, 4, causal=True)
    yield from att("causal-tall", (2,), 7, 5, 4, 3, causal=True)
    keep = RNG.uniform(size=(5, 6)) < 0.7
    keep[:, 0] = True
    yield from att("i1-mask", (2, 2), 5, 6, 4, 5, mask=((5, 6), "i1", keep))
    keep = keep.copy()
    keep[2, :] = False           # a row that sees no key: NaN (0 / 0)
    yield from att("masked-row", (2,), 5, 6, 4, 5, mask=((5, 6), "i1", keep),
                   grad=False)
    keep = RNG.uniform(size=(2, 1, 5, 6)) < 0.8
    keep[..., 0] = True
    yield from att("i1-mask-causal", (2, 2), 5, 6, 4, 5, causal=True,
                   mask=((2, 1, 5, 6), "i1", keep))
    yield from att("float-mask", (2, 3), 4, 6, 4, 4,
                   mask=((2, 1, 1, 6), "f32",
                         floats((2, 1, 1, 6), -2, 2, special=False)))
    yield from att("float-mask-causal", (2, 3), 7, 6, 4, 4, causal=True,
                   mask=((2, 1, 1, 6), "f32",
                         floats((2, 1, 1, 6), -2, 2, special=False)))
    keep = RNG.uniform(size=(6,)) < 0.7
    keep[0] = True
    yield from att("key-mask-causal", (2,), 5, 6, 4, 3, causal=True,
                   mask=((6,), "i1", keep))
    yield from att("bf16", (2, 2), 6, 6, 8, 8, dtype="bf16", causal=True)
    yield from att("threads", (2, 4), 96, 96, 32, 32, causal=True)


MODEL = """func.func @main(%x: tensor<6x5xf32>, %w1: tensor<5x8xf32> {ober.param = "w1"}, %b1: tensor<8xf32> {ober.param = "b1"}, %w2: tensor<8x3xf32> {ober.param = "w2"}) -> tensor<6x3xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<6x5xf32>, tensor<5x8xf32>) -> tensor<6x8xf32>
  %1 = ober.add %0, %b1 : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %2 = ober.tanh %1 : tensor<6x8xf32>
  %3 = ober.matmul %2, %w2 : (tensor<6x8xf32>, tensor<8x3xf32>) -> tensor<6x3xf32>
  return %3 : tensor<6x3xf32>
}
"""
# AdamW's update of a gradient component near zero is about
# g / (|g| + eps): with eps 1e-8 it turns the f32-versus-double rounding of
# a tiny gradient into up to a whole learning-rate step. eps 1e-4 keeps
# the comparison well conditioned (the update still depends on every
# gradient, moment and bias correction).
TRAIN = ["loss=cross-entropy optimizer=adamw eps=1e-4 label-smoothing=0.1 "
         "clip-norm=1.0",
         "loss=mse optimizer=sgd momentum=0.9 nesterov=1",
         "loss=cross-entropy optimizer=adamw eps=1e-4 micro-batches=2"]


def train_parity(tmp):
    """Training steps built by --ober-build-train-step, 5 steps on both
    engines: every loss within 1e-5 relative, every final parameter within
    1e-4 of its largest magnitude. The MLP under three step options, and
    ober's GPT generator (embeddings, causal attention, layer norms, GELU,
    a tied head) with AdamW, its attention decomposed or kept as one op."""
    failed = 0
    src = os.path.join(tmp, "model.mlir")
    with open(src, "w") as f:
        f.write(MODEL)
    gpt = os.path.join(tmp, "gpt.mlir")
    with open(gpt, "w") as f:
        f.write(subprocess.run(
            [os.path.join(BIN, "ober-translate"),
             "--emit-gpt=layers=2 hidden=16 heads=2 seq=4 vocab=16 batch=2"],
            check=True, capture_output=True, text=True).stdout)
    runs_of = [(src, opts) for opts in TRAIN]
    runs_of.append((gpt, "optimizer=adamw eps=1e-4"))
    # Attention kept as one op: the CPU pipeline decomposes ober.attention
    # and ober.attention_grad, the interpreter runs them as they are.
    runs_of.append((gpt, "optimizer=adamw eps=1e-4 fused-attention=true"))
    runs_of = [(m, o, []) for m, o in runs_of]
    # ... and compiled as the fused loops, and in blocks of 3 queries
    # (two blocks, the second causal through a mask).
    runs_of.append((gpt, "optimizer=adamw eps=1e-4 fused-attention=true",
                    ["--attention=fused"]))
    runs_of.append((gpt, "optimizer=adamw eps=1e-4 fused-attention=true",
                    ["--attention=blocked", "--attention-block=3"]))
    for k, (model, opts, cpu_flags) in enumerate(runs_of):
        d = os.path.join(tmp, f"train{k}")
        os.makedirs(d, exist_ok=True)
        step = os.path.join(d, "step.mlir")
        subprocess.run([os.path.join(BIN, "ober-opt"), model,
                        f"--ober-build-train-step={opts}", "-o", step],
                       check=True)
        micro = 2 if "micro-batches=2" in opts else 1
        lead = (micro, 6 // micro * 2) if micro > 1 else (6,)
        if model == gpt:
            x, y = RNG.integers(0, 16, (2, 4)), RNG.integers(0, 16, (2, 4))
        else:
            x = RNG.standard_normal(lead + (5,)).astype(np.float32)
            y = (RNG.standard_normal(lead + (3,)).astype(np.float32)
                 if "mse" in opts else RNG.integers(0, 3, lead))
        opts = " ".join([os.path.basename(model), opts] + cpu_flags)
        inputs = []
        for n, v in [("x", x), ("y", y)]:
            np.save(os.path.join(d, f"{n}.npy"), v)
            inputs += ["--input", os.path.join(d, f"{n}.npy")]
        runs = {}
        for engine in ["reference", "cpu"]:
            proc = subprocess.run(
                [os.path.join(BIN, "ober-run"), step, "--train-steps", "5",
                 "--lr", "0.003" if model == gpt else "0.05",
                 f"--engine={engine}", "--save-params",
                 os.path.join(d, engine)] + inputs
                + (cpu_flags if engine == "cpu" else []),
                capture_output=True, text=True)
            if proc.returncode:
                print(f"  train '{opts}': {engine} failed: {proc.stderr}")
                failed += 1
                break
            runs[engine] = [float(line.split()[-1])
                            for line in proc.stdout.splitlines()]
        if len(runs) < 2:
            continue
        ok = np.allclose(runs["cpu"], runs["reference"], rtol=1e-5, atol=0)
        worst = ""
        for name in sorted(os.listdir(os.path.join(d, "reference"))):
            a = np.load(os.path.join(d, "reference", name))
            b = np.load(os.path.join(d, "cpu", name))
            # Relative to the tensor's scale (a parameter near zero has no
            # meaningful relative error of its own). AdamW divides by the
            # root of the second moment, so a small gradient component's f32
            # rounding (against the interpreter's double) moves a bias that
            # starts at zero by up to ~3e-5 of its size in 5 steps; 1e-4
            # still catches any wrong kernel (those are off by far more).
            err = float(np.max(np.abs(b - a)) / max(np.max(np.abs(a)), 1e-30))
            if err > 1e-4:
                ok = False
                worst += f" {name}: {err:.2g}"
        print(f"  train '{opts}': {'ok' if ok else 'FAILED'} "
              f"(losses {runs['cpu'][0]:.6g} .. {runs['cpu'][-1]:.6g})"
              + worst)
        failed += not ok
    return failed


def run_case(case, tmp):
    d = os.path.join(tmp, case.name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "case.mlir")
    with open(src, "w") as f:
        f.write(case.module())
    inputs = []
    for n, _, _, value in case.args:
        path = os.path.join(d, f"{n}.npy")
        np.save(path, value)
        inputs += ["--input", path]
    outs = {}
    for engine in ["reference", "cpu"]:
        out = os.path.join(d, engine)
        flags = case.cpu_flags if engine == "cpu" else []
        proc = subprocess.run([os.path.join(BIN, "ober-run"), src,
                               f"--engine={engine}", "--output-dir", out]
                              + flags + inputs, capture_output=True, text=True)
        if proc.returncode:
            return [f"{engine} failed: {proc.stderr.strip()}"]
        outs[engine] = [np.load(os.path.join(out, f"{k}.npy"))
                        for k in range(len(case.results))]
    problems = []
    for k, ((value, _, dtype), ref, cpu) in enumerate(
            zip(case.results, outs["reference"], outs["cpu"])):
        if ref.shape != cpu.shape:
            problems.append(f"{value}: shape {cpu.shape}, expected {ref.shape}")
        elif dtype in TOL:
            rtol, atol = TOL[dtype]
            if case.of_largest:
                finite = np.abs(ref[np.isfinite(ref)].astype(np.float64))
                atol = max(atol, rtol * (finite.max() if finite.size else 0))
            ok = np.isclose(cpu.astype(np.float64), ref.astype(np.float64),
                            rtol=rtol, atol=atol, equal_nan=True)
            if not ok.all():
                at = np.argwhere(~ok)[0]
                problems.append(f"{value} ({dtype}) at {tuple(at)}: "
                                f"{cpu[tuple(at)]} vs {ref[tuple(at)]}")
        elif not np.array_equal(cpu, ref):
            at = np.argwhere(cpu != ref)[0]
            problems.append(f"{value} ({dtype}) at {tuple(at)}: "
                            f"{cpu[tuple(at)]} vs {ref[tuple(at)]}")
    return problems


def main():
    global BIN
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", help="keep the cases in this folder")
    parser.add_argument("--only", help="run the cases whose name starts so "
                        "(and no training)")
    args = parser.parse_args()
    BIN = args.bin
    cases = [c for gen in [unary_cases, binary_cases, compare_select_cast_cases,
                           reduction_cases, view_cases, matmul_cases,
                           loss_cases, gather_cases,
                           norm_and_shape_cases, conv_cases, pool_cases,
                           batch_norm_cases, index_cases, threaded_cases,
                           attention_cases]
             for c in gen()]
    if args.only:
        cases = [c for c in cases if c.name.startswith(args.only)]
    tmp = args.keep or tempfile.mkdtemp()
    failed = 0
    for case in cases:
        problems = run_case(case, tmp)
        print(f"  {case.name}: {'ok' if not problems else 'FAILED'}")
        for p in problems:
            print(f"    {p}")
        failed += bool(problems)
    print(f"{len(cases) - failed} of {len(cases)} cases agree")
    if not args.only:
        failed += train_parity(tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
