#!/usr/bin/python3
"""The planner on graphs no one here wrote: torchvision's resnet18 and
nn.TransformerEncoder exported to ONNX, made into AdamW train steps and
planned for 8 and 64 A100s. Checks that the forward chain is cut where the
model has its blocks (residual blocks, encoder layers), that repeated
layers share one profile, and that the plans are consistent and fit.

  plan_imported_test.py --bin build/bin
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import torch
import torchvision

BIN = None
warnings.filterwarnings("ignore")


class PlanImported(unittest.TestCase):
    def plan(self, model, inputs, options, dims=""):
        model.eval()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            torch.onnx.export(model, tuple(inputs), path, opset_version=17,
                              input_names=["x"], output_names=["y"])
            report = os.path.join(tmp, "plan.json")
            run = subprocess.run(
                [os.path.join(BIN, "ober-opt"), path,
                 "--ober-build-train-step=loss=cross-entropy optimizer=adamw",
                 "--ober-plan=" + options, "--ober-plan-report=" + report,
                 "--ober-plan-explain", "-o", os.devnull],
                capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("ober plan for", run.stderr)
            with open(report) as f:
                r = json.load(f)
        self.assertEqual(r["tp"] * r["pp"] * r["dp"], r["gpus"])
        self.assertEqual(r["micro_batch"] * r["num_micro_batches"] * r["dp"],
                         r["global_batch"])
        self.assertLessEqual(r["peak_memory_bytes"], r["memory_limit_bytes"])
        self.assertGreater(r["model_tflops_per_gpu"], 0)
        return r

    def test_resnet18(self):
        r = self.plan(torchvision.models.resnet18(),
                      [torch.randn(2, 3, 224, 224)],
                      "cluster=a100-80gb gpus=8 global-batch=256")
        # Stem, eight residual blocks, head.
        self.assertEqual(r["segments"], 10)
        # (Kinds include the backward ops: the exporter merges identical
        # initializers, so blocks that share one sum its gradient and no
        # two blocks' backward passes are alike.)
        self.assertEqual(sum(k["count"] for k in r["segment_kinds"]), 10)
        # A CNN this small is data parallel.
        self.assertEqual(r["dp"], 8)

    def test_transformer_encoder(self):
        layers = 6
        enc = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0,
                                             batch_first=True),
            num_layers=layers)
        model = torch.nn.Sequential(enc, torch.nn.Linear(256, 16))
        r = self.plan(model, [torch.randn(2, 128, 256)],
                      "cluster=a100-80gb gpus=64 global-batch=512")
        # Each encoder layer is two segments (attention and MLP halves, cut
        # at the residual stream); all but the first (whose backward pass
        # makes no input gradient) and the last (whose gradient comes from
        # the head) of each repeat.
        counts = sorted(k["count"] for k in r["segment_kinds"])
        self.assertGreaterEqual(counts[-1], layers - 2)
        self.assertGreaterEqual(counts[-2], layers - 2)
        pinned = self.plan(model, [torch.randn(2, 128, 256)],
                           "cluster=a100-80gb gpus=64 global-batch=512 "
                           "tp=4 pp=2 sequence-parallel=1")
        self.assertEqual((pinned["tp"], pinned["pp"]), (4, 2))
        self.assertLessEqual(r["step_time_s"], pinned["step_time_s"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = args.bin
    unittest.main(argv=[sys.argv[0]] + rest)
