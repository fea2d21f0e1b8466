#!/usr/bin/python3
"""Training step time and peak memory: ober's executable vs PyTorch eager.

For each model (MLP 784-512-10 batch 64; resnet18 at 64x64, batch 8, batch
norm in training mode; a GPT-style decoder, 4 layers, hidden 256, sequence
128, batch 8; nn.TransformerEncoder, 4 layers, hidden 256, sequence 128,
batch 8) and each thread count, in the same run:

  * ober: the model exported to ONNX, compiled by `ober-compile` (AdamW),
    the executable run with `--threads T --timing`: the mean of the steps
    after the first (start-up and the first step excluded);
  * PyTorch: the same module and batch, AdamW, `torch.set_num_threads(T)`
    with OpenBLAS and OpenMP pinned to T threads (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS), in its own process: the mean of the steps after
    three warm-up steps.

Peak memory is each process's maximum resident set (wait4), each started
from a small launcher so that the bench's own memory does not count. Prints
one row per model and thread count with both step times, the speed-up
(PyTorch's time over ober's) and both peaks with their ratio.

  utils/bench/cpu_train.py [--bin build/bin] [--threads 1,2] [--models ...]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

STEPS = {"mlp": 200, "resnet18": 12, "gpt": 8, "encoder": 8}


# Runs argv[2:] with its output in the file argv[1] and prints the child's
# peak resident KiB. Linux counts the memory a process had before exec in
# its peak, so the command is forked from this small interpreter (-S, a few
# MiB), not from the bench, which holds PyTorch and the exported models.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_of(cmd, env=None):
    """Runs cmd[:-1] with its output in the file cmd[-1]; returns (output,
    peak resident MiB of that process)."""
    launched = subprocess.run(
        ["/usr/bin/python3", "-S", "-c", LAUNCHER, cmd[-1]] + cmd[:-1],
        env=env, stdout=subprocess.PIPE, text=True)
    with open(cmd[-1]) as f:
        text = f.read()
    if launched.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:-1])} failed:\n{text}")
    return text, int(launched.stdout) / 1024.0


def pinned_env(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    return env


def torch_worker(name, threads, steps):
    """Runs in its own process: prints the mean step time of PyTorch."""
    import torch
    import torch_models
    torch.set_num_threads(threads)
    model, inputs, target, loss = torch_models.build(name)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        torch_models.torch_loss(loss, model(*inputs), target).backward()
        opt.step()

    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print(f"seconds {(time.perf_counter() - start) / steps}")


def compile_model(name, workdir, bindir):
    import warnings
    warnings.filterwarnings("ignore")
    import numpy as np
    import ober
    import torch_models
    model, inputs, target, loss = torch_models.build(name)
    model.train()
    path = os.path.join(workdir, f"{name}.onnx")
    ober.export(model, inputs, path)
    exe = os.path.join(workdir, name)
    start = time.perf_counter()
    subprocess.run([os.path.join(bindir, "ober-compile"), path,
                    f"--train-step=loss={loss} optimizer=adamw", "-o", exe],
                   check=True)
    seconds = time.perf_counter() - start
    files = []
    for k, t in enumerate(list(inputs) + [target]):
        f = os.path.join(workdir, f"{name}-{k}.npy")
        np.save(f, t.numpy())
        files += ["--input", f]
    return exe, files, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "..",
                                                      "build", "bin"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default="mlp,resnet18,gpt,encoder")
    parser.add_argument("--torch-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        name, threads, steps = args.torch_worker
        return torch_worker(name, int(threads), int(steps))
    os.environ["OBER_BIN"] = os.path.abspath(args.bin)
    workdir = tempfile.mkdtemp(prefix="ober-bench-")
    threads = [int(t) for t in args.threads.split(",")]
    print(f"{'model':<10} {'threads':>7} {'ober ms':>9} {'torch ms':>9} "
          f"{'speed-up':>8} {'ober MiB':>9} {'torch MiB':>9} {'memory':>7}")
    for name in args.models.split(","):
        exe, files, compile_s = compile_model(name, workdir, args.bin)
        steps = STEPS[name]
        for t in threads:
            log = os.path.join(workdir, f"{name}-{t}.log")
            text, ober_mib = peak_of(
                [exe] + files + ["--steps", str(steps + 1), "--lr", "1e-3",
                                 "--threads", str(t), "--timing", log],
                pinned_env(t))
            line = [l for l in text.splitlines() if l.startswith("timing:")][0]
            ober_s = float(line.split("later steps ")[1].split()[0])
            text, torch_mib = peak_of(
                [sys.executable, os.path.abspath(__file__), "--torch-worker",
                 name, str(t), str(steps), log + ".torch"], pinned_env(t))
            torch_s = float([l for l in text.splitlines()
                             if l.startswith("seconds")][0].split()[1])
            print(f"{name:<10} {t:>7} {ober_s * 1e3:>9.2f} "
                  f"{torch_s * 1e3:>9.2f} {torch_s / ober_s:>7.2f}x "
                  f"{ober_mib:>9.0f} {torch_mib:>9.0f} "
                  f"{ober_mib / torch_mib:>6.2f}x", flush=True)
        print(f"{'':<10} (compile {compile_s:.1f} s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
