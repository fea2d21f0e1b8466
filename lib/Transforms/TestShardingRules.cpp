//===- TestShardingRules.cpp - print the sharding rule of each op ---------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/ShardingRules.h"
#include "ober/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {
#define GEN_PASS_DEF_TESTSHARDINGRULESPASS
#include "ober/Transforms/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;

namespace {
struct TestShardingRulesPass
    : ober::impl::TestShardingRulesPassBase<TestShardingRulesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(print(func)))
        return signalPassFailure();
  }

  /// Prints the rule of each op of `func`; fails on a rule that does not
  /// match its op.
  static LogicalResult print(func::FuncOp func) {
    llvm::outs() << "rules of @" << func.getSymName() << "\n";
    WalkResult walk = func.walk([&](Operation *op) {
      if (op == func || op->hasTrait<OpTrait::IsTerminator>())
        return WalkResult::advance();
      llvm::outs() << op->getName() << ": ";
      std::optional<ShardingRule> rule = getShardingRule(op);
      if (!rule) {
        llvm::outs() << "none\n";
        return WalkResult::advance();
      }
      if (failed(rule->verify(op)))
        return WalkResult::interrupt();
      rule->print(llvm::outs());
      llvm::outs() << "\n";
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};
} // namespace
