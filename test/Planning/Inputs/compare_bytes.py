"""Compares a partitioned run with the serial one and with its plan:
prints `losses equal` when the losses of `serial` and `parts` (ober-run
outputs) agree to 1e-6 relative, and `bytes equal` when the bytes of each
kind of collective the run moved (`--run-stats` on stderr) are those the
plan's report lists (bytes x times per step, a sequence-parallel
"reduce-scatter + all-gather" counting for both); else what differs."""
import json
import re
import sys


def losses(path):
    return [float(line.split()[3]) for line in open(path)
            if line.startswith("step ")]


def main(serial, parts, report, stats):
    a, b = losses(serial), losses(parts)
    ok = len(a) == len(b) and a and all(
        abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a, b))
    print("losses", "equal" if ok else (a, b))
    measured = {}
    for kind, n in re.findall(r"collective \d+: (\S+) over \d+ devices, "
                              r"(\d+) bytes", open(stats).read()):
        measured[kind] = measured.get(kind, 0) + int(n)
    planned = {}
    for c in json.load(open(report))["collectives"]:
        for kind in c["kind"].split(" + "):
            planned[kind] = planned.get(kind, 0) + c["bytes"] * c["per_step"]
    planned = {k: int(round(v)) for k, v in planned.items()}
    print("bytes", "equal" if measured == planned else (measured, planned))


if __name__ == "__main__":
    main(*sys.argv[1:5])
