#!/usr/bin/python3
"""Fault recovery: a training job under ober-launch that loses ranks ends
with the parameters of a run that lost none, bit for bit.

A GPT-style decoder (AdamW, one batch per step) is compiled for 4 ranks
(dp2 x tp2) and trained 200 steps uninterrupted. Then 5 trials run the same
job under `ober-launch --np 4 --max-restarts 8` with a checkpoint every 10
steps while the test kills a random rank with SIGKILL twice: once at a
random moment and once while a checkpoint is being written (its
`step_<N>.tmp` folder exists). Each trial's final parameters must equal the
uninterrupted run's exactly. Odd trials write their checkpoints
asynchronously (--checkpoint-async: a thread writes while training goes
on, the commit comes steps later). Last, SIGTERM to ober-launch makes the job
checkpoint and stop cleanly, and a second ober-launch with --resume
finishes it, again bit for bit.

  fault_test.py --bin build/bin [--trials 5]
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
from jobs import MPI_ENV, gpt_job, run  # noqa: E402
from partition_test import losses_of  # noqa: E402
from plan_options import plan_option  # noqa: E402

BIN = None
TRIALS, STEPS, EVERY = 5, 200, 10
warnings.filterwarnings("ignore")




def ranks_of(exe):
    """pid by MPI rank of the processes running `exe`."""
    out = subprocess.run(["pgrep", "-f", exe], capture_output=True,
                         text=True).stdout.split()
    ranks = {}
    for pid in out:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0")
                           if b"=" in kv)
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK" in env:
            ranks[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(pid)
    return ranks


def kill_one(exe, rng):
    ranks = ranks_of(exe)
    if not ranks:
        return False
    try:
        os.kill(ranks[rng.choice(sorted(ranks))], signal.SIGKILL)
        return True
    except OSError:
        return False


def wait_for_checkpoint(ckpt, proc):
    """Until the job under `proc` has committed a checkpoint in `ckpt`."""
    while proc.poll() is None and not (
            os.path.isdir(ckpt) and any(n.startswith("step_") and
                                        not n.endswith(".tmp")
                                        for n in os.listdir(ckpt))):
        time.sleep(0.005)


def params(folder):
    return {f: np.load(os.path.join(folder, f)) for f in os.listdir(folder)}


class FaultRecovery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ober-fault-")
        batch = 4
        step, inputs = gpt_job(cls.tmp, BIN, STEPS, batch)
        cls.args = ["--steps", STEPS, "--lr", "3e-3"] + inputs
        cls.exe = os.path.join(cls.tmp, "train")
        run([os.path.join(BIN, "ober-compile"), step,
             "--plan=" + plan_option(batch, 2, 2, 1, 0, 1, "1f1b"),
             "-o", cls.exe])
        cls.reference = os.path.join(cls.tmp, "reference")
        out = run(["mpirun", "-np", 4, "--bind-to", "none", cls.exe]
                  + cls.args + ["--save-params", cls.reference])
        cls.losses = losses_of(out.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def launch(self, ckpt, saved, restarts=8, resume=False, extra=()):
        cmd = [os.path.join(BIN, "ober-launch"), "--np", 4, "--max-restarts",
               restarts, "--", self.exe] + self.args + [
               "--checkpoint-dir", ckpt, "--checkpoint-every", EVERY,
               "--save-params", saved] + (["--resume"] if resume else []
                                          ) + list(extra)
        return subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=MPI_ENV,
                                start_new_session=True)

    def test_killed_ranks(self):
        rng = random.Random(int(os.environ.get("OBER_FAULT_SEED", "7")))
        for trial in range(TRIALS):
            with self.subTest(trial=trial):
                ckpt = os.path.join(self.tmp, f"ckpt{trial}")
                saved = os.path.join(self.tmp, f"saved{trial}")
                async_save = trial % 2 == 1
                proc = self.launch(ckpt, saved, extra=["--checkpoint-async"]
                                   if async_save else [])
                kills = []

                def killer():
                    # One kill at a random moment once training runs, one
                    # during a checkpoint.
                    wait_for_checkpoint(ckpt, proc)
                    time.sleep(rng.uniform(0, 0.4))
                    if proc.poll() is None and kill_one(self.exe, rng):
                        kills.append("random")
                    deadline = time.time() + 30
                    while proc.poll() is None and time.time() < deadline:
                        if os.path.isdir(ckpt) and any(
                                n.endswith(".tmp") for n in os.listdir(ckpt)):
                            if kill_one(self.exe, rng):
                                kills.append("during a checkpoint")
                            return
                        time.sleep(0.002)

                thread = threading.Thread(target=killer)
                thread.start()
                out, err = proc.communicate(timeout=600)
                thread.join()
                self.assertEqual(proc.returncode, 0, err[-3000:])
                # (Two kills may end the same attempt.)
                restarts = err.count("restarting from the newest checkpoint")
                self.assertGreaterEqual(restarts, 1 if kills else 0)
                print(f"trial {trial}"
                      f"{' (asynchronous checkpoints)' if async_save else ''}"
                      f": killed {', '.join(kills) or 'none'}", flush=True)
                got, want = params(saved), params(self.reference)
                self.assertEqual(sorted(got), sorted(want))
                for name in want:
                    self.assertTrue(np.array_equal(got[name], want[name]),
                                    f"trial {trial}: {name} differs")

    def test_sigterm_stops_cleanly(self):
        ckpt = os.path.join(self.tmp, "ckpt-term")
        saved = os.path.join(self.tmp, "saved-term")
        proc = self.launch(ckpt, saved, restarts=0)
        wait_for_checkpoint(ckpt, proc)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err[-2000:])
        self.assertIn("stopped after step", err)
        self.assertFalse(os.path.exists(saved))
        done = losses_of(out)
        self.assertLess(len(done), STEPS)
        proc = self.launch(ckpt, saved, restarts=0, resume=True)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, err[-2000:])
        got, want = params(saved), params(self.reference)
        for name in want:
            self.assertTrue(np.array_equal(got[name], want[name]), name)


def main():
    global BIN, TRIALS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--trials", type=int, default=TRIALS)
    args, rest = parser.parse_known_args()
    BIN = os.path.abspath(args.bin)
    TRIALS = args.trials
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
