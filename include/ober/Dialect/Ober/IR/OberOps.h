//===- OberOps.h - ober dialect ops ------------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBEROPS_H
#define OBER_DIALECT_OBER_IR_OBEROPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "ober/Dialect/Ober/IR/OberEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ober/Dialect/Ober/IR/OberAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ober/Dialect/Ober/IR/OberTypes.h.inc"

#define GET_OP_CLASSES
#include "ober/Dialect/Ober/IR/OberOps.h.inc"

#endif // OBER_DIALECT_OBER_IR_OBEROPS_H
