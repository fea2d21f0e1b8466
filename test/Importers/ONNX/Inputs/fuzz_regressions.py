"""Imports each test/fuzz/onnx/crash-* file with ober-translate: each must
exit with status 1 and an error message (never a signal)."""
import os
import subprocess
import sys

folder, translate = sys.argv[1], sys.argv[2]
cases = sorted(f for f in os.listdir(folder) if f.startswith("crash-"))
bad = []
for name in cases:
    proc = subprocess.run([translate, "--import-onnx",
                           os.path.join(folder, name)],
                          capture_output=True, text=True)
    if proc.returncode != 1 or "error:" not in proc.stderr:
        bad.append(f"{name}: exit {proc.returncode}: {proc.stderr[-500:]}")
print("\n".join(bad) if bad else
      f"all {len(cases)} found case(s) refused cleanly")
