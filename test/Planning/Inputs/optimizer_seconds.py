"""Prints the optimizer time (breakdown optimizer_s) of plan reports: the
first's, then each later one's over the one it is compared with:
data parallel / one device, ZeRO-1 / data parallel, with the gradient norm
/ one device."""
import json
import sys

one, dp, zero, norm = (json.load(open(p))["breakdown"]["optimizer_s"]
                       for p in sys.argv[1:5])
print(f"one device {one:.3e}")
print(f"data parallel over one device {dp / one:.3f}")
print(f"ZeRO-1 over data parallel {zero / dp:.3f}")
print(f"with the gradient norm over without {norm / one:.3f}")
