"""Compares per-layer saved activations with Korthikanti et al.'s formulas.

  activations.py DIR s b h a   (DIR holds the test-ober-cost outputs)
"""
import re
import sys

d, s, b, h, a = sys.argv[1], *map(int, sys.argv[2:])


def saved(name):
    text = open(f"{d}/{name}.txt").read()
    return int(re.search(r"cost @gpt_loss_grad .* saved_activation_bytes (\d+)",
                         text).group(1))


for label, prefix, formula in [
        ("dropout", "drop", s * b * h * (34 + 5 * a * s / h)),
        ("no dropout", "plain", 32 * s * b * h + 2 * a * s * s * b)]:
    per_layer = saved(prefix + "3") - saved(prefix + "2")
    error = abs(per_layer - formula) / formula
    verdict = "within 5%" if error <= 0.05 else "OFF"
    print(f"{label}: {verdict} (model {per_layer} bytes, formula {formula:.0f}, "
          f"error {error:.2%})")
