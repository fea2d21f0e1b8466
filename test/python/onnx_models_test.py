#!/usr/bin/python3
"""Models no one here wrote, exported from PyTorch to ONNX (opset 17), run in
ober-run and compared with PyTorch's outputs (1e-4 relative).

  onnx_models_test.py --ober-run build/bin/ober-run
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np
import torch
import torchvision

OBER_RUN = None
# The ONNX exporter's tracer warnings are about generality, not these runs.
warnings.filterwarnings("ignore")


def relative_close(test, out, ref, rtol=1e-4):
    scale = max(float(np.abs(ref).max()), 1e-30)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=rtol * scale)


class ExportedModels(unittest.TestCase):
    def check(self, model, inputs, dynamic_axes=None, names=None):
        model.eval()
        names = names or [f"x{i}" for i in range(len(inputs))]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            torch.onnx.export(model, tuple(inputs), path, opset_version=17,
                              input_names=names, output_names=["y"],
                              dynamic_axes=dynamic_axes)
            args = [OBER_RUN, path, "--output-dir", os.path.join(tmp, "out")]
            for i, x in enumerate(inputs):
                npy = os.path.join(tmp, f"in{i}.npy")
                np.save(npy, x.numpy())
                args += ["--input", npy]
            proc = subprocess.run(args, capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with torch.no_grad():
                ref = model(*inputs).numpy()
            out = np.load(os.path.join(tmp, "out", "0.npy"))
        self.assertEqual(out.shape, ref.shape)
        relative_close(self, out, ref)

    def test_resnet18(self):
        torch.manual_seed(0)
        self.check(torchvision.models.resnet18(), [torch.randn(2, 3, 64, 64)])

    def test_resnet18_dynamic_batch(self):
        torch.manual_seed(1)
        self.check(torchvision.models.resnet18(num_classes=10),
                   [torch.randn(3, 3, 32, 32)],
                   dynamic_axes={"x0": {0: "batch"}, "y": {0: "batch"}})

    def test_mobilenet_v2(self):
        torch.manual_seed(2)
        self.check(torchvision.models.mobilenet_v2(), [torch.randn(1, 3, 64, 64)])

    def test_transformer_encoder(self):
        torch.manual_seed(3)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0)
        encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.check(encoder, [torch.randn(8, 2, 32)])

    def test_transformer_encoder_batch_first_masked(self):
        torch.manual_seed(4)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                                 batch_first=True,
                                                 activation="gelu",
                                                 norm_first=True)
        encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(8)

        class Causal(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = encoder

            def forward(self, x):
                return self.encoder(x, mask=mask)

        self.check(Causal(), [torch.randn(2, 8, 32)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ober-run", required=True)
    args, rest = parser.parse_known_args()
    OBER_RUN = args.ober_run
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
