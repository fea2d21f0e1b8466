//===- ShardingRulesShape.cpp - transpose, reshape, slices, concat --------===//
//
// Part of Ober-Train. Sharding rules of the ops that move elements without
// computing: transpose, reshape (factors shared by the merged and split
// dimension groups), slice, split, concat and pad. All of them pass partial
// sums (pad only with zeros).
//
//===----------------------------------------------------------------------===//

#include "ShardingRuleBuilder.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::rules;

/// Result dimension j reads input dimension perm[j].
static ShardingRule transposeRule(TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPermutation();
  RankedTensorType input = typeOf(op.getInput());
  RuleBuilder rule(op);
  for (int64_t d = 0; d < input.getRank(); ++d)
    rule.add({d}, {llvm::find(perm, d) - perm.begin()},
             ShardingFactor::parallel(input.getDimSize(d)));
  return rule.linear(Linearity::Additive, {0}).build();
}

/// Where the dimension groups from input dimension `i` and result dimension
/// `o`, of which `restIn` and `restOut` elements remain from one element
/// offset, end: the next dimensions past them that start at one offset
/// again.
static std::pair<int64_t, int64_t> groupEnd(ArrayRef<int64_t> in,
                                            ArrayRef<int64_t> out, int64_t i,
                                            int64_t o, int64_t restIn,
                                            int64_t restOut) {
  int64_t endIn = i + 1, endOut = o + 1;
  int64_t ni = in.size(), no = out.size();
  while (restIn != restOut) {
    if (restIn < restOut && endIn < ni)
      restIn *= in[endIn++];
    else if (restOut < restIn && endOut < no)
      restOut *= out[endOut++];
    else
      break;
  }
  return {endIn, endOut};
}

/// Walks the input and result shapes together, major to minor, taking the
/// largest factor both remaining dimension sizes share: `[6, 4] -> [2, 12]`
/// gives factors 2, 3 and 4, the input's first dimension made of the first
/// two, the result's second of the last two. Where the remaining sizes
/// share none, each remaining dimension up to the next ones that start at
/// one element offset gets a factor of its own that needs replication
/// (`[6, 4] -> [4, 6]` shares only its leading 2), and the walk goes on
/// from there.
static ShardingRule reshapeRule(ReshapeOp op) {
  ArrayRef<int64_t> in = typeOf(op.getInput()).getShape(),
                    out = typeOf(op.getResult()).getShape();
  int64_t ni = in.size(), no = out.size();
  RuleBuilder rule(op);
  int64_t i = 0, o = 0, restIn = ni ? in[0] : 1, restOut = no ? out[0] : 1;
  while (i < ni && o < no) {
    if (restIn == 1 || restOut == 1) {
      if (restIn == 1 && ++i < ni)
        restIn = in[i];
      if (restOut == 1 && ++o < no)
        restOut = out[o];
      continue;
    }
    int64_t size = std::gcd(restIn, restOut);
    if (size > 1) {
      rule.add({i}, {o}, ShardingFactor::parallel(size));
      restIn /= size;
      restOut /= size;
      continue;
    }
    auto [endIn, endOut] = groupEnd(in, out, i, o, restIn, restOut);
    for (; i < endIn; ++i, restIn = i < ni ? in[i] : 1)
      rule.addToOperand(0, i, ShardingFactor::replicated(restIn));
    for (; o < endOut; ++o, restOut = o < no ? out[o] : 1)
      rule.addToResult(0, o, ShardingFactor::replicated(restOut));
  }
  for (; i < ni; ++i, restIn = i < ni ? in[i] : 1)
    rule.addToOperand(0, i, ShardingFactor::replicated(restIn));
  for (; o < no; ++o, restOut = o < no ? out[o] : 1)
    rule.addToResult(0, o, ShardingFactor::replicated(restOut));
  return rule.linear(Linearity::Additive, {0}).build();
}

/// Untouched dimensions are parallel; a dimension the slice shortens or
/// strides is a permutation.
static ShardingRule sliceRule(SliceOp op) {
  RankedTensorType input = typeOf(op.getInput()), result = op.getType();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = input.getDimSize(d);
    bool whole = op.getStarts()[d] == 0 && op.getLimits()[d] == size &&
                 op.getStrides()[d] == 1 && result.getDimSize(d) == size;
    rule.add({d}, {d},
             whole ? ShardingFactor::parallel(size)
                   : ShardingFactor::permutation(size));
  }
  return rule.linear(Linearity::Additive, {0}).build();
}

/// Pieces along `axis` of one tensor (split's input, concat's result) and
/// several (split's results, concat's operands): the other dimensions are
/// parallel in all of them, the axis a permutation of the whole's size.
static ShardingRule piecesRule(Operation *op, Value whole, int64_t axis) {
  RankedTensorType type = typeOf(whole);
  SmallVector<int64_t> operandDims(op->getNumOperands()),
      resultDims(op->getNumResults());
  RuleBuilder rule(op);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::fill(operandDims.begin(), operandDims.end(), d);
    std::fill(resultDims.begin(), resultDims.end(), d);
    int64_t size = type.getDimSize(d);
    rule.add(operandDims, resultDims,
             d == axis ? ShardingFactor::permutation(size)
                       : ShardingFactor::parallel(size));
  }
  SmallVector<unsigned> all(op->getNumOperands());
  std::iota(all.begin(), all.end(), 0);
  return rule.linear(Linearity::Additive, all).build();
}

/// Unpadded dimensions are parallel, padded ones permutations; padding with
/// zeros passes partial sums.
static ShardingRule padRule(PadOp op) {
  RankedTensorType result = op.getType();
  RuleBuilder rule(op);
  for (int64_t d = 0; d < result.getRank(); ++d) {
    int64_t size = result.getDimSize(d);
    bool padded = op.getLow()[d] != 0 || op.getHigh()[d] != 0;
    rule.add({d}, {d},
             padded ? ShardingFactor::permutation(size)
                    : ShardingFactor::parallel(size));
  }
  if (op.getMode() == PadMode::constant && op.getValue().isZero())
    rule.linear(Linearity::Additive, {0});
  return rule.build();
}

std::optional<ShardingRule> mlir::ober::rules::shapeRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case([](TransposeOp t) { return transposeRule(t); })
      .Case([](ReshapeOp r) { return reshapeRule(r); })
      .Case([](SliceOp s) { return sliceRule(s); })
      .Case([](SplitOp s) {
        return piecesRule(s, s.getInput(),
                          normalized(s.getAxis(), rankOf(s.getInput())));
      })
      .Case([](ConcatOp c) {
        return piecesRule(c, c.getResult(),
                          normalized(c.getAxis(), rankOf(c.getResult())));
      })
      .Case([](PadOp p) { return padRule(p); })
      .Default([](Operation *) { return std::nullopt; });
}

void mlir::ober::localizeAttributes(Operation *local,
                                    ArrayRef<int64_t> inputParts) {
  auto scaled = [&](ArrayRef<int64_t> values) {
    SmallVector<int64_t> out(values);
    for (auto [value, parts] : llvm::zip(out, inputParts))
      value /= parts;
    return out;
  };
  if (auto slice = dyn_cast<SliceOp>(local)) {
    slice.setStarts(scaled(slice.getStarts()));
    slice.setLimits(scaled(slice.getLimits()));
  } else if (auto split = dyn_cast<SplitOp>(local)) {
    // Pieces of a split dimension: each device's share of each piece.
    int64_t parts =
        inputParts[normalized(split.getAxis(), rankOf(split.getInput()))];
    SmallVector<int64_t> sizes(split.getSizes());
    for (int64_t &size : sizes)
      size /= parts;
    split.setSizes(sizes);
  } else if (auto pad = dyn_cast<PadOp>(local)) {
    pad.setLow(scaled(pad.getLow()));
    pad.setHigh(scaled(pad.getHigh()));
  }
}
