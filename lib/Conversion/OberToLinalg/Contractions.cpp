//===- Contractions.cpp - ober.matmul as linalg.matmul --------------------===//
//
// Part of Ober-Train. `matmul` by NumPy's rules: a vector operand gains a
// unit dimension (removed from the result), batch dimensions broadcast.
// Floats go to the kernel library's matrix products (KernelCalls.cpp): a
// matrix on the right (no batch, or a batch of one) takes the left
// operand's batch and rows as rows; a batch that is whole or one shared
// matrix per operand is the kernel's; other broadcasts are materialized.
// An operand that transposes its last two dimensions is read transposed
// from its source. bf16 and f16 compute in f32 and round once. Integers
// are generated (`linalg.matmul` or `linalg.batch_matmul`). A sum over the
// batch of a batched product is one product.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/CPUKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

/// The operand `v` stores when it is the transpose of its last two
/// dimensions (batch dimensions in place): a kernel reads it transposed.
Value transposedSource(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t)
    return Value();
  ArrayRef<int64_t> perm = t.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return Value();
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return Value();
  return t.getInput();
}

/// The broadcast batch of NumPy's matmul for batch shapes `lb` and `rb`.
SmallVector<int64_t> broadcastBatch(ArrayRef<int64_t> lb,
                                   ArrayRef<int64_t> rb) {
  SmallVector<int64_t> batch(std::max(lb.size(), rb.size()), 1);
  for (auto [i, d] : llvm::enumerate(llvm::reverse(lb)))
    batch[batch.size() - 1 - i] = d;
  for (auto [i, d] : llvm::enumerate(llvm::reverse(rb)))
    if (d != 1)
      batch[batch.size() - 1 - i] = d;
  return batch;
}

/// Whether an operand's batch `b` is the whole `batch` or one shared
/// matrix (a kernel broadcasts those; anything else is materialized).
bool wholeOrShared(ArrayRef<int64_t> b, ArrayRef<int64_t> batch) {
  if (ShapedType::getNumElements(b) == 1)
    return true;
  SmallVector<int64_t> padded(batch.size() - b.size(), 1);
  padded.append(b.begin(), b.end());
  return ArrayRef<int64_t>(padded) == batch;
}

/// `v` (shape [batch..., rows, cols]) broadcast to `batch` and collapsed
/// to [prod(batch), rows, cols].
Value broadcastOperand(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> batch, int64_t rows, int64_t cols) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(batch);
  shape.append({rows, cols});
  if (type.getShape() != ArrayRef<int64_t>(shape))
    v = mapElements(b, loc, type.clone(shape), v,
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return reshapeTo(b, loc, v, {ShapedType::getNumElements(batch), rows, cols});
}

/// A matmul operand as a matrix (vectors gain their unit dimension).
struct Operand {
  Value value;            // the logical operand, reshaped to rank >= 2
  Value stored;           // what the kernel reads: value or its source
  bool transposed = false;
  SmallVector<int64_t> shape; // logical
};

Operand operandOf(OpBuilder &b, Location loc, Value v, bool left) {
  Operand o;
  o.shape.assign(cast<RankedTensorType>(v.getType()).getShape().begin(),
                 cast<RankedTensorType>(v.getType()).getShape().end());
  if (o.shape.size() == 1)
    o.shape.insert(left ? o.shape.begin() : o.shape.end(), 1);
  o.value = reshapeTo(b, loc, v, o.shape);
  o.stored = o.value;
  if (Value source = transposedSource(v)) {
    o.stored = source;
    o.transposed = true;
  }
  return o;
}

/// The sizes of `lhs @ rhs`: `[m, k] @ [k, n]`, each operand's batch
/// dimensions and their broadcast.
struct ProductShape {
  int64_t m, k, n;
  ArrayRef<int64_t> lb, rb;
  SmallVector<int64_t> batch;

  ProductShape(const Operand &lhs, const Operand &rhs)
      : m(lhs.shape[lhs.shape.size() - 2]), k(lhs.shape.back()),
        n(rhs.shape.back()), lb(ArrayRef<int64_t>(lhs.shape).drop_back(2)),
        rb(ArrayRef<int64_t>(rhs.shape).drop_back(2)),
        batch(broadcastBatch(lb, rb)) {}
};

/// matmul of floats: the kernel library's matrix products.
Value kernelMatmul(OpBuilder &b, Location loc, const Operand &lhs,
                   const Operand &rhs, RankedTensorType result,
                   bool lowPrecision) {
  ProductShape p(lhs, rhs);
  int64_t m = p.m, k = p.k, n = p.n;
  ArrayRef<int64_t> lb = p.lb, rb = p.rb, batch = p.batch;
  int64_t nb = ShapedType::getNumElements(batch),
          lbn = ShapedType::getNumElements(lb),
          rbn = ShapedType::getNumElements(rb);
  if (nb == 0 || m == 0 || n == 0 || k == 0)
    return zeros(b, loc, result);
  // A stored operand [batch, rows, cols], transposed: [batch, cols, rows].
  auto stored = [&](const Operand &o, int64_t count, int64_t rows,
                    int64_t cols) {
    return o.transposed ? reshapeTo(b, loc, o.stored, {count, cols, rows})
                        : reshapeTo(b, loc, o.stored, {count, rows, cols});
  };
  SmallVector<int64_t> fields(OBER_MATMUL_FIELDS, 0);
  fields[OBER_MATMUL_N] = n;
  fields[OBER_MATMUL_K] = k;
  fields[OBER_MATMUL_TRANSPOSE_A] = lhs.transposed;
  fields[OBER_MATMUL_TRANSPOSE_B] = rhs.transposed;
  Value a, w;
  SmallVector<int64_t> outShape;
  if (rbn == 1 && !lhs.transposed) {
    // One matrix on the right: the left's batch and rows as rows.
    a = reshapeTo(b, loc, lhs.stored, {lbn * m, k});
    w = stored(rhs, 1, k, n);
    fields[OBER_MATMUL_BATCH] = fields[OBER_MATMUL_A_BATCH] =
        fields[OBER_MATMUL_B_BATCH] = 1;
    fields[OBER_MATMUL_M] = lbn * m;
    outShape = {lbn * m, n};
  } else if (wholeOrShared(lb, batch) && wholeOrShared(rb, batch)) {
    a = stored(lhs, lbn, m, k);
    w = stored(rhs, rbn, k, n);
    fields[OBER_MATMUL_BATCH] = nb;
    fields[OBER_MATMUL_A_BATCH] = lbn;
    fields[OBER_MATMUL_B_BATCH] = rbn;
    fields[OBER_MATMUL_M] = m;
    outShape = {nb, m, n};
  } else {
    a = broadcastOperand(b, loc, lhs.value, batch, m, k);
    w = broadcastOperand(b, loc, rhs.value, batch, k, n);
    fields[OBER_MATMUL_BATCH] = fields[OBER_MATMUL_A_BATCH] =
        fields[OBER_MATMUL_B_BATCH] = nb;
    fields[OBER_MATMUL_TRANSPOSE_A] = fields[OBER_MATMUL_TRANSPOSE_B] = 0;
    fields[OBER_MATMUL_M] = m;
    outShape = {nb, m, n};
  }
  Type element = libraryMatmulType(result.getElementType(), lowPrecision);
  fields[OBER_MATMUL_DTYPE] = matmulDTypeField(element);
  Value out = callKernel(b, loc, matmulKernelName(element), fields, {a, w},
                         result.clone(outShape), element);
  return reshapeTo(b, loc, out, result.getShape());
}

/// matmul of integers: generated, `linalg.matmul` or `linalg.batch_matmul`.
Value generatedMatmul(OpBuilder &b, Location loc, const Operand &lhs,
                      const Operand &rhs, RankedTensorType result) {
  Type element = result.getElementType(), acc = computeType(element);
  ProductShape p(lhs, rhs);
  int64_t m = p.m, k = p.k, n = p.n;
  ArrayRef<int64_t> lb = p.lb, rb = p.rb, batch = p.batch;
  int64_t nb = ShapedType::getNumElements(batch);
  auto zeroFilled = [&](ArrayRef<int64_t> shape) {
    return zeros(b, loc, RankedTensorType::get(shape, acc));
  };
  Value out;
  if (ShapedType::getNumElements(rb) == 1) {
    Value a = reshapeTo(b, loc, lhs.value,
                        {ShapedType::getNumElements(lb) * m, k});
    Value w = reshapeTo(b, loc, rhs.value, {k, n});
    out = linalg::MatmulOp::create(b, loc, ValueRange{a, w},
                                   ValueRange{zeroFilled({nb * m, n})})
              .getResult(0);
  } else {
    Value a = broadcastOperand(b, loc, lhs.value, batch, m, k);
    Value w = broadcastOperand(b, loc, rhs.value, batch, k, n);
    out = linalg::BatchMatmulOp::create(b, loc, ValueRange{a, w},
                                        ValueRange{zeroFilled({nb, m, n})})
              .getResult(0);
  }
  if (acc != element) {
    auto type = cast<RankedTensorType>(out.getType()).clone(element);
    out = mapElements(b, loc, type, out,
                      [&](OpBuilder &nb, Location l, ValueRange v) {
                        return narrow(nb, l, v[0], element);
                      });
  }
  return reshapeTo(b, loc, out, result.getShape());
}

struct MatmulLowering : OpRewritePattern<MatmulOp> {
  MatmulLowering(MLIRContext *ctx, bool lowPrecision)
      : OpRewritePattern(ctx), lowPrecision(lowPrecision) {}
  bool lowPrecision;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto lt = cast<RankedTensorType>(op.getLhs().getType());
    auto rt = cast<RankedTensorType>(op.getRhs().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!lt.hasStaticShape() || !rt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Operand lhs = operandOf(rewriter, loc, op.getLhs(), /*left=*/true);
    Operand rhs = operandOf(rewriter, loc, op.getRhs(), /*left=*/false);
    // The runtime's kernels compute in f32: f64 (and integers) get a
    // generated product at their own precision.
    Type element = result.getElementType();
    bool kernel = element.isF32() || element.isF16() || element.isBF16();
    rewriter.replaceOp(op, kernel
                               ? kernelMatmul(rewriter, loc, lhs, rhs, result,
                                              lowPrecision)
                               : generatedMatmul(rewriter, loc, lhs, rhs,
                                                 result));
    return success();
  }
};

/// `reduce_sum` over the batch of `a[b] @ y[b]` (the gradient of a weight
/// every sample of a batch shares, `a` a transpose of the activations) is
/// one product over the batch's rows: `z^T @ reshape(y, [B * P, N])` where
/// `z` is `a` as `[B * P, M]`, read in place when `a` transposes a tensor
/// already laid out so (else transposed once), instead of B thin products
/// and a sum of their [M, N] results.
struct BatchSummedMatmul : OpRewritePattern<ReduceSumOp> {
  BatchSummedMatmul(MLIRContext *ctx, bool lowPrecision)
      : OpRewritePattern(ctx), lowPrecision(lowPrecision) {}
  bool lowPrecision;

  LogicalResult matchAndRewrite(ReduceSumOp op,
                                PatternRewriter &rewriter) const override {
    auto mm = op.getInput().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse() || op.getKeepdims())
      return failure();
    auto result = cast<RankedTensorType>(mm.getResult().getType());
    auto at = cast<RankedTensorType>(mm.getLhs().getType());
    auto yt = cast<RankedTensorType>(mm.getRhs().getType());
    int64_t rank = result.getRank();
    ArrayRef<int64_t> batch = result.getShape().drop_back(2);
    // The kernel library's types only (f64 products are generated).
    Type element = result.getElementType();
    if (rank < 3 || !result.hasStaticShape() || !at.hasStaticShape() ||
        !(element.isF32() || element.isBF16() || element.isF16()) ||
        op.getAxes() != ArrayRef<int64_t>(llvm::to_vector(
                             llvm::seq<int64_t>(0, rank - 2))) ||
        at.getRank() != rank || yt.getRank() != rank ||
        at.getShape().drop_back(2) != batch ||
        yt.getShape().drop_back(2) != batch)
      return failure();
    // z = a with its last two dimensions swapped: [batch..., P, M], as a
    // transpose of a's source when a is one.
    Value source = mm.getLhs();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    if (auto t = source.getDefiningOp<TransposeOp>()) {
      source = t.getInput();
      perm.assign(t.getPermutation().begin(), t.getPermutation().end());
    }
    std::swap(perm[rank - 1], perm[rank - 2]);
    Location loc = op.getLoc();
    Value z = source;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
      z = TransposeOp::create(rewriter, loc, source,
                              rewriter.getDenseI64ArrayAttr(perm));
    int64_t rows = ShapedType::getNumElements(batch) * at.getDimSize(rank - 1);
    int64_t m = at.getDimSize(rank - 2), n = yt.getDimSize(rank - 1);
    Operand lhs, rhs;
    lhs.value = lhs.stored = reshapeTo(rewriter, loc, z, {rows, m});
    lhs.transposed = true;
    lhs.shape = {m, rows};
    rhs.value = rhs.stored = reshapeTo(rewriter, loc, mm.getRhs(), {rows, n});
    rhs.shape = {rows, n};
    rewriter.replaceOp(op, kernelMatmul(rewriter, loc, lhs, rhs,
                                        cast<RankedTensorType>(
                                            op.getResult().getType()),
                                        lowPrecision));
    return success();
  }
};

} // namespace

void lowering::populateContractionPatterns(RewritePatternSet &patterns,
                                           bool lowPrecision) {
  patterns.add<MatmulLowering>(patterns.getContext(), lowPrecision);
}

void lowering::populateContractionRewrites(RewritePatternSet &patterns,
                                           bool lowPrecision) {
  patterns.add<BatchSummedMatmul>(patterns.getContext(), lowPrecision);
}
