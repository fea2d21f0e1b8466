//===- Devices.h - run an SPMD program on simulated devices -----*- C++ -*-===//
//
// Part of Ober-Train. A partitioned function takes and returns per-device
// blocks; the attribute `ober.split` on an argument or result (one entry
// per dimension: the grid axis that splits it, or -1) says how the global
// tensor is cut. This runs the function on one thread per device of the
// module's `shard.grid`, cutting the global inputs and assembling the
// global results.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_DEVICES_H
#define OBER_TOOLS_DEVICES_H

#include "ober/Reference/Collectives.h"
#include "ober/Reference/Interpreter.h"
#include "ober/Runtime/Grid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::ober {

/// The module's device grid, if it has one.
shard::GridOp findGrid(ModuleOp module);

/// How argument `i` (or result `i` with `result`) of `func` is cut over
/// `grid`: its `ober.split` and `ober.split_groups` (whole without them).
FailureOr<::ober::rt::Split> splitOf(func::FuncOp func, shard::GridOp grid,
                                     unsigned i, bool result = false);

/// The functions of `func`'s pipeline stages, by stage (`ober.stage_functions`
/// on it, along the grid axis `ober.pipeline_axis`), or just `func`;
/// `pipelineAxis` is set to that axis (-1 without stages).
FailureOr<SmallVector<func::FuncOp>> stageFunctions(ModuleOp module,
                                                    func::FuncOp func,
                                                    shard::GridOp grid,
                                                    int64_t &pipelineAxis);

/// The global type of argument `i` (or result `i` with `result`) of `func`.
FailureOr<RankedTensorType> globalType(func::FuncOp func, shard::GridOp grid,
                                       unsigned i, bool result = false);

/// The type of argument `i` of `func` as a whole program sees it: its
/// global type when the module has a grid, else its own type.
RankedTensorType serialArgumentType(func::FuncOp func, unsigned i);

struct DeviceRun {
  SmallVector<reference::Tensor> results;
  std::vector<reference::CollectiveRecord> collectives;
  /// The largest peak of live bytes over the devices, and the ops device 0
  /// ran.
  int64_t peakLiveBytes = 0, opsExecuted = 0;
  int64_t devices = 1;
};

/// Runs `func` on every device of `grid` with `globalArgs` cut by the
/// arguments' `ober.split`.
FailureOr<DeviceRun> runOnDevices(ModuleOp module, func::FuncOp func,
                                  shard::GridOp grid,
                                  ArrayRef<reference::Tensor> globalArgs);

} // namespace mlir::ober

#endif // OBER_TOOLS_DEVICES_H
