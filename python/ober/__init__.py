"""Ober-Train from Python: compile a PyTorch module into a training
executable (planned for a cluster on request), plan it alone, or export it.

    import ober
    compiled = ober.compile(model, (x,), loss="cross-entropy",
                            optimizer="adamw")
    result = compiled.train((x, y), steps=10, lr=1e-3)   # the executable
    y = compiled(x)                         # inference, trained weights
    compiled.train((x, y), steps=10, engine="reference")  # the interpreter
    print(ober.compile(model, (x,), cluster="h100-sxm", gpus=64).report)
    ober.plan(model, (x,), cluster="h100-sxm", gpus=64)
    ober.export(model, (x,), "model.pt")    # or "model.onnx"
    params, steps = ober.load_checkpoint("ckpt/")  # --checkpoint-dir
    ober.data.write_tokens("corpus", documents)    # for --data corpus

The package drives ober's C++ tools (found through $OBER_BIN, the build
tree, or $PATH); their errors surface as ober.OberError.
"""
from ._tools import OberError, supports_torchscript
from .api import Compiled, PlanReport, TrainResult, compile, export, plan
from . import data
from .checkpoint import load_checkpoint

__all__ = ["OberError", "Compiled", "PlanReport", "TrainResult", "compile",
           "data", "export", "load_checkpoint", "plan", "supports_torchscript"]
__version__ = "0.1.0"
