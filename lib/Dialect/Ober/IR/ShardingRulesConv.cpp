//===- ShardingRulesConv.cpp - convolution, pooling and their gradients ---===//
//
// Part of Ober-Train. Sharding rules of the ops over `[N, C, D1, ..., Dk]`:
// samples are parallel; channels are factored into groups (parallel), the
// channels of a group that are contracted (a sum) and those produced
// (parallel); spatial dimensions are permutations (a split needs a halo),
// a kernel's window needs replication.
//
//===----------------------------------------------------------------------===//

#include "ShardingRuleBuilder.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::rules;

namespace {
/// A convolution-like op's channels: `groups` groups, each of `contracted`
/// input and `produced` output channels, and the dimension of each operand
/// and result that holds each of the three factors (kNone: not there).
struct Channels {
  int64_t groups, contracted, produced;
  SmallVector<int64_t, 3> groupsIn, contractedIn, producedIn;
  SmallVector<int64_t, 1> groupsOut, contractedOut, producedOut;
};
} // namespace

/// Adds the group, produced and contracted channel factors, in that order
/// (a group is the major factor of a channel dimension). The contracted
/// channels are summed unless `contractedInResult`.
static void addChannels(RuleBuilder &rule, const Channels &ch,
                        bool contractedInResult) {
  rule.add(ch.groupsIn, ch.groupsOut, ShardingFactor::parallel(ch.groups));
  rule.add(ch.producedIn, ch.producedOut,
           ShardingFactor::parallel(ch.produced));
  rule.add(ch.contractedIn, ch.contractedOut,
           contractedInResult ? ShardingFactor::parallel(ch.contracted)
                              : ShardingFactor::reduced(ch.contracted));
}

/// A permutation factor per position (dimension 2 + s), in the operands and
/// results marked in `operandHas` and `resultHas`, of the largest size among
/// `tensors`.
static void addPositions(RuleBuilder &rule, ArrayRef<Value> tensors,
                         ArrayRef<bool> operandHas, ArrayRef<bool> resultHas) {
  int64_t k = rankOf(tensors.front()) - 2;
  for (int64_t s = 0; s < k; ++s) {
    int64_t size = 1;
    for (Value v : tensors)
      size = std::max(size, typeOf(v).getDimSize(2 + s));
    SmallVector<int64_t> operandDims, resultDims;
    for (bool has : operandHas)
      operandDims.push_back(has ? 2 + s : kNone);
    for (bool has : resultHas)
      resultDims.push_back(has ? 2 + s : kNone);
    rule.add(operandDims, resultDims, ShardingFactor::permutation(size));
  }
}

/// `conv(input [N, C, ...], weight [O, C/g, K...], bias [O])` and
/// `conv_transpose(input [N, C, ...], weight [C, O/g, K...], bias [O])`.
static ShardingRule convRule(Operation *op, int64_t groups, bool transposed) {
  RankedTensorType input = typeOf(op->getOperand(0)),
                   weight = typeOf(op->getOperand(1)),
                   result = typeOf(op->getResult(0));
  int64_t c = input.getDimSize(1), o = result.getDimSize(1);
  bool bias = op->getNumOperands() > 2;
  RuleBuilder rule(op);
  rule.add({0}, {0}, ShardingFactor::parallel(input.getDimSize(0)));
  // The weight's dimension 0 holds the groups in both layouts.
  int64_t wc = transposed ? 0 : 1, wo = transposed ? 1 : 0;
  Channels ch{groups,         c / groups, o / groups, {1, 0, 0}, {1, wc},
              {kNone, wo, 0}, {1},        {},         {1}};
  addChannels(rule, ch, /*contractedInResult=*/false);
  SmallVector<bool> operandHas = {true, false, false};
  operandHas.resize(op->getNumOperands());
  addPositions(rule, {op->getOperand(0), op->getResult(0)}, operandHas, {true});
  for (int64_t s = 2; s < weight.getRank(); ++s)
    rule.addToOperand(1, s, ShardingFactor::replicated(weight.getDimSize(s)));
  if (bias)
    rule.added({2});
  else
    rule.linear(Linearity::Multilinear, {0, 1});
  return rule.build();
}

/// `conv_weight_grad(input [N, C, ...], output_grad [N, O, ...])` gives
/// `[O, C/g, K...]`: samples are summed; positions of the input and the
/// gradient, and the window, need replication.
static ShardingRule convWeightGradRule(ConvWeightGradOp op) {
  RankedTensorType input = typeOf(op.getInput()),
                   grad = typeOf(op.getOutputGrad()), result = op.getType();
  int64_t groups = op.getGroups();
  RuleBuilder rule(op);
  rule.add({0, 0}, {}, ShardingFactor::reduced(input.getDimSize(0)));
  Channels ch{groups,
              input.getDimSize(1) / groups,
              grad.getDimSize(1) / groups,
              {1, 1},
              {1, kNone},
              {kNone, 1},
              {0},
              {1},
              {0}};
  addChannels(rule, ch, /*contractedInResult=*/true);
  for (int64_t s = 2; s < input.getRank(); ++s) {
    rule.addToOperand(0, s, ShardingFactor::replicated(input.getDimSize(s)));
    rule.addToOperand(1, s, ShardingFactor::replicated(grad.getDimSize(s)));
    rule.addToResult(0, s, ShardingFactor::replicated(result.getDimSize(s)));
  }
  return rule.linear(Linearity::Multilinear, {0, 1}).build();
}

/// Pooling `[N, C, ...]` and its gradients (`input`, `output_grad` to the
/// input's shape): samples and channels are parallel in every tensor,
/// positions permutations.
static ShardingRule poolRule(Operation *op, bool linearInGrad) {
  RankedTensorType input = typeOf(op->getOperand(0));
  bool gradient = op->getNumOperands() == 2;
  SmallVector<int64_t> operandDims(op->getNumOperands());
  RuleBuilder rule(op);
  for (int64_t d = 0; d < 2; ++d) {
    std::fill(operandDims.begin(), operandDims.end(), d);
    rule.add(operandDims, {d}, ShardingFactor::parallel(input.getDimSize(d)));
  }
  SmallVector<Value> tensors(op->getOperands());
  tensors.push_back(op->getResult(0));
  addPositions(rule, tensors, SmallVector<bool>(op->getNumOperands(), true),
               {true});
  if (gradient && linearInGrad)
    rule.linear(Linearity::Additive, {1});
  else if (!gradient && linearInGrad)
    rule.linear(Linearity::Additive, {0});
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::convolutionRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([&](ConvOp c) { return convRule(op, c.getGroups(), false); })
      .Case(
          [&](ConvTransposeOp c) { return convRule(op, c.getGroups(), true); })
      .Case([](ConvWeightGradOp g) { return convWeightGradRule(g); })
      .Case([&](MaxPoolOp) { return poolRule(op, false); })
      .Case<AvgPoolOp, MaxPoolGradOp, AvgPoolGradOp>(
          [&](Operation *) { return poolRule(op, true); })
      .Default([](Operation *) { return std::nullopt; });
}
