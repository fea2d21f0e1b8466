//===- ShardingRulesElementwise.cpp - elementwise, matmul, reductions -----===//
//
// Part of Ober-Train. Sharding rules of the ops that compute each result
// element from lined-up operand elements: elementwise ops with NumPy
// broadcasting (and dropout), batched matmul, and reductions.
//
//===----------------------------------------------------------------------===//

#include "ShardingRuleBuilder.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::rules;

/// How partial sums pass an elementwise op: sums and differences of partial
/// sums, a partial sum scaled by whole values or divided by them, negation
/// and float casts.
static void elementwiseLinearity(Operation *op, RuleBuilder &rule) {
  llvm::TypeSwitch<Operation *>(op)
      .Case<AddOp, SubOp>([&](auto) {
        rule.linear(Linearity::Additive, {0, 1});
      })
      .Case([&](MulOp) {
        rule.linear(Linearity::Multilinear, {0, 1});
      })
      .Case([&](DivOp) { rule.linear(Linearity::Multilinear, {0}); })
      .Case([&](NegOp) { rule.linear(Linearity::Additive, {0}); })
      .Case([&](CastOp c) {
        if (isa<FloatType>(typeOf(c.getResult()).getElementType()))
          rule.linear(Linearity::Additive, {0});
      });
}

/// One factor per result dimension, in every operand that spans it (a
/// size-1 dimension broadcast against a larger one, or a missing leading
/// one, does not). Dropout's mask is a function of each element's global
/// position: a split needs the whole tensor unless nothing is dropped.
static ShardingRule broadcastingRule(Operation *op) {
  RankedTensorType result = typeOf(op->getResult(0));
  bool positional = false;
  if (auto dropout = dyn_cast<DropoutOp>(op))
    positional = !dropout.getRatio().isZero();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < result.getRank(); ++d) {
    SmallVector<int64_t> operandDims;
    for (Value v : op->getOperands())
      operandDims.push_back(broadcastDim(typeOf(v), result, d));
    SmallVector<int64_t> resultDims(op->getNumResults(), d);
    int64_t size = result.getDimSize(d);
    rule.add(operandDims, resultDims,
             positional ? ShardingFactor::replicated(size)
                        : ShardingFactor::parallel(size));
  }
  elementwiseLinearity(op, rule);
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::elementwiseRule(Operation *op) {
  bool binary = isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, RemOp,
                    AndOp, OrOp, XorOp, CompareOp, SelectOp>(op);
  if (!binary && !op->hasTrait<OpTrait::Elementwise>() &&
      !isa<CastOp, DropoutOp, BroadcastToOp>(op))
    return std::nullopt;
  ShardingRule rule = broadcastingRule(op);
  if (isa<BroadcastToOp>(op))
    rule.linearity = Linearity::Additive, rule.linearOperands = {0};
  return rule;
}

/// `C[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]` with NumPy-broadcast
/// batch dimensions (a 2-D weight has none): batch, row and column factors
/// are parallel, the contraction a sum.
std::optional<ShardingRule> mlir::ober::rules::matmulRule(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  if (!matmul)
    return std::nullopt;
  RankedTensorType a = typeOf(matmul.getLhs()), b = typeOf(matmul.getRhs()),
                   c = typeOf(matmul.getResult());
  int64_t ra = a.getRank(), rb = b.getRank(), r = c.getRank();
  if (ra < 2 || rb < 2)
    return std::nullopt;
  RuleBuilder rule(op);
  auto batchDim = [&](RankedTensorType t, int64_t d) {
    int64_t od = broadcastDim(t, c, d);
    return od >= t.getRank() - 2 ? kNone : od;
  };
  for (int64_t d = 0; d + 2 < r; ++d)
    rule.add({batchDim(a, d), batchDim(b, d)}, {d},
             ShardingFactor::parallel(c.getDimSize(d)));
  rule.add({ra - 2, kNone}, {r - 2},
           ShardingFactor::parallel(c.getDimSize(r - 2)));
  rule.add({kNone, rb - 1}, {r - 1},
           ShardingFactor::parallel(c.getDimSize(r - 1)));
  rule.add({ra - 1, rb - 2}, {}, ShardingFactor::reduced(a.getDimSize(ra - 1)));
  rule.linear(Linearity::Multilinear, {0, 1});
  return rule.build();
}

/// A factor per input dimension; the reduced ones are reductions of the
/// op's kind (a mean divides by the parts), gone from the result or kept
/// as size-1 dimensions.
static ShardingRule reduceRule(Operation *op, ArrayRef<int64_t> axes,
                               bool keepdims, shard::ReductionKind kind,
                               bool mean) {
  RankedTensorType input = typeOf(op->getOperand(0));
  int64_t rank = input.getRank();
  SmallVector<int64_t> reduced;
  for (int64_t a : axes)
    reduced.push_back(normalized(a, rank));
  RuleBuilder rule(op);
  int64_t kept = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    if (llvm::is_contained(reduced, d)) {
      rule.add({d}, {}, ShardingFactor::reduced(size, kind, mean));
      kept += keepdims;
      continue;
    }
    rule.add({d}, {kept++}, ShardingFactor::parallel(size));
  }
  if (kind == shard::ReductionKind::Sum)
    rule.linear(Linearity::Additive, {0});
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::reductionRule(Operation *op) {
  using Kind = shard::ReductionKind;
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([&](ReduceSumOp r) {
        return reduceRule(op, r.getAxes(), r.getKeepdims(), Kind::Sum, false);
      })
      .Case([&](ReduceMeanOp r) {
        return reduceRule(op, r.getAxes(), r.getKeepdims(), Kind::Sum, true);
      })
      .Case([&](ReduceMaxOp r) {
        return reduceRule(op, r.getAxes(), r.getKeepdims(), Kind::Max, false);
      })
      .Case([&](ReduceMinOp r) {
        return reduceRule(op, r.getAxes(), r.getKeepdims(), Kind::Min, false);
      })
      .Default([](Operation *) { return std::nullopt; });
}
