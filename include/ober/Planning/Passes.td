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
  ];
}

#endif // OBER_PLANNING_PASSES_TD
