//===- TestClusterPass.cpp - print a resolved cluster ---------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Cluster.h"
#include "ober/Planning/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::ober {
#define GEN_PASS_DEF_TESTCLUSTERPASS
#include "ober/Planning/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {
struct TestClusterPass
    : mlir::ober::impl::TestClusterPassBase<TestClusterPass> {
  using TestClusterPassBase::TestClusterPassBase;
  void runOnOperation() override {
    std::string error;
    std::optional<ober::planning::Cluster> c =
        ober::planning::loadCluster(cluster, ober::planning::givenCount(gpus),
                                    ober::planning::givenCount(nodes), error);
    if (!c) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    getOperation()->setAttr("ober.cluster", c->toAttr(&getContext()));
    llvm::outs() << llvm::formatv("{0:2}", c->toJSON()) << "\n";
  }
};
} // namespace
