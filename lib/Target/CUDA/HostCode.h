//===- HostCode.h - what of a CUDA program runs on the host ---------------===//
//
// Part of Ober-Train. Shared by MapToGPU.cpp and HostScalars.cpp: which
// buffers the host may read, and which host loops must run on the device
// instead (they touch device memory outside any parallel loop).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_TARGET_CUDA_HOSTCODE_H
#define OBER_LIB_TARGET_CUDA_HOSTCODE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::ober::cuda {

/// Whether `op` is in device code: inside a `gpu.launch` or an
/// `scf.parallel` (each of which becomes a launch).
bool insideDeviceCode(Operation *op);

/// The buffer `value` views (through view-like ops): a function's argument,
/// an allocation or a constant global; null when it is none of these (a
/// memref.transpose, a select of two buffers, a mutable global), which may
/// alias anything.
Value rootOf(Value value);

/// Which buffers (roots) are host memory. Every buffer of a CUDA program is
/// on the device but the host's stack buffers (`memref.alloca`: the
/// deallocation helpers' pointer lists, the scalars HostScalars.cpp keeps
/// on the host) and its constant globals (the kernel library's
/// descriptors: `ober-cuda-constants-on-device` gives kernels device
/// copies of the others).
using HostRoots = llvm::function_ref<bool(Value root)>;
bool isHostMemory(Value root);

/// The memref a load or store accesses; null for any other op.
Value accessedBuffer(Operation *op);

/// A load or store of device memory.
bool deviceAccess(Operation *op, HostRoots host = isHostMemory);

/// The host loops (`scf.for`, `scf.while` outside device code) that read
/// or write device memory outside the parallel loops they hold and call
/// nothing: each runs in one thread of its own launch. A loop that calls
/// the runtime (the kernel library, collectives: a loop over micro-batches)
/// stays on the host, its body mapped as a function's is.
SmallVector<Operation *> serialLoops(func::FuncOp func,
                                     HostRoots host = isHostMemory);

/// Keeps on the host the small integer buffers the host can compute (see
/// HostScalars.cpp): they become stack buffers, and device code that reads
/// one takes the value as a launch argument.
void keepScalarsOnHost(func::FuncOp func);

} // namespace mlir::ober::cuda

#endif // OBER_LIB_TARGET_CUDA_HOSTCODE_H
