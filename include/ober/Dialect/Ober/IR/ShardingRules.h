//===- ShardingRules.h - one table of per-op sharding rules -----*- C++ -*-===//
//
// Part of Ober-Train. How each ober op may be split over devices, in the
// factor form of Shardy's `OpShardingRule`: the op's iteration space is a
// list of factors (each with a size); every dimension of every operand and
// result is made of factors (none for a size-1 dimension, one usually,
// several, major first, where a reshape merges dimensions); each factor has
// a kind saying what splitting it costs. The planner prices from this
// table, the partitioner rewrites from it, and the upstream
// `ShardingInterface` models are generated from it: it is the one place a
// sharding rule is written.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_SHARDINGRULES_H
#define OBER_DIALECT_OBER_IR_SHARDINGRULES_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::ober {

/// What a split of one factor does to its op.
enum class FactorKind : uint8_t {
  /// Every tensor holding the factor is split alike and each device
  /// computes its block alone (a batch, a matmul's rows or columns).
  Parallel,
  /// Contracted or reduced: operands split on it leave partial results of
  /// the factor's reduction kind, completed by an all-reduce (or a
  /// reduce-scatter). Never in a result.
  Reduction,
  /// The op reduces over the factor internally and then uses the whole
  /// reduction (a softmax axis, normalized dimensions, a cross-entropy's
  /// classes): a split runs the op's distributed form, all-reducing
  /// `statistics` values per slice; the result stays split.
  Statistics,
  /// A split must be gathered first (a dropout mask's positions, attention
  /// keys, a convolution kernel's window).
  NeedReplication,
  /// A split needs elements of neighbouring blocks (a halo or a collective
  /// permute): a convolution's or pooling's spatial dimension, a sliced,
  /// padded or concatenated dimension. Its size is that of the largest
  /// dimension it maps to; the dimensions may be smaller.
  Permutation,
};

/// One factor of an op's iteration space.
struct ShardingFactor {
  int64_t size = 1;
  FactorKind kind = FactorKind::Parallel;
  /// Reduction: how the partial results combine.
  shard::ReductionKind reduction = shard::ReductionKind::Sum;
  /// Reduction: each device's result is a mean of its block, divided by
  /// the parts to make a partial sum (reduce_mean, a mean loss).
  bool mean = false;
  /// Statistics: values per slice the distributed form all-reduces.
  int64_t statistics = 0;
  /// Addressed by the values of an index operand (a table's rows, a
  /// one_hot's classes): a device holding a block shifts the indices by
  /// its offset and masks those outside it.
  bool indexed = false;

  static ShardingFactor parallel(int64_t size) { return {size}; }
  static ShardingFactor
  reduced(int64_t size, shard::ReductionKind kind = shard::ReductionKind::Sum,
          bool mean = false) {
    return {size, FactorKind::Reduction, kind, mean};
  }
  static ShardingFactor withStatistics(int64_t size, int64_t values) {
    return {size, FactorKind::Statistics, shard::ReductionKind::Sum, false,
            values};
  }
  static ShardingFactor replicated(int64_t size) {
    return {size, FactorKind::NeedReplication};
  }
  static ShardingFactor permutation(int64_t size) {
    return {size, FactorKind::Permutation};
  }
  /// The same factor, addressed by index values.
  ShardingFactor byIndex() const {
    ShardingFactor f = *this;
    f.indexed = true;
    return f;
  }
};

/// The factors one tensor dimension is made of, major first.
using DimMapping = SmallVector<unsigned, 1>;
/// One mapping per dimension of a tensor.
using TensorMapping = SmallVector<DimMapping, 4>;

/// How partial sums pass through an op.
enum class Linearity : uint8_t {
  /// They do not: partial operands are completed first.
  None,
  /// Partial sums in every operand of `linearOperands`, the others whole,
  /// give partial sums (add, sub, a transpose, a reduce_sum).
  Additive,
  /// A partial sum in exactly one operand of `linearOperands`, the others
  /// whole, gives partial sums (mul, a matmul, a division by whole values).
  Multilinear,
};

/// How one operand is held along a grid axis, as far as partial sums go.
enum class Holding : uint8_t { Whole, PartialSum, Other };

/// The sharding rule of one op.
struct ShardingRule {
  SmallVector<ShardingFactor> factors;
  SmallVector<TensorMapping> operands, results;
  Linearity linearity = Linearity::None;
  SmallVector<unsigned, 2> linearOperands;
  /// Operands added once to the reduced result (a convolution's bias,
  /// scatter_add's input): a split reduction factor leaves partial sums
  /// only where these are partial sums too (zeros are).
  SmallVector<unsigned, 1> addedOperands;

  /// The dimension of `tensor` holding `factor`, or -1.
  static int64_t dimOf(const TensorMapping &tensor, unsigned factor);
  /// Whether `factor` is the major (outermost) factor of its dimension of
  /// `tensor`, so that a block split of the factor is a block split of the
  /// dimension.
  static bool isMajor(const TensorMapping &tensor, unsigned factor);
  /// Whether a factor appears in some result.
  bool inResults(unsigned factor) const;
  /// Whether partial sums pass the op with its operands held as `operands`
  /// (its results are then partial sums): some operand is a partial sum,
  /// every linear operand is one (additive) or exactly one is
  /// (multilinear), and every other operand is whole.
  bool passesPartialSums(ArrayRef<Holding> operands) const;

  /// Checks the rule against `op`'s operand and result types: one mapping
  /// per tensor and dimension, factors in range and at most once per
  /// tensor, dimension sizes the product of their factors (at most a
  /// permutation factor's size), no reduction factor in a result, linear
  /// operands in range. Errors are emitted on `op`.
  LogicalResult verify(Operation *op) const;
  /// `([i, j], [j, k]) -> ([i, k]) {i=4, j=8, k=16} reduction={j:sum}`
  /// with factors named i, j, k, ... in order (f<n> after z).
  void print(raw_ostream &os) const;
};

/// Whether sequence parallelism splits a value of `rank` by its tokens
/// (dimension rank - 2) where it enters the token-split region: one with a
/// sequence ([samples, tokens, ...]), or rows every sample shares
/// (positions: not `rowsOfSamples`). A [samples, features] activation has
/// no tokens; its samples are data parallelism's. The partitioner splits by
/// this and the planner prices by it.
inline bool hasTokens(int64_t rank, bool rowsOfSamples) {
  return rank >= 3 || (rank == 2 && !rowsOfSamples);
}

/// The rule of `op`, or nullopt when it has none (it then runs on whole
/// operands). Ops with dynamic shapes have none.
std::optional<ShardingRule> getShardingRule(Operation *op);

/// Scales the attributes of `local`, a copy of an op on local blocks whose
/// first operand is split into `inputParts[d]` blocks along each dimension
/// d, to those blocks: a slice's starts and limits, a split's sizes (when
/// its axis is split), a pad's low and high. Other ops are left alone.
void localizeAttributes(Operation *local, ArrayRef<int64_t> inputParts);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_SHARDINGRULES_H
