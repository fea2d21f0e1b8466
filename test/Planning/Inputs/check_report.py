"""Checks a --ober-plan-report file: every field the interface promises is
there with a sensible value, and each KEY=VALUE given holds.

  check_report.py REPORT.json [KEY=VALUE ...]
"""
import json
import sys

report = json.load(open(sys.argv[1]))
required = ["step_time_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu",
            "mfu", "peak_memory_bytes", "tp", "pp", "dp", "micro_batch",
            "num_micro_batches", "schedule", "recompute", "sequence_parallel",
            "zero_stage", "plan_time_s", "breakdown"]
missing = [k for k in required if k not in report]
if missing:
    sys.exit(f"missing fields: {missing}")
for k in ["compute_s", "exposed_communication_s", "bubble_s"]:
    if k not in report["breakdown"]:
        sys.exit(f"missing breakdown field: {k}")
assert report["step_time_s"] > 0
assert report["tp"] * report["pp"] * report["dp"] == report["gpus"]
assert (report["micro_batch"] * report["num_micro_batches"] * report["dp"]
        == report["global_batch"])
assert report["hardware_tflops_per_gpu"] >= report["model_tflops_per_gpu"] > 0
assert 0 < report["mfu"] < 1
assert 0 < report["peak_memory_bytes"] <= report["memory_limit_bytes"]
assert len(report["stages"]) == report["pp"]
b = report["breakdown"]
total = b["compute_s"] + b["exposed_communication_s"] + b["bubble_s"] + \
    b["optimizer_s"]
assert abs(total - report["step_time_s"]) <= 1e-9 + 1e-6 * total, (total, report)
for col in report["collectives"]:
    for k in ["scope", "kind", "stage", "group_size", "bytes", "per_step",
              "reason", "where"]:
        assert k in col, (k, col)
    assert col["bytes"] > 0 and col["per_step"] > 0
    group = {"tensor-parallel": report["tp"], "data-parallel": report["dp"],
             "pipeline": 2}[col["scope"]]
    assert col["group_size"] == group, col
for st, stage in enumerate(report["stages"]):
    # Gradient reductions (whole, or reduce-scattered for ZeRO: buckets, and
    # one reduce-scatter per shard not along dimension 0; identical ones
    # are one entry with its count per step) cover the stage's parameters
    # at most once (these models have no buffers); a tied parameter's
    # gradient is reduced by its first stage only. Without pipeline stages
    # they cover them exactly (with them, a gradient may be reduced in the
    # stage that computes it rather than the one the planner counts its
    # parameter in).
    dp = [c for c in report["collectives"]
          if c["scope"] == "data-parallel" and c["stage"] == st
          and c["kind"] != "all-gather"
          and not c["reason"].startswith("the step's")]
    if report["dp"] > 1:
        width = 4  # gradients reduce in f32 whatever the precision
        total = sum(c["bytes"] * c["per_step"] for c in dp)
        full = stage["parameters"] * width
        assert dp and 0 < total <= full * (1 + 1e-6), dp
        if report["pp"] == 1:
            assert abs(total - full) <= 1e-6 * full, dp
for pair in sys.argv[2:]:
    key, want = pair.split("=", 1)
    got = report[key]
    if str(got) != want:
        sys.exit(f"{key}: expected {want}, got {got}")
print("report ok:", " ".join(f"{k}={report[k]}" for k in
                             ["tp", "pp", "dp", "micro_batch",
                              "num_micro_batches", "schedule", "chunks",
                              "recompute", "sequence_parallel", "zero_stage"]))
