//===- Devices.cpp - run an SPMD program on simulated devices -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/Devices.h"

#include "mlir/IR/BuiltinOps.h"

#include <thread>

using namespace mlir;
using namespace mlir::ober;
using reference::Tensor;
namespace rt = ::ober::rt;

shard::GridOp mlir::ober::findGrid(ModuleOp module) {
  for (auto grid : module.getOps<shard::GridOp>())
    return grid;
  return {};
}

FailureOr<rt::Split> mlir::ober::splitOf(func::FuncOp func, shard::GridOp grid,
                                         unsigned i, bool result) {
  auto type = dyn_cast<RankedTensorType>(
      result ? func.getResultTypes()[i] : func.getArgumentTypes()[i]);
  if (!type)
    return func.emitError("simulated devices take ranked tensors only");
  auto attr = result ? func.getResultAttrOfType<DenseI64ArrayAttr>(i, "ober.split")
                     : func.getArgAttrOfType<DenseI64ArrayAttr>(i, "ober.split");
  rt::Split split;
  split.axes.assign(type.getRank(), -1);
  split.groups.assign(type.getRank(), 1);
  if (!attr)
    return split;
  const char *what = result ? "result #" : "argument #";
  if (attr.size() != type.getRank())
    return func.emitError(what) << i << ": 'ober.split' has " << attr.size()
                                << " entries for a rank-" << type.getRank()
                                << " tensor";
  for (auto [d, axis] : llvm::enumerate(attr.asArrayRef())) {
    if (axis < -1 || axis >= grid.getRank())
      return func.emitError(what)
             << i << ": 'ober.split' names grid axis " << axis << " but @"
             << grid.getSymName() << " has " << grid.getRank();
    split.axes[d] = axis;
  }
  // Per dimension, the groups a split dimension is made of (each device
  // holds its block of every group).
  auto groups =
      result
          ? func.getResultAttrOfType<DenseI64ArrayAttr>(i, "ober.split_groups")
          : func.getArgAttrOfType<DenseI64ArrayAttr>(i, "ober.split_groups");
  if (groups && groups.size() == type.getRank())
    for (auto [d, g] : llvm::enumerate(groups.asArrayRef()))
      split.groups[d] = std::max<int64_t>(1, g);
  return split;
}

FailureOr<SmallVector<func::FuncOp>>
mlir::ober::stageFunctions(ModuleOp module, func::FuncOp func,
                           shard::GridOp grid, int64_t &pipelineAxis) {
  pipelineAxis = -1;
  auto names = func->getAttrOfType<ArrayAttr>("ober.stage_functions");
  if (!names)
    return SmallVector<func::FuncOp>{func};
  auto axis = func->getAttrOfType<IntegerAttr>("ober.pipeline_axis");
  if (!grid || !axis || axis.getInt() < 0 || axis.getInt() >= grid.getRank() ||
      grid.getShape()[axis.getInt()] != static_cast<int64_t>(names.size()))
    return func.emitError("'ober.stage_functions' needs an "
                          "'ober.pipeline_axis' of as many devices");
  pipelineAxis = axis.getInt();
  SmallVector<func::FuncOp> stages;
  for (auto [stage, name] : llvm::enumerate(names)) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(name);
    auto f = ref ? module.lookupSymbol<func::FuncOp>(ref) : nullptr;
    if (!f || f.getFunctionType() != func.getFunctionType())
      return func.emitError("stage ") << stage << " has no function of @"
                                      << func.getSymName() << "'s type";
    stages.push_back(f);
  }
  return stages;
}

FailureOr<RankedTensorType> mlir::ober::globalType(func::FuncOp func,
                                                   shard::GridOp grid,
                                                   unsigned i, bool result) {
  auto type = cast<RankedTensorType>(result ? func.getResultTypes()[i]
                                            : func.getArgumentTypes()[i]);
  FailureOr<rt::Split> split = splitOf(func, grid, i, result);
  if (failed(split))
    return failure();
  std::vector<int64_t> shape = rt::globalShape(
      {type.getShape().begin(), type.getShape().end()}, *split,
      rt::Grid({grid.getShape().begin(), grid.getShape().end()}));
  return RankedTensorType::get(shape, type.getElementType());
}

RankedTensorType mlir::ober::serialArgumentType(func::FuncOp func, unsigned i) {
  auto type = cast<RankedTensorType>(func.getArgumentTypes()[i]);
  auto module = func->getParentOfType<ModuleOp>();
  shard::GridOp grid = module ? findGrid(module) : shard::GridOp();
  if (!grid)
    return type;
  FailureOr<RankedTensorType> global = globalType(func, grid, i);
  return succeeded(global) ? *global : type;
}

namespace {
/// Copies between a global tensor and device `rank`'s block of it.
void copyBlock(Tensor &global, Tensor &local, const rt::Split &split,
               const rt::Grid &grid, int64_t rank, bool toLocal) {
  std::vector<int64_t> offsets =
      rt::blockOffsets({local.getShape().begin(), local.getShape().end()},
                       split, grid, grid.coordinates(rank));
  for (int64_t i = 0; i < local.getNumElements(); ++i) {
    if (toLocal)
      local.copyElement(i, global, offsets[i]);
    else
      global.copyElement(offsets[i], local, i);
  }
}
} // namespace

FailureOr<DeviceRun>
mlir::ober::runOnDevices(ModuleOp module, func::FuncOp func, shard::GridOp grid,
                         ArrayRef<Tensor> globalArgs) {
  if (auto steps = func->getAttrOfType<IntegerAttr>("ober.local_steps");
      steps && steps.getInt() > 1)
    return func.emitError("local SGD (local_steps = ")
           << steps.getInt()
           << ") runs in executables (ober-compile): the simulated devices "
              "keep one copy of each parameter, not one per replica";
  ArrayRef<int64_t> gridShape = grid.getShape();
  reference::Communicator comm(gridShape);
  int64_t n = comm.size();
  rt::Grid layout({gridShape.begin(), gridShape.end()});
  SmallVector<rt::Split> argSplits, resultSplits;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    FailureOr<rt::Split> s = splitOf(func, grid, i, false);
    if (failed(s))
      return failure();
    argSplits.push_back(*s);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    FailureOr<rt::Split> s = splitOf(func, grid, i, true);
    if (failed(s))
      return failure();
    resultSplits.push_back(*s);
  }
  // Each device's arguments.
  std::vector<SmallVector<Tensor>> args(n);
  for (int64_t r = 0; r < n; ++r)
    for (auto [i, global] : llvm::enumerate(globalArgs)) {
      auto local = cast<RankedTensorType>(func.getArgumentTypes()[i]);
      Tensor t(local.getElementType(), local.getShape());
      Tensor g = global;
      copyBlock(g, t, argSplits[i], layout, r, /*toLocal=*/true);
      args[r].push_back(std::move(t));
    }
  // Pipeline stages: each device runs its stage's program (all take and
  // return the same values; each result comes from the stage that owns it).
  int64_t pipelineAxis = -1;
  FailureOr<SmallVector<func::FuncOp>> stages =
      stageFunctions(module, func, grid, pipelineAxis);
  if (failed(stages))
    return failure();
  SmallVector<func::FuncOp> programs(n, func);
  if (pipelineAxis >= 0) {
    comm.setPipelineAxis(pipelineAxis);
    for (int64_t r = 0; r < n; ++r)
      programs[r] = (*stages)[layout.coordinates(r)[pipelineAxis]];
  }
  std::vector<FailureOr<SmallVector<Tensor>>> outs(n, failure());
  std::vector<int64_t> peaks(n), ops(n);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      reference::Interpreter interpreter(module);
      interpreter.setDevice(&comm, r);
      outs[r] = interpreter.run(programs[r], args[r]);
      peaks[r] = interpreter.getStats().peakLiveBytes;
      ops[r] = interpreter.getStats().opsExecuted;
    });
  for (std::thread &t : threads)
    t.join();
  DeviceRun run;
  run.devices = n;
  run.opsExecuted = ops.front();
  for (int64_t r = 0; r < n; ++r) {
    if (failed(outs[r]))
      return failure();
    run.peakLiveBytes = std::max(run.peakLiveBytes, peaks[r]);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    FailureOr<RankedTensorType> type = globalType(func, grid, i, true);
    if (failed(type))
      return failure();
    Tensor global(type->getElementType(), type->getShape());
    auto owner = func.getResultAttrOfType<IntegerAttr>(i, "ober.stage");
    for (int64_t r = 0; r < n; ++r) {
      if (pipelineAxis >= 0 && owner &&
          reference::Communicator::coordinates(gridShape, r)[pipelineAxis] !=
              owner.getInt())
        continue;
      copyBlock(global, (*outs[r])[i], resultSplits[i], layout, r,
                /*toLocal=*/false);
    }
    run.results.push_back(std::move(global));
  }
  run.collectives = comm.records();
  return run;
}
