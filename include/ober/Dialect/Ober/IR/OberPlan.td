//===- OberPlan.td - the parallel plan as a typed attribute -*- tablegen -*-===//
//
// What `--ober-plan` decides and `--ober-partition` realizes: one attribute
// with a verifier, its choices as enums, so the planner, the partitioner and
// users' tools read one definition.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERPLAN_TD
#define OBER_DIALECT_OBER_IR_OBERPLAN_TD

include "ober/Dialect/Ober/IR/OberBase.td"

// The names are the planner's option values (`schedule=1f1b`); "1f1b" is
// no keyword, so these enums print as a keyword or a quoted string.
class Ober_PlanEnum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::ober";
  let genSpecializedAttr = 0;
  let parameterPrinter =
      "$_printer.printKeywordOrString(stringify" # name # "($_self))";
}

def Ober_Schedule : Ober_PlanEnum<"Schedule", "pipeline schedule", [
    I32EnumAttrCase<"GPipe", 0, "gpipe">,
    I32EnumAttrCase<"OneFOneB", 1, "1f1b">,
    I32EnumAttrCase<"Interleaved", 2, "interleaved-1f1b">,
    I32EnumAttrCase<"ZeroBubble", 3, "zero-bubble">]>;

def Ober_Recompute : Ober_PlanEnum<"Recompute",
    "which forward work the backward pass recomputes", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Selective", 1, "selective">,
    I32EnumAttrCase<"Full", 2, "full">]>;

def Ober_Precision : Ober_PlanEnum<"Precision",
    "compute precision (master weights stay f32)", [
    I32EnumAttrCase<"F32", 0, "f32">,
    I32EnumAttrCase<"BF16", 1, "bf16">,
    I32EnumAttrCase<"F16", 2, "f16">]>;

def Ober_PlanAttr : AttrDef<Ober_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "how a training step runs on a device grid";
  let description = [{
    The module attribute `ober.plan` that `--ober-plan` writes and
    `--ober-partition` realizes: `tp` x `pp` x `dp` devices (tensor, pipeline
    and data parallel), `num_micro_batches` micro-batches of `micro_batch`
    samples per data-parallel replica and step (`global_batch` = `dp` x
    `micro_batch` x `num_micro_batches`), the pipeline `schedule` with
    `chunks` model chunks per device (more than one only for
    `interleaved-1f1b`), `recompute`, `sequence_parallel` (needs `tp` > 1),
    the ZeRO stage `zero_stage` (0-3), the compute `precision`, the
    gradient function the plan was made for, and `local_steps` (default 1,
    omitted): with H > 1 the data-parallel replicas train apart on their
    shares of each batch (local SGD) and every H steps average their
    parameter deltas and take an outer Nesterov step (DiLoCo), which the
    executables run; it needs `dp` > 1 and `zero_stage` 0.

    ```mlir
    module attributes {ober.plan = #ober.plan<tp = 2, pp = 2, dp = 2,
        micro_batch = 2, num_micro_batches = 4, global_batch = 16,
        schedule = "1f1b", chunks = 1, recompute = selective,
        sequence_parallel = true, zero_stage = 1, precision = bf16,
        function = "loss_grad">} { ... }
    ```
  }];
  let parameters = (ins
    "int64_t":$tp, "int64_t":$pp, "int64_t":$dp,
    "int64_t":$micro_batch, "int64_t":$num_micro_batches,
    "int64_t":$global_batch,
    EnumParameter<Ober_Schedule>:$schedule, "int64_t":$chunks,
    EnumParameter<Ober_Recompute>:$recompute, "bool":$sequence_parallel,
    "int64_t":$zero_stage, EnumParameter<Ober_Precision>:$precision,
    StringRefParameter<"the gradient function">:$function,
    DefaultValuedParameter<"int64_t", "1">:$local_steps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // OBER_DIALECT_OBER_IR_OBERPLAN_TD
