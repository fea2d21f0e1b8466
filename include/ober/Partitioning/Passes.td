//===- Passes.td - partitioning ---------------------------*- tablegen -*-===//

#ifndef OBER_PARTITIONING_PASSES_TD
#define OBER_PARTITIONING_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartitionPass : Pass<"ober-partition", "ModuleOp"> {
  let summary = "Turn a planned training step into per-device SPMD programs";
  let description = [{
    Reads the module's `ober.plan` (from `--ober-plan`) and rewrites the
    training step into the programs the devices run: a `shard.grid` of
    `[dp, tp]` (and `pp`) devices, local argument and result types with
    `ober.split` saying how global tensors are cut, and every collective
    and transfer explicit (`shard.all_reduce`, `all_gather`,
    `reduce_scatter`, `all_slice`, `send`, `recv`).

    The step's micro-batch loop stays loops: each stage's share of one
    micro-batch (the gradient function, inlined) is built once and its
    passes are written in the schedule's order, a stretch that repeats
    with the micro-batch shifted as one `scf.for` (what a backward pass
    reads of its forward in another iteration waits in a ring of as many
    slots as the schedule keeps micro-batches in flight), so the program
    does not grow with the micro-batches. Each op is
    rebuilt on local operands by its partitioning rule. Data parallelism
    splits the batch inputs; gradients come out as partial sums and are
    reduced once per step, just before the optimizer needs them, in
    buckets of `bucket-mb` (last layer first). ZeRO 1 and 2 reduce-scatter
    them onto the optimizer state's shard, update it and all-gather the
    new parameters; ZeRO 3 keeps the parameters sharded and gathers them
    before each forward and again before each backward pass. Tensor
    parallelism splits parameters as the planner decided (`ober.tp_dim`;
    fused projections in groups) and completes partial sums right away;
    with sequence parallelism by a reduce-scatter of the tokens. Training
    batch norms over split samples synchronize their statistics. Ops marked
    `ober.recompute` run again before the backward pass. Pipeline
    parallelism gives each stage its own function (listed in
    `ober.stage_functions` on the first), with values crossing stages sent
    and received, and each stage's passes ordered by the schedule (GPipe,
    1F1B, zero-bubble with deferred weight gradients, interleaved 1F1B over
    each device's model chunks).

    With `precision = bf16` the gradient function computes in bf16 on
    casts of the f32 parameters and batch; gradients return to f32 and the
    optimizer updates f32 master weights; f16 likewise, from a step built
    with dynamic loss scaling (refused otherwise, naming the option).
  }];
  let options = [
    Option<"bucketMB", "bucket-mb", "double", /*default=*/"25.0",
           "Gradient bucket size in MiB">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::ober::OberDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // OBER_PARTITIONING_PASSES_TD
