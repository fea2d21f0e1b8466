"""A pipeline whose time-balanced stages overflow the first stage (1F1B keeps
p micro-batches there) must be re-partitioned under the memory limit.

  plan_tight.py OBER-OPT STEP.mlir DIR
"""
import json
import subprocess
import sys

tool, step, d = sys.argv[1:4]
pins = ("cluster=a100-80gb gpus=4 global-batch=64 tp=1 pp=4 schedule=1f1b "
        "recompute=none micro-batch=8 zero=0")


def plan(extra, name):
    subprocess.run([tool, step, f"--ober-plan={pins} {extra}",
                    f"--ober-plan-report={d}/{name}.json", "-o", "/dev/null"],
                   check=True, capture_output=True)
    return json.load(open(f"{d}/{name}.json"))


roomy = plan("", "roomy")
# A limit 10% under the time-balanced plan's peak.
fraction = 0.9 * roomy["peak_memory_bytes"] / 80e9
tight = plan(f"memory-fraction={fraction:.9f}", "tight")
first = lambda r: r["stages"][0]["segments"][0]
print("roomy stage 0:", first(roomy), "peak on stage", roomy["peak_memory_stage"])
print("tight stage 0:", first(tight), "fits:",
      tight["peak_memory_bytes"] <= tight["memory_limit_bytes"],
      "slower:", tight["step_time_s"] >= roomy["step_time_s"])
