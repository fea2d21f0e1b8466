//===- ConvolutionsAsGemm.cpp - convolutions as matrix products -----------===//
//
// Part of Ober-Train. For targets without a convolution library (the CUDA
// target, `convolutions=gemm`): each convolution is one batched matrix
// product of the kernel library's (cuBLASLt there), batched over the groups,
// with the input's windows gathered into columns by a linalg.generic
// (im2col). With G groups, C / G = CG input and O / G = OG output channels
// per group, K the kernel's and S the output's positions:
//
//   cols[g]  [CG * K, N * S]   the windows of the input, zero-padded so
//                              that every window lies inside;
//   w[g]     [OG, CG * K]      the weight as it is stored;
//   gy[g]    [OG, N * S]       an output (gradient) with channels first;
//
//   conv:               y[g]     = w[g] @ cols[g]      (+ bias)
//   conv_weight_grad:   dw[g]    = gy[g] @ cols[g]^T   (dw as it is stored)
//   conv_transpose:     dcols[g] = w[g]^T @ gy[g], then each input position
//                       sums the columns of the windows that reach it (a
//                       gather over the kernel's positions, no scatter).
//
// Products run in f32, bf16 and f16 operands widened (as for the library's
// convolutions), the bias added and the result rounded once; with
// `low-precision-products` (the CUDA target's), bf16 and f16 products keep
// their type (tensor cores, accumulating in f32): the columns stay in it,
// and each product's result is rounded once before the bias is added or,
// for the data gradient, the windows' columns are summed in f32.
//
//===----------------------------------------------------------------------===//

#include "Convolution.h"
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

/// The sizes of the products of `g`.
struct GemmSizes {
  int64_t groups, cg, og, k, s, n;
  explicit GemmSizes(const ConvGeometry &g)
      : groups(g.groups), cg(g.c / g.groups), og(g.o / g.groups),
        k(ShapedType::getNumElements(g.kernel)),
        s(ShapedType::getNumElements(g.out)), n(g.n) {}
  /// Rows of the columns: an input channel's kernel positions.
  int64_t rows() const { return cg * k; }
  /// Columns: every image's output positions.
  int64_t columns() const { return n * s; }
};

/// `x` (`[N, C, in...]`) zero-padded by the leading padding and, at the
/// end, up to the last window's extent.
Value padToWindows(OpBuilder &b, Location loc, Value x, const ConvGeometry &g) {
  SmallVector<int64_t> low(2, 0), high(2, 0);
  for (size_t i = 0; i < g.rank(); ++i) {
    low.push_back(g.padBegin[i]);
    high.push_back(std::max<int64_t>(g.reach(i) - g.in[i], 0));
  }
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  return padWith(b, loc, x, low, high, scalarConstant(b, loc, element, 0.0));
}

/// The columns `[G, CG * K, N * S]` of the padded input `xp`:
/// `cols[g, (cg, k...), (n, o...)] = xp[n, g * CG + cg, o * stride + k *
/// dilation]`.
Value windowColumns(OpBuilder &b, Location loc, Value xp,
                    const ConvGeometry &g) {
  GemmSizes m(g);
  size_t r = g.rank(), loops = 3 + 2 * r;
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // Loops: group, channel of the group, kernel positions, image, outputs.
  SmallVector<AffineExpr> in = {d(2 + r), d(0) * m.cg + d(1)};
  SmallVector<int64_t> shape = {m.groups, m.cg};
  for (size_t i = 0; i < r; ++i) {
    in.push_back(d(3 + r + i) * g.stride[i] + d(2 + i) * g.dilation[i]);
    shape.push_back(g.kernel[i]);
  }
  shape.push_back(g.n);
  shape.append(g.out.begin(), g.out.end());
  auto type = cast<RankedTensorType>(xp.getType());
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  MLIRContext *ctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{xp}, ValueRange{init},
      {AffineMap::get(loops, 0, in, ctx), b.getMultiDimIdentityMap(loops)},
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange v) {
        linalg::YieldOp::create(nb, l, v[0]);
      });
  return reshapeTo(b, loc, generic.getResult(0),
                   {m.groups, m.rows(), m.columns()});
}

/// `t` (`[N, G * OG, S...]`) with its channels first: `[G, OG, N * S]`.
Value channelsFirst(OpBuilder &b, Location loc, Value t, int64_t groups) {
  auto type = cast<RankedTensorType>(t.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t n = shape[0], og = shape[1] / groups;
  SmallVector<int64_t> split = {n, groups, og}, perm = {1, 2, 0},
                       moved = {groups, og, n};
  for (size_t i = 2; i < shape.size(); ++i) {
    split.push_back(shape[i]);
    perm.push_back(i + 1);
    moved.push_back(shape[i]);
  }
  Value init = tensor::EmptyOp::create(b, loc, moved, type.getElementType());
  Value t2 = linalg::TransposeOp::create(
                 b, loc, reshapeTo(b, loc, t, split), init, perm)
                 .getResult()[0];
  return reshapeTo(b, loc, t2,
                   {groups, og, n * ShapedType::getNumElements(shape.drop_front(2))});
}

/// `c[g] = op(a[g]) @ op(b[g])` for each group, on buffers of `library`
/// (libraryMatmulType), the result rounded to `element`.
Value groupProducts(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    int64_t groups, int64_t m, int64_t n, int64_t k,
                    bool transposeA, bool transposeB, Type element,
                    Type library) {
  SmallVector<int64_t> fields(OBER_MATMUL_FIELDS, 0);
  fields[OBER_MATMUL_BATCH] = fields[OBER_MATMUL_A_BATCH] =
      fields[OBER_MATMUL_B_BATCH] = groups;
  fields[OBER_MATMUL_M] = m;
  fields[OBER_MATMUL_N] = n;
  fields[OBER_MATMUL_K] = k;
  fields[OBER_MATMUL_TRANSPOSE_A] = transposeA;
  fields[OBER_MATMUL_TRANSPOSE_B] = transposeB;
  fields[OBER_MATMUL_DTYPE] = matmulDTypeField(library);
  return callKernel(b, loc, matmulKernelName(library), fields, {lhs, rhs},
                    RankedTensorType::get({groups, m, n}, element), library);
}

/// The result (`[N, G * OG, S...]` of `result`'s type) of `y` (`[G, OG, N
/// * S]`), plus `bias` (`[G * OG]`) when given, summed in f32 and rounded
/// once.
Value channelsSecond(OpBuilder &b, Location loc, Value y, Value bias,
                     RankedTensorType result, int64_t groups) {
  ArrayRef<int64_t> shape = result.getShape();
  int64_t n = shape[0], og = shape[1] / groups;
  size_t r = shape.size() - 2, loops = 3 + r;
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // Loops: image, group, channel of the group, outputs.
  SmallVector<int64_t> grouped = {groups, og, n}, split = {n, groups, og};
  SmallVector<AffineExpr> in = {d(1), d(2), d(0)};
  for (size_t i = 0; i < r; ++i) {
    grouped.push_back(shape[2 + i]);
    split.push_back(shape[2 + i]);
    in.push_back(d(3 + i));
  }
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> inputs = {reshapeTo(b, loc, y, grouped)};
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, in, ctx)};
  if (bias) {
    inputs.push_back(reshapeTo(b, loc, bias, {groups, og}));
    maps.push_back(AffineMap::get(loops, 0, {d(1), d(2)}, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(loops));
  Type element = result.getElementType();
  Value init = tensor::EmptyOp::create(b, loc, split, element);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange v) {
        Value sum = castElement(nb, l, v[0], nb.getF32Type());
        if (bias)
          sum = arith::AddFOp::create(
              nb, l, sum, castElement(nb, l, v[1], nb.getF32Type()));
        linalg::YieldOp::create(nb, l, castElement(nb, l, sum, element));
      });
  return reshapeTo(b, loc, generic.getResult(0), shape);
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// col2im as a gather: each input position `[n, c, x...]` sums in f32, over
/// the kernel's positions `k`, the column `dcols[g, cg, k..., n, o...]` of
/// the window `o` that reads it at `k`: `o * stride + k * dilation = x +
/// pad_begin`, when that `o` exists.
Value gatherColumns(OpBuilder &b, Location loc, Value dcols,
                    const ConvGeometry &g) {
  GemmSizes m(g);
  size_t r = g.rank(), loops = 2 + 2 * r;
  SmallVector<int64_t> split = {m.groups, m.cg};
  split.append(g.kernel.begin(), g.kernel.end());
  split.push_back(g.n);
  split.append(g.out.begin(), g.out.end());
  Value cols = reshapeTo(b, loc, dcols, split);
  SmallVector<int64_t> shape = {g.n, g.c};
  shape.append(g.in.begin(), g.in.end());
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> outExprs, kernelExprs;
  for (size_t i = 0; i < 2 + r; ++i)
    outExprs.push_back(d(i));
  for (size_t i = 0; i < r; ++i)
    kernelExprs.push_back(d(2 + r + i));
  SmallVector<utils::IteratorType> iterators(2 + r,
                                             utils::IteratorType::parallel);
  iterators.append(r, utils::IteratorType::reduction);
  Type f32 = b.getF32Type();
  // The kernel's shape gives the reduction loops their bounds.
  Value kernel = tensor::EmptyOp::create(b, loc, g.kernel, f32);
  Value init = zeros(b, loc, RankedTensorType::get(shape, f32));
  MLIRContext *ctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{kernel}, ValueRange{init},
      {AffineMap::get(loops, 0, kernelExprs, ctx),
       AffineMap::get(loops, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange v) {
        auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) {
          return arith::CmpIOp::create(nb, l, p, a, c).getResult();
        };
        Value zero = indexConst(nb, l, 0);
        Value c = linalg::IndexOp::create(nb, l, 1);
        Value cg = indexConst(nb, l, m.cg);
        SmallVector<Value> at = {arith::DivUIOp::create(nb, l, c, cg),
                                 arith::RemUIOp::create(nb, l, c, cg)},
                           outputs;
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (size_t i = 0; i < r; ++i) {
          Value x = linalg::IndexOp::create(nb, l, 2 + i);
          Value k = linalg::IndexOp::create(nb, l, 2 + r + i);
          at.push_back(k);
          // t = o * stride: the window's start in the padded input.
          Value t = arith::SubIOp::create(
              nb, l,
              arith::AddIOp::create(nb, l, x, indexConst(nb, l, g.padBegin[i])),
              arith::MulIOp::create(nb, l, k,
                                    indexConst(nb, l, g.dilation[i])));
          Value stride = indexConst(nb, l, g.stride[i]);
          Value o = arith::DivSIOp::create(nb, l, t, stride);
          valid = arith::AndIOp::create(nb, l, valid,
                                        cmp(arith::CmpIPredicate::sge, t, zero));
          valid = arith::AndIOp::create(
              nb, l, valid,
              cmp(arith::CmpIPredicate::eq,
                  arith::RemSIOp::create(nb, l, t, stride), zero));
          valid = arith::AndIOp::create(
              nb, l, valid,
              cmp(arith::CmpIPredicate::slt, o, indexConst(nb, l, g.out[i])));
          // Read a column in range (its value only counts when valid).
          outputs.push_back(clampIndex(nb, l, o, g.out[i]));
        }
        at.push_back(linalg::IndexOp::create(nb, l, 0));
        at.append(outputs.begin(), outputs.end());
        Value col = castElement(
            nb, l, tensor::ExtractOp::create(nb, l, cols, at), f32);
        Value add = arith::SelectOp::create(nb, l, valid, col,
                                            scalarConstant(nb, l, f32, 0.0));
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, v[1], add).getResult());
      });
  return generic.getResult(0);
}

/// A convolution op's lowering to products: `lowPrecision` as
/// libraryMatmulType takes it.
template <typename Op> struct GemmLowering : OpRewritePattern<Op> {
  GemmLowering(MLIRContext *ctx, bool lowPrecision)
      : OpRewritePattern<Op>(ctx), lowPrecision(lowPrecision) {}
  /// The buffers' type of the products of an op with results of `result`.
  Type library(RankedTensorType result) const {
    return libraryMatmulType(result.getElementType(), lowPrecision);
  }
  bool lowPrecision;
};

struct ConvGemmLowering : GemmLowering<ConvOp> {
  using GemmLowering::GemmLowering;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> geometry = convGeometry(op);
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    const ConvGeometry &g = *geometry;
    Location loc = op.getLoc();
    Value bias = op.getBias();
    Value y;
    if (g.empty()) {
      y = zeros(rewriter, loc, result.clone(rewriter.getF32Type()));
      y = channelsFirst(rewriter, loc, y, g.groups);
    } else {
      GemmSizes m(g);
      Value cols = windowColumns(
          rewriter, loc, padToWindows(rewriter, loc, op.getInput(), g), g);
      Value w = reshapeTo(rewriter, loc, op.getWeight(),
                          {m.groups, m.og, m.rows()});
      y = groupProducts(rewriter, loc, w, cols, m.groups, m.og, m.columns(),
                        m.rows(), false, false, library(result),
                        library(result));
    }
    rewriter.replaceOp(
        op, channelsSecond(rewriter, loc, y, bias, result, g.groups));
    return success();
  }
};

struct ConvWeightGradGemmLowering : GemmLowering<ConvWeightGradOp> {
  using GemmLowering::GemmLowering;
  LogicalResult matchAndRewrite(ConvWeightGradOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> geometry = convGeometry(op);
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    const ConvGeometry &g = *geometry;
    Location loc = op.getLoc();
    if (g.empty()) {
      rewriter.replaceOp(op, zeros(rewriter, loc, result));
      return success();
    }
    GemmSizes m(g);
    Value cols = windowColumns(
        rewriter, loc, padToWindows(rewriter, loc, op.getInput(), g), g);
    Value gy = channelsFirst(rewriter, loc, op.getOutputGrad(), g.groups);
    // cols[g] stored [CG * K, N * S] is the transposed right operand.
    Value dw = groupProducts(rewriter, loc, gy, cols, m.groups, m.og,
                             m.rows(), m.columns(), false, true,
                             result.getElementType(), library(result));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, dw, result.getShape()));
    return success();
  }
};

/// `conv_transpose`: the data gradient of the convolution from its result
/// to its input, plus its bias.
struct ConvTransposeGemmLowering : GemmLowering<ConvTransposeOp> {
  using GemmLowering::GemmLowering;
  LogicalResult matchAndRewrite(ConvTransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> geometry = convGeometry(op);
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    const ConvGeometry &g = *geometry;
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value dx;
    if (g.empty()) {
      dx = zeros(rewriter, loc, result.clone(f32));
    } else {
      GemmSizes m(g);
      Value w = reshapeTo(rewriter, loc, op.getWeight(),
                          {m.groups, m.og, m.rows()});
      Value gy = channelsFirst(rewriter, loc, op.getInput(), g.groups);
      // w[g] stored [OG, CG * K] is the transposed left operand.
      Value dcols = groupProducts(rewriter, loc, w, gy, m.groups, m.rows(),
                                  m.columns(), m.og, true, false,
                                  library(result), library(result));
      dx = gatherColumns(rewriter, loc, dcols, g);
    }
    Type element = result.getElementType();
    Value bias = op.getBias();
    if (!bias && element == f32) {
      rewriter.replaceOp(op, dx);
      return success();
    }
    SmallVector<Value> operands = {dx};
    if (bias) {
      SmallVector<int64_t> column(result.getRank(), 1);
      column[1] = result.getDimSize(1);
      operands.push_back(reshapeTo(rewriter, loc, bias, column));
    }
    rewriter.replaceOp(
        op, mapElements(rewriter, loc, result, operands,
                        [&](OpBuilder &nb, Location l, ValueRange v) {
                          Value sum = v[0];
                          if (v.size() > 1)
                            sum = arith::AddFOp::create(
                                nb, l, sum,
                                castElement(nb, l, v[1], nb.getF32Type()));
                          return castElement(nb, l, sum, element);
                        }));
    return success();
  }
};

} // namespace

void lowering::populateConvolutionGemmPatterns(RewritePatternSet &patterns,
                                               bool lowPrecision) {
  patterns.add<ConvGemmLowering, ConvTransposeGemmLowering,
               ConvWeightGradGemmLowering>(patterns.getContext(),
                                           lowPrecision);
}
