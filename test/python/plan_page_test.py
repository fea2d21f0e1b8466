#!/usr/bin/python3
"""The plan page renders: headless Chromium draws --ober-plan-report=*.html.

Plans a small GPT on 8 A100s with 4 pipeline stages, writes the page, has
headless Chromium take a screenshot of it and dump the DOM it built, and
checks that the DOM holds the timeline and memory pictures (SVG) and that the
screenshot shows them: pixels of the forward and backward passes' colours,
in as many rows as there are pipeline devices.

  plan_page_test.py --bin build/bin
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

FORWARD, BACKWARD = (0x4E, 0x79, 0xA7), (0xF2, 0x8E, 0x2B)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("FAIL: no headless Chromium (utils/setup.sh installs Debian's "
             "chromium)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    browser = chromium()
    with tempfile.TemporaryDirectory() as tmp:
        step = os.path.join(tmp, "step.mlir")
        gpt = subprocess.run(
            [os.path.join(args.bin, "ober-translate"),
             "--emit-gpt=layers=4 hidden=64 heads=4 seq=16 vocab=64 batch=2"],
            capture_output=True, check=True)
        subprocess.run([os.path.join(args.bin, "ober-opt"),
                        "--ober-build-train-step", "-o", step],
                       input=gpt.stdout, check=True)
        page = os.path.join(tmp, "plan.html")
        subprocess.run(
            [os.path.join(args.bin, "ober-opt"), step,
             "--ober-plan=cluster=a100-80gb gpus=8 global-batch=16 pp=4 tp=2 "
             "micro-batch=2 schedule=1f1b",
             "--ober-plan-report=" + page, "-o", os.devnull],
            capture_output=True, check=True)
        shot = os.path.join(tmp, "plan.png")
        flags = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--hide-scrollbars", f"--user-data-dir={tmp}/profile"]
        subprocess.run([browser, *flags, f"--screenshot={shot}",
                        "--window-size=1200,900", "file://" + page],
                       capture_output=True, timeout=120, check=True)
        dom = subprocess.run([browser, *flags, "--dump-dom", "file://" + page],
                             capture_output=True, text=True, timeout=120,
                             check=True).stdout
        failures = 0
        for what in ("aria-label=\"pipeline timeline\"",
                     "aria-label=\"memory per stage\""):
            if what not in dom:
                print(f"FAIL: the rendered DOM has no <svg {what}>")
                failures += 1
        image = Image.open(shot).convert("RGB")
        width, height = image.size
        pixels = image.load()
        rows_with = {FORWARD: set(), BACKWARD: set()}
        for y in range(height):
            for x in range(0, width, 2):
                c = pixels[x, y]
                if c in rows_with:
                    rows_with[c].add(y)
        for colour, name in ((FORWARD, "forward"), (BACKWARD, "backward")):
            rows = sorted(rows_with[colour])
            # Bands of rows: one per pipeline device (legend swatches add
            # a short band of their own).
            bands = sum(1 for i, y in enumerate(rows)
                        if i == 0 or y != rows[i - 1] + 1)
            print(f"{name}: {len(rows)} pixel rows in {bands} bands")
            if bands < 4:
                print(f"FAIL: the screenshot shows {name} passes in {bands} "
                      "bands, fewer than the 4 pipeline devices")
                failures += 1
        print(f"{failures} check(s) failed" if failures else
              "the plan page renders")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
