"""Compares the planner's bytes for one device running the whole step with
the peak live bytes the reference interpreter measures for the gradient
function.

  plan_memory.py REPORT.json RUN_STATS.txt

REPORT comes from --ober-plan-report on one device with one micro-batch of
the step's batch (parameters, gradients, activations, working set: the
optimizer state is held outside the gradient function); RUN_STATS is
ober-run --run-stats of the gradient function on that batch.
"""
import json
import re
import sys

report = json.load(open(sys.argv[1]))
measured = int(re.search(r"peak live bytes: (\d+)",
                         open(sys.argv[2]).read()).group(1))
assert report["num_micro_batches"] == 1 and len(report["stages"]) == 1
m = report["stages"][0]["memory_bytes"]
planned = m["parameters"] + m["gradients"] + m["activations"] + m["working"]
error = abs(planned - measured) / measured
print(f"{'within 5%' if error <= 0.05 else 'OFF'} (planned {planned:.0f} "
      f"bytes, measured {measured}, error {error:.2%})")
