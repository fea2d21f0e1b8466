//===- OberDialect.cpp - ober dialect ----------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::ober;

#include "ober/Dialect/Ober/IR/OberDialect.cpp.inc"
#include "ober/Dialect/Ober/IR/OberEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ober/Dialect/Ober/IR/OberAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ober/Dialect/Ober/IR/OberTypes.cpp.inc"

void OberDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ober/Dialect/Ober/IR/OberOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ober/Dialect/Ober/IR/OberAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "ober/Dialect/Ober/IR/OberTypes.cpp.inc"
      >();
}

Operation *OberDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

/// `ober.param` names a model parameter: a non-empty string, unique among
/// the arguments of its function.
LogicalResult OberDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef attrName = attr.getName().getValue();
  // Training-step arguments: optimizer state, batch and other inputs,
  // learning rate.
  if (attrName == kStateAttrName || attrName == kBatchAttrName ||
      attrName == kInputAttrName || attrName == kExportNoteAttrName) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitOpError() << "argument #" << argIndex << ": '"
                               << attrName << "' must be a non-empty string";
    return success();
  }
  // Planner annotations (--ober-plan).
  if (attrName == "ober.sharding") {
    auto how = dyn_cast<StringAttr>(attr.getValue());
    if (!how || !llvm::is_contained({"replicated", "column", "row", "vocab",
                                     "split"},
                                    how.getValue()))
      return op->emitOpError()
             << "argument #" << argIndex
             << ": 'ober.sharding' must be one of \"replicated\", \"column\", "
                "\"row\", \"vocab\", \"split\"";
    return success();
  }
  if (attrName == "ober.split") {
    if (!isa<DenseI64ArrayAttr>(attr.getValue()))
      return op->emitOpError() << "argument #" << argIndex
                               << ": 'ober.split' must be an i64 array (a grid "
                                  "axis or -1 per dimension)";
    return success();
  }
  if (attrName == "ober.split_groups") {
    auto groups = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!groups || llvm::any_of(groups.asArrayRef(),
                                [](int64_t g) { return g < 1; }))
      return op->emitOpError() << "argument #" << argIndex
                               << ": 'ober.split_groups' must be an i64 array "
                                  "of positive group counts per dimension";
    return success();
  }
  if (attrName == "ober.tp_dim") {
    auto dim = dyn_cast<IntegerAttr>(attr.getValue());
    auto type = dyn_cast<RankedTensorType>(
        op->getRegion(regionIndex).getArgument(argIndex).getType());
    if (!dim || !type || dim.getInt() < 0 || dim.getInt() >= type.getRank())
      return op->emitOpError() << "argument #" << argIndex
                               << ": 'ober.tp_dim' must be a dimension of the "
                                  "argument's ranked tensor";
    return success();
  }
  if (attrName == "ober.stage") {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || stage.getInt() < 0)
      return op->emitOpError() << "argument #" << argIndex
                               << ": 'ober.stage' must be a non-negative integer";
    return success();
  }
  if (attrName == kLearningRateAttrName || attrName == "ober.loss_seed" ||
      attrName == kSampleOffsetAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "argument #" << argIndex << ": '"
                               << attrName << "' is a unit attribute";
    return success();
  }
  if (attr.getName() != kParamAttrName)
    return op->emitOpError()
           << "unknown ober argument attribute '" << attr.getName().getValue()
           << "' (supported: '" << kParamAttrName << "', '" << kStateAttrName
           << "', '" << kBatchAttrName << "', '" << kInputAttrName << "', '"
           << kLearningRateAttrName << "', '" << kSampleOffsetAttrName
           << "', '" << kExportNoteAttrName << "', 'ober.loss_seed', and the planner's and "
              "partitioner's annotations)";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitOpError() << "argument #" << argIndex << ": '"
                           << kParamAttrName
                           << "' must be a non-empty string, got "
                           << attr.getValue();
  Region &region = op->getRegion(regionIndex);
  if (region.empty())
    return success();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  for (unsigned i = 0; i < argIndex; ++i) {
    auto other = func.getArgAttrOfType<StringAttr>(i, kParamAttrName);
    if (other && other == name)
      return op->emitOpError() << "parameter name '" << name.getValue()
                             << "' is used by arguments #" << i << " and #"
                             << argIndex;
  }
  return success();
}

/// `ober.weights` on a module names the external weights file: a relative
/// path inside the module's folder.
LogicalResult OberDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == "ober.cluster") {
    // Its fields are checked where the planner reads it.
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError()
             << "'ober.cluster' must be a dictionary on a builtin.module";
    return success();
  }
  if (attr.getName() == "ober.no_gradient" ||
      attr.getName() == "ober.buffer_updates") {
    if (!isa<func::FuncOp>(op) || !isa<DenseI64ArrayAttr>(attr.getValue()))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be an i64 array on a func.func";
    return success();
  }
  if (attr.getName() == "ober.tag") {
    // Matches a transfer's send and receive.
    if (!isa<IntegerAttr>(attr.getValue()))
      return op->emitOpError() << "'ober.tag' must be an integer";
    return success();
  }
  if (attr.getName() == "ober.local_steps" ||
      attr.getName() == "ober.replica_axis") {
    // Local SGD: the steps between averages and the replicas' grid axis,
    // on the partitioned step (read by executables).
    if (!isa<func::FuncOp>(op) || !isa<IntegerAttr>(attr.getValue()))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be an integer on a func.func";
    return success();
  }
  if (attr.getName() == "ober.stage_functions" ||
      attr.getName() == "ober.pipeline_axis") {
    // The partitioner's pipeline programs; read by the simulated devices.
    if (!isa<func::FuncOp>(op) ||
        !(isa<ArrayAttr>(attr.getValue()) || isa<IntegerAttr>(attr.getValue())))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be on a func.func (an array of "
                                  "stage functions, or a grid axis)";
    return success();
  }
  if (attr.getName() == "ober.plan") {
    if (!isa<ModuleOp>(op) || !isa<PlanAttr>(attr.getValue()))
      return op->emitOpError()
             << "'ober.plan' must be a #ober.plan<...> on a builtin.module";
    return success();
  }
  if (attr.getName() == "ober.stage" || attr.getName() == "ober.chunk") {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 0)
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be a non-negative integer";
    return success();
  }
  if (attr.getName() == "ober.recompute") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'ober.recompute' is a unit attribute";
    return success();
  }
  if (attr.getName() == kTrainStepAttrName) {
    if (!isa<func::FuncOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError() << "'" << kTrainStepAttrName
                               << "' must be a dictionary on a func.func";
    return success();
  }
  if (attr.getName() != kWeightsAttrName)
    return op->emitOpError() << "unknown ober attribute '"
                           << attr.getName().getValue() << "' (supported: '"
                           << kWeightsAttrName << "' on a module)";
  if (!isa<ModuleOp>(op))
    return op->emitOpError() << "'" << kWeightsAttrName
                           << "' is only allowed on a builtin.module";
  auto path = dyn_cast<StringAttr>(attr.getValue());
  if (!path || path.getValue().empty())
    return op->emitOpError() << "'" << kWeightsAttrName
                           << "' must be a non-empty string path";
  StringRef p = path.getValue();
  if (llvm::sys::path::is_absolute(p))
    return op->emitOpError() << "'" << kWeightsAttrName << "' path '" << p
                           << "' must be relative to the module's folder";
  for (auto it = llvm::sys::path::begin(p), e = llvm::sys::path::end(p);
       it != e; ++it)
    if (*it == "..")
      return op->emitOpError() << "'" << kWeightsAttrName << "' path '" << p
                             << "' must not leave the module's folder ('..')";
  return success();
}
