#!/usr/bin/python3
"""Checkpoints of training executables: resharded, atomic, checked.

A GPT-style decoder (AdamW, six different batches, one per step) is
compiled for four plans: one device, dp2 with ZeRO-1 (sharded optimizer
state), tp2 (split and grouped weights), pp2. Each of the last three
trains 3 steps writing a checkpoint, and two other plans resume from it
for steps 3-5: their losses must equal the writer's uninterrupted run
within 1e-5 (relative), so parameters, optimizer state, the step counter
and the data position all came back. `ober.load_checkpoint` must equal
`--save-params`. A truncated newest checkpoint is skipped for the one
before it, a half-written `.tmp` folder is ignored, and a checkpoint of
another model is refused naming the tensor. Asynchronous saves
(--checkpoint-async) hold what synchronous ones do. A local-SGD run (dp2,
averaging every 3 steps) checkpointed between two averages resumes with
each replica's own parameters and optimizer state and the outer step's
anchors and momentum: its final parameters equal the uninterrupted run's
bit for bit.

With OBER_RT_COPY_ARGUMENTS=1 each step runs as on the CUDA target: on
copies of its arguments, the parameters and optimizer state kept apart
between steps and brought back only where the loop syncs the host
(checkpoints, --save-params, pipeline transfers, local SGD's average).
Losses, checkpoints and saved parameters must equal the plain run's bit
for bit.

  checkpoint_test.py --bin build/bin
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import unittest
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "utils", "bench"))
from jobs import MPI_ENV, gpt_job, run  # noqa: E402
from partition_test import losses_of  # noqa: E402
from plan_options import plan_option  # noqa: E402
import ober  # noqa: E402

BIN = None
STEPS, SPLIT, TOLERANCE = 6, 3, 1e-5
warnings.filterwarnings("ignore")

# name -> (dp, tp, pp, zero)
PLANS = {"serial": (1, 1, 1, 0), "dp2-zero1": (2, 1, 1, 1),
         "tp2": (1, 2, 1, 0), "pp2": (1, 1, 2, 0)}
RESUMES = {"dp2-zero1": ["tp2", "serial"], "tp2": ["pp2", "dp2-zero1"],
           "pp2": ["serial", "tp2"]}




class Checkpoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ober-checkpoint-")
        batch = 4
        cls.step, cls.inputs = gpt_job(cls.tmp, BIN, STEPS, batch,
                                       "optimizer=adamw eps=1e-4")
        cls.exes = {}
        for name, (dp, tp, pp, zero) in PLANS.items():
            exe = os.path.join(cls.tmp, name)
            run([os.path.join(BIN, "ober-compile"), cls.step,
                 "--plan=" + plan_option(batch, dp, tp, pp, zero, 1, "1f1b"),
                 "-o", exe])
            cls.exes[name] = exe

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def train(self, plan, *args, check=True, env=MPI_ENV):
        dp, tp, pp, _ = PLANS[plan]
        cmd = [self.exes[plan]] + self.inputs + ["--lr", "3e-3"] + list(args)
        n = dp * tp * pp
        if n > 1:
            cmd = ["mpirun", "-np", n, "--bind-to", "none"] + cmd
        return run(cmd, check=check, env=env)

    def test_resharding(self):
        for writer, readers in RESUMES.items():
            ref = losses_of(self.train(writer, "--steps", STEPS).stdout)
            self.assertEqual(len(ref), STEPS)
            ckpt = os.path.join(self.tmp, "ckpt-" + writer)
            first = losses_of(self.train(writer, "--steps", SPLIT,
                                         "--checkpoint-dir", ckpt).stdout)
            self.assertEqual(first, ref[:SPLIT])
            for reader in readers:
                with self.subTest(writer=writer, reader=reader):
                    resumed = os.path.join(self.tmp, f"c-{writer}-{reader}")
                    shutil.copytree(ckpt, resumed)
                    out = self.train(reader, "--steps", STEPS, "--resume",
                                     "--checkpoint-dir", resumed)
                    got = losses_of(out.stdout)
                    self.assertIn(f"resuming after step {SPLIT - 1}",
                                  out.stderr)
                    self.assertEqual(len(got), STEPS - SPLIT)
                    for i, (a, b) in enumerate(zip(got, ref[SPLIT:])):
                        self.assertLessEqual(
                            abs(a - b), TOLERANCE * abs(b),
                            f"{writer} -> {reader} step {SPLIT + i}: "
                            f"{a} vs {b}")

    def test_load_checkpoint_matches_save_params(self):
        ckpt = os.path.join(self.tmp, "ckpt-load")
        saved = os.path.join(self.tmp, "saved-load")
        self.train("tp2", "--steps", 2, "--checkpoint-dir", ckpt,
                   "--save-params", saved)
        tensors, steps = ober.load_checkpoint(ckpt)
        self.assertEqual(steps, 2)
        self.assertEqual(sorted(tensors), sorted(f[:-4]
                                                 for f in os.listdir(saved)))
        for name, value in tensors.items():
            np.testing.assert_array_equal(
                value, np.load(os.path.join(saved, name + ".npy")), name)
        with_state, _ = ober.load_checkpoint(ckpt, optimizer=True)
        self.assertTrue(any(n.startswith("optim.") for n in with_state))
        # PyTorch's distributed checkpoint reader's metadata: each shard's
        # offsets by tensor name.
        folder = os.path.join(ckpt, "step_000000002")
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
        for entry in manifest["files"]:
            with open(os.path.join(folder, entry["file"]), "rb") as f:
                header = json.loads(f.read(int.from_bytes(f.read(8),
                                                          "little")))
            info = json.loads(header["__metadata__"]["DCP_SHARDING_INFO"])
            for shard in entry["shards"]:
                self.assertEqual(info[shard["name"]]["saved_offsets"],
                                 shard["offsets"])
        with open(os.path.join(ckpt, "latest")) as f:
            self.assertEqual(f.read().strip(), "step_000000002")

    def test_corrupt_and_partial_checkpoints(self):
        ckpt = os.path.join(self.tmp, "ckpt-corrupt")
        self.train("dp2-zero1", "--steps", 4, "--checkpoint-dir", ckpt,
                   "--checkpoint-every", 2)
        self.assertEqual(sorted(os.listdir(ckpt)),
                         ["latest", "step_000000002", "step_000000004"])
        # A half-written later save and a truncated newest file: the resume
        # takes step 2.
        os.makedirs(os.path.join(ckpt, "step_000000006.tmp"))
        newest = os.path.join(ckpt, "step_000000004")
        victim = sorted(f for f in os.listdir(newest)
                        if f.endswith(".safetensors"))[0]
        with open(os.path.join(newest, victim), "r+b") as f:
            f.truncate(100)
        # A folder whose manifest says other steps than its name (copied
        # by hand): skipped too.
        shutil.copytree(os.path.join(ckpt, "step_000000002"),
                        os.path.join(ckpt, "step_000000008"))
        # ober.load_checkpoint skips both, naming why, and refuses the
        # truncated folder itself.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, steps = ober.load_checkpoint(ckpt)
        self.assertEqual(steps, 2)
        reasons = " ".join(str(w.message) for w in caught)
        self.assertIn("manifest.json's steps (2) are not its folder's",
                      reasons)
        self.assertIn(f"{victim} has 100 bytes, the manifest says", reasons)
        with self.assertRaisesRegex(ober.OberError, victim):
            ober.load_checkpoint(newest)
        out = self.train("dp2-zero1", "--steps", 3, "--resume",
                         "--checkpoint-dir", ckpt)
        self.assertIn("skipping checkpoint", out.stderr)
        self.assertIn("manifest.json's steps (2) are not its folder's "
                      "(step_000000008)", out.stderr)
        self.assertIn(f"{victim} is missing or has another size", out.stderr)
        self.assertIn("resuming after step 1", out.stderr)
        self.assertEqual(len(losses_of(out.stdout)), 1)
        # --keep 1 leaves the newest only.
        self.train("serial", "--steps", 2, "--checkpoint-dir",
                   os.path.join(self.tmp, "kept"), "--checkpoint-every", 1,
                   "--keep", 1)
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "kept"))),
                         ["latest", "step_000000002"])

    def test_local_sgd_resume(self):
        exe = os.path.join(self.tmp, "local-sgd")
        run([os.path.join(BIN, "ober-compile"), self.step, "--plan=" +
             plan_option(4, 2, 1, 1, 0, 1, "1f1b") + " local-steps=3",
             "-o", exe])

        def train(*args):
            return run(["mpirun", "-np", 2, "--bind-to", "none", exe]
                       + self.inputs + ["--lr", "3e-3"] + list(args))

        whole, resumed = (os.path.join(self.tmp, n)
                          for n in ("local-whole", "local-resumed"))
        ref = losses_of(train("--steps", STEPS, "--save-params",
                              whole).stdout)
        # Steps 0-2, the average, then step 3: the replicas differ.
        ckpt = os.path.join(self.tmp, "ckpt-local")
        train("--steps", 4, "--checkpoint-dir", ckpt)
        manifest = os.path.join(ckpt, "step_000000004", "manifest.json")
        with open(manifest) as f:
            names = json.load(f)["tensors"]
        params = sorted(f[:-4] for f in os.listdir(whole))
        for p in params:
            for saved in (p, "replica1." + p, "replica1.optim." + p + ".exp_avg",
                          "outer.anchor." + p, "outer.velocity." + p):
                self.assertIn(saved, names)
        tensors, _ = ober.load_checkpoint(ckpt)
        self.assertEqual(sorted(tensors), params)
        out = train("--steps", STEPS, "--resume", "--checkpoint-dir", ckpt,
                    "--save-params", resumed)
        self.assertEqual(losses_of(out.stdout), ref[4:])
        # On copies (test_device_copies): the outer step reads the replicas'
        # parameters from the host, and puts new ones in their place.
        copied = os.path.join(self.tmp, "local-copies")
        out = run(["mpirun", "-np", 2, "--bind-to", "none", exe] + self.inputs
                  + ["--lr", "3e-3", "--steps", STEPS, "--save-params", copied],
                  env=dict(MPI_ENV, OBER_RT_COPY_ARGUMENTS="1"))
        self.assertEqual(losses_of(out.stdout), ref)
        for p in params:
            for other in (resumed, copied):
                np.testing.assert_array_equal(
                    np.load(os.path.join(other, p + ".npy")),
                    np.load(os.path.join(whole, p + ".npy")), p)

    def test_device_copies(self):
        copies = dict(MPI_ENV, OBER_RT_COPY_ARGUMENTS="1")
        for plan in ("pp2", "dp2-zero1", "tp2"):
            runs = {}
            for name, env in (("plain", MPI_ENV), ("copies", copies)):
                ckpt, saved = (os.path.join(self.tmp, f"{kind}-{plan}-{name}")
                               for kind in ("ckpt-copies", "saved-copies"))
                out = self.train(plan, "--steps", 4, "--checkpoint-dir", ckpt,
                                 "--checkpoint-every", 2, "--checkpoint-async",
                                 "--save-params", saved, env=env)
                runs[name] = (losses_of(out.stdout), ckpt, saved)
            (want, wckpt, wsaved), (got, gckpt, gsaved) = (runs["plain"],
                                                           runs["copies"])
            with self.subTest(plan=plan):
                self.assertEqual(got, want)
                for n in (2, 4):
                    folder = f"step_{n:09d}"
                    a, _ = ober.load_checkpoint(os.path.join(wckpt, folder),
                                                optimizer=True)
                    b, _ = ober.load_checkpoint(os.path.join(gckpt, folder),
                                                optimizer=True)
                    self.assertEqual(sorted(b), sorted(a))
                    for name in a:
                        np.testing.assert_array_equal(b[name], a[name],
                                                      f"{folder}: {name}")
                self.assertEqual(sorted(os.listdir(gsaved)),
                                 sorted(os.listdir(wsaved)))
                for f in os.listdir(wsaved):
                    np.testing.assert_array_equal(
                        np.load(os.path.join(gsaved, f)),
                        np.load(os.path.join(wsaved, f)), f)

    def test_async_saves(self):
        # Written by a thread while training goes on, each committed steps
        # later: the same checkpoints as synchronous saves, none left
        # half-written.
        sync, later = (os.path.join(self.tmp, n)
                       for n in ("ckpt-sync", "ckpt-async"))
        self.train("dp2-zero1", "--steps", 4, "--checkpoint-dir", sync,
                   "--checkpoint-every", 1)
        self.train("dp2-zero1", "--steps", 4, "--checkpoint-dir", later,
                   "--checkpoint-every", 1, "--checkpoint-async")
        self.assertEqual(sorted(os.listdir(later)), sorted(os.listdir(sync)))
        for n in range(1, 5):
            folder = f"step_{n:09d}"
            want, _ = ober.load_checkpoint(os.path.join(sync, folder),
                                           optimizer=True)
            got, steps = ober.load_checkpoint(os.path.join(later, folder),
                                              optimizer=True)
            self.assertEqual(steps, n)
            self.assertEqual(sorted(got), sorted(want))
            for name in want:
                np.testing.assert_array_equal(got[name], want[name],
                                              f"{folder}: {name}")

    def test_other_model_refused(self):
        # A folder without checkpoints: the run starts over.
        out = self.train("serial", "--steps", 1, "--resume",
                         "--checkpoint-dir", os.path.join(self.tmp, "empty"))
        self.assertIn("starting at step 0", out.stderr)
        ckpt = os.path.join(self.tmp, "ckpt-other")
        os.makedirs(os.path.join(ckpt, "step_000000001"))
        with open(os.path.join(ckpt, "step_000000001", "manifest.json"),
                  "w") as f:
            json.dump({"format": "ober-checkpoint", "version": 1, "steps": 1,
                       "model": "x", "grid": [], "tensors": {}, "files": []},
                      f)
        out = self.train("serial", "--steps", 2, "--resume",
                         "--checkpoint-dir", ckpt, check=False)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("step_000000001 has no tensor", out.stderr)


def main():
    global BIN
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = os.path.abspath(args.bin)
    os.environ["OBER_BIN"] = BIN
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
