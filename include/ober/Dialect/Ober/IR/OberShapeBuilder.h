//===- OberShapeBuilder.h - shape helpers shared by op builders -*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//
//
// The small reshape/cast/broadcast helpers that both the ONNX importer's
// NodeContext and the training library's GradBuilder need. `Derived` supplies
// `create<OpTy>(args...)` (so the importer keeps its folding and type
// inference) and the members `b` (OpBuilder &) and `loc`.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERSHAPEBUILDER_H
#define OBER_DIALECT_OBER_IR_OBERSHAPEBUILDER_H

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

namespace mlir::ober {

template <typename Derived> class OberShapeBuilder {
public:
  /// A 0-D constant of `elementType`.
  Value scalar(Type elementType, double value) {
    return createScalarConstant(self().b, self().loc, elementType, value);
  }
  /// `v` converted to `elementType`; `v` itself when it already is.
  Value cast(Value v, Type elementType) {
    if (tensorType(v).getElementType() == elementType)
      return v;
    return self().template create<CastOp>(tensorType(v).clone(elementType), v);
  }
  /// `v` reshaped to `shape`; `v` itself when it already has it.
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (tensorType(v).getShape() == shape)
      return v;
    return self().template create<ReshapeOp>(tensorType(v).clone(shape), v);
  }
  /// `v` broadcast to `shape`; `v` itself when it already has it.
  Value broadcastTo(Value v, ArrayRef<int64_t> shape) {
    if (tensorType(v).getShape() == shape)
      return v;
    return self().template create<BroadcastToOp>(tensorType(v).clone(shape),
                                                 v);
  }
  /// `v` with `low` and `high` zeros before and after each dimension.
  Value padWithZeros(Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
    auto &b = self().b;
    return self().template create<PadOp>(
        v, b.getDenseI64ArrayAttr(low), b.getDenseI64ArrayAttr(high),
        PadModeAttr::get(b.getContext(), PadMode::constant),
        b.getF64FloatAttr(0));
  }
  /// Positions [lo, hi) of `v` along `axis`.
  Value sliceAlong(Value v, int64_t axis, int64_t lo, int64_t hi) {
    int64_t rank = tensorType(v).getRank();
    SmallVector<int64_t> start(rank, 0), limit(tensorType(v).getShape()),
        step(rank, 1);
    start[axis] = lo;
    limit[axis] = hi;
    auto &b = self().b;
    return self().template create<SliceOp>(v, b.getDenseI64ArrayAttr(start),
                                           b.getDenseI64ArrayAttr(limit),
                                           b.getDenseI64ArrayAttr(step));
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return self().template create<TransposeOp>(
        v, self().b.getDenseI64ArrayAttr(perm));
  }
  /// `v` with dimension `from` moved to position `to` (the others in
  /// order); `v` itself when they are the same. `moveAxis(w, to, from)`
  /// moves it back.
  Value moveAxis(Value v, int64_t from, int64_t to) {
    if (from == to)
      return v;
    SmallVector<int64_t> perm;
    for (int64_t d = 0, r = tensorType(v).getRank(); d < r; ++d)
      if (d != from)
        perm.push_back(d);
    perm.insert(perm.begin() + to, from);
    return transpose(v, perm);
  }
  /// `parts` (of one shape) stacked along a new dimension at `axis`.
  Value stack(ArrayRef<Value> parts, int64_t axis) {
    SmallVector<Value> items;
    for (Value p : parts) {
      SmallVector<int64_t> shape(tensorType(p).getShape());
      shape.insert(shape.begin() + axis, 1);
      items.push_back(reshape(p, shape));
    }
    return self().template create<ConcatOp>(
        items, self().b.getI64IntegerAttr(axis));
  }

private:
  Derived &self() { return static_cast<Derived &>(*this); }
  static RankedTensorType tensorType(Value v) {
    return llvm::cast<RankedTensorType>(v.getType());
  }
};

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_OBERSHAPEBUILDER_H
