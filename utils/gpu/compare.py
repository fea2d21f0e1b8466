#!/usr/bin/python3
"""Compares a GPU run of a compiled training step with the CPU's: the loss
of every step and every saved parameter (DIR/<name>.npy), relative to the
reference's magnitude. Prints one line and exits 1 when off by more than
`tolerance`.

  compare.py NAME TOLERANCE CPU_LOSSES GPU_LOSSES CPU_PARAMS GPU_PARAMS
"""
import os
import sys

import numpy as np


def losses(path):
    return [float(line.split()[3]) for line in open(path)
            if line.startswith("step ")]


def main(name, tolerance, cpu_log, gpu_log, cpu_dir, gpu_dir):
    tolerance = float(tolerance)
    want, got = losses(cpu_log), losses(gpu_log)
    if not got or len(got) != len(want):
        print(f"FAIL parity {name}: {len(got)} GPU steps, {len(want)} on the CPU")
        return 1
    loss = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(want, got))
    worst, where = 0.0, ""
    for f in sorted(os.listdir(cpu_dir)):
        a = np.load(os.path.join(cpu_dir, f)).astype(np.float64)
        b = np.load(os.path.join(gpu_dir, f)).astype(np.float64)
        err = float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-12))
        if err > worst:
            worst, where = err, f[:-4]
    ok = loss <= tolerance and worst <= tolerance
    print(f"{'PASS' if ok else 'FAIL'} parity {name}: {len(got)} steps, "
          f"loss within {loss:.2e}, parameters within {worst:.2e} ({where}); "
          f"tolerance {tolerance:g}; last loss {got[-1]:.6f} (CPU {want[-1]:.6f})")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
