//===- OberDialect.h - ober dialect ------------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERDIALECT_H
#define OBER_DIALECT_OBER_IR_OBERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ober/Dialect/Ober/IR/OberDialect.h.inc"

#endif // OBER_DIALECT_OBER_IR_OBERDIALECT_H
