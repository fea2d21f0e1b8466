"""pytest suite of the `ober` Python package and the TorchScript importer.

Runs the package from the source tree against the built tools
($OBER_BIN, default build/bin):

    OBER_BIN=build/bin python3 -m pytest -q python/tests
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "python"))

import ober  # noqa: E402
from ober._tools import tool  # noqa: E402
from training_parity_test import MLP, DecoderBlock, SmallCNN  # noqa: E402

torchscript = pytest.mark.skipif(
    not ober.supports_torchscript(),
    reason="ober was built without libtorch (no TorchScript importer)")


def pytorch_losses(model, x, y, steps, lr):
    """Losses of `steps` AdamW steps in PyTorch (cross-entropy over the last
    dimension), on a copy of `model`."""
    import copy
    ref = copy.deepcopy(model)
    opt = torch.optim.AdamW(ref.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = ref(x)
        loss = torch.nn.functional.cross_entropy(
            out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def run_model(path, inputs, tmp_path):
    """Runs model file `path` in ober-run; returns its first output."""
    args = [tool("ober-run"), path, "--output-dir", str(tmp_path)]
    for i, t in enumerate(inputs):
        p = tmp_path / f"in{i}.npy"
        np.save(p, t.numpy())
        args += ["--input", str(p)]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return np.load(tmp_path / "0.npy")


class Encoder(torch.nn.Module):
    """nn.TransformerEncoder, batch first."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        return self.encoder(x)


def models():
    torch.manual_seed(0)
    return {
        "mlp": (MLP(), (torch.randn(8, 12),), True),
        "resnet18": (torchvision.models.resnet18(num_classes=10),
                     (torch.randn(2, 3, 64, 64),), False),
        # Traced in train mode with dropout 0.
        "encoder": (Encoder(), (torch.randn(2, 6, 32),), True),
        "gpt": (DecoderBlock(), (torch.randint(0, 40, (4, 8)),), True),
        # hardswish/hardsigmoid, squeeze-excitation.
        "mobilenet_v3": (torchvision.models.mobilenet_v3_small(num_classes=10),
                         (torch.randn(1, 3, 32, 32),), False),
        # relu6, leaky relu, adaptive pooling to 2x2 and of a 1x1 map.
        "pools": (torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU6(),
            torch.nn.AdaptiveAvgPool2d((2, 2)), torch.nn.LeakyReLU(0.2),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.AdaptiveAvgPool2d(3),
            torch.nn.Flatten(), torch.nn.Linear(36, 5)),
            (torch.randn(2, 3, 8, 8),), False),
    }


@torchscript
@pytest.mark.parametrize(
    "name", ["mlp", "resnet18", "encoder", "gpt", "mobilenet_v3", "pools"])
def test_torchscript_outputs_match_pytorch(name, tmp_path):
    model, inputs, train = models()[name]
    model.train(train)
    path = ober.export(model, inputs, str(tmp_path / "model.pt"))
    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = run_model(path, inputs, tmp_path)
    err = np.abs(got - expected).max() / np.abs(expected).max()
    assert err <= 1e-4, f"{name}: relative error {err}"


@torchscript
def test_torchscript_keeps_state_dict_names(tmp_path):
    model = MLP()
    path = ober.export(model, (torch.randn(8, 12),), str(tmp_path / "m.pt"))
    out = subprocess.run([tool("ober-translate"), "--import-torchscript", path],
                         capture_output=True, text=True, check=True).stdout
    for name in model.state_dict():
        assert f'ober.param = "{name}"' in out
    assert 'ober.weights = "m.safetensors"' in out
    assert (tmp_path / "m.safetensors").exists()


@pytest.mark.parametrize("frontend", ["torchscript", "onnx"])
def test_compile_gpt_trains_like_pytorch(frontend):
    if frontend == "torchscript" and not ober.supports_torchscript():
        pytest.skip("no TorchScript importer")
    torch.manual_seed(3)
    model = DecoderBlock()
    x = torch.randint(0, 40, (4, 8))
    y = torch.randint(0, 40, (4, 8))
    model.train()
    compiled = ober.compile(model, (x,), loss="cross-entropy",
                            optimizer="adamw", frontend=frontend)
    result = compiled.train((x, y), steps=10, lr=3e-3)
    expected = pytorch_losses(model, x, y, 10, 3e-3)
    assert len(result.losses) == 10
    for i, (a, b) in enumerate(zip(result.losses, expected)):
        assert abs(a - b) <= 1e-4 * abs(b), f"step {i}: {a} vs {b}"
    # Final parameters by state_dict name.
    assert {n for n, _ in model.named_parameters()} <= set(result.parameters)


@pytest.mark.parametrize("frontend", ["torchscript", "onnx"])
def test_compile_cnn_batch_norm_trains_like_pytorch(frontend):
    """A training-mode batch norm: losses, parameters and running
    statistics after 5 AdamW steps; compiling leaves the module's buffers
    as they were (tracing runs it once)."""
    if frontend == "torchscript" and not ober.supports_torchscript():
        pytest.skip("no TorchScript importer")
    import copy
    torch.manual_seed(2)
    model = SmallCNN()
    x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 6, (8,))
    model.train()
    before = copy.deepcopy(model.state_dict())
    result = ober.compile(model, (x,), frontend=frontend).train(
        (x, y), steps=5, lr=5e-3)
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name
    ref = copy.deepcopy(model)
    opt = torch.optim.AdamW(ref.parameters(), lr=5e-3)
    for i in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ref(x), y)
        loss.backward()
        opt.step()
        assert abs(result.losses[i] - loss.item()) <= 1e-4 * abs(loss.item())
    for name, value in ref.state_dict().items():
        if name in result.parameters:
            np.testing.assert_allclose(result.parameters[name], value.numpy(),
                                       rtol=1e-4, atol=1e-6, err_msg=name)
    assert "bn1.running_var" in result.parameters


def test_executable_trains_like_the_interpreter_and_runs_inference():
    """train() runs the executable ober-compile builds; engine="reference"
    the interpreter: same losses. Calling the Compiled runs the model with
    the trained parameters, like PyTorch after the same steps."""
    import copy
    torch.manual_seed(4)
    model = MLP()
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    compiled = ober.compile(model, (x,), frontend="onnx")
    exe = compiled.train((x, y), steps=4, lr=1e-2, threads=1)
    ref = compiled.train((x, y), steps=4, lr=1e-2, engine="reference")
    np.testing.assert_allclose(exe.losses, ref.losses, rtol=1e-5)
    assert os.access(compiled.executable(), os.X_OK)
    trained = copy.deepcopy(model)
    trained.load_state_dict({n: torch.from_numpy(v)
                             for n, v in exe.parameters.items()})
    got = compiled(x)
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), trained(x).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ober.OberError, match="engine='gpu'"):
        compiled.train((x, y), engine="gpu")


def test_executable_reports_wrong_inputs():
    model = MLP()
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    compiled = ober.compile(model, (x,), frontend="onnx")
    with pytest.raises(ober.OberError,
                       match=r"--input 1 .* has shape \[4, 12\], expected "
                             r"float32 \[8, 12\]"):
        compiled.train((torch.randn(4, 12), y))


def test_plan_prints_a_table():
    torch.manual_seed(3)
    model = DecoderBlock()
    report = ober.plan(model, (torch.randint(0, 40, (4, 8)),),
                       cluster="h100-sxm", gpus=64)
    table = repr(report)
    assert table.startswith("ober plan for 64 x NVIDIA H100 SXM")
    assert "stage  segments" in table
    assert report.tp * report.pp * report.dp == 64
    assert "collectives" in report.to_dict()


def test_compile_planned_and_partitioned_trains_like_serial():
    torch.manual_seed(1)
    model = MLP()
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    serial = ober.compile(model, (x,)).train((x, y), steps=3, lr=1e-2)
    parts = ober.compile(model, (x,), cluster="cpu", gpus=2, dp=2,
                         partition=True)
    assert parts.report.dp == 2
    assert any(c["scope"] == "data-parallel" and c["kind"] == "all-reduce"
               for c in parts.report["collectives"])
    # A partitioned step trains in its executable (each device a thread)
    # and on simulated devices (the interpreter) alike.
    result = parts.train((x, y), steps=3, lr=1e-2)
    np.testing.assert_allclose(result.losses, serial.losses, rtol=1e-5)
    simulated = parts.train((x, y), steps=3, lr=1e-2, engine="reference")
    np.testing.assert_allclose(simulated.losses, serial.losses, rtol=1e-5)
    assert "shard.all_reduce" in parts.mlir or "shard.reduce_scatter" in parts.mlir


def test_per_step_batches_and_save(tmp_path):
    torch.manual_seed(2)
    model = MLP()
    batches = [(torch.randn(8, 12), torch.randint(0, 5, (8,)))
               for _ in range(3)]
    compiled = ober.compile(model, (batches[0][0],))
    result = compiled.train(batches, steps=3, lr=1e-2)
    assert len(result.losses) == 3 and len(set(result.losses)) == 3
    saved = compiled.save(str(tmp_path / "saved"))
    assert os.path.exists(saved) and len(os.listdir(tmp_path / "saved")) == 2


def test_export_formats(tmp_path):
    model, x = MLP(), torch.randn(8, 12)
    assert os.path.getsize(ober.export(model, (x,), str(tmp_path / "m.pt")))
    assert os.path.getsize(ober.export(model, (x,), str(tmp_path / "m.onnx")))
    with pytest.raises(ober.OberError, match="unknown format 'tf'"):
        ober.export(model, (x,), str(tmp_path / "m.tf"))


class Unsupported(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.special.erfcx(self.fc(x))
        z = torch.cumprod(y, dim=1)
        return torch.special.erfcx(z) + torch.sinc(y)


@torchscript
def test_unsupported_ops_in_one_error_with_source_lines():
    with pytest.raises(ober.OberError) as info:
        ober.compile(Unsupported(), (torch.randn(2, 8),), loss="mse")
    message = str(info.value)
    assert "3 op(s) have no mapping to ober" in message
    this = os.path.basename(__file__)
    for op in ("aten::cumprod", "aten::sinc", "aten::special_erfcx"):
        line = next(l for l in message.splitlines() if op in l)
        assert this + ":" in line, line


def test_tool_errors_become_exceptions():
    with pytest.raises(ober.OberError, match="cluster"):
        ober.plan(MLP(), (torch.randn(8, 12),), cluster="no-such-cluster")
    with pytest.raises(ober.OberError, match="unknown plan option 'tpp'"):
        ober.plan(MLP(), (torch.randn(8, 12),), cluster="cpu", tpp=2)


def test_plan_option_values_stay_one_option(tmp_path):
    """A value with spaces (a cluster file's path) is quoted, never read
    as more options; partition= takes a bool, not the planner's stage
    partition (stage_partition=)."""
    folder = tmp_path / "my clusters"
    folder.mkdir()
    cluster = folder / "two cores.json"
    cluster.write_text('{"preset": "cpu", "name": "spaced"}')
    report = ober.plan(MLP(), (torch.randn(8, 12),), cluster=str(cluster),
                       gpus=2)
    assert "(spaced)" in str(report), report
    with pytest.raises(ober.OberError, match="schedule='1f1b tp=2' is not"):
        ober.plan(MLP(), (torch.randn(8, 12),), cluster="cpu", gpus=2,
                  schedule="1f1b tp=2")
    with pytest.raises(ober.OberError, match="stage_partition='uniform'"):
        ober.compile(MLP(), (torch.randn(8, 12),), cluster="cpu", gpus=2,
                     partition="uniform")


def test_tool_errors_speak_python():
    """A tool's error names the module and the keyword to change, not the
    temporary model file, the plan table or a command-line flag."""
    with pytest.raises(ober.OberError) as info:
        ober.compile(MLP(), (torch.randn(8, 12),), cluster="h100-sxm",
                     gpus=2, precision="f16", partition=True)
    message = str(info.value)
    assert message.startswith("MLP: error:"), message
    assert "loss_scale='dynamic'" in message, message
    assert "--ober" not in message and "ober plan" not in message, message
    assert len(message) < 400, message
    with pytest.raises(ober.OberError, match="^MLP: error: tp=3 does not"):
        ober.compile(MLP(), (torch.randn(8, 12),), cluster="h100-sxm",
                     gpus=2, tp=3)


def test_export_warnings_reach_python():
    """An eval-mode export merges identical initializers (two fresh layer
    norms); building the step warns, as a Python warning, not in the
    plan table."""
    model = torch.nn.Sequential(
        torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 8),
        torch.nn.LayerNorm(8)).eval()
    with pytest.warns(UserWarning, match="export changed 2 of its parameters"):
        compiled = ober.compile(model, (torch.randn(4, 8),), loss="mse",
                                frontend="onnx", cluster="cpu")
    assert "warning" not in repr(compiled.report)


def test_compile_target():
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    compiled = ober.compile(MLP(), (x,), target="cpu", target_cpu="generic")
    assert len(compiled.train((x, y), steps=2).losses) == 2
    cuda = ober.compile(MLP(), (x,), target="cuda")
    assert os.path.exists(cuda.executable())
    if not _has_nvidia_driver():
        with pytest.raises(ober.OberError, match="no CUDA device"):
            cuda.train((x, y), steps=1)
    with pytest.raises(ober.OberError, match="tpu"):
        ober.compile(MLP(), (x,), target="tpu").train((x, y), steps=1)


def _has_nvidia_driver():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _torch_schedule(opt, kind, warmup, decay, min_lr, lr):
    """PyTorch's composition of the schedule ober's executables run."""
    sched = torch.optim.lr_scheduler
    parts, milestones = [], []
    if warmup:
        parts.append(sched.LinearLR(opt, start_factor=1 / warmup,
                                    end_factor=1.0,
                                    total_iters=max(warmup - 1, 1)))
        milestones.append(warmup)
    if kind == "cosine":
        parts.append(sched.CosineAnnealingLR(opt, T_max=decay - warmup,
                                             eta_min=min_lr))
    elif kind == "linear":
        parts.append(sched.LinearLR(opt, start_factor=1.0,
                                    end_factor=min_lr / lr,
                                    total_iters=decay - warmup))
    else:
        parts.append(sched.ConstantLR(opt, factor=1.0, total_iters=0))
    return parts[0] if len(parts) == 1 else sched.SequentialLR(
        opt, parts, milestones=milestones)


@pytest.mark.parametrize("kind,warmup", [("cosine", 3), ("linear", 2),
                                         ("constant", 4), ("cosine", 0)])
def test_lr_schedules_match_torch(kind, warmup):
    # Plain SGD makes every step's learning rate visible in the loss.
    torch.manual_seed(5)
    model = torch.nn.Linear(6, 3)
    x, y = torch.randn(16, 6), torch.randn(16, 3)
    steps, lr, min_lr = 10, 0.2, 0.02
    compiled = ober.compile(model, (x,), loss="mse", optimizer="sgd")
    got = compiled.train((x, y), steps=steps, lr=lr, lr_schedule=kind,
                         warmup_steps=warmup, min_lr=min_lr)
    interpreted = compiled.train((x, y), steps=steps, lr=lr, lr_schedule=kind,
                                 warmup_steps=warmup, min_lr=min_lr,
                                 engine="reference")
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    schedule = _torch_schedule(opt, kind, warmup, steps, min_lr, lr)
    want = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        schedule.step()
        want.append(loss.item())
    np.testing.assert_allclose(got.losses, want, rtol=1e-5)
    np.testing.assert_allclose(interpreted.losses, want, rtol=1e-5)


@pytest.mark.parametrize("options,message", [
    ({"lr": float("nan")}, "--lr must be a finite non-negative number"),
    ({"lr": -0.1}, "--lr must be a finite non-negative number"),
    ({"lr": 0.1, "min_lr": 0.5}, "--min-lr (0.500000) is above --lr"),
    ({"lr": 0.1, "lr_schedule": "cosine", "warmup_steps": 5},
     "--warmup-steps (5) leaves no step to decay over (3 steps)"),
    ({"lr": 0.1, "lr_schedule": "step"}, "one of constant, cosine, linear"),
])
def test_bad_learning_rates_are_refused(options, message):
    torch.manual_seed(6)
    model = torch.nn.Linear(4, 2)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    compiled = ober.compile(model, (x,), loss="mse", optimizer="sgd")
    for engine in ("cpu", "reference"):
        with pytest.raises(ober.OberError) as error:
            compiled.train((x, y), steps=3, engine=engine, **options)
        assert message in str(error.value), (engine, str(error.value))
