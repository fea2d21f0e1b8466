#!/usr/bin/python3
"""Partitioned training steps against the serial step, on simulated devices.

Each model (torch.nn, exported to ONNX, step built by
`ober-opt --ober-build-train-step`) is trained 5 AdamW steps in fp32 by
`ober-run`, once serially and once per plan after
`--ober-plan=... --ober-partition`. Checked for every plan:
  * every step's loss and every final parameter within 1e-5 relative of
    the serial run;
  * the bytes of each kind of collective `ober-run --run-stats` reports for
    one step equal the bytes the planner's report predicts.

  partition_test.py --bin build/bin
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
from training_parity_test import MLP, SmallCNN, DecoderBlock  # noqa: E402
from plan_options import plan_option, predicted_bytes  # noqa: E402

BIN = None
STEPS = 5
# Every PLAN_STRIDE-th plan of each model's list (--plan-stride): the
# sanitizer run (utils/sanitize.sh asan-partition) takes every second, the
# uninstrumented one all.
PLAN_STRIDE = 1
warnings.filterwarnings("ignore")

# (dp, tp, pp, zero stage, micro-batches per step, recomputation, schedule
#  [, sequence parallelism])
PLANS = [
    (2, 1, 1, 0, 1, "none", "1f1b"), (4, 1, 1, 0, 1, "none", "1f1b"),
    (2, 1, 1, 1, 1, "none", "1f1b"), (4, 1, 1, 1, 1, "none", "1f1b"),
    (4, 1, 1, 2, 1, "none", "1f1b"), (4, 1, 1, 3, 1, "none", "1f1b"),
    (2, 1, 1, 0, 2, "none", "1f1b"), (2, 1, 1, 3, 2, "none", "1f1b"),
    (1, 2, 1, 0, 1, "none", "1f1b"), (2, 2, 1, 0, 1, "none", "1f1b"),
    (2, 2, 1, 1, 1, "none", "1f1b"), (2, 2, 1, 3, 2, "none", "1f1b"),
    (2, 1, 1, 0, 1, "full", "1f1b"), (2, 1, 1, 3, 1, "selective", "1f1b"),
    (1, 2, 1, 0, 1, "full", "1f1b"), (2, 2, 1, 1, 2, "selective", "1f1b"),
    (1, 1, 2, 0, 2, "none", "gpipe"), (1, 1, 2, 0, 2, "none", "1f1b"),
    (1, 1, 2, 0, 2, "none", "zero-bubble"), (1, 1, 2, 0, 2, "full", "1f1b"),
    (2, 1, 2, 1, 2, "none", "1f1b"), (2, 1, 2, 1, 2, "selective", "gpipe"),
    (1, 2, 2, 0, 2, "none", "1f1b"), (2, 2, 2, 1, 2, "none", "1f1b"),
    # Sequence parallelism.
    (1, 2, 1, 0, 1, "none", "1f1b", 1), (2, 2, 1, 1, 1, "selective", "1f1b", 1),
    (1, 2, 2, 0, 2, "none", "1f1b", 1),
]


def micro_of(plan):
    return plan[4]


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"{' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout, proc.stderr


def losses_of(stdout):
    return [float(l.split()[3]) for l in stdout.splitlines()
            if l.startswith("step ")]


def measured_bytes(stderr):
    out = {}
    for kind, b in re.findall(r"collective \d+: (\S+) over \d+ devices, "
                              r"(\d+) bytes", stderr):
        out[kind] = out.get(kind, 0) + int(b)
    return out


class GPT(DecoderBlock):
    """The parity test's decoder block without the attention input bias:
    the key bias's gradient is zero in exact arithmetic, so Adam turns
    rounding noise into its steps and no two summation orders agree on it."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(self.qkv.in_features, self.qkv.out_features,
                                   bias=False)


class Partitioned(unittest.TestCase):
    def check(self, model, x, y, lr, plans=PLANS, precision="f32", build=""):
        plans = list(plans)[::PLAN_STRIDE]
        torch.manual_seed(0)
        model.train()
        with tempfile.TemporaryDirectory() as tmp:
            batch = x.shape[0]
            steps, serial = {}, {}
            for micro in sorted({p[4] for p in plans}):
                # The model sees one micro-batch; the step takes
                # [micro, batch / micro, ...].
                onnx_path = os.path.join(tmp, f"model{micro}.onnx")
                torch.onnx.export(model, (x[:batch // micro],), onnx_path,
                                  opset_version=17,
                                  training=torch.onnx.TrainingMode.TRAINING,
                                  do_constant_folding=False,
                                  input_names=["x"], output_names=["logits"])
                step = os.path.join(tmp, f"step{micro}.mlir")
                run([os.path.join(BIN, "ober-opt"), onnx_path,
                     "--ober-build-train-step=loss=cross-entropy "
                     f"optimizer=adamw micro-batches={micro} {build}", "-o",
                     step])
                args = []
                for name, t in (("x", x), ("y", y)):
                    path = os.path.join(tmp, f"{name}{micro}.npy")
                    np.save(path, t.numpy().reshape(
                        (micro, batch // micro) + tuple(t.shape[1:]))
                        if micro > 1 else t.numpy())
                    args += ["--input", path]
                saved = os.path.join(tmp, f"serial{micro}")
                out, _ = run([os.path.join(BIN, "ober-run"), step,
                              "--train-steps", str(STEPS), "--lr", str(lr),
                              "--save-params", saved] + args)
                steps[micro] = (step, args)
                serial[micro] = (losses_of(out), saved)
            for plan in plans:
                with self.subTest(plan=plan):
                    self.check_plan(tmp, steps[micro_of(plan)],
                                    serial[micro_of(plan)], plan, batch, lr,
                                    precision)

    def check_plan(self, tmp, step, serial, plan, batch, lr, precision):
        dp, tp, pp, zero, micro, recompute, schedule = plan[:7]
        sp = plan[7] if len(plan) > 7 else 0
        path, args = step
        name = (f"dp{dp}-tp{tp}-pp{pp}-zero{zero}-m{micro}-{recompute}-"
                f"{schedule}-sp{sp}")
        part = os.path.join(tmp, name + ".mlir")
        report = os.path.join(tmp, name + ".json")
        run([os.path.join(BIN, "ober-opt"), path,
             "--ober-plan=" + plan_option(batch, dp, tp, pp, zero, micro,
                                          schedule, recompute, precision, sp),
             f"--ober-plan-report={report}", "--ober-partition", "-o", part])
        saved = os.path.join(tmp, name)
        out, stats = run([os.path.join(BIN, "ober-run"), part,
                        "--train-steps", str(STEPS), "--lr", str(lr),
                        "--save-params", saved, "--run-stats"] + args)
        self.assertIn(f"devices: {dp * tp * pp}", stats)
        losses, reference = losses_of(out), serial[0]
        self.assertEqual(len(losses), STEPS)
        # bf16 and f16 compute (f32 master weights) track the f32 run to
        # their precision; f32 plans match it.
        tolerance = 1e-5 if precision == "f32" else 2e-2
        for i, (a, b) in enumerate(zip(losses, reference)):
            self.assertLessEqual(abs(a - b), tolerance * abs(b),
                                 f"{name} step {i}: {a} vs serial {b}")
        if precision != "f32":
            self.check_bytes(report, stats, name)
            return
        names = sorted(os.listdir(serial[1]))
        self.assertEqual(names, sorted(os.listdir(saved)))
        for f in names:
            a = np.load(os.path.join(saved, f))
            b = np.load(os.path.join(serial[1], f))
            err = float(np.abs(a - b).max())
            self.assertLessEqual(err, 1e-5 * float(np.abs(b).max()) + 1e-7,
                                 f"{name}: parameter {f[:-4]} off by {err}")
        self.check_bytes(report, stats, name)

    def check_bytes(self, report, stats, name):
        """The bytes of each kind of collective equal the planner's report
        (the cost model's collectives, no dry run of the partitioner)."""
        with open(report) as r:
            planned = json.load(r)
        self.assertEqual(measured_bytes(stats),
                         predicted_bytes(planned["collectives"]), name)

    # Reduced-precision compute: data, tensor and pipeline parallelism.
    REDUCED = [(2, 1, 1, 1, 1, "none", "1f1b"), (2, 1, 1, 3, 1, "none", "1f1b"),
               (1, 2, 1, 0, 1, "none", "1f1b", 1),
               (1, 1, 2, 0, 2, "full", "1f1b"), (2, 2, 2, 1, 2, "none", "1f1b")]

    def check_gpt(self, precision, plans, build=""):
        torch.manual_seed(3)
        self.check(GPT(), torch.randint(0, 40, (4, 8)),
                   torch.randint(0, 40, (4, 8)), lr=3e-3, precision=precision,
                   plans=plans, build=build)

    def test_gpt_bf16(self):
        self.check_gpt("bf16", self.REDUCED)

    def test_gpt_f16(self):
        # f16 compute with dynamic loss scaling and gradient clipping (the
        # serial step scales too: powers of two change nothing in f32); a
        # first scale small enough that no step overflows.
        self.check_gpt("f16", self.REDUCED + [
            (2, 1, 2, 1, 2, "none", "1f1b"),
            (1, 1, 2, 0, 2, "none", "interleaved-1f1b")],
            build="loss-scale=dynamic loss-scale-init=4096 clip-norm=1.0")

    def test_f16_overflow(self):
        # An inf in one data-parallel replica's samples skips the step on
        # every device: the saved parameters equal the serial run's, which
        # skipped it too (ZeRO shards must agree on the skip).
        torch.manual_seed(1)
        x = torch.randn(8, 12)
        x[0, 3] = float("inf")
        model = MLP()
        with tempfile.TemporaryDirectory() as tmp:
            onnx_path = os.path.join(tmp, "mlp.onnx")
            torch.onnx.export(model, (x,), onnx_path, opset_version=17,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False, input_names=["x"],
                              output_names=["logits"])
            step = os.path.join(tmp, "step.mlir")
            run([os.path.join(BIN, "ober-opt"), onnx_path,
                 "--ober-build-train-step=loss=cross-entropy optimizer=adamw "
                 "loss-scale=dynamic", "-o", step])
            args = []
            for name, t in (("x", x), ("y", torch.randint(0, 5, (8,)))):
                np.save(os.path.join(tmp, name + ".npy"), t.numpy())
                args += ["--input", os.path.join(tmp, name + ".npy")]
            serial = os.path.join(tmp, "serial")
            run([os.path.join(BIN, "ober-run"), step, "--train-steps", "2",
                 "--lr", "0.01", "--save-params", serial] + args)
            for zero in (1, 3):
                part = os.path.join(tmp, f"zero{zero}.mlir")
                run([os.path.join(BIN, "ober-opt"), step,
                     "--ober-plan=cluster=cpu gpus=2 global-batch=8 dp=2 tp=1 "
                     f"pp=1 zero={zero} recompute=none precision=f16",
                     "--ober-partition", "-o", part])
                saved = os.path.join(tmp, f"saved{zero}")
                out, _ = run([os.path.join(BIN, "ober-run"), part,
                              "--train-steps", "2", "--lr", "0.01",
                              "--save-params", saved] + args)
                self.assertIn("step 1 loss nan", out)
                for f in os.listdir(serial):
                    np.testing.assert_array_equal(
                        np.load(os.path.join(saved, f)),
                        np.load(os.path.join(serial, f)), f"zero{zero} {f}")

    def test_emitted_gpt(self):
        # ober's own GPT generator: a vocabulary-parallel tied embedding in
        # the plan, a fused QKV with bias, cross-entropy over [batch, seq,
        # vocab] logits; weights from a seed. SGD with momentum: the key
        # bias's gradient is zero in exact arithmetic, and Adam would turn
        # its rounding noise into full-size steps.
        self.check_emitted_gpt(
            [(2, 1, 1, 1, 1, "none", "1f1b"), (1, 2, 1, 0, 1, "none", "1f1b"),
             (1, 2, 1, 0, 1, "selective", "1f1b", 1),
             (2, 2, 1, 1, 1, "none", "1f1b"), (1, 1, 2, 0, 2, "none", "1f1b"),
             (1, 2, 2, 0, 2, "full", "gpipe")])

    def test_emitted_gpt_fused_attention(self):
        # The same with attention kept as one op (ober.attention and
        # ober.attention_grad): split by batch and heads, recomputed whole.
        self.check_emitted_gpt(
            [(2, 1, 1, 1, 1, "none", "1f1b"), (1, 2, 1, 0, 1, "none", "1f1b"),
             (2, 2, 1, 1, 1, "none", "1f1b"), (1, 2, 2, 0, 2, "full", "gpipe")],
            build=" fused-attention=true")

    def check_emitted_gpt(self, plans, build=""):
        batch = 4
        rng = np.random.default_rng(0)
        with tempfile.TemporaryDirectory() as tmp:
            for micro in sorted({p[4] for p in plans}):
                gpt = run([os.path.join(BIN, "ober-translate"),
                           "--emit-gpt=layers=2 hidden=32 heads=4 seq=8 "
                           f"vocab=16 batch={batch // micro}"])[0]
                src = os.path.join(tmp, f"gpt{micro}.mlir")
                with open(src, "w") as f:
                    f.write(gpt)
                step = os.path.join(tmp, f"step{micro}.mlir")
                run([os.path.join(BIN, "ober-opt"), src,
                     "--ober-build-train-step=optimizer=sgd momentum=0.9 "
                     f"micro-batches={micro}{build}", "-o", step])
                args = ["--init-seed", "7"]
                for name in ("tokens", "targets"):
                    path = os.path.join(tmp, f"{name}{micro}.npy")
                    shape = (micro, batch // micro, 8) if micro > 1 else (batch, 8)
                    np.save(path, rng.integers(0, 16, shape))
                    args += ["--input", path]
                saved = os.path.join(tmp, f"serial{micro}")
                out, _ = run([os.path.join(BIN, "ober-run"), step,
                              "--train-steps", str(STEPS), "--lr", "0.003",
                              "--save-params", saved] + args)
                for plan in plans:
                    if plan[4] != micro:
                        continue
                    with self.subTest(plan=plan):
                        self.check_plan(tmp, (step, args), (losses_of(out), saved),
                                        plan, batch, 0.003, "f32")

    def emit_gpt_step(self, tmp, batch, build, dropout=0.0):
        """ober's GPT generator for `batch` samples and its train step."""
        gpt = run([os.path.join(BIN, "ober-translate"),
                   "--emit-gpt=layers=2 hidden=32 heads=4 seq=8 vocab=16 "
                   f"batch={batch} dropout={dropout}"])[0]
        name = f"gpt{batch}-{dropout}-{len(os.listdir(tmp))}"
        src = os.path.join(tmp, name + ".mlir")
        with open(src, "w") as f:
            f.write(gpt)
        step = os.path.join(tmp, name + "-step.mlir")
        run([os.path.join(BIN, "ober-opt"), src,
             f"--ober-build-train-step={build}", "-o", step])
        return step

    def check_emitted(self, tmp, serial_step, step, plans, inputs, batch,
                      lr=0.003):
        """Trains `serial_step` and, per plan over the global `batch`, the
        partitioned `step` on the same `inputs` (name -> array)."""
        args = ["--init-seed", "7"]
        for name, value in inputs.items():
            path = os.path.join(tmp, f"{name}-{len(os.listdir(tmp))}.npy")
            np.save(path, value)
            args += ["--input", path]
        saved = os.path.join(tmp, f"serial-{len(os.listdir(tmp))}")
        out, _ = run([os.path.join(BIN, "ober-run"), serial_step,
                      "--train-steps", str(STEPS), "--lr", str(lr),
                      "--save-params", saved] + args)
        for plan in plans:
            with self.subTest(plan=plan, batch=batch):
                self.check_plan(tmp, (step, args), (losses_of(out), saved),
                                plan, batch, lr, "f32")

    # AdamW for the generator's GPT with eps 1e-4: its key bias's gradient
    # is zero in exact arithmetic (see test_emitted_gpt), and with eps 1e-8
    # Adam turns its rounding noise (~1e-9) into full-size steps that no
    # two summation orders agree on (that bias alone then differs by ~1e-5);
    # eps 1e-4 keeps those steps below 1e-7 while the other gradients
    # (1e-3 and up) still take Adam's normalised steps.
    ADAMW = "optimizer=adamw eps=1e-4"

    def test_gpt_dropout(self):
        # Dropout 0.1 at Megatron's sites (attention probabilities, after
        # the attention projection and the MLP), a seed per step: the seed
        # stays whole and every device drops what the serial step drops in
        # its block of the batch, of the heads or of the hidden units.
        plans = [(2, 1, 1, 0, 1, "none", "1f1b"),
                 (1, 2, 1, 0, 1, "none", "1f1b"),
                 (1, 1, 2, 0, 1, "none", "1f1b"),
                 (2, 2, 1, 0, 1, "none", "1f1b")]
        rng = np.random.default_rng(1)
        with tempfile.TemporaryDirectory() as tmp:
            step = self.emit_gpt_step(tmp, 4, self.ADAMW, dropout=0.1)
            inputs = {"tokens": rng.integers(0, 16, (4, 8)),
                      "targets": rng.integers(0, 16, (4, 8)),
                      "seed": rng.integers(0, 1 << 40, (STEPS,))}
            self.check_emitted(tmp, step, step, plans, inputs, 4)

    def test_plan_global_batch(self):
        # A step built for 4 samples, planned for 8: built again for 8 by
        # the partitioner, it trains like a step built for 8 on the same 8
        # samples (as one batch, micro-batches merged), with and without
        # micro-batches.
        plans = [(2, 1, 1, 0, 1, "none", "1f1b"),
                 (1, 2, 1, 0, 1, "none", "1f1b"),
                 (2, 1, 1, 1, 2, "none", "1f1b"),
                 (1, 1, 2, 0, 2, "none", "1f1b")]
        rng = np.random.default_rng(2)
        with tempfile.TemporaryDirectory() as tmp:
            small = self.emit_gpt_step(tmp, 4, self.ADAMW)
            serial = self.emit_gpt_step(tmp, 8, self.ADAMW)
            inputs = {"tokens": rng.integers(0, 16, (8, 8)),
                      "targets": rng.integers(0, 16, (8, 8))}
            self.check_emitted(tmp, serial, small, plans, inputs, 8)

    def test_default_step_micro_batches(self):
        # Plans with 2 and 4 micro-batches from a step built with the
        # default one: the partitioner accumulates them as the builder
        # would; it trains like the serial step on the same samples.
        plans = [(1, 1, 2, 0, 2, "none", "1f1b"),
                 (2, 1, 1, 0, 2, "none", "1f1b"),
                 (1, 1, 2, 0, 4, "none", "gpipe"),
                 (2, 2, 1, 0, 2, "none", "1f1b"),
                 (1, 1, 1, 0, 4, "none", "1f1b")]
        rng = np.random.default_rng(3)
        with tempfile.TemporaryDirectory() as tmp:
            step = self.emit_gpt_step(tmp, 8, self.ADAMW)
            inputs = {"tokens": rng.integers(0, 16, (8, 8)),
                      "targets": rng.integers(0, 16, (8, 8))}
            self.check_emitted(tmp, step, step, plans, inputs, 8)

    def test_global_batch_refused(self):
        # A model that folds its batch into its features takes no other
        # batch: refused, naming the input, its shape and the plan's batch.
        model = """
func.func @folded(%x: tensor<8x4xf32>, %w: tensor<32x3xf32> {ober.param = "w"}) -> tensor<1x3xf32> {
  %0 = ober.reshape %x : tensor<8x4xf32> to tensor<1x32xf32>
  %1 = ober.matmul %0, %w : (tensor<1x32xf32>, tensor<32x3xf32>) -> tensor<1x3xf32>
  return %1 : tensor<1x3xf32>
}
"""
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "folded.mlir")
            with open(src, "w") as f:
                f.write(model)
            proc = subprocess.run(
                [os.path.join(BIN, "ober-opt"), src,
                 "--ober-build-train-step=loss=mse optimizer=sgd",
                 "--ober-plan=cluster=cpu gpus=1 global-batch=16 dp=1 tp=1 "
                 "pp=1 zero=0 recompute=none precision=f32",
                 "--ober-partition"], capture_output=True, text=True)
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("global batch of 16 samples", proc.stderr)
            self.assertIn("batch input 'input0' ('tensor<8x4xf32>') cannot "
                          "take 16 samples", proc.stderr)

    def test_mlp(self):
        torch.manual_seed(1)
        # Pipelines over 4 and 8 micro-batches: loops in steady state, with
        # activations kept in rings between a micro-batch's passes.
        self.check(MLP(), torch.randn(8, 12), torch.randint(0, 5, (8,)),
                   lr=1e-2,
                   plans=PLANS + [(1, 1, 2, 0, 8, "none", "1f1b"),
                                  (1, 1, 2, 0, 8, "none", "zero-bubble"),
                                  (1, 1, 2, 0, 4, "full", "gpipe")])

    def test_cnn(self):
        torch.manual_seed(2)
        # With full recomputation the backward pass runs the batch norm
        # again, reading the running statistics its micro-batch began with
        # (later forwards have updated them since).
        self.check(SmallCNN(), torch.randn(8, 3, 8, 8),
                   torch.randint(0, 6, (8,)), lr=5e-3,
                   plans=PLANS + [(1, 1, 2, 0, 4, "full", "1f1b"),
                                  (2, 1, 2, 0, 4, "none", "1f1b")])

    def test_program_size(self):
        # The program does not grow with the micro-batches: each schedule
        # partitions 8 and 32 micro-batches into programs of as many ops.
        src = run([os.path.join(BIN, "ober-translate"),
                   "--emit-gpt=layers=4 hidden=16 heads=2 seq=4 vocab=16 "
                   "batch=1"])[0]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "gpt.mlir")
            with open(path, "w") as f:
                f.write(src)
            step = os.path.join(tmp, "step.mlir")
            run([os.path.join(BIN, "ober-opt"), path,
                 f"--ober-build-train-step={self.ADAMW}", "-o", step])
            for schedule in ["1f1b", "gpipe", "zero-bubble",
                             "interleaved-1f1b"]:
                sizes = []
                for batch in [8, 32]:
                    out = run([os.path.join(BIN, "ober-opt"), step,
                               "--ober-plan=cluster=cpu gpus=2 dp=1 tp=1 "
                               f"pp=2 zero=0 global-batch={batch} "
                               f"micro-batch=1 schedule={schedule}"
                               + (" chunks=2" if schedule.startswith("inter")
                                  else ""),
                               "--ober-partition"])[0]
                    sizes.append(len(re.findall(r"= (ober|shard)\.", out)))
                self.assertEqual(sizes[0], sizes[1], schedule)

    def test_gpt(self):
        torch.manual_seed(3)
        # Three stages (embedding, attention, MLP and head): the
        # zero-bubble order differs from 1F1B on the middle stage.
        self.check(GPT(), torch.randint(0, 40, (4, 8)),
                   torch.randint(0, 40, (4, 8)), lr=3e-3,
                   plans=PLANS + [(1, 1, 3, 0, 4, "none", "1f1b"),
                                  (1, 1, 3, 0, 4, "none", "zero-bubble"),
                                  (1, 1, 3, 0, 4, "full", "gpipe"),
                                  # Two chunks per device.
                                  (1, 1, 2, 0, 2, "none", "interleaved-1f1b"),
                                  (2, 1, 2, 1, 2, "selective",
                                   "interleaved-1f1b"),
                                  (1, 2, 2, 0, 2, "none", "interleaved-1f1b")])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--plan-stride", type=int, default=1)
    args, rest = parser.parse_known_args()
    BIN = args.bin
    PLAN_STRIDE = max(1, args.plan_stride)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
