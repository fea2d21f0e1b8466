//===- Lowering.h - ober ops on tensors as linalg -------------*- C++ -*-===//
//
// Part of Ober-Train. Helpers and pattern sets of convert-ober-to-linalg,
// one file per op family.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_CONVERSION_OBERTOLINALG_LOWERING_H
#define OBER_LIB_CONVERSION_OBERTOLINALG_LOWERING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ober::lowering {

/// The type scalar float arithmetic runs in: f32 for bf16 and f16 (rounded
/// once at the end, as the interpreter rounds its double results), else the
/// element type itself.
Type computeType(Type element);
/// `v` extended to its compute type, and back to `element`.
Value widen(OpBuilder &b, Location loc, Value v);
Value narrow(OpBuilder &b, Location loc, Value v, Type element);
/// A scalar constant of `type` (float or integer).
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);
/// One element cast as the interpreter casts it: floats round, integers
/// wrap, a float becomes an integer by truncation toward zero (NaN 0,
/// saturating), anything becomes i1 by being nonzero.
Value castElement(OpBuilder &b, Location loc, Value x, Type to);

/// One `linalg.generic` over the shape of `result`: each input broadcast to
/// it by NumPy rules, `body` computing an element from the inputs'.
Value mapElements(OpBuilder &b, Location loc, RankedTensorType result,
                  ValueRange inputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);
/// `v` reshaped to `shape` (same element count): one collapse or expand
/// where the dimensions group, else a collapse to one dimension and an
/// expand.
Value reshapeTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape);
/// `v` padded with `low[i]` and `high[i]` copies of `value` around
/// dimension `i` (`tensor.pad`).
Value padWith(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> low,
              ArrayRef<int64_t> high, Value value);
/// A tensor of `type` filled with `value`.
Value filled(OpBuilder &b, Location loc, RankedTensorType type, Value value);
/// A tensor of `type` filled with zeros.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type);

enum class Combine { Sum, Max, Min, Prod };
/// `input` reduced with `kind` over `axes` (which go), in its compute type;
/// max and min propagate NaN.
Value reduceDims(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> axes, Combine kind);
/// `reduced` (the result of reduceDims over `axis`) with `axis` back as a
/// size-1 dimension, so that it broadcasts against the input.
Value keepAxis(OpBuilder &b, Location loc, Value reduced, int64_t axis);

/// softmax (or, with `log`, log_softmax) of `x` along `axis`, computed in
/// the compute type and rounded to `element`.
Value softmaxOf(OpBuilder &b, Location loc, Value x, int64_t axis, bool log,
                Type element);

/// `v` (an integer) as i64.
Value asI64(OpBuilder &b, Location loc, Value v);
/// `index` (an integer) as a position along a dimension of `size`:
/// negative ones count from the end, the rest are clamped into range.
Value indexAlong(OpBuilder &b, Location loc, Value index, int64_t size);
/// `index` (an index) clamped into `[0, size)`.
Value clampIndex(OpBuilder &b, Location loc, Value index, int64_t size);

/// Whether `v` (a float) is NaN.
Value isNaN(OpBuilder &b, Location loc, Value v);
/// Whether `candidate` takes the place of `best` in a search for the first
/// maximum (the first minimum when `!isMax`, the last one with `last`),
/// where NaN wins over any number, as the interpreter's argmax does.
Value replacesBest(OpBuilder &b, Location loc, Value candidate, Value best,
                   bool isMax, bool last);

/// `v` (a float tensor) with its elements extended to `element`.
Value widenTo(OpBuilder &b, Location loc, Value v, Type element);
/// `v` (a float tensor) as f32.
Value asF32(OpBuilder &b, Location loc, Value v);
/// `v` with its elements extended to `element`, as a dense row-major
/// read-only buffer (`bufferization.to_buffer`, a copy of a strided view).
Value readOnlyBuffer(OpBuilder &b, Location loc, Value v, Type element);
/// A new buffer of `shape` and `element`, aligned as the runtime's are.
Value newRuntimeBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type element);
/// `buffer` (written by a call or by loops) as a tensor of `result`'s type,
/// its elements rounded to `result`'s element type.
Value tensorOfBuffer(OpBuilder &b, Location loc, Value buffer,
                     RankedTensorType result);
/// A call of kernel `name` of the CPU kernel library
/// (ober/Runtime/CPUKernels.h) with descriptor `fields` on `inputs` (read
/// as dense row-major buffers of `element`, widened to it) into a new
/// tensor of type `result` (computed in `element`, then narrowed to its
/// element type). `element` is f32 but for matrix products kept in bf16
/// or f16 (libraryMatmulType).
Value callKernel(OpBuilder &b, Location loc, StringRef name,
                 ArrayRef<int64_t> fields, ValueRange inputs,
                 RankedTensorType result, Type element);
/// The element type of the buffers a matrix product with results of
/// `result` passes to the kernel library (OBER_MATMUL_DTYPE): its own when
/// `lowPrecision` and it is bf16 or f16 (the library accumulates in f32
/// and rounds once: tensor cores on CUDA), else f32.
Type libraryMatmulType(Type result, bool lowPrecision);
/// OBER_MATMUL_DTYPE for buffers of `element` (f32, bf16 or f16).
int64_t matmulDTypeField(Type element);
/// The library's matrix product on buffers of `element`:
/// OBER_RT_CPU_MATMUL, with its type after it for bf16 and f16.
std::string matmulKernelName(Type element);

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateShapePatterns(RewritePatternSet &patterns);
void populateReductionPatterns(RewritePatternSet &patterns);
/// `lowPrecision`: bf16 and f16 products in their own type
/// (libraryMatmulType).
void populateContractionPatterns(RewritePatternSet &patterns,
                                 bool lowPrecision);
/// Rewrites of ober ops that must see them before their lowering does
/// (a product and the sum of its results as one product).
void populateContractionRewrites(RewritePatternSet &patterns,
                                 bool lowPrecision);
void populateNormalizationPatterns(RewritePatternSet &patterns);
void populateLossPatterns(RewritePatternSet &patterns);
void populateIndexingPatterns(RewritePatternSet &patterns);
void populateConvolutionPatterns(RewritePatternSet &patterns);
/// The convolutions as matrix products over gathered windows;
/// `lowPrecision` as for populateContractionPatterns.
void populateConvolutionGemmPatterns(RewritePatternSet &patterns,
                                     bool lowPrecision);
void populatePoolingPatterns(RewritePatternSet &patterns);
void populateDropoutPatterns(RewritePatternSet &patterns);

/// The longest row (head dimension D or Dv) the fused attention holds as
/// one vector: registers on the GPU.
constexpr int64_t kMaxFusedAttentionRow = 256;
/// Whether `op` (an attention or attention_grad) lowers to the fused loop
/// nests: static shapes, rows of at most kMaxFusedAttentionRow.
bool fusableAttention(Operation *op);
/// attention and attention_grad as memory-efficient loop nests (those
/// fusableAttention accepts).
void populateFusedAttentionPatterns(RewritePatternSet &patterns);
/// Whether `op` (an attention or attention_grad) suits the CUDA library's
/// flash kernels (CUDAKernels.h): bf16 or f16, static shapes, no mask,
/// heads of at most OBER_ATTENTION_MAX_HEAD, at most 65535 batch entries
/// and heads.
bool flashAttention(Operation *op);
/// Those as calls to the flash kernels (before the fused loops).
void populateFlashAttentionPatterns(RewritePatternSet &patterns);

} // namespace mlir::ober::lowering

#endif // OBER_LIB_CONVERSION_OBERTOLINALG_LOWERING_H
