//===- OberOps.cpp - ober op definitions and shared syntax -----------===//
//
// Part of Ober-Train. Op-specific verification, type inference and folding
// live in one file per op group (ElementwiseOps.cpp, ShapeOps.cpp, ...).
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ober;

//===----------------------------------------------------------------------===//
// custom<BroadcastTypes>: `: T` when both operands and the result share one
// type, `: (T1, T2) -> T3` otherwise.
//===----------------------------------------------------------------------===//

static ParseResult parseBroadcastTypes(OpAsmParser &parser, Type &lhs,
                                       Type &rhs, Type &result) {
  Type type;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseType(type))
    return failure();
  if (auto fn = dyn_cast<FunctionType>(type)) {
    if (fn.getNumInputs() != 2 || fn.getNumResults() != 1)
      return parser.emitError(loc, "expected a function type with two "
                                   "inputs and one result, got ")
             << type;
    lhs = fn.getInput(0);
    rhs = fn.getInput(1);
    result = fn.getResult(0);
    return success();
  }
  lhs = rhs = result = type;
  return success();
}

static void printBroadcastTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                                Type rhs, Type result) {
  if (lhs == rhs && rhs == result) {
    printer << lhs;
    return;
  }
  printer.printFunctionalType(TypeRange{lhs, rhs}, TypeRange{result});
}

//===----------------------------------------------------------------------===//
// custom<CompareDirection>: a bare keyword (`lt`, `eq`, ...).
//===----------------------------------------------------------------------===//

static ParseResult parseCompareDirection(OpAsmParser &parser,
                                         CompareDirectionAttr &direction) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<CompareDirection> value = symbolizeCompareDirection(keyword);
  if (!value)
    return parser.emitError(loc, "unknown comparison '")
           << keyword << "' (expected eq, ne, lt, le, gt or ge)";
  direction = CompareDirectionAttr::get(parser.getContext(), *value);
  return success();
}

static void printCompareDirection(OpAsmPrinter &printer, Operation *,
                                  CompareDirectionAttr direction) {
  printer << stringifyCompareDirection(direction.getValue());
}

#define GET_OP_CLASSES
#include "ober/Dialect/Ober/IR/OberOps.cpp.inc"
