"""Compares the plan reports of a GPT step with attention decomposed
(step.json) and kept as one op (fused.json), under one plan.

  plan_fused_attention.py DIR s h layers samples

Prints whether the model FLOPs are equal, whether the fused step's
hardware FLOPs exceed them by exactly the scores attention_grad computes
again (2 s^2 h per sample and layer) while the decomposed step's equal
them, whether the fused step saves fewer activation bytes, and whether
the two forward passes take the same time within 10 % (attention_side:
the fused op is priced as the ops it lowers to, its scale, mask and
softmax as the decomposed step's).
"""
import json
import sys

d = sys.argv[1]
s, h, layers, samples = map(int, sys.argv[2:6])
a, b = (json.load(open(f"{d}/{n}.json")) for n in ("step", "fused"))
again = 2 * s * s * h * layers * samples
print("model", a["model_flops_per_step"] == b["model_flops_per_step"])
print("hardware",
      b["hardware_flops_per_step"] - b["model_flops_per_step"] == again,
      a["hardware_flops_per_step"] == a["model_flops_per_step"])


def saved(report):
    return sum(k["activation_bytes_per_micro_batch"] * k["count"]
               for k in report["segment_kinds"])


print("saved", saved(b) < saved(a))


def forward(report):
    return sum(stage["forward_s"] for stage in report["stages"])


print("forward", abs(forward(b) / forward(a) - 1) < 0.1)
