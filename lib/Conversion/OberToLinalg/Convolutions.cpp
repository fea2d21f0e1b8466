//===- Convolutions.cpp - conv and its adjoints as kernel calls ------------===//
//
// Part of Ober-Train. `conv`, `conv_transpose` and `conv_weight_grad` go to
// the kernel library (KernelCalls.cpp) with the geometry of one forward
// convolution (ober/Runtime/CPUKernels.h): `conv` is its forward pass;
// `conv_transpose` is the data gradient of the convolution whose input it
// produces, plus its bias; `conv_weight_grad` is its weight gradient.
//
// A library checks that a geometry is consistent: the output size must be
// `floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride)
// + 1`. The adjoints do not depend on the trailing padding, only on which
// input positions the windows reach, so they use the input extent the
// windows reach (`(out - 1) * stride - pad_begin + dilation * (kernel - 1)
// + 1`) with no trailing padding: the real input is cut to it, or the
// result padded with the zeros no window writes.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/CPUKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

/// One forward convolution's geometry, as the kernel descriptor holds it.
struct ConvGeometry {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  bool bias = false;
  SmallVector<int64_t> in, kernel, out, stride, dilation, padBegin, padEnd;

  SmallVector<int64_t> fields() const {
    SmallVector<int64_t> f(OBER_CONV_ARRAYS);
    f[OBER_CONV_SPATIAL] = in.size();
    f[OBER_CONV_N] = n;
    f[OBER_CONV_C] = c;
    f[OBER_CONV_O] = o;
    f[OBER_CONV_GROUPS] = groups;
    f[OBER_CONV_HAS_BIAS] = bias;
    for (const SmallVector<int64_t> *a :
         {&in, &kernel, &out, &stride, &dilation, &padBegin, &padEnd})
      f.append(a->begin(), a->end());
    return f;
  }

  /// The input extent the windows of output `i` reach.
  int64_t reach(size_t i) const {
    return (out[i] - 1) * stride[i] - padBegin[i] +
           dilation[i] * (kernel[i] - 1) + 1;
  }

  bool empty() const {
    return n == 0 || c == 0 || o == 0 ||
           llvm::any_of(in, [](int64_t d) { return d == 0; }) ||
           llvm::any_of(out, [](int64_t d) { return d == 0; });
  }
};

/// The geometry of a convolution of `input` (`[n, c, in...]`) into
/// `output` (`[n, o, out...]`) with `kernel` and the op's attributes.
ConvGeometry geometry(RankedTensorType input, RankedTensorType output,
                      ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                      int64_t groups) {
  ConvGeometry g;
  size_t k = input.getRank() - 2;
  g.n = input.getDimSize(0);
  g.c = input.getDimSize(1);
  g.o = output.getDimSize(1);
  g.groups = groups;
  g.in.assign(input.getShape().begin() + 2, input.getShape().end());
  g.out.assign(output.getShape().begin() + 2, output.getShape().end());
  g.kernel.assign(kernel.begin(), kernel.end());
  g.stride.assign(strides.begin(), strides.end());
  g.dilation.assign(dilations.begin(), dilations.end());
  g.padBegin.assign(padding.begin(), padding.begin() + k);
  g.padEnd.assign(padding.begin() + k, padding.end());
  return g;
}

/// The geometry of an adjoint: the input extent its windows reach, no
/// trailing padding. Fails when the windows reach no input.
FailureOr<ConvGeometry> adjointGeometry(ConvGeometry g) {
  for (size_t i = 0; i < g.in.size(); ++i) {
    g.in[i] = g.reach(i);
    g.padEnd[i] = 0;
    if (g.in[i] < 1)
      return failure();
  }
  return g;
}

/// `v` (`[n, c, size...]`) cut or zero-padded at the end of each spatial
/// dimension to `sizes`.
Value fitSpatial(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> sizes) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> cut(type.getShape()), high(type.getRank(), 0);
  bool cuts = false, pads = false;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    int64_t have = type.getDimSize(2 + i);
    cut[2 + i] = std::min(have, s);
    high[2 + i] = std::max<int64_t>(s - have, 0);
    cuts |= s < have;
    pads |= s > have;
  }
  if (cuts) {
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
        ones(type.getRank(), b.getIndexAttr(1)), shape;
    for (int64_t s : cut)
      shape.push_back(b.getIndexAttr(s));
    v = tensor::ExtractSliceOp::create(b, loc, type.clone(cut), v, offsets,
                                       shape, ones);
  }
  if (pads) {
    SmallVector<int64_t> low(type.getRank(), 0);
    v = padWith(b, loc, v, low, high,
                scalarConstant(b, loc, type.getElementType(), 0.0));
  }
  return v;
}

struct ConvLowering : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto weight = cast<RankedTensorType>(op.getWeight().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !weight.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    ConvGeometry g = geometry(input, result, weight.getShape().drop_front(2),
                              op.getStrides(), op.getPadding(),
                              op.getDilations(), op.getGroups());
    Location loc = op.getLoc();
    Value bias = op.getBias();
    if (g.empty()) {
      rewriter.replaceOp(op, zeros(rewriter, loc, result));
      return success();
    }
    g.bias = static_cast<bool>(bias);
    SmallVector<Value> inputs = {op.getInput(), op.getWeight()};
    // Without a bias the weight stands in for it (the kernel ignores it).
    inputs.push_back(bias ? bias : op.getWeight());
    rewriter.replaceOp(op, callKernel(rewriter, loc, OBER_RT_CPU_CONV,
                                      g.fields(), inputs, result));
    return success();
  }
};

/// `conv_transpose`: the data gradient of the convolution from its result
/// (of that convolution's input size) to its input, plus the bias.
struct ConvTransposeLowering : OpRewritePattern<ConvTransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvTransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto weight = cast<RankedTensorType>(op.getWeight().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !weight.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type element = result.getElementType();
    // The forward convolution: from `result` to `input`, its weight
    // `[C, O / groups, K...]` as `[O_fwd, C_fwd / groups, K...]`.
    ConvGeometry forward = geometry(result, input,
                                    weight.getShape().drop_front(2),
                                    op.getStrides(), op.getPadding(),
                                    op.getDilations(), op.getGroups());
    Value out;
    FailureOr<ConvGeometry> g = adjointGeometry(forward);
    if (forward.empty() || failed(g)) {
      out = zeros(rewriter, loc, result);
    } else {
      SmallVector<int64_t> shape = {g->n, g->c};
      shape.append(g->in);
      out = callKernel(rewriter, loc, OBER_RT_CPU_CONV_BACKWARD_DATA,
                       g->fields(), {op.getInput(), op.getWeight()},
                       result.clone(shape));
      out = fitSpatial(rewriter, loc, out, result.getShape().drop_front(2));
    }
    if (Value bias = op.getBias()) {
      SmallVector<int64_t> column(result.getRank(), 1);
      column[1] = result.getDimSize(1);
      Value b = reshapeTo(rewriter, loc, bias, column);
      out = mapElements(rewriter, loc, result, {out, b},
                        [&](OpBuilder &nb, Location l, ValueRange v) {
                          return narrow(nb, l,
                                        arith::AddFOp::create(
                                            nb, l, widen(nb, l, v[0]),
                                            widen(nb, l, v[1])),
                                        element);
                        });
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct ConvWeightGradLowering : OpRewritePattern<ConvWeightGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvWeightGradOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto grad = cast<RankedTensorType>(op.getOutputGrad().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!input.hasStaticShape() || !grad.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    ConvGeometry forward = geometry(input, grad, op.getKernel(),
                                    op.getStrides(), op.getPadding(),
                                    op.getDilations(), op.getGroups());
    FailureOr<ConvGeometry> g = adjointGeometry(forward);
    if (forward.empty() || failed(g)) {
      rewriter.replaceOp(op, zeros(rewriter, loc, result));
      return success();
    }
    Value x = fitSpatial(rewriter, loc, op.getInput(), g->in);
    rewriter.replaceOp(op, callKernel(rewriter, loc,
                                      OBER_RT_CPU_CONV_BACKWARD_WEIGHTS,
                                      g->fields(), {x, op.getOutputGrad()},
                                      result));
    return success();
  }
};

} // namespace

void lowering::populateConvolutionPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvTransposeLowering, ConvWeightGradLowering>(
      patterns.getContext());
}
