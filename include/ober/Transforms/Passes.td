//===- Passes.td - graph-level transforms ------------------*- tablegen -*-===//

#ifndef OBER_TRANSFORMS_PASSES_TD
#define OBER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposeAttentionPass
    : Pass<"ober-decompose-attention", "func::FuncOp"> {
  let summary = "Rewrite ober.attention into primitive ober ops";
  let description = [{
    Replaces every `ober.attention` with its definition in primitive ops:
    a transpose of the key, a matmul for the scores, the scale, the mask
    (added when it is a float tensor, applied with `ober.select` and `-inf`
    when it is `i1`, and built from `ober.iota` and `ober.cmp` for
    `is_causal`), `ober.softmax` over the key dimension and a matmul with the
    value. Later stages that have no fused attention kernel, and autodiff
    rules that want primitive ops, run this first.

    ```mlir
    // Before
    %o = ober.attention %q, %k, %v {is_causal}
        : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
        -> tensor<2x4x8x16xf32>
    // After: transpose, matmul, mul, iota, cmp, select, softmax, matmul.
    ```
  }];
  let dependentDialects = ["::mlir::ober::OberDialect"];
}

#endif // OBER_TRANSFORMS_PASSES_TD
