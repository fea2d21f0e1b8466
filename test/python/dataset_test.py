#!/usr/bin/python3
"""Data sets: each sample once per epoch across data-parallel ranks, the
right tokens, the right place after a resume.

A GPT-style decoder (sequences of 8 tokens) is compiled for dp2 and trained
on a token data set written by `ober.data.write_tokens` (documents of
random lengths, so samples cross document boundaries) for two epochs and
more, each rank logging the samples it reads (--data-log). Checked:
  * in every epoch each sample is read exactly once, over both ranks, and
    the two ranks never read the same slot of a batch;
  * the losses equal a run fed the same batches as --input arrays built in
    numpy from the token stream (sample i = tokens [8i, 8i + 9));
  * a run resumed from a checkpoint reads from the sample it stopped at;
  * a checkpoint is refused on another data set, a data set smaller than a
    batch is refused, and a folder of .npy arrays (ober.data.write_arrays)
    trains like the same arrays given as --input.

  dataset_test.py --bin build/bin
"""
import argparse
import os
import re
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
from jobs import gpt_job, run  # noqa: E402
from partition_test import losses_of  # noqa: E402
from plan_options import plan_option  # noqa: E402
import ober  # noqa: E402

BIN = None
SEQ, BATCH = 8, 4
warnings.filterwarnings("ignore")




def samples_read(log_dir):
    """step -> global batch slot -> sample, from both ranks' logs (rank r
    holds slots [2r, 2r + 2))."""
    out = {}
    for r in range(2):
        with open(os.path.join(log_dir, f"rank_{r:05d}.txt")) as f:
            for line in f:
                words = line.split()
                step = int(words[1])
                for j, sample in enumerate(words[2:]):
                    out.setdefault(step, {})[2 * r + j] = int(sample)
    return out


class Datasets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ober-data-")
        step, cls.inputs = gpt_job(cls.tmp, BIN, 1, BATCH)
        cls.exe = os.path.join(cls.tmp, "train")
        run([os.path.join(BIN, "ober-compile"), step, "--plan=" +
             plan_option(BATCH, 2, 1, 1, 0, 1, "1f1b"), "-o", cls.exe])
        rng = np.random.default_rng(11)
        cls.docs = [rng.integers(0, 40, rng.integers(5, 30))
                    for _ in range(24)]
        cls.stream = np.concatenate(cls.docs)
        cls.corpus = os.path.join(cls.tmp, "corpus")
        ober.data.write_tokens(cls.corpus, cls.docs)
        cls.samples = (len(cls.stream) - 1) // SEQ

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def train(self, *args, check=True):
        return run(["mpirun", "-np", 2, "--bind-to", "none", self.exe,
                    "--lr", "3e-3"] + list(args), check=check)

    def test_epochs_resume_and_contents(self):
        n = self.samples
        steps = (2 * n) // BATCH + 3
        log = os.path.join(self.tmp, "log")
        out = self.train("--data", self.corpus + ".bin", "--steps", steps,
                         "--data-seed", 5, "--data-log", log)
        losses = losses_of(out.stdout)
        read = samples_read(log)
        order = [read[s][j] for s in range(steps) for j in range(BATCH)]
        for epoch in range(2):
            seen = order[epoch * n:(epoch + 1) * n]
            self.assertEqual(sorted(seen), list(range(n)), f"epoch {epoch}")
        self.assertNotEqual(order[:n], order[n:2 * n], "a new order per epoch")
        # The same batches, built from the token stream, as --input.
        x = np.array([[self.stream[i * SEQ:i * SEQ + SEQ] for i in
                       (read[s][j] for j in range(BATCH))]
                      for s in range(steps)], np.int64)
        y = np.array([[self.stream[i * SEQ + 1:i * SEQ + SEQ + 1] for i in
                       (read[s][j] for j in range(BATCH))]
                      for s in range(steps)], np.int64)
        np.save(os.path.join(self.tmp, "x.npy"), x)
        np.save(os.path.join(self.tmp, "y.npy"), y)
        fed = losses_of(self.train(
            "--input", os.path.join(self.tmp, "x.npy"), "--input",
            os.path.join(self.tmp, "y.npy"), "--steps", steps).stdout)
        self.assertEqual(losses, fed)
        # Stop after 10 steps, resume: the same samples from step 10 on.
        ckpt = os.path.join(self.tmp, "ckpt")
        log2 = os.path.join(self.tmp, "log2")
        self.train("--data", self.corpus, "--steps", 10, "--data-seed", 5,
                   "--checkpoint-dir", ckpt)
        out = self.train("--data", self.corpus, "--steps", steps,
                         "--data-seed", 5, "--checkpoint-dir", ckpt,
                         "--resume", "--data-log", log2)
        again = samples_read(log2)
        self.assertEqual(min(again), 10)
        for s in range(10, steps):
            self.assertEqual(again[s], read[s], f"step {s}")
        self.assertEqual(losses_of(out.stdout), losses[10:])
        # Another data set is refused for that checkpoint.
        other = os.path.join(self.tmp, "other")
        ober.data.write_tokens(other, self.docs[::-1] + self.docs[:1])
        out = self.train("--data", other, "--steps", steps, "--resume",
                         "--checkpoint-dir", ckpt, check=False)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("the checkpoint was trained on tokens", out.stderr)

    def test_small_and_array_data_sets(self):
        tiny = os.path.join(self.tmp, "tiny")
        ober.data.write_tokens(tiny, [np.arange(20) % 40])
        out = self.train("--data", tiny, "--steps", 1, check=False)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("2 samples, fewer than one step's 4", out.stderr)
        # .npy arrays named as the step's inputs.
        names = re.findall(r"^  (\S+): int64", run([self.exe, "--help"])
                           .stdout, re.M)
        self.assertEqual(len(names), 2)
        rng = np.random.default_rng(3)
        xs = rng.integers(0, 40, (12, SEQ))
        ys = rng.integers(0, 40, (12, SEQ))
        folder = os.path.join(self.tmp, "arrays")
        ober.data.write_arrays(folder, **{names[0]: xs, names[1]: ys})
        log = os.path.join(self.tmp, "arrays-log")
        got = losses_of(self.train("--data", folder, "--steps", 3,
                                   "--data-log", log).stdout)
        read = samples_read(log)
        x = np.array([[xs[read[s][j]] for j in range(BATCH)]
                      for s in range(3)])
        y = np.array([[ys[read[s][j]] for j in range(BATCH)]
                      for s in range(3)])
        np.save(os.path.join(self.tmp, "ax.npy"), x)
        np.save(os.path.join(self.tmp, "ay.npy"), y)
        fed = losses_of(self.train(
            "--input", os.path.join(self.tmp, "ax.npy"), "--input",
            os.path.join(self.tmp, "ay.npy"), "--steps", 3).stdout)
        self.assertEqual(got, fed)
        # A missing array names the input.
        os.remove(os.path.join(folder, names[1] + ".npy"))
        out = self.train("--data", folder, "--steps", 1, check=False)
        self.assertIn(f"for input '{names[1]}'", out.stderr)


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
