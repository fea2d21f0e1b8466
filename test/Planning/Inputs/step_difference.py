"""Prints the predicted step time of plan report `b` minus that of `a`
(`--ober-plan-report` JSON), in microseconds, rounded: `difference <us>`."""
import json
import sys

a, b = (json.load(open(p))["step_time_s"] for p in sys.argv[1:3])
print(f"difference {round((b - a) * 1e6)}")
