#!/usr/bin/python3
"""Tracking: what `--log-dir` writes, read back as MLflow, TensorBoard and
a JSON-lines reader would.

A GPT-style job (two ranks, dp2) trains 6 steps with --log-dir and a
checkpoint after step 4, then resumes to 8 steps with the same folder.
Checked against the formats in RUNTIME.md:
  * metrics.jsonl: one object per step with step, loss, lr, step_time,
    throughput, grad_norm, mfu and mfu_predicted (the plan's); the losses
    those printed, the gradient norms PyTorch's AdamW loop sees (1e-4);
    after the resume, each step once;
  * TensorBoard: every record's length and data CRC-32C (masked) match,
    the first event is file_version "brain.Event:2", each step has one
    event with a simple_value per tag, and the resumed file starts with a
    session_log START at the resumed step;
  * MLflow file store: experiment 0's meta.yaml, the run's meta.yaml
    (run_id = run_uuid = its 32-hex folder, status 3 when finished,
    times in ms), params/<key> raw values, metrics/<key> lines
    "<ms> <value> <step>", .trash; the resumed run is the same run.

  tracking_test.py --bin build/bin
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
from jobs import MPI_ENV, gpt_job, gpt_model  # noqa: E402
from partition_test import losses_of  # noqa: E402
from plan_options import plan_option  # noqa: E402

BIN = None
warnings.filterwarnings("ignore")
KEYS = ["loss", "lr", "step_time", "throughput", "grad_norm", "mfu",
        "mfu_predicted", "step_time_predicted", "peak_memory",
        "peak_memory_predicted"]
LR = 1e-3


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(data, at):
    value, shift = 0, 0
    while True:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, at


def fields(data):
    """(field number, wire type, value) of a protocol buffer message."""
    at, out = 0, []
    while at < len(data):
        key, at = varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = struct.unpack("<d", data[at:at + 8])[0], at + 8
        elif wire == 5:
            value, at = struct.unpack("<f", data[at:at + 4])[0], at + 4
        elif wire == 2:
            n, at = varint(data, at)
            value, at = data[at:at + n], at + n
        else:
            raise AssertionError(f"wire type {wire}")
        out.append((field, wire, value))
    return out


def events(path, test):
    """The Event messages of a TensorBoard file, each record's CRCs checked."""
    with open(path, "rb") as f:
        data = f.read()
    at, out = 0, []
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", data[at + 8:at + 12])
        test.assertEqual(crc, masked(header), f"{path}: length CRC")
        body = data[at + 12:at + 12 + length]
        (crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        test.assertEqual(crc, masked(body), f"{path}: data CRC")
        out.append(fields(body))
        at += 16 + length
    return out


def yaml(path):
    out = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition(": ")
            out[key] = value
    return out


def torch_grad_norms(steps):
    """The gradient norm before each of `steps` AdamW steps on the job's
    model and batches."""
    model, x, y = gpt_model(steps)
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    norms = []
    for s in range(steps):
        opt.zero_grad()
        logits = model(x[s])
        torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y[s].reshape(-1)).backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                    float("inf")).item())
        opt.step()
    return norms


class Tracking(unittest.TestCase):
    def test_log_dir(self):
        tmp = tempfile.mkdtemp(prefix="ober-tracking-")
        try:
            self.check(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def check(self, tmp):
        step, inputs = gpt_job(tmp, BIN, 8,
                               build="optimizer=adamw grad-norm=true")
        exe = os.path.join(tmp, "train")
        subprocess.run([os.path.join(BIN, "ober-compile"), step, "--plan=" +
                        plan_option(4, 2, 1, 1, 0, 1, "1f1b"), "-o", exe],
                       check=True, capture_output=True)
        logs, ckpt = os.path.join(tmp, "logs"), os.path.join(tmp, "ckpt")

        def train(steps, *extra):
            proc = subprocess.run(
                ["mpirun", "-np", "2", "--bind-to", "none", exe, "--steps",
                 str(steps), "--lr", str(LR), "--log-dir", logs, "--checkpoint-dir", ckpt,
                 "--checkpoint-every", "4", "--run-name", "gpt-dp2"]
                + inputs + list(extra), capture_output=True, text=True,
                env=MPI_ENV)
            self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
            return losses_of(proc.stdout)

        first = train(6)
        with open(os.path.join(logs, "run_id")) as f:
            run_id = f.read().strip()
        self.assertRegex(run_id, r"^[0-9a-f]{32}$")
        # Resume from the checkpoint after step 4 (steps 4, 5 again).
        os.remove(os.path.join(ckpt, "latest"))
        shutil.rmtree(os.path.join(ckpt, "step_000000006"))
        resumed = train(8, "--resume")
        self.assertEqual(resumed[:2], first[4:6])
        losses = first[:4] + resumed

        with open(os.path.join(logs, "metrics.jsonl")) as f:
            rows = [json.loads(line) for line in f]
        self.assertEqual([r["step"] for r in rows], list(range(8)))
        for r, loss in zip(rows, losses):
            self.assertEqual(sorted(r), sorted(KEYS + ["step"]))
            self.assertAlmostEqual(r["loss"], loss, places=6)
            self.assertGreater(r["throughput"], 0)
            # Measured MFU against the plan's model FLOPs and peak.
            self.assertGreater(r["mfu"], 0)
            self.assertAlmostEqual(r["mfu"] / r["mfu_predicted"],
                                   rows[0]["mfu"] / rows[0]["mfu_predicted"]
                                   * rows[0]["step_time"] / r["step_time"],
                                   places=6)

        # The global gradient norm of each step, as PyTorch's AdamW loop
        # (what clip_grad_norm_ returns) sees it.
        for s, norm in enumerate(torch_grad_norms(8)):
            self.assertLessEqual(abs(rows[s]["grad_norm"] - norm), 1e-4 * norm,
                                 f"step {s}: grad_norm")

        board = sorted(os.listdir(os.path.join(logs, "tensorboard")))
        self.assertEqual(len(board), 2)
        for name in board:
            self.assertRegex(name,
                             r"^events\.out\.tfevents\.\d{10}\.[^.]+\.\d+\.\d+$")
        seen = {}
        for k, name in enumerate(board):
            evs = events(os.path.join(logs, "tensorboard", name), self)
            self.assertEqual([v for f, _, v in evs[0] if f == 3],
                             [b"brain.Event:2"])
            rest = evs[1:]
            if k == 1:
                # The resumed file first marks the restart at step 4.
                start = dict((f, v) for f, _, v in rest[0])
                self.assertEqual(start[2], 4)
                self.assertEqual(fields(start[7]), [(1, 0, 1)])
                rest = rest[1:]
            for ev in rest:
                d = dict((f, v) for f, _, v in ev)
                self.assertIn(1, d)  # wall_time
                values = {}
                for f, _, v in fields(d[5]):
                    value = dict((ff, vv) for ff, _, vv in fields(v))
                    values[value[1].decode()] = value[2]
                self.assertEqual(sorted(values), sorted(KEYS))
                seen[d[2]] = values["loss"]
        self.assertEqual(sorted(seen), list(range(8)))
        for s, loss in seen.items():
            self.assertAlmostEqual(loss, losses[s], places=4)

        store = os.path.join(logs, "mlruns")
        self.assertTrue(os.path.isdir(os.path.join(store, ".trash")))
        experiment = yaml(os.path.join(store, "0", "meta.yaml"))
        self.assertEqual(experiment["experiment_id"], "'0'")
        self.assertEqual(experiment["name"], "Default")
        self.assertEqual(experiment["lifecycle_stage"], "active")
        self.assertTrue(experiment["artifact_location"].startswith("file:///"))
        runs = [n for n in os.listdir(os.path.join(store, "0"))
                if n != "meta.yaml"]
        self.assertEqual(runs, [run_id])
        run = os.path.join(store, "0", run_id)
        meta = yaml(os.path.join(run, "meta.yaml"))
        self.assertEqual(meta["run_id"], run_id)
        self.assertEqual(meta["run_uuid"], run_id)
        self.assertEqual(meta["run_name"], "gpt-dp2")
        self.assertEqual(meta["status"], "3")
        self.assertEqual(meta["source_type"], "4")
        self.assertGreaterEqual(int(meta["end_time"]), int(meta["start_time"]))
        with open(os.path.join(run, "params", "steps")) as f:
            self.assertEqual(f.read(), "8")
        for key in KEYS:
            with open(os.path.join(run, "metrics", key)) as f:
                lines = [line.split() for line in f]
            self.assertEqual([int(l[2]) for l in lines], list(range(8)), key)
            for l in lines:
                self.assertRegex(l[0], r"^\d{13}$")
        # MLflow's key rule, for every key written.
        for sub in ("metrics", "params", "tags"):
            for key in os.listdir(os.path.join(run, sub)):
                self.assertRegex(key, r"^[/\w.\- ]*$")


def main():
    global BIN
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = os.path.abspath(args.bin)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
