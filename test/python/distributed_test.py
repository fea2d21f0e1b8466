#!/usr/bin/python3
"""Training executables on many ranks against the simulated devices.

A GPT-style decoder and a CNN with training-mode batch norm (torch.nn,
exported to ONNX, AdamW steps built by `ober-opt --ober-build-train-step`)
are planned and partitioned for each plan below (nine from the issue,
and GPipe and zero-bubble pipelines); the partitioned step is
trained 5 steps by `ober-run` on simulated devices (the reference) and by
the executable `ober-compile` builds from it, launched with
`mpirun -np <devices>` (one process per device, collectives through MPI).
Every step's loss and every final parameter (gathered by --save-params)
must agree within 1e-5, relative. One plan also runs without a launcher
(every rank a thread of one process), and two plans run under `srun` on
a one-node Slurm cluster the test starts (utils/slurm/local-cluster.sh).

Local SGD (dp2, two steps between averages): each replica against
`ober-run` training the serial step alone on its half of the batch, the
outer Nesterov step done in numpy.

The pipelined plans (up to 4 ranks) also as the CUDA target maps them to
kernels and host loops, each kernel's threads run as loops on the CPU.

Also checked: a job of the wrong size is refused before the first step,
ranks running different executables are refused, and a rank killed with
SIGKILL ends the job (every process exits non-zero, naming the lost rank)
well within 30 s.

  distributed_test.py --bin build/bin [--models gpt,cnn] [--plans N,...]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from jobs import MPI_ENV, run  # noqa: E402
from partition_test import GPT, losses_of  # noqa: E402
from ober.api import _write_safetensors  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
from plan_options import plan_option  # noqa: E402

BIN = None
MODELS = ["gpt", "cnn"]
STEPS, TOLERANCE = 5, 1e-5
warnings.filterwarnings("ignore")

# (name, dp, tp, pp, zero, micro-batches, schedule, sequence parallelism)
PLANS = [
    ("dp2", 2, 1, 1, 0, 1, "1f1b", 0),
    ("tp2", 1, 2, 1, 0, 1, "1f1b", 0),
    ("pp2-1f1b", 1, 1, 2, 0, 2, "1f1b", 0),
    ("dp2xtp2", 2, 2, 1, 0, 1, "1f1b", 0),
    ("dp2xpp2", 2, 1, 2, 0, 2, "1f1b", 0),
    ("tp2xpp2-interleaved", 1, 2, 2, 0, 2, "interleaved-1f1b", 0),
    ("dp4-zero3", 4, 1, 1, 3, 1, "1f1b", 0),
    ("tp2-sp", 1, 2, 1, 0, 1, "1f1b", 1),
    ("dp2xtp2xpp2", 2, 2, 2, 0, 2, "1f1b", 0),
    # The other schedules' orders.
    ("pp2-gpipe", 1, 1, 2, 0, 2, "gpipe", 0),
    ("pp2-zero-bubble", 1, 1, 2, 0, 2, "zero-bubble", 0),
]





def mpirun(n, cmd, **kw):
    return run(["mpirun", "-np", n, "--bind-to", "none"] + cmd, env=MPI_ENV,
               **kw)


class CNN(torch.nn.Module):
    """Three convolutions with training-mode batch norm and a linear head:
    enough segments for two model chunks on each of two stages."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(8)
        self.c3 = nn.Conv2d(8, 16, 3, stride=2, bias=False)
        self.b3 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(3)
        self.fc = nn.Linear(16, 6)

    def forward(self, x):
        relu = torch.nn.functional.relu
        x = relu(self.b1(self.c1(x)))
        x = relu(self.b2(self.c2(x)))
        x = self.pool(relu(self.b3(self.c3(x))))
        return self.fc(torch.flatten(x, 1))


def model_case(name):
    torch.manual_seed(3 if name == "gpt" else 2)
    if name == "gpt":
        return (GPT(), torch.randint(0, 40, (4, 8)),
                torch.randint(0, 40, (4, 8)), 3e-3)
    return (CNN(), torch.randn(8, 3, 8, 8), torch.randint(0, 6, (8,)), 5e-3)


class Case:
    """A model's steps (one per micro-batch count) and batch files."""

    def __init__(self, name, tmp):
        self.name, self.tmp = name, tmp
        self.model, self.x, self.y, self.lr = model_case(name)
        self.model.train()
        self.steps = {}

    def step(self, micro):
        if micro in self.steps:
            return self.steps[micro]
        batch = self.x.shape[0]
        onnx_path = os.path.join(self.tmp, f"{self.name}{micro}.onnx")
        torch.onnx.export(self.model, (self.x[:batch // micro],), onnx_path,
                          opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x"],
                          output_names=["logits"])
        step = os.path.join(self.tmp, f"{self.name}-step{micro}.mlir")
        run([os.path.join(BIN, "ober-opt"), onnx_path,
             "--ober-build-train-step=loss=cross-entropy optimizer=adamw "
             f"micro-batches={micro}", "-o", step])
        args = []
        for n, t in (("x", self.x), ("y", self.y)):
            path = os.path.join(self.tmp, f"{self.name}-{n}{micro}.npy")
            shape = ((micro, batch // micro) + tuple(t.shape[1:])
                     if micro > 1 else tuple(t.shape))
            np.save(path, t.numpy().reshape(shape))
            args += ["--input", path]
        self.steps[micro] = (step, args)
        return self.steps[micro]

    def partition(self, plan):
        name, dp, tp, pp, zero, micro, schedule, sp = plan
        step, args = self.step(micro)
        batch = self.x.shape[0]
        part = os.path.join(self.tmp, f"{self.name}-{name}.mlir")
        run([os.path.join(BIN, "ober-opt"), step,
             "--ober-plan=" + plan_option(batch, dp, tp, pp, zero, micro,
                                          schedule, sp=sp),
             "--ober-partition", "-o", part])
        return part, args


def compare(test, what, got_dir, got_losses, ref_dir, ref_losses):
    test.assertEqual(len(got_losses), STEPS, what)
    for i, (a, b) in enumerate(zip(got_losses, ref_losses)):
        test.assertLessEqual(abs(a - b), TOLERANCE * abs(b),
                             f"{what} step {i}: {a} vs simulated {b}")
    names = sorted(os.listdir(ref_dir))
    test.assertEqual(names, sorted(os.listdir(got_dir)), what)
    for f in names:
        a = np.load(os.path.join(got_dir, f))
        b = np.load(os.path.join(ref_dir, f))
        test.assertEqual(a.shape, b.shape, f"{what}: {f}")
        err = float(np.abs(a - b).max())
        test.assertLessEqual(err, TOLERANCE * float(np.abs(b).max()) + 1e-7,
                             f"{what}: parameter {f[:-4]} off by {err}")


class Distributed(unittest.TestCase):
    tmp = None
    cases = {}
    refs = {}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ober-distributed-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def case(self, name):
        if name not in self.cases:
            self.cases[name] = Case(name, self.tmp)
        return self.cases[name]

    def build(self, case, plan, compile_options=(), suffix="train"):
        """The partitioned step, its simulated run and its executable."""
        part, args = case.partition(plan)
        base = os.path.join(self.tmp, f"{case.name}-{plan[0]}")
        common = args + ["--lr", case.lr]
        key = (case.name, plan[0])
        if key not in self.refs:
            self.refs[key] = losses_of(run(
                [os.path.join(BIN, "ober-run"), part, "--train-steps", STEPS,
                 "--save-params", base + "-ref"] + common).stdout)
        exe = f"{base}-{suffix}"
        run([os.path.join(BIN, "ober-compile"), part, "-o", exe]
            + list(compile_options))
        return exe, common, self.refs[key], base

    def test_plans(self):
        for model in MODELS:
            case = self.case(model)
            for plan in PLANS:
                with self.subTest(model=model, plan=plan[0]):
                    exe, common, ref, base = self.build(case, plan)
                    devices = plan[1] * plan[2] * plan[3]
                    start = time.time()
                    out = mpirun(devices, [exe, "--steps", STEPS,
                                           "--save-params", base + "-got"]
                                 + common)
                    print(f"{model} {plan[0]}: {devices} ranks, "
                          f"{time.time() - start:.1f} s", flush=True)
                    compare(self, f"{model} {plan[0]}", base + "-got",
                            losses_of(out.stdout), base + "-ref", ref)

    def test_cuda_mapping(self):
        # What the CUDA target makes of the pipelined plans (kernels,
        # host loops over micro-batches, the stash's slots on the host),
        # each launch's threads run as loops on the CPU
        # (--test-cuda-mapping-on-cpu): the GPU's program, checked here.
        for model in MODELS:
            case = self.case(model)
            for plan in PLANS:
                if plan[3] == 1 or plan[1] * plan[2] * plan[3] > 4:
                    continue
                with self.subTest(model=model, plan=plan[0]):
                    exe, common, ref, base = self.build(
                        case, plan, ["--test-cuda-mapping-on-cpu"],
                        "cuda-mapping")
                    out = mpirun(plan[1] * plan[2] * plan[3],
                                 [exe, "--steps", STEPS, "--save-params",
                                  base + "-mapped"] + common)
                    compare(self, f"{model} {plan[0]} as CUDA maps it",
                            base + "-mapped", losses_of(out.stdout),
                            base + "-ref", ref)

    def test_srun(self):
        # A one-node Slurm cluster on loopback (slurmctld and slurmd as
        # root), the executable launched by srun.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "..")
        cluster = os.path.join(self.tmp, "slurm")
        script = os.path.join(root, "utils", "slurm", "local-cluster.sh")
        run([script, "start", cluster, 8])
        env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"))
        try:
            for model, plan in (("gpt", PLANS[3]), ("cnn", PLANS[2])):
                with self.subTest(model=model, plan=plan[0]):
                    case = self.case(model)
                    exe, common, ref, base = self.build(case, plan)
                    devices = plan[1] * plan[2] * plan[3]
                    out = run(["srun", "-n", devices, "--kill-on-bad-exit=1",
                               exe, "--steps", STEPS, "--save-params",
                               base + "-srun"] + common, env=env)
                    compare(self, f"{model} {plan[0]} under srun",
                            base + "-srun", losses_of(out.stdout),
                            base + "-ref", ref)
        finally:
            run([script, "stop", cluster], check=False)

    def test_local_sgd(self):
        # dp2 with local SGD, 2 steps between averages, 4 steps (SGD inner
        # optimizer): against each replica trained alone by ober-run on its
        # half of the batch, and the outer Nesterov step in numpy.
        H, steps, lr, outer_lr, mu = 2, 4, 0.05, 0.7, 0.9
        case = self.case("gpt")
        model, x, y = case.model, case.x, case.y
        half = x.shape[0] // 2
        tmp = os.path.join(self.tmp, "local-sgd")
        os.makedirs(tmp, exist_ok=True)
        onnx_path = os.path.join(tmp, "half.onnx")
        torch.onnx.export(model, (x[:half],), onnx_path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x"],
                          output_names=["logits"])
        build = "--ober-build-train-step=loss=cross-entropy optimizer=sgd"
        serial = os.path.join(tmp, "serial.mlir")
        run([os.path.join(BIN, "ober-opt"), onnx_path, build, "-o", serial])
        files = {}
        for name, t in (("x", x), ("y", y)):
            files[name] = os.path.join(tmp, f"{name}.npy")
            np.save(files[name], t.numpy())
            for r in range(2):
                files[name, r] = os.path.join(tmp, f"{name}{r}.npy")
                np.save(files[name, r], t.numpy()[r * half:(r + 1) * half])
        # The executable.
        whole = os.path.join(tmp, "whole.onnx")
        torch.onnx.export(model, (x,), whole, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x"],
                          output_names=["logits"])
        exe = os.path.join(tmp, "train")
        report = os.path.join(tmp, "plan.json")
        run([os.path.join(BIN, "ober-compile"), whole,
             "--train-step=loss=cross-entropy optimizer=sgd",
             f"--plan=cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 "
             f"global-batch={x.shape[0]} local-steps={H}",
             f"--plan-report={report}", "-o", exe])
        got = os.path.join(tmp, "got")
        out = mpirun(2, [exe, "--input", files["x"], "--input", files["y"],
                         "--steps", steps, "--lr", lr, "--outer-lr", outer_lr,
                         "--outer-momentum", mu, "--save-params", got])
        with open(report) as f:
            outer = [c for c in json.load(f)["collectives"]
                     if c.get("every_steps") == H]
        self.assertEqual(len(outer), 1, "the report's outer all-reduce")
        # The reference: rounds of H steps per replica, then the outer step.
        weights, anchor, velocity, losses = None, None, None, []
        for k in range(steps // H):
            params = []
            for r in range(2):
                saved = os.path.join(tmp, f"ref{k}-{r}")
                cmd = [os.path.join(BIN, "ober-run"), serial, "--input",
                       files["x", r], "--input", files["y", r],
                       "--train-steps", H, "--lr", lr, "--save-params", saved]
                if weights:
                    cmd += ["--weights", weights]
                text = run(cmd).stdout
                if r == 0:
                    losses += losses_of(text)
                params.append({f[:-4]: np.load(os.path.join(saved, f))
                               .astype(np.float64) for f in os.listdir(saved)})
            if anchor is None:
                # The model's own initial values (its ONNX initializers).
                state = model.state_dict()
                anchor = {n: state[n].detach().double().numpy()
                          for n in params[0]}
                velocity = {n: np.zeros_like(a) for n, a in anchor.items()}
            for n in anchor:
                g = anchor[n] - (params[0][n] + params[1][n]) / 2
                velocity[n] = mu * velocity[n] + g
                anchor[n] = anchor[n] - outer_lr * (g + mu * velocity[n])
            weights = os.path.join(tmp, f"round{k}.safetensors")
            _write_safetensors(weights, {n: a.astype(np.float32)
                                         for n, a in anchor.items()})
        got_losses = losses_of(out.stdout)
        self.assertEqual(len(got_losses), steps)
        for i, (a, b) in enumerate(zip(got_losses, losses)):
            self.assertLessEqual(abs(a - b), TOLERANCE * abs(b),
                                 f"local SGD step {i}: {a} vs {b}")
        for n, want in anchor.items():
            have = np.load(os.path.join(got, n + ".npy"))
            err = float(np.abs(have - want).max())
            self.assertLessEqual(
                err, TOLERANCE * float(np.abs(want).max()) + 1e-6,
                f"local SGD: parameter {n} off by {err}")

    def test_threads(self):
        # Without a launcher every rank is a thread of one process.
        case = self.case(MODELS[0])
        plan = PLANS[3]
        exe, common, ref, base = self.build(case, plan)
        out = run([exe, "--steps", STEPS, "--save-params", base + "-threads"]
                  + common)
        compare(self, f"{case.name} {plan[0]} as threads", base + "-threads",
                losses_of(out.stdout), base + "-ref", ref)

    def test_refusals(self):
        case = self.case("cnn")
        exe, common, _, base = self.build(case, PLANS[0])
        # A job of another size than the plan's.
        proc = mpirun(3, [exe, "--steps", 1] + common, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("the plan runs on 2 devices but this job has 3 rank(s)",
                      proc.stderr)
        # Two executables of the same plan that differ.
        other = base + "-other"
        shutil.copy(exe, other)
        with open(other, "ab") as f:
            f.write(b"\0")
        proc = run(["mpirun", "--bind-to", "none", "-np", 1, exe, "--steps", 1]
                   + common + [":", "-np", 1, other, "--steps", 1] + common,
                   env=MPI_ENV, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("rank 1 runs another executable than rank 0",
                      proc.stderr)
        self.assertNotIn("step 0", proc.stdout)

    def test_lost_rank(self):
        # A 4-rank job whose rank 2 is killed mid-run ends within 30 s.
        case = self.case("cnn")
        exe, common, _, base = self.build(case, PLANS[6])
        proc = subprocess.Popen(
            ["mpirun", "--bind-to", "none", "-np", "4", exe, "--steps",
             "100000", "--comm-timeout", "20"] + [str(c) for c in common],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=MPI_ENV, start_new_session=True)
        try:
            # Wait for training to run, then kill rank 2.
            line = proc.stdout.readline()
            self.assertTrue(line.startswith("step "), line)
            pids = run(["pgrep", "-f", "-d", " ", exe]).stdout.split()
            ranks = {}
            for pid in pids:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = dict(kv.split(b"=", 1)
                               for kv in f.read().split(b"\0") if b"=" in kv)
                rank = env.get(b"OMPI_COMM_WORLD_RANK")
                if rank is not None:
                    ranks[int(rank)] = int(pid)
            self.assertEqual(sorted(ranks), [0, 1, 2, 3])
            start = time.time()
            os.kill(ranks[2], signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
            elapsed = time.time() - start
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(elapsed, 30)
        self.assertRegex(err, r"rank 2")
        left = run(["pgrep", "-f", exe], check=False).stdout.split()
        self.assertEqual(left, [], "processes left behind")
        print(f"lost rank: the job ended {elapsed:.1f} s after the kill",
              flush=True)


def main():
    global BIN, MODELS, PLANS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--plans", default="")
    args, rest = parser.parse_known_args()
    BIN = os.path.abspath(args.bin)
    MODELS = args.models.split(",")
    if args.plans:
        PLANS = [p for p in PLANS if p[0] in args.plans.split(",")]
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
