#!/usr/bin/python3
"""Training-step parity with PyTorch autograd and torch.optim.AdamW.

Each model is written with torch.nn, exported to ONNX (opset 17, training
mode, dropout 0), turned into a train step by `ober-opt
--ober-build-train-step`, and checked two ways:
  * gradients of the loss for the same weights and batch, from the gradient
    function in ober-run, against autograd (1e-4 relative);
  * the losses of 20 AdamW steps in `ober-run --train-steps` against a
    PyTorch loop (1e-4 relative at every step).

  training_parity_test.py --bin build/bin
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
import torch.nn as nn
import torch.nn.functional as F

BIN = None
warnings.filterwarnings("ignore")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


class DecoderBlock(nn.Module):
    """A GPT-style decoder: token and position embeddings, one pre-norm
    block (causal self-attention, GELU MLP of 4h), a final norm and a tied
    language-model head."""

    def __init__(self, vocab=40, seq=8, hidden=32, heads=4):
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)
        self.lnf = nn.LayerNorm(hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).bool())

    def forward(self, tokens):
        b, s = tokens.shape
        h = self.wte(tokens) + self.wpe(torch.arange(s))
        q, k, v = self.qkv(self.ln1(h)).chunk(3, dim=-1)
        split = lambda t: t.view(b, s, self.heads, -1).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        att = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        att = att.masked_fill(~self.mask[:s, :s], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, -1)
        h = h + self.proj(y)
        h = h + self.out(F.gelu(self.fc(self.ln2(h)), approximate="tanh"))
        return self.lnf(h) @ self.wte.weight.t()


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"{' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def rel_close(test, a, b, what, rtol=1e-4, atol=1e-7):
    """|a - b| <= rtol * max|b| + atol; the floor covers gradients that are
    zero in exact arithmetic (a bias before a batch norm)."""
    err = float(np.abs(a - b).max())
    bound = rtol * float(np.abs(b).max()) + atol
    test.assertLessEqual(err, bound, f"{what}: error {err:.3g} > {bound:.3g}")


def check_gradients(test, bin_dir, step_path, model, x, y, inputs, out):
    """The gradient function of the step at `step_path`, run by ober-run on
    the .npy `inputs` (the batch, then the target), against autograd of
    `model` under cross-entropy: the loss and every parameter's gradient,
    1e-4 relative."""
    run([os.path.join(bin_dir, "ober-run"), step_path, "--function",
         "main_loss_grad", "--output-dir", out]
        + [a for path in inputs for a in ("--input", path)])
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           y.reshape(-1))
    model.zero_grad()
    loss.backward()
    rel_close(test, np.load(os.path.join(out, "0.npy")),
              loss.detach().numpy(), "loss")
    names = [n for n, p in model.named_parameters()]
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    # The gradient function takes the parameters in argument order; the
    # names come from the module.
    params = run([os.path.join(bin_dir, "ober-opt"), step_path]).split(
        "func.func private @main_loss_grad(")[1].split(")")[0]
    order = [p.split('ober.param = "')[1].split('"')[0]
             for p in params.split("%arg") if "ober.param" in p]
    # Forward results (the loss, then any batch-norm running statistics)
    # come first, then one gradient per parameter.
    first = len(os.listdir(out)) - len(order)
    for i, name in enumerate(order):
        if name in grads:
            rel_close(test, np.load(os.path.join(out, f"{first + i}.npy")),
                      grads[name], f"gradient of {name}")
    test.assertTrue(set(names) <= set(order), f"{names} vs {order}")


class TrainingParity(unittest.TestCase):
    def check(self, model, x, y, lr=1e-2, steps=20):
        torch.manual_seed(0)
        model.train()
        with tempfile.TemporaryDirectory() as tmp:
            onnx_path = os.path.join(tmp, "model.onnx")
            torch.onnx.export(model, (x,), onnx_path, opset_version=17,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False,
                              input_names=["x"], output_names=["logits"])
            # Exporting (in training mode) and the gradient check run forward
            # passes, which move batch-norm running statistics: the AdamW loop
            # starts again from the exported state.
            initial = {k: v.clone() for k, v in model.state_dict().items()}
            step_path = os.path.join(tmp, "step.mlir")
            run([os.path.join(BIN, "ober-opt"), onnx_path,
                 "--ober-build-train-step=loss=cross-entropy optimizer=adamw",
                 "-o", step_path])
            np.save(os.path.join(tmp, "x.npy"), x.numpy())
            np.save(os.path.join(tmp, "y.npy"), y.numpy())

            # Gradients for the initial weights.
            check_gradients(self, BIN, step_path, model, x, y,
                            [os.path.join(tmp, "x.npy"),
                             os.path.join(tmp, "y.npy")],
                            os.path.join(tmp, "grads"))

            # 20 AdamW steps.
            saved = os.path.join(tmp, "trained")
            losses = run([os.path.join(BIN, "ober-run"), step_path,
                          "--train-steps", str(steps), "--lr", str(lr),
                          "--input", os.path.join(tmp, "x.npy"),
                          "--input", os.path.join(tmp, "y.npy"),
                          "--save-params", saved])
            ober = [float(l.split()[3]) for l in losses.splitlines()]
            trained = {f[:-4]: np.load(os.path.join(saved, f))
                       for f in os.listdir(saved)}
        model.load_state_dict(initial)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        torch_losses = []
        for _ in range(steps):
            opt.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   y.reshape(-1))
            loss.backward()
            opt.step()
            torch_losses.append(loss.item())
        self.assertEqual(len(ober), steps)
        for i, (a, b) in enumerate(zip(ober, torch_losses)):
            self.assertLessEqual(abs(a - b), 1e-4 * abs(b),
                                 f"step {i}: ober {a} vs torch {b}")
        # Batch-norm running statistics after the steps. (Parameters are
        # not compared: Adam turns gradients that are zero in exact
        # arithmetic, like a key bias's, into rounding-driven steps.)
        final = {n: b for n, b in model.named_buffers()
                 if n.endswith(("running_mean", "running_var"))}
        for name, value in final.items():
            self.assertIn(name, trained)
            rel_close(self, trained[name], value.detach().numpy(),
                      f"{name} after {steps} steps", rtol=1e-3, atol=1e-6)

    def test_mlp(self):
        torch.manual_seed(1)
        self.check(MLP(), torch.randn(6, 12), torch.randint(0, 5, (6,)))

    def test_cnn_batch_norm(self):
        torch.manual_seed(2)
        self.check(SmallCNN(), torch.randn(4, 3, 8, 8), torch.randint(0, 6, (4,)),
                   lr=5e-3)

    def test_gpt_decoder_block(self):
        torch.manual_seed(3)
        self.check(DecoderBlock(), torch.randint(0, 40, (2, 8)),
                   torch.randint(0, 40, (2, 8)), lr=3e-3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = args.bin
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
