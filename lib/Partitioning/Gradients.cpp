//===- Gradients.cpp - data-parallel gradient reduction -------------------===//
//
// Part of Ober-Train. Gradients come out of the inlined gradient function
// as partial sums over the data-parallel devices. They pass micro-batch
// accumulation (linear) untouched and are reduced once per step, just
// before the optimizer first needs them, in buckets of about
// `bucket-mb` (last layer first, as backward produces them): all-reduced,
// or for ZeRO reduce-scattered onto the optimizer state's shard ([devices,
// n] rows per parameter cut along dimension 0, concatenated).
//
//===----------------------------------------------------------------------===//

#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

/// Zeros, or a loop-carried sum that starts at zeros.
static bool startsAtZeros(Value v) { return isZeros(initialValueOf(v)); }

/// Accumulating a gradient (or the loss) over micro-batches (onto zeros,
/// the first time), or scaling it by a whole factor, as the only use of the
/// gradient: partial sums pass, and the reduction waits for a use that
/// needs the whole gradient.
bool StepPartitioner::isAccumulation(Operation *op) const {
  auto tagged = [&](Value v) { return tags.count(v) > 0 && v.hasOneUse(); };
  if (isa<AddOp>(op)) {
    Value a = op->getOperand(0), b = op->getOperand(1);
    if (startsAtZeros(a) || startsAtZeros(b))
      return tagged(startsAtZeros(a) ? b : a);
    return tagged(a) && tagged(b) && tags.lookup(a) == tags.lookup(b);
  }
  if (isa<SubOp>(op))
    return tagged(op->getOperand(0)) && tagged(op->getOperand(1)) &&
           tags.lookup(op->getOperand(0)) == tags.lookup(op->getOperand(1));
  if (isa<MulOp, DivOp>(op)) {
    bool lhs = tags.count(op->getOperand(0)), rhs = tags.count(op->getOperand(1));
    return lhs != rhs && tagged(op->getOperand(lhs ? 0 : 1)) &&
           (isa<MulOp>(op) || lhs);
  }
  return false;
}

void StepPartitioner::tag(Operation *op) {
  for (Value v : op->getOperands())
    if (tags.count(v)) {
      unsigned t = tags.lookup(v);
      if (reduced.contains(t))
        return;
      tags[op->getResult(0)] = t;
      latest[t] = op->getResult(0);
      return;
    }
}

void StepPartitioner::reduceBucket(unsigned stage, ArrayRef<unsigned> group,
                                   bool scatter, Location loc) {
  IRMapping &map = maps[0][stage];
  int64_t n = plan.dp;
  Layout partial = spmd->replicated();
  partial[kDp] = Placement::partial();
  // The bucket is a device-local buffer: only its data-parallel placement
  // means anything (the collective runs along that axis alone).
  Layout target = spmd->replicated();
  if (scatter)
    target[kDp] = Placement::split(0);
  if (group.size() == 1) {
    Value v = latest.lookup(group.front());
    map.map(v, spmd->reshard(map.lookup(v), gradientTarget(group.front()), loc));
    return;
  }
  SmallVector<Value> pieces;
  SmallVector<int64_t> lengths;
  Type element;
  for (unsigned t : group) {
    // First the gradient's own placement along the other axes (the
    // parameter's tensor-parallel split).
    Value local = map.lookup(latest.lookup(t));
    Layout other = gradientTarget(t);
    other[kDp] = spmd->layoutOf(local)[kDp];
    local = spmd->reshard(local, other, loc);
    auto type = cast<RankedTensorType>(local.getType());
    element = type.getElementType();
    int64_t count = type.getNumElements();
    SmallVector<int64_t> shape =
        scatter ? SmallVector<int64_t>{n, count / n} : SmallVector<int64_t>{count};
    Value flat = local;
    if (type.getShape() != ArrayRef<int64_t>(shape)) {
      flat = ReshapeOp::create(builder, loc,
                               RankedTensorType::get(shape, element), local);
      spmd->setLayout(flat, partial);
    }
    pieces.push_back(flat);
    lengths.push_back(shape.back());
  }
  int64_t total = 0;
  for (int64_t l : lengths)
    total += l;
  SmallVector<int64_t> shape =
      scatter ? SmallVector<int64_t>{n, total} : SmallVector<int64_t>{total};
  Value bucket = ConcatOp::create(builder, loc,
                                  RankedTensorType::get(shape, element), pieces,
                                  builder.getI64IntegerAttr(scatter ? 1 : 0));
  spmd->setLayout(bucket, partial);
  Value reduced = spmd->reshard(bucket, target, loc);
  int64_t offset = 0;
  for (auto [t, length] : llvm::zip(group, lengths)) {
    Value serial = latest.lookup(t);
    auto global = cast<RankedTensorType>(serial.getType());
    int64_t rows = scatter ? 1 : 0;
    SmallVector<int64_t> starts, limits, strides;
    if (scatter) {
      starts = {0, offset};
      limits = {rows, offset + length};
      strides = {1, 1};
    } else {
      starts = {offset};
      limits = {offset + length};
      strides = {1};
    }
    SmallVector<int64_t> pieceShape =
        scatter ? SmallVector<int64_t>{1, length} : SmallVector<int64_t>{length};
    Value piece = SliceOp::create(
        builder, loc, RankedTensorType::get(pieceShape, element), reduced,
        builder.getDenseI64ArrayAttr(starts), builder.getDenseI64ArrayAttr(limits),
        builder.getDenseI64ArrayAttr(strides));
    Layout layout = gradientTarget(t);
    RankedTensorType localType = spmd->localType(global, layout);
    Value back = piece;
    if (localType != piece.getType())
      back = ReshapeOp::create(builder, loc, localType, piece);
    spmd->setLayout(back, layout);
    map.map(serial, back);
    offset += length;
  }
}

void StepPartitioner::reduceGradients(unsigned stage, Location loc) {
  IRMapping &map = maps[0][stage];
  // The gradients this stage computed, last parameter first: backward
  // produces its gradient first.
  SmallVector<unsigned> mine;
  for (unsigned t = params.size(); t-- > 0;)
    if (Value serial = latest.lookup(t);
        serial && !reduced.contains(t) && stageOf(serial) == static_cast<int>(stage) &&
        map.contains(serial))
      mine.push_back(t);
  for (bool scatter : {false, true}) {
    SmallVector<unsigned> bucket;
    int64_t bytes = 0;
    for (unsigned t : mine) {
      Value serial = latest.lookup(t);
      Value local = map.lookup(serial);
      Placement target = gradientTarget(t)[kDp];
      if (target.isSplit() != scatter)
        continue;
      // Buckets hold whole gradients and shards of dimension 0.
      if (!spmd->layoutOf(local)[kDp].isPartialSum() ||
          (target.isSplit() && target.dim != 0)) {
        map.map(serial, spmd->reshard(local, gradientTarget(t), loc));
        continue;
      }
      bucket.push_back(t);
      auto type = cast<RankedTensorType>(serial.getType());
      bytes += type.getNumElements() *
               std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      if (bytes >= options.bucketBytes) {
        reduceBucket(stage, bucket, scatter, loc);
        bucket.clear();
        bytes = 0;
      }
    }
    if (!bucket.empty())
      reduceBucket(stage, bucket, scatter, loc);
  }
  for (unsigned t : mine)
    reduced.insert(t);
}
