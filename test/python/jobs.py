"""What the runtime's tests share: the environment and runner of jobs under
mpirun, and a small GPT-style training job (the partition tests' decoder,
exported to ONNX, its AdamW step, one batch per step as `--input` files)."""
import os
import subprocess

import numpy as np
import torch

from partition_test import GPT

# mpirun as root, more ranks than cores.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def run(cmd, check=True, env=MPI_ENV, timeout=600):
    """Runs `cmd` (any values); raises with its stderr when it fails and
    `check`."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True, env=env, timeout=timeout)
    if check and proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed "
                           f"({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def gpt_model(steps, batch=4):
    """The job's model (training mode) and its `steps` batches of `batch`
    sequences of 8 tokens and their targets, drawn from a fixed seed."""
    torch.manual_seed(3)
    model = GPT().train()
    x = torch.randint(0, 40, (steps, batch, 8))
    y = torch.randint(0, 40, (steps, batch, 8))
    return model, x, y


def gpt_job(tmp, bindir, steps, batch=4, build="optimizer=adamw"):
    """Returns (step.mlir, input arguments) in `tmp`: gpt_model's model and
    batches, its step built with `build`."""
    model, x, y = gpt_model(steps, batch)
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
