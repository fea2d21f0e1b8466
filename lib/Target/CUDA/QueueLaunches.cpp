//===- QueueLaunches.cpp - kernel launches without a wait each ------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::ober {
#define GEN_PASS_DEF_QUEUELAUNCHESPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

struct QueueLaunches
    : public ober::impl::QueueLaunchesPassBase<QueueLaunches> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<gpu::LaunchFuncOp> launches;
    func.walk([&](gpu::LaunchFuncOp launch) {
      // Launches already ordered by tokens of their own are left alone.
      if (!launch.getAsyncToken() && launch.getAsyncDependencies().empty())
        launches.push_back(launch);
    });
    if (launches.empty())
      return;
    OpBuilder b(func.getBody());
    Type tokenType = b.getType<gpu::AsyncTokenType>();
    Value stream =
        gpu::WaitOp::create(b, func.getLoc(), tokenType, ValueRange())
            .getAsyncToken();
    for (gpu::LaunchFuncOp launch : launches) {
      b.setInsertionPoint(launch);
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      gpu::LaunchFuncOp::create(
          b, launch.getLoc(), launch.getKernelAttr(),
          launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, ValueRange{stream}, cluster);
      launch.erase();
    }
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      gpu::WaitOp::create(b, ret.getLoc(), Type(), ValueRange{stream});
    });
  }
};

} // namespace
