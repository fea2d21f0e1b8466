#!/usr/bin/python3
"""Planning-time benchmark on the GPT models of SC21 Table 1.

For each row: the free search on the row's GPU count and global batch, and,
as the named baseline measured in the same run, "profile only": the same
step with every choice pinned (the cost of reading the step and profiling
it, plus one plan). Both run on one core (the process is pinned to CPU 0).
Prints the planner's own time (plan_time_s), the whole ober-opt run, and the
ratio of the free search to the baseline; exits non-zero when a free search
takes longer than --max-seconds.

  plan_time.py [--bin build/bin] [--rows 145.6,1008] [--max-seconds 5]
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plan_sc21 import DEFAULT_CSV, plan, steps  # noqa: E402


def one_core():
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin"))
    p.add_argument("--csv", default=DEFAULT_CSV)
    p.add_argument("--rows", default="145.6,1008")
    p.add_argument("--max-seconds", type=float, default=5.0)
    p.add_argument("--cluster", default="a100-80gb")
    args = p.parse_args()
    slow = 0
    print(f"{'params':>8} {'gpus':>5} {'plans':>7} | {'search s':>8} "
          f"{'wall s':>7} | {'profile only s':>14} {'wall s':>7} | "
          f"{'search/profile':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for r, step in steps(args, tmp):
            gpus, batch = int(r["gpus"]), int(r["global_batch"])
            t, pp = int(r["tensor_parallel"]), int(r["pipeline_parallel"])
            base = f"cluster={args.cluster} gpus={gpus} global-batch={batch}"
            pinned, pinned_wall = plan(
                args.bin, step,
                f"{base} tp={t} pp={pp} dp={gpus // (t * pp)} micro-batch=1 "
                "schedule=1f1b recompute=full sequence-parallel=0 zero=0",
                os.path.join(tmp, "pinned.json"), one_core)
            free, free_wall = plan(args.bin, step, base,
                                   os.path.join(tmp, "free.json"), one_core)
            over = free["plan_time_s"] > args.max_seconds
            slow += over
            print(f"{r['params_billion']:>8} {gpus:>5} "
                  f"{free['plans_evaluated']:>7} | {free['plan_time_s']:>8.3f} "
                  f"{free_wall:>7.3f} | {pinned['plan_time_s']:>14.3f} "
                  f"{pinned_wall:>7.3f} | "
                  f"{free['plan_time_s'] / pinned['plan_time_s']:>14.1f}"
                  f"{'  OVER ' + str(args.max_seconds) + ' s' if over else ''}",
                  flush=True)
    print(f"{slow} row(s) over {args.max_seconds} s" if slow
          else f"every free search under {args.max_seconds} s")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
