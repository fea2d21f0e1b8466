#!/usr/bin/python3
"""Writes the seed inputs of the fuzz targets (but onnx's) into
test/fuzz/: small valid files of each kind (the fuzzer mutates them; found
crashes are added beside them by hand, named crash-<what>).

  utils/fuzz/make_seeds.py [--bin build/bin]
"""
import argparse
import glob
import io
import json
import os
import re
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


MLP = """func.func @main(%x: tensor<8x6xf32>, %w1: tensor<6x16xf32> {ober.param = "w1"},
                %w2: tensor<16x4xf32> {ober.param = "w2"}) -> tensor<8x4xf32> {
  %h = ober.matmul %x, %w1 : (tensor<8x6xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>
  %a = ober.relu %h : tensor<8x16xf32>
  %y = ober.matmul %a, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}"""
PASS_FLAG = re.compile(
    r'-{1,2}((?:ober|convert)-[a-z-]+)(?:="([^"]*)"|=(\S+))?')


def pipeline_of(run_line):
    """The project's passes (with options) a RUN line names, as a textual
    pipeline "pass{options},pass"."""
    passes = []
    for m in PASS_FLAG.finditer(run_line):
        options = m.group(2) or m.group(3)
        if not m.group(1).startswith("ober-plan-"):
            passes.append(m.group(1) + ("{" + options + "}" if options
                                        else ""))
    return ",".join(passes)


def mlir_seeds():
    """The mlir target's "module\n--\npipeline" inputs: each lit test's
    MLIR (every split-input-file case) with the passes of its first ober-opt
    RUN line; and a small MLP with every --ober-plan option string the lit
    tests use, before --ober-partition."""
    seeds = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"),
                                 recursive=True)):
        text = open(path).read()
        runs = [line for line in text.splitlines()
                if re.search(r"RUN: ober-opt %s", line)]
        pipeline = pipeline_of(runs[0]) if runs else ""
        if not pipeline:
            continue
        name = os.path.relpath(path, os.path.join(ROOT, "test"))[:-5]
        for i, case in enumerate(re.split(r"\n// -----[^\n]*", text)):
            body = "\n".join(line for line in case.splitlines()
                             if not line.lstrip().startswith("//"))
            key = name.replace("/", "-") + (f"-{i}" if i else "")
            seeds[key] = body.strip().encode() + SEPARATOR + pipeline.encode()
    plans = set()
    for path in glob.glob(os.path.join(ROOT, "test", "**", "*.test"),
                          recursive=True):
        plans.update(m.group(1) for m in
                     re.finditer(r'--ober-plan="([^"%]*)"', open(path).read()))
    for i, options in enumerate(sorted(plans)):
        pipeline = ("ober-build-train-step{loss=mse optimizer=adamw},"
                    f"ober-plan{{{options}}},ober-partition")
        seeds[f"plan-{i}"] = MLP.encode() + SEPARATOR + pipeline.encode()
    return seeds


# The torchscript target's modules: methods over its parameters (w1, b1, w2,
# conv, emb; the buffer steps) and the example inputs ober.export records.
TORCHSCRIPT = {
    "mlp": ("""def forward(self, x):
    h = torch.gelu(torch.matmul(x, self.w1) + self.b1)
    a, b = h.chunk(2, dim=-1)
    y = torch.cat([b, a], dim=-1).softmax(-1)
    return torch.layer_norm(y @ self.w2, [4])
""", [{"shape": [5, 6], "dtype": "float32"}]),
    "conv": ("""def forward(self, x):
    h = torch.conv2d(x, self.conv, None, [1, 1], [1, 1]).relu()
    h = torch.max_pool2d(h, [2, 2])
    return h.flatten(1).log_softmax(-1)
""", [{"shape": [2, 2, 4, 4], "dtype": "float32"}]),
    "attention": ("""def forward(self, tokens):
    e = torch.embedding(self.emb, tokens)
    q, k, v = e, e * 2.0, e.transpose(0, 1).transpose(0, 1)
    s = (q @ k.transpose(-1, -2)) / 8 ** 0.5
    mask = torch.ones(s.size(-1), s.size(-1)).tril()
    a = s.masked_fill(mask == 0, float("-inf")).softmax(-1)
    return (a @ v).mean(dim=1)
""", [{"shape": [2, 5], "dtype": "int64"}]),
    "two-inputs": ("""def helper(self, x):
    return x.reshape(-1, 6).sum(0, keepdim=True)

def forward(self, x, y):
    z = self.helper(x) * y.unsqueeze(0)
    return torch.where(z > 0, z, z.neg()).mean()
""", [{"shape": [3, 2, 6], "dtype": "float32"},
      {"shape": [6], "dtype": "float32"}]),
}


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
    for name, (source, inputs) in TORCHSCRIPT.items():
        out("torchscript", name,
            source.encode() + SEPARATOR + json.dumps(inputs).encode())
    for name, data in mlir_seeds().items():
        out("mlir", name, data)
    out("dataset", "arrays", npy(r.standard_normal((5, 3)).astype(np.float32))
        + SEPARATOR + npy(np.arange(5, dtype=np.int64)))

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
