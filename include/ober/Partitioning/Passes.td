//===- Passes.td - partitioning ---------------------------*- tablegen -*-===//

#ifndef OBER_PARTITIONING_PASSES_TD
#define OBER_PARTITIONING_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartitionPass : Pass<"ober-partition", "ModuleOp"> {
  let summary = "Turn a planned training step into per-device SPMD programs";
  let description = [{
    Reads the module's `ober.plan` (from `--ober-plan`) and rewrites the
    training step into the program each device runs: a `shard.grid` of the
    plan's devices, local argument and result types with `ober.split`
    saying how global tensors are cut, and every collective explicit
    (`shard.all_reduce`, `all_gather`, `reduce_scatter`, `all_slice`).

    Data parallelism splits the batch inputs; the gradient function is
    inlined and each op is rebuilt on local operands by its partitioning
    rule, so losses and parameter gradients come out as partial sums.
    Gradients are reduced once per step (after micro-batch accumulation) in
    buckets of `bucket-mb`, last layer first. ZeRO 1 and 2 reduce-scatter
    the gradients onto the optimizer state's shard (dimension 0 of each
    parameter that the devices divide), update that shard and all-gather
    the new parameters; ZeRO 3 keeps the parameters sharded too and
    all-gathers them before the forward and again before the backward pass.

    Not partitioned yet (an error names the plan field): tensor and
    pipeline parallelism, recomputation, bf16/f16 precision.
  }];
  let options = [
    Option<"bucketMB", "bucket-mb", "double", /*default=*/"25.0",
           "Gradient bucket size in MiB">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::ober::OberDialect"];
}

#endif // OBER_PARTITIONING_PASSES_TD
