//===- Passes.td - conversions ----------------------------*- tablegen -*-===//

#ifndef OBER_CONVERSION_PASSES_TD
#define OBER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertOberToLinalg : Pass<"convert-ober-to-linalg", "ModuleOp"> {
  let summary = "Lower ober ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites each `ober` op into upstream ops on tensors with the meaning
    the reference interpreter gives it, so that the CPU and GPU pipelines
    can fuse, tile, vectorize and bufferize it:

    - elementwise ops (with NumPy broadcasting), comparisons, `select` and
      `cast` become one `linalg.generic` each; bf16 and f16 compute in f32
      and round once, as the interpreter does; a float cast to an integer
      truncates toward zero, saturates and maps NaN to 0; integer `div`
      and `rem` by zero give 0 (the interpreter reports an error);
    - `constant` becomes `arith.constant`; `reshape` a collapse and an
      expand of the shape; `transpose` `linalg.transpose`; `broadcast_to`
      a `linalg.generic`;
    - `reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min` become
      `linalg.reduce` (NaN propagates through max and min; bf16 and f16
      accumulate in f32);
    - `matmul` (NumPy rules: vectors, broadcast batch dimensions) becomes
      `linalg.matmul` or `linalg.batch_matmul` on collapsed batch
      dimensions, accumulating bf16 and f16 in f32;
    - `softmax`, `log_softmax`, `layer_norm` and `rms_norm` (in f32 for
      bf16 and f16), `cross_entropy` (class indices or probabilities, label
      smoothing, `ignore_index`, every reduction) and `mse_loss`;
    - `slice` and `split` as `tensor.extract_slice` (a negative stride
      reads element by element), `concat` as `tensor.insert_slice`, `iota`;
    - `one_hot`, `gather` and `embedding` (a `linalg.generic` extracting at
      the index), `scatter_add` and `scatter` (a loop over the indices).
      Negative indices wrap; out-of-range class targets pick nothing and
      out-of-range indices are clamped, where the interpreter reports an
      error.

    An op with no lowering yet is an error naming it and the op families
    that are lowered.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // OBER_CONVERSION_PASSES_TD
