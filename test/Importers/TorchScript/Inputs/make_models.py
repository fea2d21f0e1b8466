"""Writes the TorchScript modules the import tests read into argv[1]."""
import os
import sys

import numpy as np
import torch

import ober

out = sys.argv[1]
torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.norm(self.fc1(x)))
        a, b = h.chunk(2, dim=-1)
        return self.fc2(torch.cat([b, a], dim=-1).softmax(-1))


class Odd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = torch.special.erfcx(self.fc(x))
        return torch.cumprod(y, dim=1) + torch.sinc(y)


ober.export(MLP(), (torch.randn(5, 6),), os.path.join(out, "mlp.pt"))
ober.export(Odd(), (torch.randn(2, 4),), os.path.join(out, "odd.pt"))
# Saved without the example inputs' shapes; run at another batch.
bare = MLP()
torch.jit.trace(bare, torch.randn(5, 6)).save(os.path.join(out, "bare.pt"))
bare_x = torch.randn(7, 6)
np.save(os.path.join(out, "bare_x.npy"), bare_x.numpy())
np.save(os.path.join(out, "bare_y.npy"), bare(bare_x).detach().numpy())


class BadDims(torch.nn.Module):
    """Dimensions and sizes TorchScript only checks when it runs (the
    importer checks them: each is an error naming the op and its line)."""

    def forward(self, x):
        a, b = x.chunk(2, dim=-5)
        c = x.split(0, dim=1)
        e, f = x.chunk(3, dim=1)  # three pieces unpacked into two
        d = x[:, ::2]
        return (torch.cat([a, b, d], dim=7).softmax(3) + torch.cat(c, dim=1)
                + e + f)


# Saved as ober.export does, without running it (it cannot run).
torch.jit.save(torch.jit.script(BadDims()), os.path.join(out, "baddims.pt"),
               _extra_files={"ober_inputs.json":
                             '[{"shape": [4, 6], "dtype": "float32"}]'})


class BigConstant(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(65536, 65536).sum()


torch.jit.save(torch.jit.script(BigConstant()),
               os.path.join(out, "bigconst.pt"),
               _extra_files={"ober_inputs.json":
                             '[{"shape": [2, 3], "dtype": "float32"}]'})


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 3))

    def forward(self, x):
        return torch.matmul(x, self.w).relu()


# A half-precision input against a float weight: TorchScript fails only
# when it runs.
torch.jit.save(torch.jit.script(Mixed()), os.path.join(out, "mixed.pt"),
               _extra_files={"ober_inputs.json":
                             '[{"shape": [2, 6], "dtype": "float16"}]'})
with open(os.path.join(out, "junk.pt"), "w") as f:
    f.write("not a zip archive")


class DataWhile(torch.nn.Module):
    """A while loop whose condition follows from the data: not unrolled."""

    def forward(self, x):
        while bool(x.sum() < 100):
            x = x * 2
        return x


class Runaway(torch.nn.Module):
    """Nested loops unrolling to 4000 x 4000 bodies: stopped by the budget."""

    def forward(self, x):
        for i in range(4000):
            for j in range(4000):
                x = x + 1
        return x


class Branches(torch.nn.Module):
    """An `if` on the data whose branches give different shapes."""

    def forward(self, x):
        if bool(x.mean() > 0):
            return x
        return x.sum(0)


for name, module in (("datawhile", DataWhile()), ("runaway", Runaway()),
                     ("branches", Branches())):
    torch.jit.save(torch.jit.script(module), os.path.join(out, name + ".pt"),
                   _extra_files={"ober_inputs.json":
                                 '[{"shape": [2, 3], "dtype": "float32"}]'})
