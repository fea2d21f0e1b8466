//===- TestCostPass.cpp - print cost-model totals -------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/CostModel.h"
#include "ober/Planning/MemoryModel.h"
#include "ober/Planning/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {
#define GEN_PASS_DEF_TESTCOSTPASS
#include "ober/Planning/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober::planning;

namespace {
struct TestCostPass : mlir::ober::impl::TestCostPassBase<TestCostPass> {
  using TestCostPassBase::TestCostPassBase;
  void runOnOperation() override {
    std::string error;
    std::optional<Cluster> c = loadCluster(cluster, std::nullopt, std::nullopt, error);
    if (!c || failed(setLowering(*c, attention, attentionBlock, convolutions,
                                 error))) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    for (auto f : getOperation().getOps<func::FuncOp>()) {
      if (f.isExternal())
        continue;
      double matmulFlops = 0, otherFlops = 0, bytes = 0, seconds = 0;
      f.walk([&](Operation *op) {
        if (op->getNumResults() == 0 || !op->getDialect() ||
            op->getDialect()->getNamespace() != "ober")
          return;
        OpWork w = workOf(op, 0, c->attention);
        (w.matmul ? matmulFlops : otherFlops) += w.flops;
        // A convolution's gather of its windows, as a kernel of its own.
        double gather = convolutionGatherBytes(op, *c);
        bytes += w.bytes + gather;
        Type element = getElementTypeOrSelf(op->getResult(0).getType());
        seconds += computeTime(w, element, *c) + memorySeconds(c->device, gather);
      });
      FailureOr<int64_t> peak = peakLiveBytes(f);
      if (failed(peak))
        return signalPassFailure();
      llvm::outs() << "cost @" << f.getSymName() << " on " << c->name
                   << ": matmul_flops " << llvm::format("%.0f", matmulFlops)
                   << " other_flops " << llvm::format("%.0f", otherFlops)
                   << " bytes " << llvm::format("%.0f", bytes) << " seconds "
                   << llvm::format("%.6g", seconds) << " peak_live_bytes "
                   << *peak << " saved_activation_bytes "
                   << savedActivationBytes(f) << "\n";
    }
  }
};
} // namespace
