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
    - `reduce_prod`, `argmax` and `argmin` (NaN wins; the first or last
      index), `cumsum` (a loop along its axis);
    - `matmul` (NumPy rules: vectors, broadcast batch dimensions) on floats
      calls the kernel library's matrix products (oneDNN, through
      `ober/Runtime/CPUKernels.h`): a batch that is whole or shared per
      operand is the kernel's, an operand that transposes its last two
      dimensions is read transposed from its source; integer `matmul`
      becomes `linalg.matmul` or `linalg.batch_matmul`;
    - `conv`, `conv_transpose` (the data gradient of a convolution, plus
      its bias) and `conv_weight_grad` call the kernel library's
      convolutions, or with `convolutions=gemm` (targets without one, such
      as CUDA) become one matrix product per group of the kernel library's
      over the windows gathered into columns (im2col; the data gradient
      gathers the columns back per input position); bf16 and f16 operands
      are widened to f32 for every kernel call and the result rounded
      once, except matrix products (convolutions as GEMMs included) with
      `low-precision-products` (the CUDA target's: cuBLASLt multiplies
      bf16 and f16 on tensor cores, accumulating in f32), whose buffers
      keep their type, the call named for it (`ober_rt_cpu_matmul_bf16`,
      `_f16`) and the type in the descriptor's last field (a GEMM
      convolution's product is rounded before its bias is added or, for
      the data gradient, its columns are summed in f32); each distinct kernel
      descriptor is listed in the module attribute `ober_cpu.kernels`
      (`{name, desc}`), which an executable creates ahead of its first
      step;
    - `max_pool` and `avg_pool` fold each window of the padded input;
      their gradients gather, per input position, the windows that reach
      it (`max_pool_grad` from each window's first maximum);
    - `softmax`, `log_softmax`, `layer_norm`, `rms_norm` and batch norm
      (inference, and training with batch statistics and the running
      statistics' update), in f32 for bf16 and f16; `cross_entropy` (class
      indices or probabilities, label smoothing, `ignore_index`, every
      reduction) and `mse_loss`;
    - `slice` and `split` as `tensor.extract_slice` (a negative stride
      reads element by element), `concat` as `tensor.insert_slice`, `iota`,
      `pad` (`tensor.pad`, or mirrored and clamped reads);
    - `one_hot`, `gather`, `embedding` and `gather_elements` (a
      `linalg.generic` extracting at the index), `scatter_add`, `scatter`
      and `scatter_elements_add` (a loop over the indices). Negative
      indices wrap; out-of-range class targets pick nothing and
      out-of-range indices are clamped, where the interpreter reports an
      error;
    - `dropout` draws the interpreter's counter-based uniforms
      (`ober/Runtime/Random.h`) in integer arithmetic.

    `attention` and `attention_grad` are rewritten into primitive ops
    first (`ober-decompose-attention`'s rewrite). With `attention=blocked`
    (the default) those with static shapes are first cut into blocks of
    queries (`ober-block-attention` with `block=attention-block`): only
    one block's scores are live at a time, and causal blocks skip the keys
    they cannot see. With `attention=fused` those with static shapes and rows (D, Dv) of at most 256 elements
    become memory-efficient loop nests that never hold the score matrix
    (the online softmax, in f32 for bf16 and f16; the gradients recompute
    the scores from Q and K, parallel over queries for dQ and over keys for
    dK and dV), an `scf.parallel` over rows on buffers with rows as
    vectors; the others are still decomposed. With `attention=flash` (the
    CUDA target) those the CUDA library's flash kernels take (bf16 or
    f16, static shapes, no mask, heads of at most 128) become calls to
    `ober_rt_cuda_attention` and `ober_rt_cuda_attention_grad` (suffixed
    by the type; CUDAKernels.h) on dense buffers, the others are blocked
    as by default. `string_normalize` has no
    lowering. An op left without a lowering is an error naming it.
  }];
  let options = [
    Option<"convolutions", "convolutions", "std::string", "\"library\"",
           "How convolutions lower: 'library' (the kernel library's "
           "convolutions) or 'gemm' (windows gathered into columns, the "
           "kernel library's matrix products)">,
    Option<"attention", "attention", "std::string", "\"blocked\"",
           "How attention lowers: 'blocked' (primitive ops a block of "
           "queries at a time, the scores through the kernel library's "
           "products), 'decomposed' (primitive ops on the whole score "
           "matrix), 'fused' (memory-efficient loop nests) or 'flash' "
           "(calls to the CUDA library's tensor-core kernels where they "
           "apply, blocked elsewhere)">,
    Option<"attentionBlock", "attention-block", "int64_t", /*default=*/"0",
           "With attention=blocked, queries a block (0: chosen from the "
           "scores' size)">,
    Option<"lowPrecisionProducts", "low-precision-products", "bool",
           /*default=*/"false",
           "Matrix products of bf16 and f16 pass their operands and result "
           "to the kernel library in their own type (accumulated in f32, "
           "rounded once; tensor cores in CUDA's library), convolutions "
           "as products too, instead of widened to f32">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::func::FuncDialect"];
}

def ConvertShardToRuntime : Pass<"convert-shard-to-runtime", "ModuleOp"> {
  let summary = "Lower collectives and pipeline transfers to runtime calls";
  let description = [{
    Rewrites each `shard` collective of a partitioned program
    (`all_reduce`, `all_gather`, `reduce_scatter`, `all_to_all`,
    `broadcast`, `all_slice`, `send`, `recv`) into an asynchronous pair of
    calls into the collectives runtime (`ober/Runtime/Collectives.h`):

    ```
    %h = call @ober_rt_coll_start_f32(%desc, %in, %out)
    ... (everything that does not need the result)
    call @ober_rt_coll_wait_f32(%h, %in, %out)
    %r = bufferization.to_tensor %out
    ```

    The wait goes as late as the data allows: just before the first later
    op of the block that uses the result or the input (else before the
    block's end), so that no op writes over the input's buffer in place
    while the runtime reads it; the wait's use of that buffer keeps it
    allocated until then. `%desc` is a constant
    descriptor: the kind, element type, reduction, axes, the `ober.tag` of
    a transfer, its peer's grid coordinates, and the index of its grid
    axes among the module's groups, listed in the module attribute
    `ober_rt.groups` (one array of grid axes per group kind) so that an
    executable creates every communicator before the first step. The
    `shard.grid` goes; its shape is the module attribute `ober_rt.grid`.

    Refused, naming the op: other `shard` ops, dynamic peers, reductions
    other than sum, max, min and product, element types the runtime does
    not move.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // OBER_CONVERSION_PASSES_TD
