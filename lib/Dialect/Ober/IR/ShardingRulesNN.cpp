//===- ShardingRulesNN.cpp - normalization, losses, indexing, attention ---===//
//
// Part of Ober-Train. Sharding rules of softmax and the normalizations (their
// reduced dimensions are statistics: a split all-reduces them), the losses
// (cross-entropy over the last dimension, MSE), one_hot, embedding, gather
// and scatter_add (the embedding's and gather's gradient), and attention.
//
//===----------------------------------------------------------------------===//

#include "ShardingRuleBuilder.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::rules;

namespace {
/// Values per row a split softmax axis all-reduces: the maximum and the sum
/// of exponentials.
constexpr int64_t kSoftmaxStatistics = 2;
/// Layer norm's mean and variance; RMS norm's mean square.
constexpr int64_t kLayerNormStatistics = 2, kRMSNormStatistics = 1;
/// Batch norm's per-channel mean and variance over samples and positions.
constexpr int64_t kBatchNormStatistics = 2;
/// A cross-entropy over split classes: the largest logit, the sum of
/// exponentials and the target's logit, and with label smoothing the sum
/// of the logits.
constexpr int64_t kCrossEntropyStatistics = 3;
} // namespace

/// The dimensions from `axis` on are normalized together; scale and bias
/// (every other operand) have their shape.
static ShardingRule trailingNormRule(Operation *op, int64_t axis,
                                     int64_t statistics) {
  RankedTensorType input = typeOf(op->getOperand(0));
  int64_t rank = input.getRank();
  axis = normalized(axis, rank);
  RuleBuilder rule(op);
  for (int64_t d = 0; d < rank; ++d) {
    SmallVector<int64_t> operandDims(op->getNumOperands(),
                                     d < axis ? kNone : d - axis);
    operandDims[0] = d;
    int64_t size = input.getDimSize(d);
    rule.add(operandDims, {d},
             d < axis ? ShardingFactor::parallel(size)
                      : ShardingFactor::withStatistics(size, statistics));
  }
  return rule.build();
}

/// Softmax along `axis`: the other dimensions are parallel.
static ShardingRule softmaxRule(Operation *op, int64_t axis) {
  RankedTensorType input = typeOf(op->getOperand(0));
  axis = normalized(axis, input.getRank());
  RuleBuilder rule(op);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = input.getDimSize(d);
    rule.add({d}, {d},
             d == axis
                 ? ShardingFactor::withStatistics(size, kSoftmaxStatistics)
                 : ShardingFactor::parallel(size));
  }
  return rule.build();
}

/// `[N, C, ...]` with per-channel operands `[C]`: channels are parallel;
/// samples and positions are too for inference, and statistics for
/// training (whose running statistics results are per channel).
static ShardingRule batchNormRule(Operation *op, bool training) {
  RankedTensorType input = typeOf(op->getOperand(0));
  RuleBuilder rule(op);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = input.getDimSize(d);
    if (d == 1) {
      SmallVector<int64_t> operandDims(op->getNumOperands(), 0);
      SmallVector<int64_t> resultDims(op->getNumResults(), 0);
      operandDims[0] = resultDims[0] = 1;
      rule.add(operandDims, resultDims, ShardingFactor::parallel(size));
      continue;
    }
    rule.add({d}, {d},
             training
                 ? ShardingFactor::withStatistics(size, kBatchNormStatistics)
                 : ShardingFactor::parallel(size));
  }
  return rule.build();
}

std::optional<ShardingRule>
mlir::ober::rules::normalizationRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case<SoftmaxOp, LogSoftmaxOp>(
          [&](auto s) { return softmaxRule(op, s.getAxis()); })
      .Case([&](LayerNormOp n) {
        return trailingNormRule(op, n.getAxis(), kLayerNormStatistics);
      })
      .Case([&](RMSNormOp n) {
        return trailingNormRule(op, n.getAxis(), kRMSNormStatistics);
      })
      .Case([&](BatchNormInferenceOp) { return batchNormRule(op, false); })
      .Case([&](BatchNormTrainingOp) { return batchNormRule(op, true); })
      .Default([](Operation *) { return std::nullopt; });
}

/// The factor of a loss's per-sample dimension: parallel without reduction,
/// else a sum (a mean divides by the parts). A mean that ignores some
/// targets has a global denominator: its samples need replication.
static ShardingFactor sampleFactor(int64_t size, LossReduction reduction,
                                   bool ignores = false) {
  if (reduction == LossReduction::none)
    return ShardingFactor::parallel(size);
  if (ignores && reduction == LossReduction::mean)
    return ShardingFactor::replicated(size);
  return ShardingFactor::reduced(size, shard::ReductionKind::Sum,
                                 reduction == LossReduction::mean);
}

/// Cross-entropy over the last (class) dimension of the logits, with class
/// indices (the other dimensions) or probabilities (the logits' shape).
static ShardingRule crossEntropyRule(CrossEntropyOp op) {
  RankedTensorType logits = typeOf(op.getLogits());
  int64_t classes = logits.getRank() - 1;
  bool probabilities = rankOf(op.getTargets()) == logits.getRank();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < classes; ++d)
    rule.add({d, d}, {op.getReduction() == LossReduction::none ? d : kNone},
             sampleFactor(logits.getDimSize(d), op.getReduction(),
                          op.getIgnoreIndex().has_value()));
  int64_t statistics =
      kCrossEntropyStatistics + !op.getLabelSmoothing().isZero();
  rule.add(
      {classes, probabilities ? classes : kNone}, {},
      ShardingFactor::withStatistics(logits.getDimSize(classes), statistics));
  return rule.build();
}

/// `(input - target)^2`, reduced or not.
static ShardingRule mseRule(MSELossOp op) {
  RankedTensorType input = typeOf(op.getInput());
  bool keep = op.getReduction() == LossReduction::none;
  RuleBuilder rule(op);
  for (int64_t d = 0; d < input.getRank(); ++d)
    rule.add({d, d}, {keep ? d : kNone},
             sampleFactor(input.getDimSize(d), op.getReduction()));
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::lossRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([](CrossEntropyOp c) { return crossEntropyRule(c); })
      .Case([](MSELossOp m) { return mseRule(m); })
      .Default([](Operation *) { return std::nullopt; });
}

/// `result = input[:axis] + indices + input[axis+1:]` (gather; embedding is
/// the table's rows, axis 0): the indices' dimensions and the input's other
/// ones are parallel; the gathered axis is a sum of masked rows over a
/// split (addressed by index). Linear in the input.
static ShardingRule gatherRule(Operation *op, int64_t axis) {
  RankedTensorType in = typeOf(op->getOperand(0)),
                   ids = typeOf(op->getOperand(1));
  int64_t ri = ids.getRank();
  RuleBuilder rule(op);
  for (int64_t k = 0; k < ri; ++k)
    rule.add({kNone, k}, {axis + k},
             ShardingFactor::parallel(ids.getDimSize(k)));
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t size = in.getDimSize(d);
    if (d == axis)
      rule.add({d}, {}, ShardingFactor::reduced(size).byIndex());
    else
      rule.add({d}, {d < axis ? d : d - 1 + ri},
               ShardingFactor::parallel(size));
  }
  return rule.linear(Linearity::Additive, {0}).build();
}

/// `scatter_add(input, indices, updates)`: the input's dimensions are
/// parallel (the scattered axis addressed by index), the indices' ones sum
/// their updates into the input. Linear in the input and the updates
/// together.
static ShardingRule scatterAddRule(ScatterAddOp op) {
  RankedTensorType in = typeOf(op.getInput()), ids = typeOf(op.getIndices());
  int64_t axis = normalized(op.getAxis(), in.getRank()), ri = ids.getRank();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    ShardingFactor f = ShardingFactor::parallel(in.getDimSize(d));
    if (d == axis)
      rule.add({d}, {d}, f.byIndex());
    else
      rule.add({d, kNone, d < axis ? d : d - 1 + ri}, {d}, f);
  }
  for (int64_t k = 0; k < ri; ++k)
    rule.add({kNone, k, axis + k}, {},
             ShardingFactor::reduced(ids.getDimSize(k)));
  return rule.linear(Linearity::Additive, {0, 2}).added({0}).build();
}

/// `one_hot(indices)`: the indices' dimensions are parallel; the inserted
/// class dimension is too, addressed by index.
static ShardingRule oneHotRule(OneHotOp op) {
  RankedTensorType result = op.getType();
  int64_t axis = normalized(op.getAxis(), result.getRank());
  RuleBuilder rule(op);
  for (int64_t d = 0; d < result.getRank(); ++d) {
    ShardingFactor f = ShardingFactor::parallel(result.getDimSize(d));
    rule.add({d == axis  ? kNone
              : d < axis ? d
                         : d - 1},
             {d}, d == axis ? f.byIndex() : f);
  }
  return rule.build();
}

/// `softmax(q k^T + mask) v` over `[..., Lq, D]`, `[..., Lk, D]`,
/// `[..., Lk, Dv]`: leading dimensions, queries and value columns are
/// parallel (queries need replication under a causal mask, which depends
/// on their global position); keys and the head dimension need the whole
/// scores.
/// What both attention rules read: the query, key and value types, their
/// rank, and the mask's dimension (kNone: none) at each of the scores'.
struct AttentionShapes {
  RankedTensorType q, k, v;
  int64_t r;
  RankedTensorType scores;
  Value mask;
  template <typename OpTy> explicit AttentionShapes(OpTy op)
      : q(typeOf(op.getQuery())), k(typeOf(op.getKey())),
        v(typeOf(op.getValue())), r(q.getRank()), mask(op.getMask()) {
    SmallVector<int64_t> shape(q.getShape());
    shape.back() = k.getDimSize(r - 2);
    scores = RankedTensorType::get(shape, q.getElementType());
  }
  int64_t maskDim(int64_t d) const {
    return mask ? broadcastDim(typeOf(mask), scores, d) : kNone;
  }
};

static ShardingRule attentionRule(AttentionOp op) {
  AttentionShapes a(op);
  RankedTensorType q = a.q, k = a.k, v = a.v;
  int64_t r = a.r;
  auto maskDim = [&](int64_t d) { return a.maskDim(d); };
  RuleBuilder rule(op);
  for (int64_t d = 0; d + 2 < r; ++d)
    rule.add({d, d, d, maskDim(d)}, {d},
             ShardingFactor::parallel(q.getDimSize(d)));
  int64_t lq = q.getDimSize(r - 2);
  rule.add({r - 2, kNone, kNone, maskDim(r - 2)}, {r - 2},
           op.getIsCausal() ? ShardingFactor::replicated(lq)
                            : ShardingFactor::parallel(lq));
  rule.add({kNone, r - 2, r - 2, maskDim(r - 1)}, {},
           ShardingFactor::replicated(k.getDimSize(r - 2)));
  rule.add({r - 1, r - 1}, {}, ShardingFactor::replicated(q.getDimSize(r - 1)));
  rule.add({kNone, kNone, r - 1}, {r - 1},
           ShardingFactor::parallel(v.getDimSize(r - 1)));
  return rule.build();
}

/// `attention_grad(q, k, v, output, output_grad, mask)` -> `(dq, dk, dv)`:
/// the leading dimensions (batch, heads) are parallel in every tensor;
/// queries, keys and both head dimensions need whole tensors (each
/// gradient sums over the others: dK and dV over queries, dQ over keys,
/// the scores over the head dimension).
static ShardingRule attentionGradRule(AttentionGradOp op) {
  AttentionShapes a(op);
  RankedTensorType q = a.q, k = a.k, v = a.v;
  int64_t r = a.r;
  auto maskDim = [&](int64_t d) { return a.maskDim(d); };
  RuleBuilder rule(op);
  for (int64_t d = 0; d + 2 < r; ++d)
    rule.add({d, d, d, d, d, maskDim(d)}, {d, d, d},
             ShardingFactor::parallel(q.getDimSize(d)));
  rule.add({r - 2, kNone, kNone, r - 2, r - 2, maskDim(r - 2)}, {r - 2},
           ShardingFactor::replicated(q.getDimSize(r - 2)));
  rule.add({kNone, r - 2, r - 2, kNone, kNone, maskDim(r - 1)},
           {kNone, r - 2, r - 2},
           ShardingFactor::replicated(k.getDimSize(r - 2)));
  rule.add({r - 1, r - 1}, {r - 1, r - 1},
           ShardingFactor::replicated(q.getDimSize(r - 1)));
  rule.add({kNone, kNone, r - 1, r - 1, r - 1}, {kNone, kNone, r - 1},
           ShardingFactor::replicated(v.getDimSize(r - 1)));
  return rule.build();
}

/// `scatter(input, indices, updates)`: the input's dimensions other than
/// the scattered axis are parallel with the updates'; the axis and the
/// indices' dimensions need whole tensors (a replaced slice may lie in
/// another device's block).
static ShardingRule scatterRule(ScatterOp op) {
  RankedTensorType in = typeOf(op.getInput()), ids = typeOf(op.getIndices());
  int64_t axis = normalized(op.getAxis(), in.getRank()), ri = ids.getRank();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (d == axis)
      rule.add({d}, {d}, ShardingFactor::replicated(in.getDimSize(d)));
    else
      rule.add({d, kNone, d < axis ? d : d - 1 + ri}, {d},
               ShardingFactor::parallel(in.getDimSize(d)));
  }
  for (int64_t k = 0; k < ri; ++k)
    rule.add({kNone, k, axis + k}, {},
             ShardingFactor::replicated(ids.getDimSize(k)));
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::indexingRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([](EmbeddingOp e) { return gatherRule(e, 0); })
      .Case([](GatherOp g) {
        return gatherRule(g, normalized(g.getAxis(), rankOf(g.getInput())));
      })
      .Case([](ScatterAddOp s) { return scatterAddRule(s); })
      .Case([](ScatterOp s) { return scatterRule(s); })
      .Case([](OneHotOp o) { return oneHotRule(o); })
      .Case([](AttentionOp a) { return attentionRule(a); })
      .Case([](AttentionGradOp a) { return attentionGradRule(a); })
      .Default([](Operation *) { return std::nullopt; });
}
