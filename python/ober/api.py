"""ober.compile, ober.plan and ober.export.

A PyTorch module goes to ober as TorchScript (when ober-opt was built with
the TorchScript importer) or ONNX; `ober-opt` builds the training step
(loss, autodiff, optimizer) and, given a cluster, plans it (and on request
partitions it for simulated devices); `ober-compile` turns it into a
training executable that `Compiled.train` runs (or `ober-run`, the
reference interpreter, with engine="reference"), and the model into an
inference executable that calling the Compiled runs.
"""
import json
import os
import re
import shutil
import tempfile
import warnings

import numpy as np

from ._tools import OberError, run, run_command, supports_torchscript
from .checkpoint import _DTYPES

_PIN_OPTIONS = {
    "tp": "tp", "pp": "pp", "dp": "dp", "micro_batch": "micro-batch",
    "chunks": "chunks", "schedule": "schedule", "recompute": "recompute",
    "sequence_parallel": "sequence-parallel", "zero": "zero",
    "precision": "precision", "memory_fraction": "memory-fraction",
    "stage_partition": "partition",
}


def _option_value(key, value):
    """`value` as a pass option's value: quoted where it holds spaces,
    quotes, braces or '=' (a path with spaces; never another option)."""
    text = str(int(value) if isinstance(value, bool) else value)
    if not re.search(r"[\s'\"{}=]", text):
        return text
    if '"' in text:
        raise OberError(f"{key}={text!r}: a plan option's value cannot "
                        "hold a double quote")
    return f'"{text}"'


def _tensors(example_inputs):
    import torch
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    return tuple(example_inputs)


def export(module, example_inputs, path, format=None):
    """Exports `module` run on `example_inputs` to `path`: TorchScript
    (`.pt`, traced) or ONNX (`.onnx`, opset 17, in the module's train or
    eval mode, nothing folded). Returns `path`."""
    import torch
    inputs = _tensors(example_inputs)
    format = format or os.path.splitext(path)[1].lstrip(".")
    # Tracing runs the module once: in train mode that updates buffers
    # (batch-norm running statistics). Keep the module as it was, so the
    # exported weights are the module's own.
    saved = {name: (b, b.detach().clone())
             for name, b in module.named_buffers()}

    def restore():
        with torch.no_grad():
            for b, value in saved.values():
                b.copy_(value)
    try:
        return _export(module, inputs, path, format, restore, saved)
    finally:
        restore()


def _onnx_buffers(path, saved):
    """Writes the buffers' values from before the export's trace run over
    the initializers of the same names."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    changed = False
    for init in model.graph.initializer:
        if init.name in saved:
            value = saved[init.name][1].cpu().numpy()
            init.CopyFrom(numpy_helper.from_array(value, init.name))
            changed = True
    if changed:
        onnx.save(model, path)


def _export(module, inputs, path, format, restore, saved):
    import torch
    try:
        if format in ("pt", "torchscript"):
            with torch.no_grad():
                traced = torch.jit.trace(module, inputs, check_trace=False)
            restore()  # the traced module shares the module's buffers
            # A saved module keeps no traced shapes: record the inputs'.
            shapes = [{"shape": list(t.shape),
                       "dtype": str(t.dtype).replace("torch.", "")}
                      for t in inputs]
            torch.jit.save(traced, path, _extra_files={
                "ober_inputs.json": json.dumps(shapes)})
        elif format == "onnx":
            mode = (torch.onnx.TrainingMode.TRAINING if module.training
                    else torch.onnx.TrainingMode.EVAL)
            torch.onnx.export(
                module, inputs, path, opset_version=17, training=mode,
                do_constant_folding=False,
                input_names=[f"input{i}" for i in range(len(inputs))])
            if module.training and saved:
                _onnx_buffers(path, saved)
        else:
            raise OberError(f"export: unknown format '{format}' (pt, onnx)")
    except OberError:
        raise
    except Exception as e:  # torch's own export errors, as OberError
        raise OberError(f"export to {format} failed: {e}") from e
    return path


class PlanReport:
    """The planner's report: `repr` is the plan table; `to_dict()` the
    JSON report (`tp`, `pp`, `dp`, `step_time_s`, `stages`, `collectives`,
    ...), whose keys also read as attributes."""

    def __init__(self, report, table):
        self._report = report
        self.table = table

    def to_dict(self):
        return dict(self._report)

    def __getitem__(self, key):
        return self._report[key]

    def __getattr__(self, key):
        try:
            return self._report[key]
        except KeyError:
            raise AttributeError(key) from None

    def __repr__(self):
        return self.table.rstrip("\n")


class TrainResult:
    """Losses of each step and the final parameters by name."""

    def __init__(self, losses, parameters):
        self.losses = losses
        self.parameters = parameters

    def __repr__(self):
        return f"TrainResult(losses={self.losses})"


class Compiled:
    """A model imported into ober with its training step built (and, with a
    cluster, planned): `mlir` is the step's text, `report` the plan (None
    without a cluster), `save(dir)` writes the step with its weights,
    `train(...)` trains it, calling it runs inference. The executables are
    built on first use, in the work directory."""

    def __init__(self, workdir, step_path, report, owner, model_path=None,
                 target="cpu", target_cpu="native"):
        self.workdir = workdir
        self.path = step_path
        self.report = report
        self.model_path = model_path
        self.target = target
        self.target_cpu = target_cpu
        self._owner = owner  # keeps the temporary directory alive
        self._trained = None  # the last train()'s parameters, as safetensors

    @property
    def mlir(self):
        with open(self.path) as f:
            return f.read()

    @property
    def partitioned(self):
        """Whether the step is partitioned for several (simulated) devices."""
        return "shard.grid" in self.mlir

    def _weights(self):
        text = self.mlir
        key = 'ober.weights = "'
        i = text.find(key)
        if i < 0:
            return None
        name = text[i + len(key):text.index('"', i + len(key))]
        return os.path.join(os.path.dirname(self.path), name)

    def save(self, directory):
        """Writes `step.mlir` and its weights file into `directory`;
        returns the module's path there."""
        os.makedirs(directory, exist_ok=True)
        out = os.path.join(directory, "step.mlir")
        shutil.copyfile(self.path, out)
        weights = self._weights()
        if weights and os.path.exists(weights):
            shutil.copyfile(weights, os.path.join(directory,
                                                  os.path.basename(weights)))
        return out

    def executable(self, inference=False):
        """The path of the training executable (or, `inference`, the
        model's inference executable), compiled by `ober-compile` once."""
        name = "infer" if inference else "train"
        exe = os.path.join(self.workdir, name)
        if os.path.exists(exe):
            return exe
        args = ["--target", self.target, "--target-cpu", self.target_cpu,
                "-o", exe]
        if inference:
            if not self.model_path:
                raise OberError("no model file to build an inference "
                                "executable from")
            args = [self.model_path, "--inference"] + args
        else:
            args = [self.path] + args
        try:
            run("ober-compile", args)
        except OberError as e:
            raise OberError(_keyword_hints(e.message, self.model_path or "",
                                           "the model"), e.command) from None
        return exe

    def train(self, batch, steps=1, lr=1e-3, init_seed=None, engine="cpu",
              threads=None, lr_schedule="constant", warmup_steps=0,
              min_lr=0.0, decay_steps=None):
        """Runs `steps` training steps. `batch` is a tuple of the model's
        inputs and the target (tensors or arrays), used for every step, or
        a list of such tuples, one per step. `engine` is "cpu" (the
        training executable; a partitioned step runs each device as a
        thread of it) or "reference" (the interpreter; simulated devices).
        `lr` is the peak of `lr_schedule` ("constant", "cosine" or
        "linear": `warmup_steps` of linear warm-up, then a decay to
        `min_lr` by `decay_steps`, default `steps`). Returns a TrainResult
        with each step's loss and the final parameters; calling the
        Compiled afterwards uses them."""
        if engine not in ("cpu", "reference"):
            raise OberError(f"engine='{engine}' is not one of cpu, reference")
        per_step = isinstance(batch, list)
        first = batch[0] if per_step else batch
        inputs = []
        for k in range(len(first)):
            if per_step:
                value = np.stack([_array(b[k]) for b in batch])
            else:
                value = _array(first[k])
            path = os.path.join(self.workdir, f"batch{k}.npy")
            np.save(path, value)
            inputs += ["--input", path]
        saved = tempfile.mkdtemp(dir=self.workdir, prefix="params")
        args = inputs + ["--lr", repr(float(lr)), "--save-params", saved,
                         "--lr-schedule", lr_schedule, "--warmup-steps",
                         warmup_steps, "--min-lr", repr(float(min_lr))]
        if decay_steps is not None:
            args += ["--decay-steps", decay_steps]
        if init_seed is not None:
            args += ["--init-seed", init_seed]
        if engine == "reference":
            out, _ = run("ober-run", [self.path, "--train-steps", steps] + args)
        else:
            if threads is not None:
                args += ["--threads", threads]
            out, _ = run_command([self.executable(), "--steps", steps]
                                 + args)
        losses = [float(line.split()[3]) for line in out.splitlines()
                  if line.startswith("step ")]
        parameters = {f[:-4]: np.load(os.path.join(saved, f))
                      for f in sorted(os.listdir(saved))}
        self._trained = os.path.join(saved, "weights.safetensors")
        _write_safetensors(self._trained, parameters)
        return TrainResult(losses, parameters)

    def __call__(self, *inputs, threads=None):
        """Runs the model (its inference executable) on `inputs`, with the
        parameters of the last `train` (the module's own before any).
        Returns an array, or a tuple of them for several outputs; torch
        tensors when the inputs are."""
        tmp = tempfile.mkdtemp(dir=self.workdir, prefix="call")
        args = ["--output-dir", os.path.join(tmp, "out")]
        for k, x in enumerate(inputs):
            path = os.path.join(tmp, f"input{k}.npy")
            np.save(path, _array(x))
            args += ["--input", path]
        if self._trained:
            args += ["--weights", self._trained]
        if threads is not None:
            args += ["--threads", threads]
        run_command([self.executable(inference=True)] + args)
        out = os.path.join(tmp, "out")
        results = [np.load(os.path.join(out, f"{i}.npy"))
                   for i in range(len(os.listdir(out)))]
        if inputs and hasattr(inputs[0], "detach"):
            import torch
            results = [torch.from_numpy(r) for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self):
        head = f"Compiled({self.path})"
        return head + ("\n" + repr(self.report) if self.report else "")


# safetensors' dtype names by NumPy's (one table: the checkpoint reader's).
_SAFETENSORS_DTYPES = {np.dtype(t).name: code for code, t in _DTYPES.items()}


def _write_safetensors(path, tensors):
    """Writes `tensors` (name -> array) in the safetensors layout: an 8-byte
    little-endian header length, the JSON header, the raw data."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        data = a.tobytes()
        header[name] = {"dtype": _SAFETENSORS_DTYPES[str(a.dtype)],
                        "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for b in blobs:
            f.write(b)


def _array(value):
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


# ober.compile's keywords by their --ober-build-train-step option names.
_STEP_OPTIONS = {
    "loss": "loss", "optimizer": "optimizer", "micro_batches": "micro-batches",
    "momentum": "momentum", "nesterov": "nesterov", "eps": "eps",
    "weight_decay": "weight-decay", "clip_norm": "clip-norm",
    "label_smoothing": "label-smoothing", "loss_scale": "loss-scale",
}


def _step_options(loss, optimizer, momentum, nesterov, betas, eps,
                  weight_decay, clip_norm, label_smoothing, micro_batches,
                  loss_scale):
    given = {"loss": loss, "optimizer": optimizer,
             "micro_batches": micro_batches, "momentum": momentum,
             "nesterov": "true" if nesterov else None, "eps": eps,
             "weight_decay": weight_decay, "clip_norm": clip_norm,
             "label_smoothing": label_smoothing, "loss_scale": loss_scale}
    # Zero momentum, clipping, smoothing: the defaults, not passed; a zero
    # eps or weight decay is the user's choice.
    unset = ("momentum", "clip_norm", "label_smoothing", "loss_scale")
    opts = [f"{_STEP_OPTIONS[k]}={v}" for k, v in given.items()
            if v is not None and (v or k not in unset)]
    opts.append("grad-norm=true")
    if betas is not None:
        opts += [f"beta1={betas[0]}", f"beta2={betas[1]}"]
    return " ".join(opts)


def _keyword_hints(message, model, name):
    """A tool's error in ober.compile's terms: from its first error line
    (not the plan table before it), the temporary model file named as the
    user's module, and option flags as the keywords that set them."""
    lines = message.splitlines()
    first = next((i for i, line in enumerate(lines) if "error:" in line), 0)
    text = "\n".join(lines[first:])
    if model:
        text = text.replace(model + ":0:0: ", name + ": ")
        text = text.replace(model, name)
    text = re.sub(r'\(?--ober-build-train-step="([^"]*?)( \.\.\.)?"\)?',
                  lambda m: f"(ober.compile(..., {m.group(1)}))", text)
    text = text.replace("--ober-plan: ", "").replace("--ober-plan", "the plan")
    options = dict(_STEP_OPTIONS, **_PIN_OPTIONS, global_batch="global-batch",
                   target="target", target_cpu="target-cpu")
    for keyword, option in options.items():
        text = re.sub(rf"(?<![\w-])(--)?{option}=", f"{keyword}=", text)
    # ober.compile(..., loss_scale=dynamic) -> loss_scale='dynamic'
    text = re.sub(r"(\w+)=([A-Za-z][\w.-]*)(?=[),])", r"\1='\2'", text)
    return text


def _plan_options(cluster, gpus, nodes, global_batch, pins):
    opts = [f"cluster={_option_value('cluster', cluster)}"]
    if gpus is not None:
        opts.append(f"gpus={gpus}")
    if nodes is not None:
        opts.append(f"nodes={nodes}")
    if global_batch is not None:
        opts.append(f"global-batch={global_batch}")
    for key, value in pins.items():
        if key not in _PIN_OPTIONS:
            raise OberError(f"unknown plan option '{key}' (supported: "
                            + ", ".join(sorted(_PIN_OPTIONS)) + ")")
        opts.append(f"{_PIN_OPTIONS[key]}={_option_value(key, value)}")
    return " ".join(opts)


def compile(module, example_inputs, loss="cross-entropy", optimizer="adamw",
            *, momentum=0.0, nesterov=False, betas=None, eps=None,
            weight_decay=None, clip_norm=0.0, label_smoothing=0.0,
            micro_batches=1, loss_scale=None, cluster=None, gpus=None,
            nodes=None, global_batch=None, partition=False, frontend="auto",
            target="cpu", target_cpu="native", workdir=None, **pins):
    """Imports `module` (run on `example_inputs`, one micro-batch), builds
    its training step (`loss`: cross-entropy, mse or output; `optimizer`:
    sgd, adam or adamw, PyTorch's defaults) and, with a `cluster` (a preset
    such as "h100-sxm" or a JSON file, with `gpus`/`nodes`), plans it;
    `partition=True` also partitions it (its executable runs each device as
    a thread; `train(engine="reference")` on simulated devices). Plan choices
    can be pinned by keyword (tp, pp, dp, micro_batch, schedule, recompute,
    sequence_parallel, zero, precision, chunks, memory_fraction,
    stage_partition). Returns a
    Compiled, whose `train` builds and runs the training executable and
    whose call runs the model's inference executable, both built for
    `target` ("cpu", where `target_cpu` is the LLVM CPU, "native" for
    this machine's; or "cuda", NVIDIA GPUs sm_80/90/100, whose executables
    need the NVIDIA driver where they run). Tool errors raise OberError with the tool's message,
    naming this function's keywords where it names an option."""
    if not isinstance(partition, bool):
        raise OberError(f"partition={partition!r}: takes True (partition "
                        "the planned step into per-device programs) or "
                        "False; the planner's uniform stages are "
                        "stage_partition='uniform'")
    if frontend == "auto":
        frontend = "torchscript" if supports_torchscript() else "onnx"
    if frontend not in ("torchscript", "onnx"):
        raise OberError(f"frontend='{frontend}' is not one of auto, "
                        "torchscript, onnx")
    owner = None
    if workdir is None:
        owner = tempfile.TemporaryDirectory(prefix="ober-")
        workdir = owner.name
    os.makedirs(workdir, exist_ok=True)
    model = os.path.join(workdir,
                         "model.pt" if frontend == "torchscript"
                         else "model.onnx")
    export(module, example_inputs, model)
    step = os.path.join(workdir, "step.mlir")
    args = [model, "--ober-build-train-step=" + _step_options(
        loss, optimizer, momentum, nesterov, betas, eps, weight_decay,
        clip_norm, label_smoothing, micro_batches, loss_scale)]
    report_path = os.path.join(workdir, "plan.json")
    if cluster is not None:
        args += ["--ober-plan=" + _plan_options(cluster, gpus, nodes,
                                                global_batch, pins),
                 "--ober-plan-report=" + report_path]
        if partition:
            args.append("--ober-partition")
    elif pins or partition:
        raise OberError("plan options need a cluster (cluster='h100-sxm', "
                        "gpus=...)")
    name = type(module).__name__
    try:
        _, stderr = run("ober-opt", args + ["-o", step])
    except OberError as e:
        raise OberError(_keyword_hints(e.message, model, name),
                        e.command) from None
    # Warnings (an export that changed parameters) as Python warnings; the
    # rest of stderr is the plan table.
    table, warning = [], []
    for line in stderr.splitlines(keepends=True):
        if re.search(r": (warning|note): ", line):
            warning.append(line.replace(model + ":0:0: ", name + ": "))
        else:
            table.append(line)
    if warning:
        warnings.warn("".join(warning).rstrip(), stacklevel=2)
    table = "".join(table)
    report = None
    if cluster is not None:
        with open(report_path) as f:
            report = PlanReport(json.load(f), table)
    return Compiled(workdir, step, report, owner, model, target, target_cpu)


def plan(module, example_inputs, cluster="h100-sxm", gpus=None, nodes=None,
         global_batch=None, loss="cross-entropy", optimizer="adamw", **pins):
    """Plans `module`'s training step on a cluster; returns the PlanReport
    (its repr is the plan table)."""
    return compile(module, example_inputs, loss=loss, optimizer=optimizer,
                   cluster=cluster, gpus=gpus, nodes=nodes,
                   global_batch=global_batch, **pins).report
