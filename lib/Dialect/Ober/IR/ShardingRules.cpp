//===- ShardingRules.cpp - the sharding rule table: data and dispatch -----===//
//
// Part of Ober-Train. `ShardingRule`'s checks and printing, the rule builder,
// and `getShardingRule`, which asks each op family's builder
// (ShardingRules*.cpp) in turn.
//
//===----------------------------------------------------------------------===//

#include "ShardingRuleBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::rules;

//===----------------------------------------------------------------------===//
// ShardingRule
//===----------------------------------------------------------------------===//

int64_t ShardingRule::dimOf(const TensorMapping &tensor, unsigned factor) {
  for (auto [d, dim] : llvm::enumerate(tensor))
    if (llvm::is_contained(dim, factor))
      return static_cast<int64_t>(d);
  return kNone;
}

bool ShardingRule::isMajor(const TensorMapping &tensor, unsigned factor) {
  int64_t d = dimOf(tensor, factor);
  return d != kNone && tensor[d].front() == factor;
}

bool ShardingRule::inResults(unsigned factor) const {
  return llvm::any_of(results, [&](const TensorMapping &t) {
    return dimOf(t, factor) != kNone;
  });
}

bool ShardingRule::passesPartialSums(ArrayRef<Holding> holdings) const {
  unsigned partials = llvm::count(holdings, Holding::PartialSum);
  if (partials == 0 || linearity == Linearity::None ||
      (linearity == Linearity::Multilinear && partials != 1))
    return false;
  for (auto [i, holding] : llvm::enumerate(holdings)) {
    bool linear = llvm::is_contained(linearOperands, i);
    bool partial = holding == Holding::PartialSum;
    if (holding == Holding::Other || (partial && !linear) ||
        (!partial && linear && linearity == Linearity::Additive))
      return false;
  }
  return true;
}

/// Checks one tensor's mapping against its type.
static LogicalResult verifyTensor(const ShardingRule &rule,
                                  const TensorMapping &mapping, Type type,
                                  StringRef what, unsigned index,
                                  Operation *op) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  auto error = [&]() {
    return op->emitError("sharding rule: ") << what << " " << index << " ";
  };
  if (!ranked || ranked.getRank() != static_cast<int64_t>(mapping.size()))
    return error() << "has " << mapping.size() << " mapped dimensions for "
                   << type;
  SmallVector<bool> seen(rule.factors.size(), false);
  for (auto [d, dim] : llvm::enumerate(mapping)) {
    int64_t product = 1;
    bool permutation = false;
    for (unsigned f : dim) {
      if (f >= rule.factors.size() || seen[f])
        return error() << "maps factor " << f << " twice or out of range";
      seen[f] = true;
      product *= rule.factors[f].size;
      permutation |= rule.factors[f].kind == FactorKind::Permutation;
    }
    int64_t size = ranked.getDimSize(d);
    if (permutation ? (dim.size() != 1 || size > product) : size != product)
      return error() << "dimension " << d << " of size " << size
                     << " does not match its factors";
  }
  return success();
}

LogicalResult ShardingRule::verify(Operation *op) const {
  if (operands.size() != op->getNumOperands() ||
      results.size() != op->getNumResults())
    return op->emitError("sharding rule: ")
           << operands.size() << " operand and " << results.size()
           << " result mappings for " << op->getNumOperands() << " and "
           << op->getNumResults();
  for (auto [i, mapping] : llvm::enumerate(operands))
    if (failed(verifyTensor(*this, mapping, op->getOperand(i).getType(),
                            "operand", i, op)))
      return failure();
  for (auto [r, mapping] : llvm::enumerate(results))
    if (failed(verifyTensor(*this, mapping, op->getResult(r).getType(),
                            "result", r, op)))
      return failure();
  for (unsigned f = 0; f < factors.size(); ++f) {
    const ShardingFactor &factor = factors[f];
    bool used = inResults(f) || llvm::any_of(operands, [&](auto &t) {
                  return dimOf(t, f) != kNone;
                });
    if (factor.size < 2 || !used)
      return op->emitError("sharding rule: factor ")
             << f << " is unused or of size " << factor.size;
    if (factor.kind == FactorKind::Reduction && inResults(f))
      return op->emitError("sharding rule: reduction factor ")
             << f << " is in a result";
  }
  for (unsigned i : llvm::concat<const unsigned>(linearOperands, addedOperands))
    if (i >= operands.size())
      return op->emitError("sharding rule: operand ") << i << " out of range";
  if ((linearity == Linearity::None) != linearOperands.empty())
    return op->emitError("sharding rule: linear operands without linearity");
  return success();
}

/// i, j, ..., z, then f26, f27, ...
static std::string factorName(unsigned f) {
  if (f < 18)
    return std::string(1, static_cast<char>('i' + f));
  return "f" + std::to_string(f);
}

static void printTensors(raw_ostream &os, ArrayRef<TensorMapping> tensors) {
  os << "(";
  llvm::interleaveComma(tensors, os, [&](const TensorMapping &t) {
    os << "[";
    llvm::interleaveComma(t, os, [&](const DimMapping &dim) {
      if (dim.empty())
        os << "1";
      llvm::interleave(
          dim, os, [&](unsigned f) { os << factorName(f); }, "*");
    });
    os << "]";
  });
  os << ")";
}

/// ` kind={i, j:sum}` for the factors of `kind`, nothing when none.
static void printKind(raw_ostream &os, const ShardingRule &rule,
                      FactorKind kind, StringRef name) {
  SmallVector<unsigned> of;
  for (auto [f, factor] : llvm::enumerate(rule.factors))
    if (factor.kind == kind)
      of.push_back(f);
  if (of.empty())
    return;
  os << " " << name << "={";
  llvm::interleaveComma(of, os, [&](unsigned f) {
    const ShardingFactor &factor = rule.factors[f];
    os << factorName(f);
    if (kind == FactorKind::Reduction)
      os << ":" << shard::stringifyReductionKind(factor.reduction)
         << (factor.mean ? "/mean" : "");
    if (kind == FactorKind::Statistics)
      os << ":" << factor.statistics;
  });
  os << "}";
}

void ShardingRule::print(raw_ostream &os) const {
  printTensors(os, operands);
  os << " -> ";
  printTensors(os, results);
  os << " {";
  llvm::interleaveComma(
      llvm::seq<unsigned>(0, factors.size()), os,
      [&](unsigned f) { os << factorName(f) << "=" << factors[f].size; });
  os << "}";
  printKind(os, *this, FactorKind::Reduction, "reduction");
  printKind(os, *this, FactorKind::Statistics, "statistics");
  printKind(os, *this, FactorKind::NeedReplication, "replication");
  printKind(os, *this, FactorKind::Permutation, "permutation");
  SmallVector<unsigned> indexed;
  for (auto [f, factor] : llvm::enumerate(factors))
    if (factor.indexed)
      indexed.push_back(f);
  if (!indexed.empty()) {
    os << " indexed={";
    llvm::interleaveComma(indexed, os,
                          [&](unsigned f) { os << factorName(f); });
    os << "}";
  }
  if (linearity != Linearity::None) {
    os << (linearity == Linearity::Additive ? " additive=" : " multilinear=")
       << "(";
    llvm::interleaveComma(linearOperands, os);
    os << ")";
  }
  if (!addedOperands.empty()) {
    os << " added=(";
    llvm::interleaveComma(addedOperands, os);
    os << ")";
  }
}

//===----------------------------------------------------------------------===//
// RuleBuilder
//===----------------------------------------------------------------------===//

RuleBuilder::RuleBuilder(Operation *op) {
  for (Value v : op->getOperands())
    rule.operands.emplace_back(rankOf(v));
  for (Value v : op->getResults())
    rule.results.emplace_back(rankOf(v));
}

/// Maps `factor` into `tensors[i]` at `dims[i]`.
static void place(SmallVectorImpl<TensorMapping> &tensors,
                  ArrayRef<int64_t> dims, unsigned factor) {
  for (auto [i, dim] : llvm::enumerate(dims))
    if (dim != kNone && i < tensors.size())
      tensors[i][dim].push_back(factor);
}

RuleBuilder &RuleBuilder::add(ArrayRef<int64_t> operandDims,
                              ArrayRef<int64_t> resultDims,
                              ShardingFactor factor) {
  if (factor.size == 1)
    return *this;
  unsigned f = rule.factors.size();
  rule.factors.push_back(factor);
  place(rule.operands, operandDims, f);
  place(rule.results, resultDims, f);
  return *this;
}

RuleBuilder &RuleBuilder::addToOperand(unsigned operand, int64_t dim,
                                       ShardingFactor factor) {
  SmallVector<int64_t> dims(operand + 1, kNone);
  dims[operand] = dim;
  return add(dims, {}, factor);
}

RuleBuilder &RuleBuilder::addToResult(unsigned result, int64_t dim,
                                      ShardingFactor factor) {
  SmallVector<int64_t> dims(result + 1, kNone);
  dims[result] = dim;
  return add({}, dims, factor);
}

RuleBuilder &RuleBuilder::added(ArrayRef<unsigned> operands) {
  rule.addedOperands.assign(operands.begin(), operands.end());
  return *this;
}

RuleBuilder &RuleBuilder::linear(Linearity linearity,
                                 ArrayRef<unsigned> operands) {
  rule.linearity = linearity;
  rule.linearOperands.assign(operands.begin(), operands.end());
  return *this;
}

int64_t mlir::ober::rules::broadcastDim(RankedTensorType operand,
                                        RankedTensorType result, int64_t dim) {
  int64_t d = dim - (result.getRank() - operand.getRank());
  if (d < 0 || operand.getDimSize(d) != result.getDimSize(dim))
    return kNone;
  return d;
}

//===----------------------------------------------------------------------===//
// getShardingRule
//===----------------------------------------------------------------------===//

static bool hasStaticTensors(Operation *op) {
  auto isStatic = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

std::optional<ShardingRule> mlir::ober::getShardingRule(Operation *op) {
  if (op->getNumOperands() == 0 || !hasStaticTensors(op))
    return std::nullopt;
  for (auto family :
       {elementwiseRule, matmulRule, reductionRule, shapeRule,
        normalizationRule, lossRule, indexingRule, convolutionRule})
    if (std::optional<ShardingRule> rule = family(op))
      return rule;
  return std::nullopt;
}
