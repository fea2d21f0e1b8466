#!/usr/bin/python3
"""Every plan the search returns runs: the sweep of issue 13.

For each model (an MLP, a CNN with batch norm, ober's GPT with dropout 0.1,
an ONNX nn.TransformerEncoder classifier and a TorchScript decoder), the
training step is built once with default options (AdamW, one micro-batch).
On `cluster=cpu` with 2, 4 and 8 devices and a global batch of 1x and 2x
the step's batch, the free search (nothing pinned) chooses a plan; the plan
and the runners-up the report lists (`alternatives`, up to ALTERNATIVES of
them, each pinned in full) are partitioned from that default-built step and
trained STEPS steps on the simulated devices. Each case is checked for:

  partitions  `--ober-plan ... --ober-partition` succeeds;
  trains      every loss within 1e-5 relative of the serial program trained
              on the same global batch (one step over the whole batch; the
              plan's micro-batches for batch norm, whose statistics are per
              micro-batch), and
              the final parameters within 1e-5 of its (not for models with
              a bias whose gradient is zero in exact arithmetic, see GPT);
  bytes       the bytes of each collective kind `ober-run --run-stats`
              measures equal the report's `collectives` (the cost model's:
              the planner runs no partitioner).

What does not hold yet is listed in plan_sweep_expected.txt, one
`<case> <check>: <why>` per line; the test fails on a check that fails
and is not listed, and on one listed that now holds (delete its line).
`--write-expected` rewrites the list from a run (review the diff).

  plan_sweep_test.py --bin build/bin [--quick] [--write-expected]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_parity_test import MLP, SmallCNN  # noqa: E402
from partition_test import (GPT, losses_of, measured_bytes,  # noqa: E402
                            predicted_bytes)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "plan_sweep_expected.txt")
BIN = None
STEPS = 3
LR = 3e-3
DEVICES = (2, 4, 8)
BATCH_FACTORS = (1, 2)
ALTERNATIVES = 2
CHECKS = ("partitions", "trains", "bytes")
warnings.filterwarnings("ignore")


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def tool(name):
    return os.path.join(BIN, name)


class Encoder(torch.nn.Module):
    """nn.TransformerEncoder (batch first, two layers) with a classifier
    over the mean of its tokens."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2,
                                                   enable_nested_tensor=False)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


class Model:
    """A model of the sweep: `source(batch, tmp)` writes the model for a
    batch size (same weights whatever the batch) and returns its path;
    `inputs(batch, rng)` makes a batch; `build` are the train-step options;
    `params` whether final parameters are compared; `per_micro_batch`
    whether the model computes statistics per micro-batch (batch norm), so
    that the serial reference takes the plan's micro-batches too."""

    def __init__(self, name, batch, source, inputs, build, params=True,
                 run_args=(), per_micro_batch=False):
        self.name, self.batch, self.source = name, batch, source
        self.inputs, self.build, self.params = inputs, build, params
        self.run_args = list(run_args)
        self.per_micro_batch = per_micro_batch


def torch_source(module, example, fmt):
    """Exports `module` (train mode) with ober.export, which keeps its
    buffers: every batch size's file starts from the same running
    statistics."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import ober  # noqa: E402 (the package from this tree)

    def source(batch, tmp):
        torch.manual_seed(0)
        module.train()
        path = os.path.join(tmp, f"model-b{batch}.{fmt}")
        ober.export(module, (example(batch),), path)
        return path
    return source


def gpt_source(batch, tmp):
    code, out, err = run([tool("ober-translate"),
                          "--emit-gpt=layers=2 hidden=32 heads=4 seq=8 "
                          f"vocab=16 batch={batch} dropout=0.1"])
    if code:
        raise RuntimeError(err)
    path = os.path.join(tmp, f"gpt-b{batch}.mlir")
    with open(path, "w") as f:
        f.write(out)
    return path


def models():
    torch.manual_seed(1)
    mlp, cnn, enc, dec = MLP(), SmallCNN(), Encoder(), GPT()
    ints = lambda high, shape: lambda b, rng: [  # noqa: E731
        rng.integers(0, high, (b,) + shape)]
    return [
        Model("mlp", 4, torch_source(mlp, lambda b: torch.randn(b, 12), "onnx"),
              lambda b, rng: [rng.standard_normal((b, 12), np.float32),
                              rng.integers(0, 5, (b,))],
              "loss=cross-entropy optimizer=adamw"),
        Model("cnn-bn", 4,
              torch_source(cnn, lambda b: torch.randn(b, 3, 8, 8), "onnx"),
              lambda b, rng: [rng.standard_normal((b, 3, 8, 8), np.float32),
                              rng.integers(0, 6, (b,))],
              "loss=cross-entropy optimizer=adamw", per_micro_batch=True),
        # A key bias (here in the fused QKV) has a zero gradient in exact
        # arithmetic (softmax ignores a shift of all scores):
        # AdamW turns its rounding noise into full steps, so only the
        # losses (which the key bias cannot change) are compared.
        Model("gpt-dropout", 4, gpt_source,
              lambda b, rng: [rng.integers(0, 16, (b, 8)),
                              rng.integers(0, 16, (b, 8)), np.array(11)],
              "optimizer=adamw", params=False, run_args=["--init-seed", "7"]),
        # Its packed in_proj_bias holds a key bias too (see above).
        Model("onnx-encoder", 4,
              torch_source(enc, lambda b: torch.randn(b, 8, 16), "onnx"),
              lambda b, rng: [rng.standard_normal((b, 8, 16), np.float32),
                              rng.integers(0, 5, (b,))],
              "loss=cross-entropy optimizer=adamw", params=False),
        Model("torchscript-decoder", 4,
              torch_source(dec, lambda b: torch.randint(0, 40, (b, 8)), "pt"),
              lambda b, rng: [rng.integers(0, 40, (b, 8)),
                              rng.integers(0, 40, (b, 8))],
              "loss=cross-entropy optimizer=adamw"),
    ]


def build_step(model, batch, tmp, micro=1):
    """The step of `batch` samples per step in `micro` micro-batches."""
    src = model.source(batch // micro, tmp)
    step = os.path.join(tmp, f"{model.name}-step-b{batch}-m{micro}.mlir")
    code, _, err = run([tool("ober-opt"), src,
                        f"--ober-build-train-step={model.build} "
                        f"micro-batches={micro}", "-o", step])
    if code:
        raise RuntimeError(f"building {model.name}'s step failed:\n{err}")
    return step


def save_inputs(model, batch, tmp):
    rng = np.random.default_rng(batch)
    args = []
    for i, a in enumerate(model.inputs(batch, rng)):
        path = os.path.join(tmp, f"{model.name}-in{i}-b{batch}.npy")
        np.save(path, a)
        args += ["--input", path]
    return args + model.run_args


def train(step, args, saved, stats=False):
    code, out, err = run([tool("ober-run"), step, "--train-steps", str(STEPS),
                          "--lr", str(LR), "--save-params", saved]
                         + (["--run-stats"] if stats else []) + args)
    return code, losses_of(out), err


PIN_KEYS = (("tp", "tp"), ("pp", "pp"), ("dp", "dp"),
            ("micro_batch", "micro-batch"), ("schedule", "schedule"),
            ("chunks", "chunks"), ("recompute", "recompute"),
            ("sequence_parallel", "sequence-parallel"), ("zero_stage", "zero"))


# Full recomputation's granularity and groups (pinnable only with it).
FULL_PIN_KEYS = (("recompute_every", "recompute-every"),
                 ("recompute_groups", "recompute-groups"))


def pins_of(config):
    keys = PIN_KEYS + (FULL_PIN_KEYS if config["recompute"] == "full" else ())
    return " ".join(f"{opt}={int(config[k]) if isinstance(config[k], bool) else config[k]}"
                    for k, opt in keys)


def label(config):
    return (f"t{config['tp']}p{config['pp']}d{config['dp']}"
            f"mb{config['micro_batch']}x{config['num_micro_batches']}"
            f"-{config['schedule']}"
            + (f"x{config['chunks']}" if config["chunks"] > 1 else "")
            + f"-{config['recompute']}-sp{int(config['sequence_parallel'])}"
            f"-z{config['zero_stage']}")


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b) + 1e-7


def check_case(model, step, serial, args, devices, batch, pins, tmp, name):
    """The checks of one plan; returns {check: None (holds) or why not}."""
    result = {c: "not reached" for c in CHECKS}
    part = os.path.join(tmp, name + ".mlir")
    report = os.path.join(tmp, name + ".json")
    code, _, err = run([tool("ober-opt"), step,
                        f"--ober-plan=cluster=cpu gpus={devices} "
                        f"global-batch={batch} {pins}",
                        f"--ober-plan-report={report}", "--ober-partition",
                        "-o", part])
    if code:
        result["partitions"] = first_error(err)
        return result
    result["partitions"] = None
    saved = os.path.join(tmp, name)
    code, losses, err = train(part, args, saved, stats=True)
    serial_losses, serial_saved = serial
    if code:
        result["trains"] = first_error(err)
        return result
    why = None
    if len(losses) != STEPS:
        why = f"{len(losses)} losses"
    for i, (a, b) in enumerate(zip(losses, serial_losses)):
        if why is None and not close(a, b, 1e-5):
            why = f"step {i} loss {a} vs serial {b}"
    if why is None and model.params:
        for f in sorted(os.listdir(serial_saved)):
            a = np.load(os.path.join(saved, f))
            b = np.load(os.path.join(serial_saved, f))
            err_max = float(np.abs(a - b).max())
            if err_max > 1e-5 * float(np.abs(b).max()) + 1e-7:
                why = f"parameter {f[:-4]} off by {err_max:.2e}"
                break
    result["trains"] = why
    with open(report) as r:
        planned = json.load(r)
    measured, predicted = measured_bytes(err), predicted_bytes(
        planned["collectives"])
    result["bytes"] = (None if measured == predicted else
                       f"measured {measured} vs the report's {predicted}")
    return result


def first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return re.sub(r"^.*?error: ", "", line).strip()[:300]
    return stderr.strip().splitlines()[-1][:300] if stderr.strip() else "failed"


def sweep(selected, devices_list, factors):
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in selected:
            step = build_step(model, model.batch, tmp)
            for factor in factors:
                batch = model.batch * factor
                args = save_inputs(model, batch, tmp)
                serial = {}

                def reference(micro):
                    """The serial program on the same global batch, with
                    `micro` micro-batches."""
                    if micro not in serial:
                        ref = (step if factor == 1 and micro == 1 else
                               build_step(model, batch, tmp, micro))
                        saved = os.path.join(
                            tmp, f"{model.name}-serial-b{batch}-m{micro}")
                        code, losses, err = train(ref, args, saved)
                        if code:
                            raise RuntimeError(
                                f"serial {model.name} failed:\n{err}")
                        serial[micro] = (losses, saved)
                    return serial[micro]
                for devices in devices_list:
                    base = f"{model.name}/g{devices}/b{batch}"
                    report = os.path.join(tmp, base.replace("/", "-") + ".json")
                    code, _, err = run([tool("ober-opt"), step,
                                        f"--ober-plan=cluster=cpu gpus={devices} "
                                        f"global-batch={batch}",
                                        f"--ober-plan-report={report}",
                                        "-o", os.devnull])
                    if code:
                        results[base + "/search"] = {
                            c: first_error(err) for c in CHECKS}
                        continue
                    with open(report) as r:
                        planned = json.load(r)
                    configs = [planned] + planned["alternatives"][:ALTERNATIVES]
                    for rank, config in enumerate(configs):
                        name = f"{base}/{rank}-{label(config)}"
                        # One step over the whole batch, except where the
                        # model's statistics are per micro-batch (dropout
                        # masks do not depend on the micro-batches).
                        micro = (config["num_micro_batches"]
                                 if model.per_micro_batch else 1)
                        results[name] = check_case(
                            model, step, reference(micro),
                            args, devices, batch, pins_of(config), tmp,
                            name.replace("/", "-"))
    return results


def read_expected():
    expected = {}
    if os.path.exists(EXPECTED):
        with open(EXPECTED) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, why = line.partition(": ")
                    expected[key] = why
    return expected


def write_expected(results):
    with open(EXPECTED, "w") as f:
        f.write("# Checks of plan_sweep_test.py that do not hold yet, one\n"
                "# `<case> <check>: <why>` per line (see the test's doc).\n")
        for case in sorted(results):
            for check in CHECKS:
                why = results[case][check]
                if why is not None:
                    f.write(f"{case} {check}: {why}\n")


def main():
    global BIN
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--quick", action="store_true",
                        help="2 and 4 devices, 1x batch: a smoke run")
    parser.add_argument("--model", action="append",
                        help="only these models (by name)")
    parser.add_argument("--write-expected", action="store_true")
    a = parser.parse_args()
    BIN = os.path.abspath(a.bin)
    code, help_text, _ = run([tool("ober-translate"), "--help"])
    torchscript = "--import-torchscript" in help_text
    selected = [m for m in models() if (not a.model or m.name in a.model)
                and (torchscript or not m.name.startswith("torchscript"))]
    devices = (2, 4) if a.quick else DEVICES
    factors = (1,) if a.quick else BATCH_FACTORS
    results = sweep(selected, devices, factors)
    held = sum(r[c] is None for r in results.values() for c in CHECKS)
    print(f"plan sweep: {len(results)} cases, {held} of "
          f"{len(results) * len(CHECKS)} checks hold")
    for case in sorted(results):
        marks = " ".join(f"{c}={'ok' if results[case][c] is None else 'NO'}"
                         for c in CHECKS)
        print(f"  {case}: {marks}")
    if a.write_expected:
        write_expected(results)
        return 0
    expected = read_expected()
    unexpected, fixed = [], []
    for case in sorted(results):
        for check in CHECKS:
            key = f"{case} {check}"
            why = results[case][check]
            if why is not None and key not in expected:
                unexpected.append(f"{key}: {why}")
            elif why is None and key in expected:
                fixed.append(key)
    stale = ([] if a.quick or a.model else
             [k for k in expected if k.rsplit(" ", 1)[0] not in results])
    for key in stale:
        print("STALE (no such case; delete from plan_sweep_expected.txt): "
              + key)
    for line in unexpected:
        print("FAILED (not in plan_sweep_expected.txt): " + line)
    for key in fixed:
        print("NOW HOLDS (delete from plan_sweep_expected.txt): " + key)
    failed = len(unexpected) + len(stale) + (
        0 if a.quick or a.model else len(fixed))
    print(f"{held} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
