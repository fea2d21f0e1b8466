"""A small GPT-style training job for the runtime's tests: the partition
tests' decoder (torch.nn, exported to ONNX), its AdamW step, and one batch
per step as `--input` files."""
import os
import subprocess

import numpy as np
import torch

from partition_test import GPT


def gpt_job(tmp, bindir, steps, batch=4, build="optimizer=adamw"):
    """Returns (step.mlir, input arguments) in `tmp`: `steps` batches of
    `batch` sequences of 8 tokens, drawn from a fixed seed."""
    torch.manual_seed(3)
    model = GPT().train()
    x = torch.randint(0, 40, (steps, batch, 8))
    y = torch.randint(0, 40, (steps, batch, 8))
    onnx_path = os.path.join(tmp, "gpt.onnx")
    torch.onnx.export(model, (x[0],), onnx_path, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"],
                      output_names=["logits"])
    step = os.path.join(tmp, "step.mlir")
    subprocess.run([os.path.join(bindir, "ober-opt"), onnx_path,
                    f"--ober-build-train-step=loss=cross-entropy {build}",
                    "-o", step], check=True, capture_output=True)
    inputs = []
    for name, t in (("x", x), ("y", y)):
        path = os.path.join(tmp, name + ".npy")
        np.save(path, t.numpy())
        inputs += ["--input", path]
    return step, inputs
