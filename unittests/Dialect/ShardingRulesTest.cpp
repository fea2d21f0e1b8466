//===- ShardingRulesTest.cpp - the sharding rule table's own checks -------===//
//
// Part of Ober-Train. `ShardingRule::verify` accepts the table's rules and
// rejects each kind of broken one; the mapping helpers on a reshape; partial
// sums through a multilinear matmul and an additive add.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/ShardingRules.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "../TestSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::ober;

namespace {
constexpr const char *kModule = R"mlir(
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %x: tensor<6x4xf32>)
    -> (tensor<4x16xf32>, tensor<2x12xf32>, tensor<4x8xf32>) {
  %0 = ober.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = ober.reshape %x : tensor<6x4xf32> to tensor<2x12xf32>
  %2 = ober.add %a, %a : tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<2x12xf32>, tensor<4x8xf32>
}
)mlir";

/// Whether `rule` verifies against `op`, counting the errors it emits.
bool verifies(const ShardingRule &rule, Operation *op, int &errors) {
  ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &) {
    ++errors;
    return success();
  });
  return succeeded(rule.verify(op));
}

/// `broken` applied to a copy of `rule` makes verify fail with an error.
template <typename Edit>
void expectRejected(const ShardingRule &rule, Operation *op, Edit broken) {
  ShardingRule copy = rule;
  broken(copy);
  int errors = 0;
  EXPECT(!verifies(copy, op, errors));
  EXPECT(errors == 1);
}

void checkMatmul(Operation *matmul) {
  std::optional<ShardingRule> rule = getShardingRule(matmul);
  EXPECT(rule.has_value());
  if (!rule)
    return;
  int errors = 0;
  EXPECT(verifies(*rule, matmul, errors) && errors == 0);
  // ([i, k], [k, j]) -> ([i, j]): k is the contraction.
  EXPECT(rule->factors.size() == 3);
  EXPECT(rule->factors[2].kind == FactorKind::Reduction);
  EXPECT(!rule->inResults(2) && rule->inResults(0) && rule->inResults(1));
  expectRejected(*rule, matmul, [](ShardingRule &r) { r.factors[0].size = 3; });
  expectRejected(*rule, matmul, [](ShardingRule &r) {
    r.factors[0].kind = FactorKind::Reduction;
  });
  expectRejected(*rule, matmul,
                 [](ShardingRule &r) { r.operands[0][1].push_back(0); });
  expectRejected(*rule, matmul,
                 [](ShardingRule &r) { r.results[0].pop_back(); });
  expectRejected(*rule, matmul, [](ShardingRule &r) { r.operands.pop_back(); });
  expectRejected(*rule, matmul,
                 [](ShardingRule &r) { r.linearOperands.push_back(2); });
  expectRejected(*rule, matmul, [](ShardingRule &r) {
    r.factors.push_back(ShardingFactor::parallel(2));
  });
}

/// Partial sums pass a matmul with one partial operand and the other whole,
/// and an add of two partial sums.
void checkLinearity(Operation *matmul, Operation *add) {
  std::optional<ShardingRule> m = getShardingRule(matmul),
                              a = getShardingRule(add);
  EXPECT(m && a);
  if (!m || !a)
    return;
  using H = Holding;
  EXPECT(m->passesPartialSums({H::PartialSum, H::Whole}));
  EXPECT(m->passesPartialSums({H::Whole, H::PartialSum}));
  EXPECT(!m->passesPartialSums({H::PartialSum, H::PartialSum}));
  EXPECT(!m->passesPartialSums({H::PartialSum, H::Other}));
  EXPECT(!m->passesPartialSums({H::Whole, H::Whole}));
  EXPECT(a->passesPartialSums({H::PartialSum, H::PartialSum}));
  EXPECT(!a->passesPartialSums({H::PartialSum, H::Whole}));
}

void checkReshape(Operation *reshape) {
  std::optional<ShardingRule> rule = getShardingRule(reshape);
  EXPECT(rule.has_value());
  if (!rule)
    return;
  int errors = 0;
  EXPECT(verifies(*rule, reshape, errors) && errors == 0);
  // ([i*j, k]) -> ([i, j*k]) {i=2, j=3, k=4}.
  const TensorMapping &in = rule->operands[0], &out = rule->results[0];
  EXPECT(ShardingRule::dimOf(in, 1) == 0 && ShardingRule::dimOf(out, 1) == 1);
  EXPECT(ShardingRule::isMajor(in, 0) && !ShardingRule::isMajor(in, 1));
  EXPECT(ShardingRule::isMajor(out, 1) && !ShardingRule::isMajor(out, 2));
  EXPECT(ShardingRule::dimOf(in, 3) == -1);
}
} // namespace

int main() {
  DialectRegistry registry;
  registry.insert<OberDialect, func::FuncDialect>();
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  EXPECT(module);
  if (!module)
    return testSummary();
  SmallVector<Operation *> ops;
  module->walk([&](Operation *op) {
    if (isa_and_nonnull<OberDialect>(op->getDialect()))
      ops.push_back(op);
  });
  EXPECT(ops.size() == 3);
  if (ops.size() == 3) {
    checkMatmul(ops[0]);
    checkReshape(ops[1]);
    checkLinearity(ops[0], ops[2]);
  }
  return testSummary();
}
