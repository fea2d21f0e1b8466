//===- ShapeOps.cpp - constant, iota, reshape, transpose, ... -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A splat constant re-typed to `type`, or null.
static Attribute resplat(Attribute attr, ShapedType type) {
  auto dense = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!dense || !type.hasStaticShape())
    return {};
  return DenseElementsAttr::get(type, dense.getSplatValue<Attribute>());
}

//===----------------------------------------------------------------------===//
// ConstantOp, IotaOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

void ConstantOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "cst");
}

LogicalResult IotaOp::verify() {
  OpDiag diag(getLoc(), getOperationName());
  if (getType().getRank() < 1)
    return diag("result must have rank >= 1");
  return checkAxis(diag, "dimension", getDimension(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// ReshapeOp, BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ: ") << in.getElementType()
                                                  << " vs " << out.getElementType();
  bool overflowA = false, overflowB = false;
  std::optional<int64_t> a = staticElementCount(in.getShape(), &overflowA);
  std::optional<int64_t> b = staticElementCount(out.getShape(), &overflowB);
  if (overflowA || overflowB)
    return emitOpError("shape ")
           << shapeString((overflowA ? in : out).getShape())
           << " has more elements than 64 bits count";
  if (a && b && *a != *b)
    return emitOpError("cannot reshape ")
           << shapeString(in.getShape()) << " (" << *a << " elements) to "
           << shapeString(out.getShape()) << " (" << *b << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

LogicalResult BroadcastToOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ: ") << in.getElementType()
                                                  << " vs " << out.getElementType();
  int64_t offset = out.getRank() - in.getRank();
  bool ok = offset >= 0;
  for (int64_t i = 0; ok && i < in.getRank(); ++i) {
    int64_t d = in.getDimSize(i);
    ok = d == 1 || compatibleSize(d, out.getDimSize(offset + i));
  }
  if (!ok)
    return emitOpError("cannot broadcast ")
           << shapeString(in.getShape()) << " to "
           << shapeString(out.getShape())
           << " (NumPy rules: align trailing dimensions; each input size is 1 "
              "or equal)";
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return resplat(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (failed(checkArraySize(diag, "permutation", perm, in.getRank())))
    return failure();
  SmallVector<bool> seen(in.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return diag("'permutation' ", listString(perm),
                  " is not a permutation of [0, ", in.getRank(), ")");
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return getInput();
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    // result[i] = inner.result[perm[i]] = x[innerPerm[perm[i]]].
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(innerPerm[p]);
    setPermutation(composed);
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return resplat(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// ConcatOp, SplitOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return diag("needs at least one input");
  RankedTensorType first = tensorOf(inputs.front());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(diag, "axis", axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    RankedTensorType t = tensorOf(v);
    if (t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return diag("input #", i + 1, " ", t, " does not match input #0 ",
                  first, " in rank and element type");
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d == axis) {
        if (ShapedType::isDynamic(shape[d]) || t.isDynamicDim(d))
          shape[d] = ShapedType::kDynamic;
        else
          shape[d] += t.getDimSize(d);
      } else if (!compatibleSize(shape[d], t.getDimSize(d))) {
        return diag("input #", i + 1, " ", shapeString(t.getShape()),
                    " differs from input #0 ",
                    shapeString(first.getShape()), " in dimension ", d,
                    " (only 'axis' ", axis, " may differ)");
      }
    }
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType in = tensorOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(diag, "axis", axis, in.getRank())))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return diag("'sizes' must not be empty");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return diag("'sizes' must be non-negative, got ", listString(sizes));
    total += s;
  }
  if (!in.isDynamicDim(axis) && total != in.getDimSize(axis))
    return diag("'sizes' ", listString(sizes), " add up to ", total,
                " but dimension ", axis, " of ", shapeString(in.getShape()),
                " has ", in.getDimSize(axis));
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(in.getShape());
    shape[axis] = s;
    results.push_back(RankedTensorType::get(shape, in.getElementType()));
  }
  return success();
}

LogicalResult SplitOp::fold(FoldAdaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() != 1 || getInput().getType() != getResult(0).getType())
    return failure();
  results.push_back(getInput());
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    strides = adaptor.getStrides();
  size_t rank = in.getRank();
  if (failed(checkArraySize(diag, "starts", starts, rank)) ||
      failed(checkArraySize(diag, "limits", limits, rank)) ||
      failed(checkArraySize(diag, "strides", strides, rank)))
    return failure();
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) {
    int64_t start = starts[d], limit = limits[d], stride = strides[d];
    int64_t size = in.getDimSize(d);
    bool dynamic = ShapedType::isDynamic(size);
    bool ok;
    if (stride > 0)
      ok = 0 <= start && start <= limit && (dynamic || limit <= size);
    else if (stride < 0)
      ok = start == limit ||
           (-1 <= limit && limit <= start && (dynamic || start < size));
    else
      return diag("'strides' must be non-zero, got ", listString(strides));
    if (!ok)
      return diag("dimension ", d, " of size ", dynamic ? -1 : size,
                  ": start ", start, ", limit ", limit, ", stride ", stride,
                  stride > 0 ? " need 0 <= start <= limit <= size"
                             : " need -1 <= limit <= start < size");
    int64_t n = stride > 0 ? (limit - start + stride - 1) / stride
                           : (limit - start + stride + 1) / stride;
    shape.push_back(std::max<int64_t>(n, 0));
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  return resplat(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if (failed(checkArraySize(diag, "low", low, in.getRank())) ||
      failed(checkArraySize(diag, "high", high, in.getRank())))
    return failure();
  PadMode mode = adaptor.getMode();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t size = in.getDimSize(d);
    if (low[d] < 0 || high[d] < 0)
      return diag("pads must be non-negative, got low ", listString(low),
                  " and high ", listString(high));
    if (!ShapedType::isDynamic(size)) {
      if (mode == PadMode::reflect && (low[d] >= size || high[d] >= size))
        return diag("reflect padding of dimension ", d, " by ", low[d], "/",
                    high[d], " needs pads smaller than its size ", size);
      if (mode == PadMode::edge && size == 0 && low[d] + high[d] > 0)
        return diag("edge padding of empty dimension ", d);
    }
    shape.push_back(ShapedType::isDynamic(size) ? size
                                                : size + low[d] + high[d]);
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t p) { return p == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero))
    return getInput();
  return {};
}
