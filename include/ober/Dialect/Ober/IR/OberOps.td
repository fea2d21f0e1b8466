//===- OberOps.td - ober dialect ops -----------------------*- tablegen -*-===//
//
// Ops are grouped by kind in the files included below.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBEROPS_TD
#define OBER_DIALECT_OBER_IR_OBEROPS_TD

include "ober/Dialect/Ober/IR/OberBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpAsmInterface.td"

include "ober/Dialect/Ober/IR/OberElementwiseOps.td"
include "ober/Dialect/Ober/IR/OberContractionOps.td"
include "ober/Dialect/Ober/IR/OberReductionOps.td"
include "ober/Dialect/Ober/IR/OberNormalizationOps.td"
include "ober/Dialect/Ober/IR/OberIndexingOps.td"
include "ober/Dialect/Ober/IR/OberLossOps.td"
include "ober/Dialect/Ober/IR/OberShapeOps.td"
include "ober/Dialect/Ober/IR/OberGradientOps.td"
include "ober/Dialect/Ober/IR/OberPlan.td"

#endif // OBER_DIALECT_OBER_IR_OBEROPS_TD
