"""Compares two plan reports (`--ober-plan-report` JSON) of one plan with
full recomputation under two recomputation rules: prints the FLOPs
recomputation adds (hardware minus model FLOPs) of the first over the
second's, and the tensor-parallel collectives of each step of the first
over the second's (the ones run once without recomputation included)."""
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])


def rebuilt(r):
    return r["hardware_flops_per_step"] - r["model_flops_per_step"]


def collectives(r):
    return sum(c["per_step"] for c in r["collectives"]
               if c["scope"] == "tensor-parallel")


print(f"rebuilt FLOPs needed/whole {rebuilt(a) / rebuilt(b):.3f}")
print(f"tensor-parallel collectives needed/whole "
      f"{collectives(a) / collectives(b):.3f}")
