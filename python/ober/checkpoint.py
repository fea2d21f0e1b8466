"""Reading the checkpoints training executables write (`--checkpoint-dir`).

A checkpoint is a folder `step_<N>` holding each rank's safetensors files
(every tensor a block of a global tensor, its offsets in the file's
metadata and in `manifest.json`) and the manifest. `load_checkpoint`
assembles the full tensors, whatever plan wrote them.
"""
import json
import os
import re
import warnings

import numpy as np

from ._tools import OberError

# NumPy's type of each safetensors dtype name (BF16 is widened to f32).
_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
           "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
           "U8": np.uint8, "BOOL": np.bool_}


def _complete(folder):
    return os.path.isfile(os.path.join(folder, "manifest.json"))


def _newest_first(directory):
    """The complete step_<N> folders of `directory`, newest first."""
    if not os.path.isdir(directory):
        raise OberError(f"{directory}: no such checkpoint folder or "
                        "checkpoint directory")
    steps = []
    for name in os.listdir(directory):
        m = re.fullmatch(r"step_(\d+)", name)
        if m and _complete(os.path.join(directory, name)):
            steps.append((int(m.group(1)), name))
    if not steps:
        raise OberError(f"{directory} holds no complete checkpoint "
                        "(a step_<N> folder with a manifest.json)")
    return [os.path.join(directory, name) for _, name in sorted(steps)[::-1]]


class _Broken(Exception):
    """A checkpoint folder that cannot be read (the reason)."""


def _read_safetensors(path, size):
    """The header and data of a safetensors file of `size` bytes (the
    manifest's)."""
    if not os.path.isfile(path):
        raise _Broken(f"{os.path.basename(path)} is missing")
    if size is not None and os.path.getsize(path) != size:
        raise _Broken(f"{os.path.basename(path)} has "
                      f"{os.path.getsize(path)} bytes, the manifest says "
                      f"{size} (truncated or changed)")
    with open(path, "rb") as f:
        raw = f.read()
    length = int.from_bytes(raw[:8], "little")
    if len(raw) < 8 or 8 + length > len(raw):
        raise _Broken(f"{os.path.basename(path)}: not a safetensors file")
    try:
        header = json.loads(raw[8:8 + length])
    except ValueError as e:
        raise _Broken(f"{os.path.basename(path)}: bad header ({e})")
    if not isinstance(header, dict):
        raise _Broken(f"{os.path.basename(path)}: bad header")
    header.pop("__metadata__", None)
    return header, memoryview(raw)[8 + length:]


def _check(condition, why):
    if not condition:
        raise _Broken(why)


def _load(folder, optimizer):
    """(tensors, steps) of one step_<N> folder; _Broken when malformed."""
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise _Broken(f"manifest.json cannot be read ({e})")
    _check(isinstance(manifest, dict)
           and manifest.get("format") == "ober-checkpoint",
           "manifest.json is not an ober checkpoint manifest")
    steps, tensors = manifest.get("steps"), manifest.get("tensors")
    name = os.path.basename(os.path.normpath(folder))
    m = re.fullmatch(r"step_(\d+)", name)
    _check(isinstance(steps, int) and not isinstance(steps, bool)
           and steps >= 0 and (m is None or int(m.group(1)) == steps),
           f"manifest.json's steps ({steps!r}) are not its folder's ({name})")
    _check(isinstance(tensors, dict) and
           isinstance(manifest.get("files"), list),
           "manifest.json has no tensors or files")
    out = {}
    try:
        for name, info in tensors.items():
            if (name.startswith(("optim.", "outer.")) and not optimizer
                    or re.match(r"replica\d+\.", name)):
                continue
            dtype = (np.float32 if info["dtype"] == "BF16"
                     else _DTYPES[info["dtype"]])
            out[name] = np.zeros(info["shape"], dtype)
        for entry in manifest["files"]:
            header, data = _read_safetensors(
                os.path.join(folder, entry["file"]), entry.get("size"))
            for shard in entry["shards"]:
                name = shard["name"]
                if name not in out:
                    continue
                _check(name in header,
                       f"{entry['file']} has no tensor '{name}'")
                h = header[name]
                begin, end = h["data_offsets"]
                _check(0 <= begin <= end <= len(data),
                       f"{entry['file']}: '{name}' lies outside the file")
                raw = data[begin:end]
                if h["dtype"] == "BF16":
                    block = (np.frombuffer(raw, np.uint16).astype(np.uint32)
                             << 16).view(np.float32)
                else:
                    block = np.frombuffer(raw, _DTYPES[h["dtype"]])
                block = block.reshape(shard["shape"])
                where = tuple(slice(o, o + s) for o, s
                              in zip(shard["offsets"], shard["shape"]))
                _check(out[name][where].shape == block.shape,
                       f"{entry['file']}: '{name}' does not fit its tensor")
                out[name][where] = block
    except (KeyError, TypeError, ValueError) as e:
        raise _Broken(f"malformed ({type(e).__name__}: {e})")
    return out, steps


def load_checkpoint(path, optimizer=False):
    """The full tensors of the checkpoint at `path` (a `step_<N>` folder,
    or a checkpoint directory: its newest complete one) by name: the
    parameters under the model's names and, with `optimizer=True`, the
    optimizer state under `optim.<name>` (and a local-SGD run's outer
    state under `outer.anchor.<name>` and `outer.velocity.<name>`).
    Under local SGD the parameters are the first data-parallel replica's;
    the other replicas' own (`replica<r>.<name>`) are left out. Returns
    (tensors, steps).

    A folder whose manifest or files are malformed, missing or of another
    size than the manifest says raises OberError; in a checkpoint
    directory such a folder is skipped with a warning for the next older
    one, as an executable's `--resume` does. (The executable also checks
    each file's hash; this reader does not.)"""
    if _complete(path):
        try:
            return _load(path, optimizer)
        except _Broken as e:
            raise OberError(f"{path}: {e}") from None
    reasons = []
    for folder in _newest_first(path):
        try:
            return _load(folder, optimizer)
        except _Broken as e:
            warnings.warn(f"{folder}: {e}; trying an older checkpoint")
            reasons.append(f"{os.path.basename(folder)}: {e}")
    raise OberError(f"{path} holds no readable checkpoint ("
                    + "; ".join(reasons) + ")")
