"""Plan options and the planner report's collective bytes, as the tests and
benchmarks that compare partitioned runs with their plans use them."""


def plan_option(batch, dp, tp, pp, zero, micro, schedule, recompute="none",
                precision="f32", sp=0):
    """The `--ober-plan` value pinning every choice for `cluster=cpu`:
    `micro` micro-batches per replica and step over a global `batch`, two
    chunks per device for interleaved 1F1B."""
    return (f"cluster=cpu gpus={dp * tp * pp} global-batch={batch} dp={dp} "
            f"tp={tp} pp={pp} zero={zero} recompute={recompute} "
            f"schedule={schedule} precision={precision} "
            f"sequence-parallel={sp} micro-batch={batch // (dp * micro)}"
            + (" chunks=2" if schedule == "interleaved-1f1b" else ""))


def predicted_bytes(collectives):
    """Bytes per step by collective kind from a plan report's
    `collectives` (one replica's, as the runs count them)."""
    out = {}
    for c in collectives:
        for kind in c["kind"].split(" + "):
            out[kind] = out.get(kind, 0) + (c["bytes"] * c["per_step"]
                                            / c.get("every_steps", 1))
    return {k: int(round(v)) for k, v in out.items()}
