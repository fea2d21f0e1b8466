//===- NNVJP.cpp - gradients of contractions, norms, losses, indexing -----===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

namespace {

SmallVector<int64_t> swapLast2(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

void matmulVJP(GradBuilder &gb, MatmulOp op, Value g,
               SmallVectorImpl<Value> &out) {
  Value a = op.getLhs(), b = op.getRhs();
  RankedTensorType at = typeOf(a), bt = typeOf(b);
  // Promote vectors to matrices as numpy.matmul does.
  SmallVector<int64_t> aShape(at.getShape()), bShape(bt.getShape());
  SmallVector<int64_t> gShape(typeOf(g).getShape());
  if (at.getRank() == 1) {
    aShape.insert(aShape.begin(), 1);
    gShape.insert(gShape.end() - (bt.getRank() == 1 ? 0 : 1), 1);
  }
  if (bt.getRank() == 1) {
    bShape.push_back(1);
    gShape.push_back(1);
  }
  Value a2 = gb.reshape(a, aShape), b2 = gb.reshape(b, bShape);
  Value g2 = gb.reshape(g, gShape);
  Value da = gb.create<MatmulOp>(g2, gb.transpose(b2, swapLast2(bShape.size())));
  Value db = gb.create<MatmulOp>(gb.transpose(a2, swapLast2(aShape.size())), g2);
  // Sum over broadcast batch dimensions, then drop the promoted ones.
  out[0] = gb.reshape(gb.unbroadcast(da, at.clone(aShape)), at.getShape());
  out[1] = gb.reshape(gb.unbroadcast(db, bt.clone(bShape)), bt.getShape());
}

/// Sum of `g` over all dimensions but 1 ([N, C, ...] -> [C]).
Value channelSum(GradBuilder &gb, Value g) {
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < typeOf(g).getRank(); ++d)
    axes.push_back(d);
  return gb.sum(g, axes, false);
}

/// The output_padding that makes conv_transpose reproduce `size`.
SmallVector<int64_t> outputPaddingFor(ArrayRef<int64_t> inShape,
                                      ArrayRef<int64_t> gradShape,
                                      ArrayRef<int64_t> kernel,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations) {
  int64_t k = kernel.size();
  SmallVector<int64_t> outPad;
  for (int64_t i = 0; i < k; ++i) {
    int64_t natural = (gradShape[2 + i] - 1) * strides[i] - padding[i] -
                      padding[k + i] + dilations[i] * (kernel[i] - 1) + 1;
    outPad.push_back(inShape[2 + i] - natural);
  }
  return outPad;
}

// ober.conv_transpose with a weight W is the adjoint of ober.conv with the
// same W and attributes (that is why its weight is [C, O/groups, K]), so
// each gives the other's input gradient with the weight as it is.
void convVJP(GradBuilder &gb, ConvOp op, Value g, SmallVectorImpl<Value> &out) {
  auto &b = gb.b;
  RankedTensorType xt = typeOf(op.getInput()), wt = typeOf(op.getWeight());
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  SmallVector<int64_t> outPad =
      outputPaddingFor(xt.getShape(), typeOf(g).getShape(), kernel,
                       op.getStrides(), op.getPadding(), op.getDilations());
  out[0] = gb.create<ConvTransposeOp>(
      g, op.getWeight(), Value(), op.getStridesAttr(), op.getPaddingAttr(),
      op.getDilationsAttr(), b.getDenseI64ArrayAttr(outPad), op.getGroupsAttr());
  out[1] = gb.create<ConvWeightGradOp>(
      op.getInput(), g, b.getDenseI64ArrayAttr(kernel), op.getStridesAttr(),
      op.getPaddingAttr(), op.getDilationsAttr(), op.getGroupsAttr());
  if (op.getBias())
    out[2] = channelSum(gb, g);
}

void convTransposeVJP(GradBuilder &gb, ConvTransposeOp op, Value g,
                      SmallVectorImpl<Value> &out) {
  auto &b = gb.b;
  SmallVector<int64_t> kernel(typeOf(op.getWeight()).getShape().drop_front(2));
  out[0] = gb.create<ConvOp>(g, op.getWeight(), Value(), op.getStridesAttr(),
                             op.getPaddingAttr(), op.getDilationsAttr(),
                             op.getGroupsAttr());
  out[1] = gb.create<ConvWeightGradOp>(
      g, op.getInput(), b.getDenseI64ArrayAttr(kernel), op.getStridesAttr(),
      op.getPaddingAttr(), op.getDilationsAttr(), op.getGroupsAttr());
  if (op.getBias())
    out[2] = channelSum(gb, g);
}

/// Mean and 1/sqrt(var + eps) over `axes` of x, kept as size 1.
std::pair<Value, Value> moments(GradBuilder &gb, Value x, ArrayRef<int64_t> axes,
                                double eps, bool centred) {
  Value mean = centred ? gb.create<ReduceMeanOp>(
                             x, gb.b.getDenseI64ArrayAttr(axes),
                             gb.b.getBoolAttr(true))
                       : Value();
  Value xc = centred ? gb.create<SubOp>(x, mean) : x;
  Value var = gb.create<ReduceMeanOp>(gb.create<MulOp>(xc, xc),
                                      gb.b.getDenseI64ArrayAttr(axes),
                                      gb.b.getBoolAttr(true));
  Value rstd = gb.create<RsqrtOp>(gb.create<AddOp>(var, gb.scalarLike(x, eps)));
  return {mean, rstd};
}

/// dx of y = xhat * scale (+ bias) over `axes`, xhat = (x - mean) * rstd
/// (mean omitted for RMS norm): rstd * (gs - mean(gs) - xhat mean(gs xhat)).
Value normInputGrad(GradBuilder &gb, Value gs, Value xhat, Value rstd,
                    ArrayRef<int64_t> axes, bool centred) {
  auto attrAxes = gb.b.getDenseI64ArrayAttr(axes);
  Value mgx = gb.create<ReduceMeanOp>(gb.create<MulOp>(gs, xhat), attrAxes,
                                      gb.b.getBoolAttr(true));
  Value d = gb.create<SubOp>(gs, gb.create<MulOp>(xhat, mgx));
  if (centred)
    d = gb.create<SubOp>(d, gb.create<ReduceMeanOp>(gs, attrAxes,
                                                    gb.b.getBoolAttr(true)));
  return gb.create<MulOp>(d, rstd);
}

void trailingNormVJP(GradBuilder &gb, Operation *op, Value x, Value scale,
                     Value bias, int64_t axis, double eps, bool centred,
                     Value g, SmallVectorImpl<Value> &out) {
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  SmallVector<int64_t> lead = llvm::to_vector(llvm::seq<int64_t>(0, axis));
  auto [mean, rstd] = moments(gb, x, axes, eps, centred);
  Value xc = centred ? gb.create<SubOp>(x, mean) : x;
  Value xhat = gb.create<MulOp>(xc, rstd);
  Value gs = scale ? gb.create<MulOp>(g, scale) : g;
  out[0] = normInputGrad(gb, gs, xhat, rstd, axes, centred);
  unsigned next = 1;
  if (scale)
    out[next++] = gb.sum(gb.create<MulOp>(g, xhat), lead, false);
  if (bias)
    out[next++] = gb.sum(g, lead, false);
}

void batchNormVJP(GradBuilder &gb, Operation *op, Value g, bool training,
                  SmallVectorImpl<Value> &out) {
  Value x = op->getOperand(0), scale = op->getOperand(1);
  RankedTensorType xt = typeOf(x);
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < xt.getRank(); ++d)
    axes.push_back(d);
  SmallVector<int64_t> bshape(xt.getRank(), 1);
  bshape[1] = xt.getDimSize(1);
  auto perChannel = [&](Value v) { return gb.reshape(v, bshape); };
  double eps = cast<FloatAttr>(op->getAttr("epsilon")).getValueAsDouble();
  Value mean, rstd;
  if (training) {
    std::tie(mean, rstd) = moments(gb, x, axes, eps, true);
  } else {
    mean = perChannel(op->getOperand(3));
    rstd = perChannel(gb.create<RsqrtOp>(
        gb.create<AddOp>(op->getOperand(4), gb.scalarLike(x, eps))));
  }
  Value xhat = gb.create<MulOp>(gb.create<SubOp>(x, mean), rstd);
  Value gs = gb.create<MulOp>(g, perChannel(scale));
  out[0] = training ? normInputGrad(gb, gs, xhat, rstd, axes, true)
                    : gb.create<MulOp>(gs, rstd);
  out[1] = gb.sum(gb.create<MulOp>(g, xhat), axes, false);
  out[2] = gb.sum(g, axes, false);
}

void reduceVJP(GradBuilder &gb, Operation *op, ArrayRef<int64_t> axes, Value g,
               SmallVectorImpl<Value> &out) {
  Value x = op->getOperand(0), y = op->getResult(0);
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  Value ge = gb.expandReduced(g, axes, shape);
  if (isa<ReduceSumOp>(op)) {
    out[0] = ge;
  } else if (isa<ReduceMeanOp>(op)) {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= shape[a];
    out[0] = gb.create<DivOp>(ge, gb.scalarLike(g, count));
  } else if (isa<ReduceProdOp>(op)) {
    out[0] = gb.create<DivOp>(
        gb.create<MulOp>(ge, gb.expandReduced(y, axes, shape)), x);
  } else { // max, min: ties share evenly (PyTorch's amax/amin).
    Value hit = gb.create<CompareOp>(CompareDirection::eq, x,
                                     gb.expandReduced(y, axes, shape));
    Value ones = gb.create<SelectOp>(hit, gb.scalarLike(g, 1.0),
                                     gb.scalarLike(g, 0.0));
    Value count = gb.expandReduced(
        gb.sum(ones, axes, false), axes, shape);
    out[0] = gb.create<DivOp>(gb.create<MulOp>(ge, ones), count);
  }
}

void crossEntropyVJP(GradBuilder &gb, CrossEntropyOp op, Value g,
                     SmallVectorImpl<Value> &out) {
  Value logits = op.getLogits(), targets = op.getTargets();
  RankedTensorType lt = typeOf(logits);
  int64_t rank = lt.getRank(), classes = lt.getShape().back();
  double ls = op.getLabelSmoothing().convertToDouble();
  Value p = gb.create<SoftmaxOp>(logits, rank - 1);
  Value q, weight;
  SmallVector<int64_t> samples(lt.getShape().drop_back());
  if (!isa<FloatType>(typeOf(targets).getElementType())) {
    Value hot = gb.create<OneHotOp>(lt, targets, classes, rank - 1);
    q = gb.create<AddOp>(gb.create<MulOp>(hot, gb.scalarLike(logits, 1 - ls)),
                         gb.scalarLike(logits, ls / classes));
    if (std::optional<int64_t> ignore = op.getIgnoreIndex()) {
      Type it = typeOf(targets).getElementType();
      Value keep = gb.create<CompareOp>(CompareDirection::ne, targets,
                                        gb.scalar(it, *ignore));
      weight = gb.create<SelectOp>(keep, gb.scalarLike(logits, 1.0),
                                   gb.scalarLike(logits, 0.0));
    }
  } else {
    // Soft targets: d/dlogits = p * sum(q) - q with the smoothed q.
    q = gb.create<AddOp>(gb.create<MulOp>(targets, gb.scalarLike(logits, 1 - ls)),
                         gb.scalarLike(logits, ls / classes));
    Value qsum = gb.create<ReduceSumOp>(q, gb.b.getDenseI64ArrayAttr({rank - 1}),
                                        gb.b.getBoolAttr(true));
    p = gb.create<MulOp>(p, qsum);
  }
  Value d = gb.create<SubOp>(p, q);
  if (!weight)
    weight = gb.broadcastTo(gb.scalarLike(logits, 1.0), samples);
  Value scaleBy = g; // per-sample for `none`, a scalar otherwise
  if (op.getReduction() == LossReduction::mean) {
    Value count = gb.sum(weight, llvm::to_vector(llvm::seq<int64_t>(0, samples.size())), false);
    scaleBy = gb.create<DivOp>(g, count);
  }
  Value perSample = gb.create<MulOp>(weight, scaleBy);
  SmallVector<int64_t> kept(samples);
  kept.push_back(1);
  out[0] = gb.create<MulOp>(d, gb.reshape(gb.broadcastTo(perSample, samples), kept));
  if (isa<FloatType>(typeOf(targets).getElementType())) {
    // d/dq of -sum(q log p): -(1 - ls) log p, per sample.
    Value logp = gb.create<LogSoftmaxOp>(logits, rank - 1);
    out[1] = gb.create<MulOp>(
        gb.create<MulOp>(logp, gb.scalarLike(logits, -(1 - ls))),
        gb.reshape(gb.broadcastTo(perSample, samples), kept));
  }
}

} // namespace

std::optional<LogicalResult> mlir::ober::training::nnVJP(
    GradBuilder &gb, Operation *op, ArrayRef<Value> grads,
    SmallVectorImpl<Value> &out) {
  Value g = grads.front();
  auto &b = gb.b;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](MatmulOp m) {
        matmulVJP(gb, m, g, out);
        return success();
      })
      .Case([&](ConvOp c) {
        convVJP(gb, c, g, out);
        return success();
      })
      .Case([&](ConvTransposeOp c) {
        convTransposeVJP(gb, c, g, out);
        return success();
      })
      .Case([&](MaxPoolOp p) {
        out[0] = gb.create<MaxPoolGradOp>(p.getInput(), g, p.getKernelAttr(),
                                          p.getStridesAttr(), p.getPaddingAttr(),
                                          p.getDilationsAttr(), p.getCeilModeAttr());
        return success();
      })
      .Case([&](AvgPoolOp p) {
        out[0] = gb.create<AvgPoolGradOp>(p.getInput(), g, p.getKernelAttr(),
                                          p.getStridesAttr(), p.getPaddingAttr(),
                                          p.getCeilModeAttr(),
                                          p.getCountIncludePadAttr());
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(
          [&](Operation *) {
            auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
            reduceVJP(gb, op, axes, g, out);
            return success();
          })
      .Case([&](SoftmaxOp s) {
        Value y = s.getResult();
        Value dot = gb.create<ReduceSumOp>(gb.create<MulOp>(g, y),
                                           b.getDenseI64ArrayAttr({static_cast<int64_t>(s.getAxis())}),
                                           b.getBoolAttr(true));
        out[0] = gb.create<MulOp>(y, gb.create<SubOp>(g, dot));
        return success();
      })
      .Case([&](LogSoftmaxOp s) {
        Value sum = gb.create<ReduceSumOp>(g, b.getDenseI64ArrayAttr({static_cast<int64_t>(s.getAxis())}),
                                           b.getBoolAttr(true));
        out[0] = gb.create<SubOp>(
            g, gb.create<MulOp>(gb.create<ExpOp>(s.getResult()), sum));
        return success();
      })
      .Case([&](LayerNormOp n) {
        trailingNormVJP(gb, op, n.getInput(), n.getScale(), n.getBias(),
                        n.getAxis(), n.getEpsilon().convertToDouble(), true, g,
                        out);
        return success();
      })
      .Case([&](RMSNormOp n) {
        trailingNormVJP(gb, op, n.getInput(), n.getScale(), Value(),
                        n.getAxis(), n.getEpsilon().convertToDouble(), false, g,
                        out);
        return success();
      })
      .Case([&](BatchNormInferenceOp) {
        batchNormVJP(gb, op, g, false, out);
        return success();
      })
      .Case([&](BatchNormTrainingOp) {
        if (g)
          batchNormVJP(gb, op, g, true, out);
        return success();
      })
      .Case([&](AttentionOp a) -> LogicalResult {
        // buildGradientFunction decomposes an attention with a float mask
        // (this op gives no mask gradient) unless asked to keep it.
        Value mask = a.getMask();
        if (mask && !getElementTypeOrSelf(mask.getType()).isInteger(1))
          return a.emitOpError("with a float mask is differentiated through "
                               "its decomposition (ober-decompose-attention "
                               "first)");
        SmallVector<Value> grads = gb.createMulti<AttentionGradOp>(
            a.getQuery(), a.getKey(), a.getValue(), a.getResult(), g, mask,
            a.getScaleAttr(), a.getIsCausalAttr());
        for (int i = 0; i < 3; ++i)
          out[i] = grads[i];
        return success();
      })
      .Case([&](EmbeddingOp e) {
        out[0] = gb.create<ScatterAddOp>(gb.zerosLike(e.getTable().getType()),
                                         e.getIndices(), g, 0);
        return success();
      })
      .Case([&](GatherOp ga) {
        out[0] = gb.create<ScatterAddOp>(gb.zerosLike(ga.getInput().getType()),
                                         ga.getIndices(), g, ga.getAxis());
        return success();
      })
      .Case([&](GatherElementsOp ga) {
        out[0] = gb.create<ScatterElementsAddOp>(
            gb.zerosLike(ga.getInput().getType()), ga.getIndices(), g,
            ga.getAxis());
        return success();
      })
      .Case([&](ScatterAddOp s) {
        out[0] = g;
        out[2] = gb.create<GatherOp>(g, s.getIndices(), s.getAxis());
        return success();
      })
      .Case([&](ScatterElementsAddOp s) {
        out[0] = g;
        out[2] = gb.create<GatherElementsOp>(g, s.getIndices(), s.getAxis());
        return success();
      })
      .Case([&](DropoutOp d) {
        if (!g)
          return success();
        // The forward's mask first: the gradient is computed where the
        // mask is (a pipeline stage sends the incoming gradient only).
        double keep = 1.0 - d.getRatio().convertToDouble();
        out[0] = gb.create<MulOp>(
            gb.create<SelectOp>(d.getMask(), g, gb.scalarLike(g, 0.0)),
            gb.scalarLike(g, 1.0 / keep));
        return success();
      })
      .Case([&](CrossEntropyOp ce) {
        crossEntropyVJP(gb, ce, g, out);
        return success();
      })
      .Case([&](MSELossOp m) {
        Value diff = gb.create<SubOp>(m.getInput(), m.getTarget());
        Value scale = gb.scalarLike(diff, 2.0);
        if (m.getReduction() == LossReduction::mean)
          scale = gb.scalarLike(diff, 2.0 / typeOf(diff).getNumElements());
        Value d = gb.create<MulOp>(gb.create<MulOp>(diff, scale), g);
        out[0] = gb.broadcastTo(d, typeOf(diff).getShape());
        out[1] = gb.create<NegOp>(out[0]);
        return success();
      })
      .Case([&](CumSumOp c) {
        out[0] = gb.create<CumSumOp>(g, c.getAxis(), c.getExclusive(),
                                     !c.getReverse());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}
