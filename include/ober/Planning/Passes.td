//===- Passes.td - planning -------------------------------*- tablegen -*-===//

#ifndef OBER_PLANNING_PASSES_TD
#define OBER_PLANNING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestClusterPass : Pass<"test-ober-cluster", "ModuleOp"> {
  let summary = "Resolve a cluster description and print it (test pass)";
  let description = [{
    Reads `cluster` (a preset or a JSON file) with `gpus` and `nodes`,
    attaches it to the module as `ober.cluster` and prints it as JSON to
    stdout. Errors name the offending field.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu\"",
           "Preset (a100-40gb, a100-80gb, h100-sxm, h200-sxm, max-1550, cpu) "
           "or JSON file">,
    Option<"gpus", "gpus", "int64_t", /*default=*/"0",
           "Devices in total (any kind, CPU included)">,
    Option<"nodes", "nodes", "int64_t", /*default=*/"0", "Nodes">,
  ];
}

def TestCostPass : Pass<"test-ober-cost", "ModuleOp"> {
  let summary = "Print the cost model's totals for each function (test pass)";
  let description = [{
    For every function with a body: FLOPs on matrix units and elsewhere,
    bytes moved, and the roofline time of running its ops one after another
    on one device of `cluster`.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"a100-80gb\"",
           "Preset or JSON file">,
    Option<"attention", "attention", "std::string", /*default=*/"\"blocked\"",
           "How attention is compiled, as ober-plan's option">,
    Option<"attentionBlock", "attention-block", "int64_t", /*default=*/"0",
           "Queries a block with attention=blocked (0: automatic)">,
    Option<"convolutions", "convolutions", "std::string",
           /*default=*/"\"library\"",
           "How convolutions are compiled, as ober-plan's option">,
  ];
}

def PlanPass : Pass<"ober-plan", "ModuleOp"> {
  let summary = "Choose how to run a training step on a cluster";
  let description = [{
    Reads the training step built by `--ober-build-train-step`, profiles the
    forward chain of its gradient function (repeated layers once), and
    searches data, tensor (with or without sequence) and pipeline
    parallelism, micro-batching, the pipeline schedule, recomputation and
    the ZeRO stage jointly under the devices' memory. Any choice can be
    pinned. The result is annotations (the module's `ober.plan` and
    `ober.cluster`; `ober.stage` and `ober.recompute` on the gradient
    function's forward ops; `ober.sharding` and `ober.stage` on its
    parameters), a table on stderr, a JSON report with
    `--ober-plan-report=<file>`, and the list of collectives with
    `--ober-plan-explain`: the cost model's, which are the collectives the
    partitioned program runs (kind, group, bytes, times per step, pass and
    why). When no plan fits, the error says how much memory the leanest
    plan needs and where.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu\"",
           "Preset (a100-40gb, a100-80gb, h100-sxm, h200-sxm, max-1550, cpu) "
           "or JSON file">,
    Option<"gpus", "gpus", "int64_t", /*default=*/"0",
           "Devices in total (any kind, CPU included)">,
    Option<"nodes", "nodes", "int64_t", /*default=*/"0", "Nodes">,
    Option<"globalBatch", "global-batch", "int64_t", /*default=*/"0",
           "Samples per step (default: the step's batch)">,
    Option<"tp", "tp", "int64_t", /*default=*/"0", "Pin the tensor-parallel degree">,
    Option<"pp", "pp", "int64_t", /*default=*/"0", "Pin the pipeline stages">,
    Option<"dp", "dp", "int64_t", /*default=*/"0", "Pin the data-parallel degree">,
    Option<"microBatch", "micro-batch", "int64_t", /*default=*/"0",
           "Pin the micro-batch size">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"0",
           "Pin the model chunks per device of interleaved 1F1B">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Pin the schedule: gpipe, 1f1b, interleaved-1f1b, zero-bubble">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"\"",
           "Pin recomputation: none, selective, full">,
    Option<"recomputeEvery", "recompute-every", "int64_t", /*default=*/"0",
           "Pin full recomputation's granularity: keep the input of every "
           "this-many segments of a stage (default: the finest that fits)">,
    Option<"recomputeGroups", "recompute-groups", "int64_t", /*default=*/"0",
           "Pin how many groups (of recompute-every segments) full "
           "recomputation rebuilds at the start of each stage, keeping every "
           "activation of the rest (Megatron's block method); 0: all of them "
           "(the uniform method). Default: all with recompute=full pinned, "
           "else the fewest that fit">,
    Option<"partition", "partition", "std::string", /*default=*/"\"\"",
           "Pin how stages divide the segments: balanced (by time, then "
           "memory; the default) or uniform (as many segments on each "
           "stage, the first segment on the first and the last on the "
           "last: Megatron's layers per stage)">,
    Option<"sequenceParallel", "sequence-parallel", "int64_t",
           /*default=*/"-1", "Pin sequence parallelism (0 or 1)">,
    Option<"zero", "zero", "int64_t", /*default=*/"-1", "Pin the ZeRO stage (0-3)">,
    Option<"localSteps", "local-steps", "int64_t", /*default=*/"0",
           "Local SGD for slow links: data-parallel replicas take this many "
           "steps apart between averages of their parameters (DiLoCo's "
           "outer step; needs dp >= 2 and ZeRO 0)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"auto\"",
           "Compute precision: auto (bf16 where the device has it), bf16, "
           "f16, f32">,
    Option<"memoryFraction", "memory-fraction", "double", /*default=*/"1.0",
           "Fraction of device memory a plan may use">,
    Option<"attention", "attention", "std::string", /*default=*/"\"blocked\"",
           "How the compiled code runs attention, which the cost model "
           "prices (ober-compile passes its --attention): blocked (products "
           "on matrix units, scores through memory a block of queries at a "
           "time), decomposed (one block) or fused (loops on vector units "
           "that hold no scores)">,
    Option<"attentionBlock", "attention-block", "int64_t", /*default=*/"0",
           "Queries a block with attention=blocked (0: chosen from the "
           "scores' size, as ober-compile's --attention-block)">,
    Option<"convolutions", "convolutions", "std::string",
           /*default=*/"\"library\"",
           "How the compiled code runs convolutions, which the cost model "
           "prices (ober-compile --target=cuda passes gemm): library (the "
           "kernel library's) or gemm (matrix products over the windows "
           "gathered into columns, whose writing and reading count as "
           "memory traffic)">,
  ];
  let dependentDialects = ["::mlir::ober::OberDialect"];
}

#endif // OBER_PLANNING_PASSES_TD
