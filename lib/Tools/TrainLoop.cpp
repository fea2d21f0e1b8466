//===- TrainLoop.cpp - run a train_step on the reference interpreter ------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/TrainLoop.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Reference/Interpreter.h"
#include "ober/Tools/CompiledRun.h"
#include "ober/Tools/Devices.h"
#include "ober/Runtime/Batches.h"
#include "ober/Training/TrainStep.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::ober;

func::FuncOp mlir::ober::trainStepIn(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(OberDialect::kTrainStepAttrName))
      return f;
  return nullptr;
}

func::FuncOp mlir::ober::findTrainStep(ModuleOp module, StringRef name) {
  if (!name.empty())
    return module.lookupSymbol<func::FuncOp>(name);
  if (func::FuncOp step = trainStepIn(module))
    return step;
  emitError(module.getLoc())
      << "no train step in the module: build one with "
         "--ober-build-train-step, or name it with --function";
  return nullptr;
}

/// Batch `t` for step `i` by the runtime's rule (ober/Runtime/Batches.h):
/// itself, its micro-batches' samples merged, or its slice `i` when it
/// carries a leading steps dimension.
static FailureOr<reference::Tensor> batchForStep(func::FuncOp step,
                                                 const reference::Tensor &t,
                                                 RankedTensorType type,
                                                 int64_t i, StringRef name) {
  std::vector<int64_t> file(t.getShape().begin(), t.getShape().end()),
      arg(type.getShape().begin(), type.getShape().end());
  ::ober::rt::BatchLayout layout = ::ober::rt::batchLayout(file, arg);
  if (layout == ::ober::rt::BatchLayout::Mismatch ||
      t.getElementType() != type.getElementType())
    return step.emitError()
           << name << " should be " << type << " (or have a leading steps "
           << "dimension, or its micro-batches merged), got "
           << RankedTensorType::get(t.getShape(), t.getElementType());
  if (layout == ::ober::rt::BatchLayout::Whole)
    return t;
  int64_t offset = ::ober::rt::batchOffset(layout, file, arg, i);
  reference::Tensor slice(type.getElementType(), type.getShape());
  for (int64_t k = 0, e = slice.getNumElements(); k < e; ++k)
    slice.copyElement(k, t, offset + k);
  return slice;
}

FailureOr<std::map<std::string, reference::Tensor>>
mlir::ober::runTrainLoop(ModuleOp module, func::FuncOp step,
                         const TrainLoopOptions &options,
                         llvm::raw_ostream &os) {
  unsigned numArgs = step.getNumArguments();
  SmallVector<unsigned> paramArgs, stateArgs, batchArgs;
  std::optional<unsigned> lrArg;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (step.getArgAttr(i, OberDialect::kParamAttrName))
      paramArgs.push_back(i);
    else if (step.getArgAttr(i, OberDialect::kStateAttrName))
      stateArgs.push_back(i);
    else if (step.getArgAttr(i, OberDialect::kBatchAttrName) ||
             step.getArgAttr(i, OberDialect::kInputAttrName))
      batchArgs.push_back(i);
    else if (step.getArgAttr(i, OberDialect::kLearningRateAttrName))
      lrArg = i;
    else
      return step.emitError("argument #")
             << i << " is not a parameter, optimizer state, batch or other "
             << "input, or learning rate: not a train step";
  }
  // Parameters, state, the loss and (when built with grad-norm) the
  // gradient norm.
  size_t lossResult = paramArgs.size() + stateArgs.size();
  if (!lrArg ||
      step.getNumResults() != lossResult + 1 + (returnsGradNorm(step) ? 1 : 0))
    return step.emitError("not a train step: it needs an 'ober.lr' argument "
                          "and returns parameters, state and the loss");
  if (options.batches.size() != batchArgs.size())
    return step.emitError("the train step takes ")
           << batchArgs.size() << " batch input(s), got "
           << options.batches.size();

  SmallVector<reference::Tensor> args(numArgs);
  for (unsigned i : paramArgs) {
    auto it = options.parameters.find(i);
    if (it == options.parameters.end())
      return step.emitError("no value for parameter argument #") << i;
    args[i] = it->second;
  }
  for (unsigned i : stateArgs) {
    RankedTensorType t = serialArgumentType(step, i);
    args[i] = reference::Tensor(t.getElementType(), t.getShape());
  }
  RankedTensorType lrType = serialArgumentType(step, *lrArg);
  args[*lrArg] = reference::Tensor(lrType.getElementType(), {});

  reference::Interpreter interpreter(module);
  shard::GridOp grid = findGrid(module);
  std::unique_ptr<CompiledFunction> compiled;
  if (options.compiled) {
    if (grid)
      return step.emitError("a compiled step runs on one device; this module "
                            "has simulated devices");
    FailureOr<std::unique_ptr<CompiledFunction>> c =
        CompiledFunction::compile(module, step);
    if (failed(c))
      return failure();
    compiled = std::move(*c);
  }
  reference::RunStats deviceStats;
  SmallVector<RankedTensorType> batchTypes;
  SmallVector<std::string> batchNames;
  for (auto [k, i] : llvm::enumerate(batchArgs)) {
    batchTypes.push_back(serialArgumentType(step, i));
    batchNames.push_back(k < options.batchNames.size()
                             ? options.batchNames[k]
                             : "batch input #" + std::to_string(k));
  }
  for (int64_t s = 0; s < options.steps; ++s) {
    for (auto [k, i] : llvm::enumerate(batchArgs)) {
      FailureOr<reference::Tensor> b = batchForStep(
          step, options.batches[k], batchTypes[k], s, batchNames[k]);
      if (failed(b))
        return failure();
      args[i] = std::move(*b);
    }
    args[*lrArg].setFloat(0, options.lr.at(s));
    FailureOr<SmallVector<reference::Tensor>> results = failure();
    if (grid) {
      FailureOr<DeviceRun> run = runOnDevices(module, step, grid, args);
      if (failed(run))
        return failure();
      results = std::move(run->results);
      deviceStats.peakLiveBytes =
          std::max(deviceStats.peakLiveBytes, run->peakLiveBytes);
      deviceStats.opsExecuted += run->opsExecuted;
      if (options.collectives && s == 0)
        *options.collectives = run->collectives;
      if (options.devices)
        *options.devices = run->devices;
    } else if (compiled) {
      results = compiled->run(args);
    } else {
      results = interpreter.run(step, args);
    }
    if (failed(results))
      return failure();
    size_t r = 0;
    for (unsigned i : paramArgs)
      args[i] = (*results)[r++];
    for (unsigned i : stateArgs)
      args[i] = (*results)[r++];
    os << "step " << s << " loss "
       << llvm::format("%.9g", (*results)[lossResult].getFloat(0)) << "\n";
  }
  if (options.stats)
    *options.stats = grid ? deviceStats : interpreter.getStats();
  std::map<std::string, reference::Tensor> finalParams;
  for (unsigned i : paramArgs)
    finalParams[step.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName)
                    .getValue()
                    .str()] = args[i];
  return finalParams;
}
