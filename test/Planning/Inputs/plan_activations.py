"""Per-layer saved activations under a plan against Korthikanti et al. 2022.

  plan_activations.py s b h a t DIR

DIR holds plan reports of a GPT (bf16, dropout) under: tp.json (tensor
parallel of degree t, no sequence parallelism), sp.json (with it) and
selective.json (with it and selective recomputation). A layer is the two
repeated segment kinds (the attention and the MLP halves).
"""
import json
import sys

s, b, h, a, t = map(int, sys.argv[1:6])
d = sys.argv[6]
formulas = {
    "tp": s * b * h * (10 + 24 / t + 5 * a * s / (h * t)),
    "sp": s * b * h * (34 + 5 * a * s / h) / t,
    "selective": 34 * s * b * h / t,
}
for name, formula in formulas.items():
    report = json.load(open(f"{d}/{name}.json"))
    assert report["micro_batch"] == b and report["tp"] == t
    kinds = [k for k in report["segment_kinds"] if k["count"] > 1]
    assert len(kinds) == 2, kinds
    per_layer = sum(k["activation_bytes_per_micro_batch"] for k in kinds)
    error = abs(per_layer - formula) / formula
    print(f"{name}: {'within 5%' if error <= 0.05 else 'OFF'} "
          f"(model {per_layer:.0f} bytes, formula {formula:.0f}, "
          f"error {error:.2%})")
