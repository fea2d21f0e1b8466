//===- BatchNorm.cpp - training batch norm over split samples -------------===//
//
// Part of Ober-Train. A training-mode batch norm whose samples are split
// normalizes with the statistics of the whole batch (synchronized batch
// norm): the per-channel sum and then the sum of squared deviations are
// all-reduced, and the running statistics are updated as the serial op
// does (the unbiased variance over the global count).
//
//===----------------------------------------------------------------------===//

#include "Spmd.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

std::optional<LogicalResult>
mlir::ober::partition::rebuildBatchNorm(Spmd &spmd, Operation *op,
                                        IRMapping &map) {
  auto bn = dyn_cast<BatchNormTrainingOp>(op);
  if (!bn)
    return std::nullopt;
  Value x = map.lookup(bn.getInput());
  Layout layout = spmd.layoutOf(x);
  // Only samples split (dimension 0); every other operand whole.
  bool samples = false;
  for (Placement p : layout) {
    if (p.isPartial() || (p.isSplit() && p.dim != 0))
      return std::nullopt;
    samples |= p.isSplit();
  }
  if (!samples)
    return std::nullopt;
  for (Value v : op->getOperands().drop_front())
    for (Placement p : spmd.layoutOf(map.lookup(v)))
      if (!p.isRep())
        return std::nullopt;

  OpBuilder &b = spmd.getBuilder();
  Location loc = op->getLoc();
  auto global = cast<RankedTensorType>(bn.getInput().getType());
  Type element = spmd.computed(global).getElementType();
  int64_t rank = global.getRank(), channels = global.getDimSize(1);
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  double count = static_cast<double>(global.getNumElements()) /
                 static_cast<double>(channels);
  Layout partial = spmd.replicated(), whole = spmd.replicated();
  for (auto [axis, p] : llvm::enumerate(layout))
    if (p.isSplit())
      partial[axis] = Placement::partial();
  auto constant = [&](double v) { return spmd.scalar(loc, element, v); };
  // Sum over the local samples and positions, completed over the devices.
  auto total = [&](Value v) {
    Value sum = ReduceSumOp::create(b, loc, v, b.getDenseI64ArrayAttr(axes),
                                    b.getBoolAttr(true));
    spmd.setLayout(sum, partial);
    return spmd.reshard(sum, whole, loc);
  };
  Value mean = DivOp::create(b, loc, total(x), constant(count));
  Value centered = SubOp::create(b, loc, x, mean);
  spmd.setLayout(centered, layout);
  Value var = DivOp::create(
      b, loc, total(MulOp::create(b, loc, centered, centered)), constant(count));
  // Per-channel vectors as [C, 1, ...] broadcast against [N, C, ...].
  SmallVector<int64_t> column(rank - 1, 1);
  column[0] = channels;
  auto asColumn = [&](Value v) {
    return ReshapeOp::create(b, loc, RankedTensorType::get(column, element), v);
  };
  Value inv = RsqrtOp::create(
      b, loc, AddOp::create(b, loc, var, constant(bn.getEpsilon().convertToDouble())));
  Value y = MulOp::create(b, loc, centered, inv);
  y = MulOp::create(b, loc, y, asColumn(map.lookup(bn.getScale())));
  y = AddOp::create(b, loc, y, asColumn(map.lookup(bn.getBias())));
  spmd.setLayout(y, layout);
  // Running statistics.
  double m = bn.getMomentum().convertToDouble();
  auto vector = RankedTensorType::get({channels}, element);
  auto update = [&](Value running, Value stat, double scale) {
    Value flat = ReshapeOp::create(b, loc, vector, stat);
    Value kept = MulOp::create(b, loc, map.lookup(running), constant(1 - m));
    return AddOp::create(b, loc, kept,
                         MulOp::create(b, loc, flat, constant(m * scale)))
        .getResult();
  };
  map.map(bn.getResult(), y);
  map.map(bn.getNewRunningMean(), update(bn.getRunningMean(), mean, 1.0));
  map.map(bn.getNewRunningVar(),
          update(bn.getRunningVar(), var, count > 1 ? count / (count - 1) : 1.0));
  return success();
}
