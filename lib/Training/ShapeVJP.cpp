//===- ShapeVJP.cpp - gradients of shape ops ------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

namespace {

/// Scatters `g` back into zeros of `shape` at `indices` along `axis`.
Value scatterAlong(GradBuilder &gb, Value g, ArrayRef<int64_t> shape,
                   int64_t axis, ArrayRef<int64_t> indices) {
  auto idxType = RankedTensorType::get({static_cast<int64_t>(indices.size())},
                                       gb.b.getI64Type());
  Value idx = ConstantOp::create(
      gb.b, gb.loc, DenseElementsAttr::get(idxType, indices));
  SmallVector<int64_t> target(typeOf(g).getShape());
  target[axis] = shape[axis];
  return gb.create<ScatterAddOp>(gb.zerosLike(typeOf(g).clone(target)), idx, g,
                                 axis);
}

void sliceVJP(GradBuilder &gb, SliceOp op, Value g, SmallVectorImpl<Value> &out) {
  ArrayRef<int64_t> shape = typeOf(op.getInput()).getShape();
  // One dimension at a time, innermost slice last: a scatter per dimension
  // (unit strides become pads).
  for (int64_t d = typeOf(g).getRank() - 1; d >= 0; --d) {
    int64_t start = op.getStarts()[d], stride = op.getStrides()[d];
    int64_t n = typeOf(g).getDimSize(d);
    if (n == shape[d] && start == 0 && stride == 1)
      continue;
    if (stride == 1) {
      SmallVector<int64_t> low(typeOf(g).getRank(), 0), high(low);
      low[d] = start;
      high[d] = shape[d] - start - n;
      g = gb.create<PadOp>(g, gb.b.getDenseI64ArrayAttr(low),
                           gb.b.getDenseI64ArrayAttr(high),
                           PadModeAttr::get(gb.b.getContext(), PadMode::constant),
                           gb.b.getF64FloatAttr(0.0));
      continue;
    }
    SmallVector<int64_t> positions;
    for (int64_t i = 0; i < n; ++i)
      positions.push_back(start + i * stride);
    g = scatterAlong(gb, g, shape, d, positions);
  }
  out[0] = g;
}

void padVJP(GradBuilder &gb, PadOp op, Value g, SmallVectorImpl<Value> &out) {
  ArrayRef<int64_t> shape = typeOf(op.getInput()).getShape();
  ArrayRef<int64_t> low = op.getLow();
  int64_t rank = shape.size();
  if (op.getMode() == PadMode::constant) {
    SmallVector<int64_t> limits;
    for (int64_t d = 0; d < rank; ++d)
      limits.push_back(low[d] + shape[d]);
    out[0] = gb.create<SliceOp>(g, gb.b.getDenseI64ArrayAttr(low),
                                gb.b.getDenseI64ArrayAttr(limits),
                                gb.b.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));
    return;
  }
  // Reflect and edge padding read input positions several times: scatter
  // each padded position back to the one it copies.
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t padded = typeOf(g).getDimSize(d), n = shape[d];
    if (padded == n)
      continue;
    SmallVector<int64_t> source;
    for (int64_t i = 0; i < padded; ++i) {
      int64_t c = i - low[d];
      if (c < 0 || c >= n)
        c = op.getMode() == PadMode::reflect ? (c < 0 ? -c : 2 * (n - 1) - c)
                                             : (c < 0 ? 0 : n - 1);
      source.push_back(c);
    }
    g = scatterAlong(gb, g, shape, d, source);
  }
  out[0] = g;
}

} // namespace

std::optional<LogicalResult> mlir::ober::training::shapeVJP(
    GradBuilder &gb, Operation *op, ArrayRef<Value> grads,
    SmallVectorImpl<Value> &out) {
  Value g = grads.front();
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](ReshapeOp r) {
        out[0] = gb.reshape(g, typeOf(r.getInput()).getShape());
        return success();
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        out[0] = gb.transpose(g, inverse);
        return success();
      })
      .Case([&](BroadcastToOp bc) {
        out[0] = gb.unbroadcast(g, bc.getInput().getType());
        return success();
      })
      .Case([&](ConcatOp c) {
        int64_t axis = c.getAxis(), offset = 0;
        for (auto [i, in] : llvm::enumerate(c.getInputs())) {
          RankedTensorType t = typeOf(in);
          SmallVector<int64_t> starts(t.getRank(), 0), limits(typeOf(g).getShape());
          starts[axis] = offset;
          limits[axis] = offset + t.getDimSize(axis);
          offset = limits[axis];
          out[i] = gb.create<SliceOp>(
              g, gb.b.getDenseI64ArrayAttr(starts),
              gb.b.getDenseI64ArrayAttr(limits),
              gb.b.getDenseI64ArrayAttr(SmallVector<int64_t>(t.getRank(), 1)));
        }
        return success();
      })
      .Case([&](SplitOp s) {
        SmallVector<Value> parts;
        for (auto [r, rg] : llvm::zip(s.getResults(), grads))
          parts.push_back(rg ? rg : gb.zerosLike(r.getType()));
        out[0] = gb.create<ConcatOp>(parts, s.getAxis());
        return success();
      })
      .Case([&](SliceOp s) {
        sliceVJP(gb, s, g, out);
        return success();
      })
      .Case([&](PadOp p) {
        padVJP(gb, p, g, out);
        return success();
      })
      .Case<ConstantOp, IotaOp>([](Operation *) { return success(); })
      .Default([](Operation *) { return std::nullopt; });
}
