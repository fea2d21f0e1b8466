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

shard::GridOp mlir::ober::findGrid(ModuleOp module) {
  for (auto grid : module.getOps<shard::GridOp>())
    return grid;
  return {};
}

/// The `ober.split` of an argument or result: a grid axis or -1 per
/// dimension (all -1 without the attribute).
static FailureOr<SmallVector<int64_t>> splitOf(func::FuncOp func,
                                               shard::GridOp grid, unsigned i,
                                               bool result) {
  auto type = dyn_cast<RankedTensorType>(
      result ? func.getResultTypes()[i] : func.getArgumentTypes()[i]);
  if (!type)
    return func.emitError("simulated devices take ranked tensors only");
  auto attr = result ? func.getResultAttrOfType<DenseI64ArrayAttr>(i, "ober.split")
                     : func.getArgAttrOfType<DenseI64ArrayAttr>(i, "ober.split");
  SmallVector<int64_t> split(type.getRank(), -1);
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
    split[d] = axis;
  }
  return split;
}

FailureOr<RankedTensorType> mlir::ober::globalType(func::FuncOp func,
                                                   shard::GridOp grid,
                                                   unsigned i, bool result) {
  auto type = cast<RankedTensorType>(result ? func.getResultTypes()[i]
                                            : func.getArgumentTypes()[i]);
  FailureOr<SmallVector<int64_t>> split = splitOf(func, grid, i, result);
  if (failed(split))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  for (auto [d, axis] : llvm::enumerate(*split))
    if (axis >= 0)
      shape[d] *= grid.getShape()[axis];
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

/// The `ober.split_groups` of an argument or result: per dimension, the
/// groups a split dimension is made of (each device holds its block of
/// every group); all 1 without the attribute.
static SmallVector<int64_t> groupsOf(func::FuncOp func, unsigned i,
                                     bool result) {
  auto type = cast<RankedTensorType>(result ? func.getResultTypes()[i]
                                            : func.getArgumentTypes()[i]);
  auto attr =
      result ? func.getResultAttrOfType<DenseI64ArrayAttr>(i, "ober.split_groups")
             : func.getArgAttrOfType<DenseI64ArrayAttr>(i, "ober.split_groups");
  SmallVector<int64_t> groups(type.getRank(), 1);
  if (attr && attr.size() == type.getRank())
    for (auto [d, g] : llvm::enumerate(attr.asArrayRef()))
      groups[d] = std::max<int64_t>(1, g);
  return groups;
}

namespace {
/// Copies between a global tensor and device `rank`'s block of it.
void copyBlock(Tensor &global, Tensor &local, ArrayRef<int64_t> split,
               ArrayRef<int64_t> groups, ArrayRef<int64_t> gridShape,
               int64_t rank, bool toLocal) {
  SmallVector<int64_t> coord =
      reference::Communicator::coordinates(gridShape, rank);
  SmallVector<int64_t> g = reference::stridesOf(global.getShape()),
                       l = reference::stridesOf(local.getShape());
  for (int64_t i = 0; i < local.getNumElements(); ++i) {
    int64_t offset = 0, rem = i;
    for (int64_t d = 0; d < local.getRank(); ++d) {
      int64_t c = rem / l[d];
      rem %= l[d];
      if (split[d] >= 0) {
        // Block `coord` of every group.
        int64_t block = local.getShape()[d] / groups[d];
        int64_t group = c / block, within = c % block;
        c = group * block * gridShape[split[d]] + coord[split[d]] * block +
            within;
      }
      offset += c * g[d];
    }
    if (toLocal)
      local.copyElement(i, global, offset);
    else
      global.copyElement(offset, local, i);
  }
}
} // namespace

FailureOr<DeviceRun>
mlir::ober::runOnDevices(ModuleOp module, func::FuncOp func, shard::GridOp grid,
                         ArrayRef<Tensor> globalArgs) {
  ArrayRef<int64_t> gridShape = grid.getShape();
  reference::Communicator comm(gridShape);
  int64_t n = comm.size();
  SmallVector<SmallVector<int64_t>> argSplits, resultSplits, argGroups,
      resultGroups;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    FailureOr<SmallVector<int64_t>> s = splitOf(func, grid, i, false);
    if (failed(s))
      return failure();
    argSplits.push_back(*s);
    argGroups.push_back(groupsOf(func, i, false));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    FailureOr<SmallVector<int64_t>> s = splitOf(func, grid, i, true);
    if (failed(s))
      return failure();
    resultSplits.push_back(*s);
    resultGroups.push_back(groupsOf(func, i, true));
  }
  // Each device's arguments.
  std::vector<SmallVector<Tensor>> args(n);
  for (int64_t r = 0; r < n; ++r)
    for (auto [i, global] : llvm::enumerate(globalArgs)) {
      auto local = cast<RankedTensorType>(func.getArgumentTypes()[i]);
      Tensor t(local.getElementType(), local.getShape());
      Tensor g = global;
      copyBlock(g, t, argSplits[i], argGroups[i], gridShape, r,
                /*toLocal=*/true);
      args[r].push_back(std::move(t));
    }
  // Pipeline stages: each device runs its stage's program (all take and
  // return the same values; each result comes from the stage that owns it).
  SmallVector<func::FuncOp> programs(n, func);
  int64_t pipelineAxis = -1;
  if (auto names = func->getAttrOfType<ArrayAttr>("ober.stage_functions")) {
    auto axis = func->getAttrOfType<IntegerAttr>("ober.pipeline_axis");
    if (!axis || axis.getInt() < 0 || axis.getInt() >= grid.getRank() ||
        gridShape[axis.getInt()] != static_cast<int64_t>(names.size()))
      return func.emitError("'ober.stage_functions' needs an "
                            "'ober.pipeline_axis' of as many devices");
    pipelineAxis = axis.getInt();
    comm.setPipelineAxis(pipelineAxis);
    for (int64_t r = 0; r < n; ++r) {
      int64_t stage =
          reference::Communicator::coordinates(gridShape, r)[pipelineAxis];
      auto ref = dyn_cast<FlatSymbolRefAttr>(names[stage]);
      programs[r] = ref ? module.lookupSymbol<func::FuncOp>(ref) : nullptr;
      if (!programs[r])
        return func.emitError("stage ") << stage << " has no function";
    }
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
      copyBlock(global, (*outs[r])[i], resultSplits[i], resultGroups[i],
                gridShape, r, /*toLocal=*/false);
    }
    run.results.push_back(std::move(global));
  }
  run.collectives = comm.records();
  return run;
}
