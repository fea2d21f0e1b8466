//===- TestLaunchesOnHost.cpp - a launch's threads as host loops ----------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "ober/Runtime/CUDAKernels.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::ober {
#define GEN_PASS_DEF_TESTLAUNCHESONHOSTPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// The ranked buffer an upload's operand casts, or null.
Value rankedSource(Value v) {
  auto cast = v.getDefiningOp<memref::CastOp>();
  if (!cast || !isa<MemRefType>(cast.getSource().getType()))
    return nullptr;
  return cast.getSource();
}

/// `ober_rt_cuda_upload_<bits>bit(dst, src)` as `memref.copy src, dst`.
LogicalResult uploadOnHost(func::CallOp call) {
  Value dst, src;
  if (call.getNumOperands() == 2) {
    dst = rankedSource(call.getOperand(0));
    src = rankedSource(call.getOperand(1));
  }
  if (!dst || !src)
    return call.emitOpError("copies to the device on the host only from "
                            "and to casts of ranked buffers");
  OpBuilder b(call);
  memref::CopyOp::create(b, call.getLoc(), src, dst);
  call.erase();
  return success();
}

struct TestLaunchesOnHost
    : public mlir::ober::impl::TestLaunchesOnHostPassBase<TestLaunchesOnHost> {
  void runOnOperation() override {
    SmallVector<func::CallOp> uploads;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(OBER_RT_CUDA_UPLOAD))
        uploads.push_back(call);
    });
    for (func::CallOp call : uploads)
      if (failed(uploadOnHost(call)))
        return signalPassFailure();
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches) {
      Region &body = launch.getBody();
      if (!body.hasOneBlock() || launch.getAsyncToken() ||
          launch.getClusterSizeX()) {
        launch.emitOpError("runs on the host only with one block of body, "
                           "synchronously and without clusters");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      // Outermost first: blocks z, y, x, then threads z, y, x, each from its
      // last to its first.
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues(),
                      block = launch.getBlockSizeOperandValues();
      gpu::KernelDim3 blockIds = launch.getBlockIds(),
                      threadIds = launch.getThreadIds();
      IRMapping map;
      for (auto [id, size] :
           {std::pair(blockIds.z, grid.z), {blockIds.y, grid.y},
            {blockIds.x, grid.x}, {threadIds.z, block.z},
            {threadIds.y, block.y}, {threadIds.x, block.x}}) {
        auto loop = scf::ForOp::create(b, loc, zero, size, one);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        // Last first: size - 1 - i.
        Value last = arith::SubIOp::create(b, loc, size, one);
        map.map(id,
                arith::SubIOp::create(b, loc, last, loop.getInductionVar()));
      }
      gpu::KernelDim3 gridArgs = launch.getGridSize(),
                      blockArgs = launch.getBlockSize();
      map.map(gridArgs.x, grid.x);
      map.map(gridArgs.y, grid.y);
      map.map(gridArgs.z, grid.z);
      map.map(blockArgs.x, block.x);
      map.map(blockArgs.y, block.y);
      map.map(blockArgs.z, block.z);
      for (Operation &op : body.front().without_terminator())
        b.clone(op, map);
      launch.erase();
    }
  }
};

} // namespace
