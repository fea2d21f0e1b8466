//===- ShardingDistributedForms.cpp - ops split on a statistics factor ----===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShardingDistributedForms.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;

FailureOr<Value> mlir::ober::distributedSoftmax(Operation *op,
                                                ArrayRef<Value> operands,
                                                shard::GridOp grid,
                                                ArrayRef<shard::GridAxis> axes,
                                                OpBuilder &builder) {
  int64_t axis = isa<LogSoftmaxOp>(op) ? cast<LogSoftmaxOp>(op).getAxis()
                                       : cast<SoftmaxOp>(op).getAxis();
  Location loc = op->getLoc();
  Value x = operands.front();
  if (axis < 0)
    axis += cast<RankedTensorType>(x.getType()).getRank();
  auto along = builder.getDenseI64ArrayAttr({axis});
  auto keep = builder.getBoolAttr(true);
  StringRef gridName = grid.getSymName();
  Value max = ReduceMaxOp::create(builder, loc, x, along, keep);
  max = shard::AllReduceOp::create(builder, loc, max, gridName, axes,
                                   shard::ReductionKind::Max);
  Value shifted = SubOp::create(builder, loc, x, max);
  Value exp = ExpOp::create(builder, loc, shifted);
  Value sum = ReduceSumOp::create(builder, loc, exp, along, keep);
  sum = shard::AllReduceOp::create(builder, loc, sum, gridName, axes,
                                   shard::ReductionKind::Sum);
  if (isa<LogSoftmaxOp>(op))
    return SubOp::create(builder, loc, shifted,
                         LogOp::create(builder, loc, sum))
        .getResult();
  return DivOp::create(builder, loc, exp, sum).getResult();
}

FailureOr<Value> mlir::ober::distributedNorm(Operation *op,
                                             ArrayRef<Value> operands,
                                             shard::GridOp grid,
                                             ArrayRef<shard::GridAxis> axes,
                                             OpBuilder &builder) {
  auto global = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t rank = global.getRank();
  auto layer = dyn_cast<LayerNormOp>(op);
  auto rms = dyn_cast<RMSNormOp>(op);
  int64_t axis = layer ? layer.getAxis() : rms.getAxis();
  if (axis < 0)
    axis += rank;
  double epsilon =
      (layer ? layer.getEpsilon() : rms.getEpsilon()).convertToDouble();
  bool hasScale = layer ? static_cast<bool>(layer.getScale())
                        : static_cast<bool>(rms.getScale());
  Location loc = op->getLoc();
  Value x = operands.front();
  auto type = cast<RankedTensorType>(x.getType());
  for (Value v : operands.drop_front())
    if (cast<RankedTensorType>(v.getType()).getShape() !=
        type.getShape().drop_front(axis))
      return op->emitError("scale and bias must be split like the "
                           "normalized dimensions");
  SmallVector<int64_t> normalized;
  double count = 1;
  for (int64_t d = axis; d < rank; ++d) {
    normalized.push_back(d);
    count *= global.getDimSize(d);
  }
  auto dims = builder.getDenseI64ArrayAttr(normalized);
  auto keep = builder.getBoolAttr(true);
  auto globalMean = [&](Value v) {
    Value sum = ReduceSumOp::create(builder, loc, v, dims, keep);
    sum = shard::AllReduceOp::create(builder, loc, sum, grid.getSymName(), axes,
                                     shard::ReductionKind::Sum);
    return MulOp::create(builder, loc, sum,
                         createScalarConstant(builder, loc, type.getElementType(), 1.0 / count))
        .getResult();
  };
  Value centered = rms ? x : SubOp::create(builder, loc, x, globalMean(x));
  Value var = globalMean(MulOp::create(builder, loc, centered, centered));
  Value inv =
      RsqrtOp::create(builder, loc,
                      AddOp::create(builder, loc, var,
                                    createScalarConstant(builder, loc, type.getElementType(), epsilon)));
  Value y = MulOp::create(builder, loc, centered, inv);
  // Scale and bias are split like the normalized dimensions.
  unsigned next = 1;
  if (hasScale)
    y = MulOp::create(builder, loc, y, operands[next++]);
  if (layer && layer.getBias())
    y = AddOp::create(builder, loc, y, operands[next]);
  return y;
}
