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

#include "Convolution.h"
#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/CPUKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

/// The geometry of a convolution of `input` (`[n, c, in...]`) into
/// `output` (`[n, o, out...]`) with `kernel` and the op's attributes
/// (`padding`: every dimension's start, then every end).
static FailureOr<ConvGeometry>
geometry(Type inputType, Type outputType, Type weightType, ArrayRef<int64_t> kernel,
         ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
         ArrayRef<int64_t> dilations, int64_t groups) {
  auto input = cast<RankedTensorType>(inputType);
  auto output = cast<RankedTensorType>(outputType);
  if (!input.hasStaticShape() || !output.hasStaticShape() ||
      !cast<RankedTensorType>(weightType).hasStaticShape())
    return failure();
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

static ArrayRef<int64_t> spatialKernel(Value weight) {
  return cast<RankedTensorType>(weight.getType()).getShape().drop_front(2);
}

FailureOr<ConvGeometry> lowering::convGeometry(ConvOp op) {
  return geometry(op.getInput().getType(), op.getResult().getType(),
                  op.getWeight().getType(), spatialKernel(op.getWeight()),
                  op.getStrides(), op.getPadding(), op.getDilations(),
                  op.getGroups());
}

FailureOr<ConvGeometry> lowering::convGeometry(ConvTransposeOp op) {
  return geometry(op.getResult().getType(), op.getInput().getType(),
                  op.getWeight().getType(), spatialKernel(op.getWeight()),
                  op.getStrides(), op.getPadding(), op.getDilations(),
                  op.getGroups());
}

FailureOr<ConvGeometry> lowering::convGeometry(ConvWeightGradOp op) {
  return geometry(op.getInput().getType(), op.getOutputGrad().getType(),
                  op.getResult().getType(), op.getKernel(), op.getStrides(),
                  op.getPadding(), op.getDilations(), op.getGroups());
}

namespace {

/// The kernel descriptor's fields of `g` (ober/Runtime/CPUKernels.h).
SmallVector<int64_t> descriptorFields(const ConvGeometry &g) {
  SmallVector<int64_t> f(OBER_CONV_ARRAYS);
  f[OBER_CONV_SPATIAL] = g.in.size();
  f[OBER_CONV_N] = g.n;
  f[OBER_CONV_C] = g.c;
  f[OBER_CONV_O] = g.o;
  f[OBER_CONV_GROUPS] = g.groups;
  f[OBER_CONV_HAS_BIAS] = g.bias;
  for (const SmallVector<int64_t> *a :
       {&g.in, &g.kernel, &g.out, &g.stride, &g.dilation, &g.padBegin,
        &g.padEnd})
    f.append(a->begin(), a->end());
  return f;
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
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> geometry = convGeometry(op);
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    ConvGeometry &g = *geometry;
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
                                      descriptorFields(g), inputs, result,
                                      rewriter.getF32Type()));
    return success();
  }
};

/// `conv_transpose`: the data gradient of the convolution from its result
/// (of that convolution's input size) to its input, plus the bias.
struct ConvTransposeLowering : OpRewritePattern<ConvTransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvTransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> forward = convGeometry(op);
    if (failed(forward))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type element = result.getElementType();
    Value out;
    FailureOr<ConvGeometry> g = adjointGeometry(*forward);
    if (forward->empty() || failed(g)) {
      out = zeros(rewriter, loc, result);
    } else {
      SmallVector<int64_t> shape = {g->n, g->c};
      shape.append(g->in);
      out = callKernel(rewriter, loc, OBER_RT_CPU_CONV_BACKWARD_DATA,
                       descriptorFields(*g), {op.getInput(), op.getWeight()},
                       result.clone(shape), rewriter.getF32Type());
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
    auto result = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<ConvGeometry> forward = convGeometry(op);
    if (failed(forward))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    FailureOr<ConvGeometry> g = adjointGeometry(*forward);
    if (forward->empty() || failed(g)) {
      rewriter.replaceOp(op, zeros(rewriter, loc, result));
      return success();
    }
    Value x = fitSpatial(rewriter, loc, op.getInput(), g->in);
    rewriter.replaceOp(op, callKernel(rewriter, loc,
                                      OBER_RT_CPU_CONV_BACKWARD_WEIGHTS,
                                      descriptorFields(*g), {x, op.getOutputGrad()},
                                      result, rewriter.getF32Type()));
    return success();
  }
};

} // namespace

void lowering::populateConvolutionPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvTransposeLowering, ConvWeightGradLowering>(
      patterns.getContext());
}
