//===- ShardingRuleBuilder.h - building sharding rules ----------*- C++ -*-===//
//
// Part of Ober-Train. A small builder for `ShardingRule`s and the builders of
// each op family (ShardingRules*.cpp), which the dispatch in
// ShardingRules.cpp calls.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_DIALECT_OBER_IR_SHARDINGRULEBUILDER_H
#define OBER_LIB_DIALECT_OBER_IR_SHARDINGRULEBUILDER_H

#include "ober/Dialect/Ober/IR/ShardingRules.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ober::rules {

/// No dimension: a tensor the factor is not in.
constexpr int64_t kNone = -1;

/// Grows a rule for one op: `add` makes a factor and maps it to one
/// dimension of each operand and result (or none).
class RuleBuilder {
public:
  explicit RuleBuilder(Operation *op);

  /// Adds `factor` at dimension `operandDims[i]` of operand i and
  /// `resultDims[r]` of result r (kNone, or past the list: not there); the
  /// factor becomes the minor one of those dimensions. A factor of size 1
  /// is dropped (a size-1 dimension needs none).
  RuleBuilder &add(ArrayRef<int64_t> operandDims, ArrayRef<int64_t> resultDims,
                   ShardingFactor factor);
  /// Adds `factor` at dimension `dim` of operand `operand` only.
  RuleBuilder &addToOperand(unsigned operand, int64_t dim,
                            ShardingFactor factor);
  /// Adds `factor` at dimension `dim` of result `result` only.
  RuleBuilder &addToResult(unsigned result, int64_t dim, ShardingFactor factor);
  /// Partial sums pass through the operands `operands` as `linearity` says.
  RuleBuilder &linear(Linearity linearity, ArrayRef<unsigned> operands);

  /// The operands in `operands` are added once to the reduced result.
  RuleBuilder &added(ArrayRef<unsigned> operands);

  ShardingRule build() { return std::move(rule); }

private:
  ShardingRule rule;
};

/// The type of `v`.
inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}
inline int64_t rankOf(Value v) { return typeOf(v).getRank(); }
/// `axis` counted from the front of `rank` dimensions.
inline int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// The dimension of `operand` (of rank `rank`, NumPy-broadcast against
/// `result`) that lines up with result dimension `dim`, or kNone where it
/// is missing or broadcast.
int64_t broadcastDim(RankedTensorType operand, RankedTensorType result,
                     int64_t dim);

// One builder per op family; each returns nullopt for an op it has no rule
// for (dynamic shapes, ranks it does not know).
std::optional<ShardingRule> elementwiseRule(Operation *op);
std::optional<ShardingRule> matmulRule(Operation *op);
std::optional<ShardingRule> reductionRule(Operation *op);
std::optional<ShardingRule> shapeRule(Operation *op);
std::optional<ShardingRule> normalizationRule(Operation *op);
std::optional<ShardingRule> lossRule(Operation *op);
std::optional<ShardingRule> indexingRule(Operation *op);
std::optional<ShardingRule> convolutionRule(Operation *op);

} // namespace mlir::ober::rules

#endif // OBER_LIB_DIALECT_OBER_IR_SHARDINGRULEBUILDER_H
