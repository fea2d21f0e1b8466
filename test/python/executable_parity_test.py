#!/usr/bin/python3
"""Training executables against the reference interpreter.

Each model (an MLP, a CNN with training-mode batch norm, a GPT-style
decoder, torchvision's resnet18 and mobilenet_v2, nn.TransformerEncoder; at
sizes the interpreter runs in seconds; dropout off) is exported to ONNX,
its training step built by `ober-opt --ober-build-train-step` (AdamW, eps
1e-3), then trained 5 steps on one batch: by `ober-run` (the interpreter,
in double), by the executable `ober-compile` builds from the step, and by
the executable built from the CUDA target's mapping of the step to
kernels and host loops, each kernel's threads run as loops on the CPU
(`ober-compile --test-cuda-mapping-on-cpu`: convolutions as GEMMs,
reductions split as on the GPU; all models but mobilenet_v2). Each loss
and each parameter (relative in norm: ||compiled - interpreted|| /
||interpreted||) must agree within 1e-5.

Some trainings amplify rounding: a parameter whose gradient is zero in
exact arithmetic (a batch-norm bias a later batch norm cancels, an
attention key's bias) moves by rounding noise alone, and mobilenet_v2's
depthwise layers make its trajectory chaotic in any f32 arithmetic. For
those the bound is what f32 itself allows: the same model trained by
PyTorch in f32 and in f64 (same batch, AdamW, steps); a quantity passes
when its error is within 1e-5 or within 10 times PyTorch's own f32 error
for it (a chaotic trajectory's error grows by about that much per step,
so two f32 implementations land within a step's growth of each other).
A loss's bound is the larger of PyTorch's f32 errors at its step and the
next: how much one step amplifies rounding depends on the rounding itself
(mobilenet_v2's second AdamW step grows it 70x in PyTorch and 1500x in
ober's executable when oneDNN takes its AVX2 kernels, 10x with SSE4.1), so
an error may run a step ahead of PyTorch's. Both figures are printed.

AdamW's eps is 1e-3 rather than PyTorch's 1e-8: its update is about
m / (sqrt(v) + eps), and with 1e-8 the noise of a zero gradient becomes a
whole learning-rate step in any precision, double included.

  executable_parity_test.py --bin build/bin [--models mlp,cnn,...] [--keep DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

MODELS = ["mlp", "cnn", "gpt", "resnet18", "mobilenet_v2", "encoder"]
# The CPU executable, and the CUDA target's program with each launch's
# threads run as loops on the CPU (what a GPU would compute, the kernel
# library aside).
VARIANTS = [("executable", []),
            ("as CUDA maps it", ["--test-cuda-mapping-on-cpu"])]
# Not mobilenet_v2 as CUDA maps it: its depthwise convolutions as GEMMs,
# each kernel's threads one after another, train for over ten minutes here
# (resnet18 checks convolutions as GEMMs).
MAPPED = {"mlp", "cnn", "gpt", "resnet18", "encoder"}
STEPS, LR, EPS, TOLERANCE, F32_FACTOR = 5, 1e-3, 1e-3, 1e-5, 10.0


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}")
    return proc.stdout


def losses(text):
    return [float(l.split()[3]) for l in text.splitlines()
            if l.startswith("step ")]


def build(name):
    import torch_models
    model, inputs, target, loss = torch_models.build(name, small=True)
    return torch_models.without_dropout(model).train(), inputs, target, loss


def torch_f32_error(name):
    """PyTorch's own f32 error against f64 for this training: per step
    loss (relative) and per tensor (relative in norm)."""
    import torch
    import torch_models

    def train(dtype):
        model, inputs, target, loss = build(name)
        model.to(dtype)
        cast = lambda t: t.to(dtype) if t.is_floating_point() else t
        opt = torch.optim.AdamW(model.parameters(), lr=LR, eps=EPS)
        out = []
        for _ in range(STEPS):
            opt.zero_grad()
            l = torch_models.torch_loss(loss, model(*map(cast, inputs)),
                                        cast(target))
            l.backward()
            opt.step()
            out.append(l.item())
        state = {n: t.detach().double().numpy()
                 for n, t in model.state_dict().items()
                 if t.is_floating_point()}
        return np.array(out), state

    l64, p64 = train(torch.float64)
    l32, p32 = train(torch.float32)
    return (np.abs(l32 - l64) / np.abs(l64),
            {n: np.linalg.norm(p32[n] - p64[n]) /
             max(np.linalg.norm(p64[n]), 1e-30) for n in p64})


def ahead(errors):
    """Each step's error bound: the larger of its own and the next step's."""
    return np.maximum(errors, np.append(errors[1:], errors[-1:]))


def check(name, bindir, workdir):
    import ober
    warnings.filterwarnings("ignore")
    d = os.path.join(workdir, name)
    os.makedirs(d, exist_ok=True)
    model, inputs, target, loss = build(name)
    onnx_path = os.path.join(d, "model.onnx")
    ober.export(model, inputs, onnx_path)
    files = []
    for k, t in enumerate(list(inputs) + [target]):
        f = os.path.join(d, f"input{k}.npy")
        np.save(f, t.numpy())
        files += ["--input", f]
    step = os.path.join(d, "step.mlir")
    run([os.path.join(bindir, "ober-opt"), onnx_path,
         f"--ober-build-train-step=loss={loss} optimizer=adamw eps={EPS}",
         "-o", step])
    common = files + ["--lr", LR]
    ref = np.array(losses(run(
        [os.path.join(bindir, "ober-run"), step, "--train-steps", STEPS,
         "--save-params", os.path.join(d, "reference")] + common)))
    loss_f32, param_f32 = torch_f32_error(name)
    ok = True
    for what, options in VARIANTS:
        if options and name not in MAPPED:
            continue
        exe = os.path.join(d, "train-" + what.replace(" ", "-"))
        run([os.path.join(bindir, "ober-compile"), step, "-o", exe] + options)
        saved = os.path.join(d, "compiled-" + what.replace(" ", "-"))
        got = np.array(losses(run([exe, "--steps", STEPS, "--save-params",
                                   saved] + common)))
        ok &= compare(f"{name} {what}", got, ref, saved,
                      os.path.join(d, "reference"), loss_f32, param_f32)
    return ok


def compare(what, got, ref, saved, reference, loss_f32, param_f32):
    problems = []
    loss_err = np.abs(got - ref) / np.abs(ref) if len(got) == STEPS else None
    if loss_err is None or np.any(
            loss_err > np.maximum(TOLERANCE, F32_FACTOR * ahead(loss_f32))):
        problems.append(f"losses {got} vs {ref} (PyTorch's f32 error "
                        f"{loss_f32})")
    worst, worst_torch, bounded = 0.0, 0.0, 0
    for f in sorted(os.listdir(reference)):
        n = f[:-4]
        a = np.load(os.path.join(reference, f)).astype(np.float64)
        b = np.load(os.path.join(saved, f)).astype(np.float64)
        err = np.linalg.norm(b - a) / max(np.linalg.norm(a), 1e-30)
        torch_err = param_f32.get(n, 0.0)
        if err <= TOLERANCE:
            worst = max(worst, err)
        elif err <= F32_FACTOR * torch_err:
            bounded += 1
            worst_torch = max(worst_torch, err)
        else:
            problems.append(f"{n}: {err:.2g} relative in norm (PyTorch's "
                            f"f32: {torch_err:.2g})")
    print(f"  {what}: {'ok' if not problems else 'FAILED'} (losses "
          f"{got[0] if len(got) else float('nan'):.6g} .. "
          f"{got[-1] if len(got) else float('nan'):.6g}, within "
          f"{np.max(loss_err) if loss_err is not None else float('nan'):.2g}"
          f"; parameters within {worst:.2g} in norm"
          + (f", {bounded} more within PyTorch's f32 error (up to "
             f"{worst_torch:.2g})" if bounded else "") + ")", flush=True)
    for p in problems:
        print(f"    {p}")
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--keep", help="keep the work in this folder")
    args = parser.parse_args()
    os.environ["OBER_BIN"] = os.path.abspath(args.bin)
    workdir = args.keep or tempfile.mkdtemp(prefix="ober-parity-")
    models = args.models.split(",")
    failed = [m for m in models if not check(m, args.bin, workdir)]
    print(f"{len(models) - len(failed)} of {len(models)} models agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
