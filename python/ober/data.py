"""Writing the data sets training executables read with `--data`.

    ober.data.write_tokens("corpus", documents)   # corpus.bin + corpus.idx
    ober.data.write_arrays("images", x=images, y=labels)   # images/x.npy, ...

`write_tokens` writes a Megatron-style indexed data set: each document (a
1-D array or tensor of token ids) one sequence, tokens as uint16 when every
id is below 65500, else int32. `write_arrays` writes one `.npy` per batch
input, named as the step's input, the first dimension samples.
"""
import os
import struct

import numpy as np

from ._tools import OberError

_CODES = {np.dtype(np.uint16): 8, np.dtype(np.int32): 4}


def _array(x):
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def write_tokens(prefix, documents):
    """Writes `prefix`.bin and `prefix`.idx from `documents` (token ids)."""
    docs = [_array(d).reshape(-1) for d in documents]
    if not docs or not any(len(d) for d in docs):
        raise OberError("write_tokens: no tokens")
    for k, d in enumerate(docs):
        if d.size and (not np.issubdtype(d.dtype, np.integer) or d.min() < 0):
            raise OberError(f"write_tokens: document {k} holds {d.dtype} "
                            "values or negative ids; token ids are "
                            "non-negative integers")
    top = max(int(d.max()) for d in docs if d.size)
    dtype = np.dtype(np.uint16) if top < 65500 else np.dtype(np.int32)
    if top > np.iinfo(np.int32).max:
        raise OberError(f"write_tokens: token id {top} exceeds int32")
    lengths, pointers, offset = [], [], 0
    with open(prefix + ".bin", "wb") as f:
        for d in docs:
            data = d.astype(dtype).tobytes()
            f.write(data)
            lengths.append(len(d))
            pointers.append(offset)
            offset += len(data)
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00")
        f.write(struct.pack("<Q", 1))
        f.write(struct.pack("<B", _CODES[dtype]))
        f.write(struct.pack("<Q", len(docs)))
        f.write(struct.pack("<Q", len(docs)))
        f.write(np.array(lengths, np.int32).tobytes())
        f.write(np.array(pointers, np.int64).tobytes())
        f.write(np.arange(len(docs) + 1, dtype=np.int64).tobytes())


def write_arrays(folder, **arrays):
    """Writes each array (first dimension samples) as `folder`/<name>.npy."""
    if not arrays:
        raise OberError("write_arrays: no arrays")
    counts = {name: _array(a).shape[0] if _array(a).ndim else 0
              for name, a in arrays.items()}
    if len(set(counts.values())) != 1 or 0 in counts.values():
        raise OberError(f"write_arrays: the arrays' sample counts differ or "
                        f"are missing: {counts}")
    os.makedirs(folder, exist_ok=True)
    for name, a in arrays.items():
        np.save(os.path.join(folder, name + ".npy"),
                np.ascontiguousarray(_array(a)))
