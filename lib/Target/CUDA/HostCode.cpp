//===- HostCode.cpp - what of a CUDA program runs on the host -------------===//
//
// Part of Ober-Train. See HostCode.h.
//
//===----------------------------------------------------------------------===//

#include "HostCode.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

bool ober::cuda::insideDeviceCode(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<scf::ParallelOp>();
}

namespace {
/// Whether `get` reads a constant global.
bool constantGlobal(memref::GetGlobalOp get) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  return global && global.getConstant();
}
} // namespace

Value ober::cuda::rootOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return value;
    // A constant global is a buffer of its own; a mutable one may be
    // reached by any other get_global of it.
    if (auto get = dyn_cast<memref::GetGlobalOp>(def))
      return constantGlobal(get) ? value : Value();
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return Value();
    value = view.getViewSource();
  }
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp()) ? value
                                                                 : Value();
}

bool ober::cuda::isHostMemory(Value root) {
  // Stack buffers and (rootOf) constant globals.
  return root && isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(
                     root.getDefiningOp());
}

Value ober::cuda::accessedBuffer(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRef();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getMemRef();
  return Value();
}

bool ober::cuda::deviceAccess(Operation *op, HostRoots host) {
  Value buffer = accessedBuffer(op);
  return buffer && !host(rootOf(buffer));
}

namespace {
/// Whether `op` reads or writes device memory outside the parallel loops
/// it holds (work that must run on the device, sequentially).
bool touchesMemoryOutsideParallel(Operation *op, ober::cuda::HostRoots host) {
  bool found = false;
  op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    if (isa<scf::ParallelOp>(inner))
      return WalkResult::skip();
    if (ober::cuda::deviceAccess(inner, host)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}
} // namespace

SmallVector<Operation *> ober::cuda::serialLoops(func::FuncOp func,
                                                 HostRoots host) {
  SmallVector<Operation *> serial;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp, gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (isa<scf::ForOp, scf::WhileOp>(op) &&
        touchesMemoryOutsideParallel(op, host)) {
      bool calls = false;
      op->walk([&](CallOpInterface) { calls = true; });
      if (calls)
        return WalkResult::advance();
      serial.push_back(op);
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return serial;
}
