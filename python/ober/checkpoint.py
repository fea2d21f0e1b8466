"""Reading the checkpoints training executables write (`--checkpoint-dir`).

A checkpoint is a folder `step_<N>` holding each rank's safetensors files
(every tensor a block of a global tensor, its offsets in the file's
metadata and in `manifest.json`) and the manifest. `load_checkpoint`
assembles the full tensors, whatever plan wrote them.
"""
import json
import os
import re

import numpy as np

from ._tools import OberError

# NumPy's type of each safetensors dtype name (BF16 is widened to f32).
_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
           "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
           "U8": np.uint8, "BOOL": np.bool_}


def _complete(folder):
    return os.path.isfile(os.path.join(folder, "manifest.json"))


def _newest(directory):
    steps = []
    for name in os.listdir(directory):
        m = re.fullmatch(r"step_(\d+)", name)
        if m and _complete(os.path.join(directory, name)):
            steps.append((int(m.group(1)), name))
    if not steps:
        raise OberError(f"{directory} holds no complete checkpoint "
                        "(a step_<N> folder with a manifest.json)")
    return os.path.join(directory, max(steps)[1])


def _read_safetensors(path):
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        data = f.read()
    header.pop("__metadata__", None)
    return header, data


def load_checkpoint(path, optimizer=False):
    """The full tensors of the checkpoint at `path` (a `step_<N>` folder,
    or a checkpoint directory: its newest complete one) by name: the
    parameters under the model's names and, with `optimizer=True`, the
    optimizer state under `optim.<name>` (and a local-SGD run's outer
    state under `outer.anchor.<name>` and `outer.velocity.<name>`).
    Under local SGD the parameters are the first data-parallel replica's;
    the other replicas' own (`replica<r>.<name>`) are left out. Returns
    (tensors, steps)."""
    folder = path if _complete(path) else _newest(path)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("format") != "ober-checkpoint":
        raise OberError(f"{folder}/manifest.json is not an ober checkpoint")
    out = {}
    for name, info in manifest["tensors"].items():
        if (name.startswith(("optim.", "outer.")) and not optimizer
                or re.match(r"replica\d+\.", name)):
            continue
        if info["dtype"] == "BF16":
            out[name] = np.zeros(info["shape"], np.float32)
        else:
            out[name] = np.zeros(info["shape"], _DTYPES[info["dtype"]])
    for entry in manifest["files"]:
        header, data = _read_safetensors(os.path.join(folder, entry["file"]))
        for shard in entry["shards"]:
            name = shard["name"]
            if name not in out:
                continue
            h = header[name]
            begin, end = h["data_offsets"]
            raw = data[begin:end]
            if h["dtype"] == "BF16":
                block = (np.frombuffer(raw, np.uint16).astype(np.uint32)
                         << 16).view(np.float32)
            else:
                block = np.frombuffer(raw, _DTYPES[h["dtype"]])
            block = block.reshape(shard["shape"])
            where = tuple(slice(o, o + s)
                          for o, s in zip(shard["offsets"], shard["shape"]))
            out[name][where] = block
    return out, manifest["steps"]
