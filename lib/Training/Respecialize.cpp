//===- Respecialize.cpp - a train step built again for another batch ------===//
//
// Part of Ober-Train. The loss function a step differentiates is
// re-specialised to the new batch (refineFunctionShapes), and its gradient
// function and the step are built again from it by the builder's own code,
// so that every shape and every constant that depends on the batch (a mean's
// divisor) is what --ober-build-train-step would give. The plan's
// annotations on the old gradient function carry over op for op.
//
//===----------------------------------------------------------------------===//

#include "StepBuilder.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Training/TrainStep.h"
#include "ober/Transforms/RefineShapes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

namespace {
/// The gradient function `step` calls (null when it calls none), in its
/// body or its micro-batch loop.
func::FuncOp gradientOf(func::FuncOp step) {
  func::FuncOp grad;
  step.walk([&](func::CallOp call) {
    grad = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        step, call.getCalleeAttr());
    return WalkResult::interrupt();
  });
  return grad;
}

/// The step's data inputs (`ober.batch` and `ober.input`), in order: the
/// loss function's arguments that are not parameters, in order.
SmallVector<unsigned> dataArguments(func::FuncOp step) {
  SmallVector<unsigned> data;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, OberDialect::kBatchAttrName) ||
        step.getArgAttr(i, OberDialect::kInputAttrName))
      data.push_back(i);
  return data;
}

/// Copies the annotations of `from`'s ops and arguments that `to` lacks,
/// op for op; fails when the two differ in their ops.
LogicalResult carryAnnotations(func::FuncOp from, func::FuncOp to) {
  SmallVector<Operation *> a, b;
  from.walk([&](Operation *op) { a.push_back(op); });
  to.walk([&](Operation *op) { b.push_back(op); });
  auto mismatch = [&](size_t k) -> LogicalResult {
    InFlightDiagnostic d = from.emitError("the gradient function built "
                                          "for the new batch differs from '")
                           << from.getSymName() << "'";
    if (k < std::min(a.size(), b.size()))
      d << " at op #" << k << " ('" << b[k]->getName() << "' instead of '"
        << a[k]->getName() << "')";
    else
      d << " in its number of ops (" << b.size() << " instead of " << a.size()
        << ")";
    d << ", so the plan's annotations cannot carry over";
    return failure();
  };
  if (a.size() != b.size())
    return mismatch(a.size());
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k]->getName() != b[k]->getName())
      return mismatch(k);
    for (NamedAttribute attr : a[k]->getDiscardableAttrs())
      if (!b[k]->hasAttr(attr.getName()))
        b[k]->setAttr(attr.getName(), attr.getValue());
  }
  for (unsigned i = 0; i < from.getNumArguments(); ++i)
    for (NamedAttribute attr : from.getArgAttrDict(i)
                                   ? from.getArgAttrDict(i).getValue()
                                   : ArrayRef<NamedAttribute>())
      if (!to.getArgAttr(i, attr.getName()))
        to.setArgAttr(i, attr.getName(), attr.getValue());
  return success();
}

/// A name for `f` that no symbol of `module` has.
StringAttr asideName(func::FuncOp f, ModuleOp module) {
  std::string name = (f.getSymName() + ".before").str();
  for (int i = 1; module.lookupSymbol(name); ++i)
    name = (f.getSymName() + ".before" + std::to_string(i)).str();
  return StringAttr::get(f.getContext(), name);
}

/// Renames `f` to `name`, and every use of it in `module`.
void renameFunction(func::FuncOp f, StringAttr name, ModuleOp module) {
  if (f.getSymNameAttr() == name)
    return;
  (void)SymbolTable::replaceAllSymbolUses(f, name, module);
  SymbolTable::setSymbolName(f, name);
}

/// Every diagnostic emitted while it lives, caught instead of reported.
struct CaughtErrors {
  SmallVector<std::pair<Location, std::string>> caught;
  ScopedDiagnosticHandler handler;
  explicit CaughtErrors(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) {
          caught.push_back({d.getLocation(), d.str()});
          return success();
        }) {}
};
} // namespace

FailureOr<StepBatch> mlir::ober::stepBatchOf(func::FuncOp step) {
  func::FuncOp lossFn = lossFunctionOf(step);
  if (!lossFn)
    return step.emitError("the step records no loss function ('loss_function' "
                          "in '")
           << OberDialect::kTrainStepAttrName
           << "'): build it with --ober-build-train-step";
  FailureOr<StepOptions> o = readStepOptions(step);
  if (failed(o))
    return failure();
  SmallVector<unsigned> samples = sampleArguments(lossFn);
  if (samples.empty())
    return step.emitError("none of the step's inputs holds samples (a "
                          "leading batch dimension)");
  return StepBatch{
      cast<RankedTensorType>(lossFn.getArgumentTypes()[samples.front()])
          .getDimSize(0),
      o->microBatches};
}

/// The re-specialised loss function, a copy of `lossFn` whose sample inputs
/// take `microBatch` samples; with an error at `step` naming them when its
/// shapes do not follow.
static FailureOr<func::FuncOp> respecializeLoss(func::FuncOp step,
                                                func::FuncOp lossFn,
                                                int64_t microBatch,
                                                StringRef purpose) {
  SmallVector<unsigned> samples = sampleArguments(lossFn);
  SmallVector<Type> types(lossFn.getArgumentTypes());
  for (unsigned i : samples) {
    auto t = cast<RankedTensorType>(types[i]);
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = microBatch;
    types[i] = t.clone(shape);
  }
  ModuleOp module = lossFn->getParentOfType<ModuleOp>();
  func::FuncOp fresh = lossFn.clone();
  fresh.setSymNameAttr(asideName(lossFn, module));
  module.getBody()->getOperations().insert(lossFn->getIterator(), fresh);
  LogicalResult refined = failure();
  SmallVector<std::pair<Location, std::string>> caught;
  {
    CaughtErrors errors(step.getContext());
    refined = refineFunctionShapes(fresh, types);
    caught = std::move(errors.caught);
  }
  if (succeeded(refined))
    return fresh;
  fresh.erase();
  InFlightDiagnostic d = step.emitError(purpose) << ": ";
  SmallVector<unsigned> data = dataArguments(step);
  SmallVector<unsigned> nonParams;
  for (unsigned i = 0; i < lossFn.getNumArguments(); ++i)
    if (!lossFn.getArgAttr(i, OberDialect::kParamAttrName))
      nonParams.push_back(i);
  llvm::interleaveComma(samples, d, [&](unsigned i) {
    unsigned k = llvm::find(nonParams, i) - nonParams.begin();
    StringAttr name = k < data.size()
                          ? step.getArgAttrOfType<StringAttr>(
                                data[k], OberDialect::kBatchAttrName)
                          : StringAttr();
    d << "batch input '" << (name ? name.getValue() : StringRef("?")) << "' ("
      << lossFn.getArgumentTypes()[i] << ")";
  });
  d << " cannot take " << microBatch << " samples per micro-batch: the model's "
    << "shapes do not follow the batch";
  for (auto &[loc, message] : caught)
    d.attachNote(loc) << message;
  return failure();
}

FailureOr<func::FuncOp> mlir::ober::respecializeTrainStep(func::FuncOp step,
                                                          StepBatch batch,
                                                          StringRef purpose) {
  FailureOr<StepOptions> o = readStepOptions(step);
  if (failed(o) || failed(stepBatchOf(step)))
    return failure();
  func::FuncOp lossFn = lossFunctionOf(step), grad = gradientOf(step);
  if (!grad || grad.isExternal())
    return step.emitError("the step calls no gradient function with a body");
  FailureOr<func::FuncOp> fresh =
      respecializeLoss(step, lossFn, batch.microBatch, purpose);
  if (failed(fresh))
    return failure();

  // The new functions take the old names; the old ones wait aside until the
  // annotations are over.
  ModuleOp module = step->getParentOfType<ModuleOp>();
  StringAttr lossName = lossFn.getSymNameAttr(),
             gradName = grad.getSymNameAttr(), stepName = step.getSymNameAttr();
  for (func::FuncOp f : {lossFn, grad, step})
    renameFunction(f, asideName(f, module), module);
  renameFunction(*fresh, lossName, module);
  StepOptions options = *o;
  options.microBatches = batch.microBatches;
  FailureOr<func::FuncOp> rebuilt = buildGradientAndStep(*fresh, options);
  func::FuncOp newGrad = succeeded(rebuilt) ? gradientOf(*rebuilt) : nullptr;
  if (!newGrad || failed(carryAnnotations(grad, newGrad))) {
    if (succeeded(rebuilt))
      rebuilt->erase();
    if (newGrad)
      newGrad.erase();
    fresh->erase();
    renameFunction(lossFn, lossName, module);
    renameFunction(grad, gradName, module);
    renameFunction(step, stepName, module);
    return failure();
  }
  step.erase();
  grad.erase();
  lossFn.erase();
  renameFunction(newGrad, gradName, module);
  renameFunction(*rebuilt, stepName, module);
  return *rebuilt;
}
