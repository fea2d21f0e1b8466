#!/usr/bin/python3
"""Writes the seed inputs of the runtime's fuzz targets into test/fuzz/:
small valid files of each kind (the fuzzer mutates them; found crashes are
added beside them by hand, named crash-<what>).

  utils/fuzz/make_seeds.py [--bin build/bin]
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ober.data import write_tokens  # noqa: E402

SEPARATOR = b"\n--\n"  # between the files of one input (FuzzSupport.h)


def out(target, name, data):
    folder = os.path.join(ROOT, "test", "fuzz", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def npy(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    names = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64",
             np.dtype(np.float16): "F16", np.dtype(np.bool_): "BOOL"}
    for name, a in tensors.items():
        data = a.tobytes()
        header[name] = {"dtype": names[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def program_manifest(bindir, tmp):
    """The manifest a small compiled training executable carries."""
    mlir = os.path.join(tmp, "m.mlir")
    with open(mlir, "w") as f:
        f.write('func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> '
                '{ober.param = "w"}) -> tensor<4x2xf32> {\n'
                '  %y = ober.matmul %x, %w : (tensor<4x3xf32>, '
                'tensor<3x2xf32>) -> tensor<4x2xf32>\n'
                '  return %y : tensor<4x2xf32>\n}\n')
    exe = os.path.join(tmp, "train")
    subprocess.run([os.path.join(bindir, "ober-compile"), mlir,
                    "--train-step=loss=mse optimizer=adamw", "-o", exe],
                   check=True, capture_output=True)
    data = open(exe, "rb").read()
    start = data.index(b'{"format": "ober-program"')
    text = data[start:data.index(b"\0", start)]
    return text.replace(mlir.encode(), b"m.mlir")  # the same every time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = parser.parse_args()
    r = np.random.default_rng(0)
    out("npy", "f32-2x3.npy", npy(r.standard_normal((2, 3)).astype(np.float32)))
    out("npy", "i64-scalar.npy", npy(np.array(7, np.int64)))
    out("npy", "bool-4.npy", npy(np.array([True, False, True, True])))
    out("npy", "f16-fortran.npy",
        npy(np.asfortranarray(np.ones((2, 2), np.float16))))
    out("npy", "unicode.npy", npy(np.array(["ab", "c"])))

    w = r.standard_normal((4, 3)).astype(np.float32)
    out("safetensors", "two.safetensors",
        safetensors({"w": w, "b": np.arange(3, dtype=np.int64)},
                    {"format": "pt"}))
    out("safetensors", "empty-tensor.safetensors",
        safetensors({"e": np.zeros((0, 3), np.float32)}))

    # The checkpoint target's program: w [4, 3] and optim.w.exp_avg.
    shard = safetensors({"w": w, "optim.w.exp_avg": w * 0.5},
                        {"format": "ober-checkpoint", "DCP_SHARDING_INFO":
                         json.dumps({"w": {"saved_offsets": [0, 0]},
                                     "optim.w.exp_avg":
                                         {"saved_offsets": [0, 0]}})})
    manifest = {
        "format": "ober-checkpoint", "version": 1, "steps": 1,
        "model": "fuzz", "grid": [1], "extra": {"samples": "4"},
        "tensors": {"w": {"dtype": "F32", "shape": [4, 3]},
                    "optim.w.exp_avg": {"dtype": "F32", "shape": [4, 3]}},
        "files": [{"file": "rank_00000.safetensors", "size": "@SIZE@",
                   "hash": "@HASH@", "shards": [
                       {"name": "w", "offsets": [0, 0], "shape": [4, 3]},
                       {"name": "optim.w.exp_avg", "offsets": [0, 0],
                        "shape": [4, 3]}]}]}
    text = json.dumps(manifest).replace('"@SIZE@"', "@SIZE@").encode()
    out("checkpoint", "whole.ckpt", text + SEPARATOR + shard)
    halves = dict(manifest)
    halves["files"] = [dict(manifest["files"][0], shards=[
        {"name": "w", "offsets": [0, 0], "shape": [2, 3]},
        {"name": "w", "offsets": [2, 0], "shape": [2, 3]},
        {"name": "optim.w.exp_avg", "offsets": [0, 0], "shape": [4, 3]}])]
    out("checkpoint", "halves.ckpt",
        json.dumps(halves).replace('"@SIZE@"', "@SIZE@").encode()
        + SEPARATOR + shard)

    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "tokens")
        write_tokens(prefix, [np.arange(20), np.arange(5, 17), [3, 1, 4]])
        out("dataset", "three-docs.tokens",
            open(prefix + ".idx", "rb").read() + SEPARATOR
            + open(prefix + ".bin", "rb").read())
        write_tokens(prefix, [np.arange(70000, 70040)])  # int32 tokens
        out("dataset", "int32.tokens",
            open(prefix + ".idx", "rb").read() + SEPARATOR
            + open(prefix + ".bin", "rb").read())
        out("program", "train.json", program_manifest(args.bin, tmp))

    for name, argv in {
            "train": ["--steps", "10", "--lr", "3e-4", "--lr-schedule",
                      "cosine", "--warmup-steps", "2", "--min-lr", "1e-5"],
            "checkpoints": ["--checkpoint-dir", "ckpt", "--checkpoint-every",
                            "5", "--keep", "2", "--resume",
                            "--checkpoint-async", "--steps=20"],
            "data": ["--data", "tokens", "--data-seed", "3", "--log-dir",
                     "logs", "--run-name", "r", "--comm-timeout", "30"],
            "inference": ["--input", "x.npy", "--print", "--threads", "2",
                          "--output-dir", "out"]}.items():
        out("options", name, "\0".join(argv).encode())
    # Cluster files: the planner's test clusters, with gpus/nodes counts.
    inputs = os.path.join(ROOT, "test", "Planning", "Inputs")
    for name, counts in (("two-node", b"16 2"), ("three-level", b"8"),
                         ("one-level", b""), ("links-out-of-order", b"4 1")):
        data = open(os.path.join(inputs, name + ".json"), "rb").read()
        out("cluster", name, data + (SEPARATOR + counts if counts else b""))
    for name, argv in {
            "restarts": ["--np", "4", "--max-restarts", "3", "--", "./train",
                         "--checkpoint-dir", "ckpt", "--steps", "100"],
            "srun": ["--launcher", "srun", "--np", "2", "--", "./train",
                     "--resume", "--checkpoint-dir=ckpt"]}.items():
        out("launch", name, "\0".join(argv).encode())


if __name__ == "__main__":
    main()
