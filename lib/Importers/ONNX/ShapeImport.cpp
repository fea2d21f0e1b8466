//===- ShapeImport.cpp - ONNX shape, indexing and sequence ops ------------===//
//
// Part of Ober-Train. Shape arguments must be known at import time; the
// shape arithmetic exporters emit (Shape, Gather, Concat, ...) folds to
// constants on the way.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"
#include "TensorProto.h"

#include "ober/Reference/Strings.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

LogicalResult reshapeOp(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsFromInputOrAttr(1, "shape");
  if (failed(given))
    return failure();
  if (!*given) {
    ctx.error() << "needs a shape";
    return failure();
  }
  SmallVector<int64_t> shape = **given;
  bool allowZero = ctx.getInt("allowzero", 0);
  int64_t known = 1, inferred = -1;
  bool dynamic = false;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(xt.getRank())) {
        ctx.error() << "shape entry " << i << " copies a dimension the input "
                    << "does not have";
        return failure();
      }
      d = xt.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0) {
        ctx.error() << "shape has more than one -1";
        return failure();
      }
      inferred = i;
      continue;
    }
    if (d < 0 && !ShapedType::isDynamic(d)) {
      ctx.error() << "shape entry " << d << " is invalid";
      return failure();
    }
    if (ShapedType::isDynamic(d)) {
      dynamic = true;
    } else if (llvm::MulOverflow(known, d, known)) {
      ctx.error() << "shape has more elements than 64 bits count";
      return failure();
    }
  }
  if (inferred >= 0) {
    if (!xt.hasStaticShape() || dynamic)
      shape[inferred] = kDyn;
    else if (known == 0 || xt.getNumElements() % known != 0) {
      ctx.error() << "cannot reshape " << xt << " to a shape with "
                  << known << " known elements";
      return failure();
    } else
      shape[inferred] = xt.getNumElements() / known;
  } else if (xt.hasStaticShape() && !dynamic && known != xt.getNumElements()) {
    ctx.error() << "cannot reshape " << xt << " to a shape with " << known
                << " elements";
    return failure();
  }
  ctx.setOutput(0, ctx.reshape(x, shape));
  return success();
}

/// The product of `dims`, dynamic if any is (or if it overflows; the
/// reshape's type check then refuses it).
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (ShapedType::isDynamic(d) || llvm::MulOverflow(p, d, p))
      return kDyn;
  return p;
}

LogicalResult flatten(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank(), axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  if (axis < 0)
    axis += rank;
  ctx.setOutput(0, ctx.reshape(x, {product(xt.getShape().take_front(axis)),
                                   product(xt.getShape().drop_front(axis))}));
  return success();
}

LogicalResult squeeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsFromInputOrAttr(1, "axes");
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty())
    for (int64_t d = 0; d < xt.getRank(); ++d)
      if (xt.getDimSize(d) == 1)
        axes.push_back(d);
  if (failed(ctx.normalizeAxes(axes, xt.getRank())))
    return failure();
  for (int64_t a : axes)
    if (!xt.isDynamicDim(a) && xt.getDimSize(a) != 1) {
      ctx.error() << "cannot squeeze dimension " << a << " of size "
                  << xt.getDimSize(a);
      return failure();
    }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(xt.getDimSize(d));
  ctx.setOutput(0, ctx.reshape(x, shape));
  return success();
}

LogicalResult unsqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsFromInputOrAttr(1, "axes");
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  int64_t outRank = xt.getRank() + axes.size();
  if (failed(ctx.normalizeAxes(axes, outRank)))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0, in = 0; d < outRank; ++d)
    shape.push_back(llvm::is_contained(axes, d) ? 1 : xt.getDimSize(in++));
  ctx.setOutput(0, ctx.reshape(x, shape));
  return success();
}

LogicalResult transposeOp(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> perm = ctx.getInts("perm");
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  ctx.setOutput(0, ctx.transpose(x, perm));
  return success();
}

LogicalResult concat(NodeContext &ctx) {
  SmallVector<Value> inputs = ctx.presentInputs();
  if (inputs.empty()) {
    ctx.error() << "needs at least one input";
    return failure();
  }
  for (Value v : inputs)
    if (typeOf(v).getRank() != typeOf(inputs[0]).getRank()) {
      ctx.error() << "inputs differ in rank: " << typeOf(inputs[0]) << " and "
                  << typeOf(v);
      return failure();
    }
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), typeOf(inputs[0]).getRank());
  if (failed(axis))
    return failure();
  // Empty pieces (exporters make them for zero-length shapes) add nothing.
  SmallVector<Value> nonEmpty;
  for (Value v : inputs)
    if (typeOf(v).getDimSize(*axis) != 0)
      nonEmpty.push_back(v);
  if (nonEmpty.empty())
    nonEmpty.push_back(inputs[0]);
  ctx.setOutput(0, ctx.create<ConcatOp>(nonEmpty, *axis));
  return success();
}

/// Splits `x` along `axis` into `sizes`.
SmallVector<Value> splitInto(NodeContext &ctx, Value x, int64_t axis,
                             ArrayRef<int64_t> sizes) {
  return ctx.createMulti<SplitOp>(
      [&] {
        SmallVector<Type> types;
        for (int64_t s : sizes) {
          SmallVector<int64_t> shape(typeOf(x).getShape());
          shape[axis] = s;
          types.push_back(typeOf(x).clone(shape));
        }
        return types;
      }(),
      x, axis, ctx.b.getDenseI64ArrayAttr(sizes));
}

LogicalResult split(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), xt.getRank());
  if (failed(axis))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsFromInputOrAttr(1, "split");
  if (failed(given))
    return failure();
  SmallVector<int64_t> sizes = given->value_or(SmallVector<int64_t>());
  int64_t n = ctx.numOutputs(), size = xt.getDimSize(*axis);
  if (sizes.empty() && n < 1) {
    ctx.error() << "needs outputs or split sizes";
    return failure();
  }
  if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != n) {
    ctx.error() << "split has " << sizes.size() << " sizes for " << n
                << " outputs";
    return failure();
  }
  if (sizes.empty() && ctx.hasAttr("num_outputs")) {
    // Opset 18: chunks of ceil(size / n), the last one smaller.
    int64_t parts = ctx.getInt("num_outputs", 0);
    if (parts != n || ShapedType::isDynamic(size) || parts < 1 ||
        (size + parts - 1) / parts * (parts - 1) >= std::max<int64_t>(size, 1)) {
      ctx.error() << "cannot split dimension " << *axis << " of " << xt
                  << " into num_outputs = " << parts << " chunks for " << n
                  << " outputs";
      return failure();
    }
    int64_t chunk = (size + parts - 1) / parts;
    sizes.assign(parts - 1, chunk);
    sizes.push_back(size - chunk * (parts - 1));
  }
  if (sizes.empty()) {
    if (ShapedType::isDynamic(size) || size % n != 0) {
      ctx.error() << "cannot split dimension " << *axis << " of " << xt
                  << " into " << n << " equal parts";
      return failure();
    }
    sizes.assign(n, size / n);
  }
  SmallVector<Value> pieces = splitInto(ctx, x, *axis, sizes);
  for (auto [i, v] : llvm::enumerate(pieces))
    ctx.setOutput(i, v);
  return success();
}

LogicalResult slice(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.getInts("starts");
    ends = ctx.getInts("ends");
    axes = ctx.getInts("axes");
  } else {
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "starts");
    FailureOr<SmallVector<int64_t>> e = ctx.constantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts.size()));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    ctx.error() << "starts, ends, axes and steps differ in length";
    return failure();
  }
  SmallVector<int64_t> lo(rank, 0), hi(xt.getShape()), st(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(axes[i], rank, "axes entry");
    if (failed(axis))
      return failure();
    int64_t dim = xt.getDimSize(*axis), step = steps[i];
    if (ShapedType::isDynamic(dim)) {
      ctx.error() << "slicing dynamic dimension " << *axis
                  << " is not supported";
      return failure();
    }
    if (step == 0) {
      ctx.error() << "steps must be non-zero";
      return failure();
    }
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s = s < -dim ? -1 : s + dim; // -1: clamped below
    if (e < 0)
      e = e < -dim ? -1 : e + dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      e = std::max(e, s);
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      e = std::min(e, s);
    }
    lo[*axis] = s;
    hi[*axis] = e;
    st[*axis] = step;
  }
  auto &b = ctx.b;
  ctx.setOutput(0, ctx.create<SliceOp>(x, b.getDenseI64ArrayAttr(lo),
                                       b.getDenseI64ArrayAttr(hi),
                                       b.getDenseI64ArrayAttr(st)));
  return success();
}

/// Pad's `wrap` mode (opset 19): position j of each padded axis reads
/// (j - low) modulo the size, so pads (and crops) wrap around.
LogicalResult padWrap(NodeContext &ctx, Value x, ArrayRef<int64_t> pads) {
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t low = pads[d], high = pads[rank + d], size = xt.getDimSize(d);
    if (low == 0 && high == 0)
      continue;
    int64_t length = size + low + high;
    if (ShapedType::isDynamic(size) || size == 0 || length < 0) {
      ctx.error() << "cannot wrap-pad dimension " << d << " of " << xt
                  << " by " << low << " and " << high;
      return failure();
    }
    SmallVector<int64_t> at;
    for (int64_t j = 0; j < length; ++j)
      at.push_back(((j - low) % size + size) % size);
    x = ctx.create<GatherOp>(x, ctx.constantInts(at, ctx.b.getI64Type()), d);
  }
  ctx.setOutput(0, x);
  return success();
}

/// CenterCropPad (opset 18): each listed axis cropped or zero-padded to
/// its size about the centre.
LogicalResult centerCropPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  FailureOr<SmallVector<int64_t>> listed = ctx.axesOrAll(rank);
  if (failed(listed))
    return failure();
  SmallVector<int64_t> &axes = *listed;
  if (shape->size() != axes.size() || !xt.hasStaticShape()) {
    ctx.error() << "shape must have one size per axis (" << axes.size()
                << ") of a static input, got " << shape->size() << " for "
                << xt;
    return failure();
  }
  for (auto [a, size] : llvm::zip(axes, *shape)) {
    int64_t in = xt.getDimSize(a);
    if (size < 0) {
      ctx.error() << "shape entry " << size << " is negative";
      return failure();
    }
    if (size < in) {
      int64_t start = (in - size) / 2;
      x = ctx.sliceAlong(x, a, start, start + size);
    } else if (size > in) {
      SmallVector<int64_t> low(rank, 0), high(rank, 0);
      low[a] = (size - in) / 2;
      high[a] = size - in - low[a];
      x = ctx.padWithZeros(x, low, high);
    }
  }
  ctx.setOutput(0, x);
  return success();
}

LogicalResult pad(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  SmallVector<int64_t> pads;
  double value = 0.0;
  if (ctx.opset < 11) {
    pads = ctx.getInts(ctx.hasAttr("pads") ? "pads" : "paddings");
    value = ctx.getFloat("value", 0.0);
  } else {
    FailureOr<SmallVector<int64_t>> p = ctx.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2)) {
      std::optional<reference::Tensor> v = ctx.constant(2);
      if (!v || v->getNumElements() != 1) {
        ctx.error() << "constant_value must be one value known at import time";
        return failure();
      }
      value = v->getFloat(0);
    }
  }
  // Opset 18: pads for the listed axes only.
  if (ctx.opset >= 18 && ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(3, "axes");
    if (failed(axes) || failed(ctx.normalizeAxes(*axes, rank)))
      return failure();
    if (pads.size() != 2 * axes->size()) {
      ctx.error() << "pads must have " << 2 * axes->size() << " entries for "
                  << axes->size() << " axes, got " << pads.size();
      return failure();
    }
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate(*axes)) {
      full[a] = pads[i];
      full[rank + a] = pads[axes->size() + i];
    }
    pads = full;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    ctx.error() << "pads must have " << 2 * rank << " entries, got "
                << pads.size();
    return failure();
  }
  std::string mode = ctx.getString("mode", "constant");
  PadMode padMode;
  if (mode == "constant")
    padMode = PadMode::constant;
  else if (mode == "reflect")
    padMode = PadMode::reflect;
  else if (mode == "edge")
    padMode = PadMode::edge;
  else if (mode == "wrap")
    return padWrap(ctx, x, pads);
  else {
    ctx.error() << "mode '" << mode << "' is not supported (constant, "
                << "reflect, edge, wrap)";
    return failure();
  }
  // Negative pads crop: pad the positive parts, then slice.
  SmallVector<int64_t> low(rank), high(rank), start(rank, 0), limit(rank);
  bool crop = false;
  for (int64_t d = 0; d < rank; ++d) {
    low[d] = std::max<int64_t>(pads[d], 0);
    high[d] = std::max<int64_t>(pads[rank + d], 0);
    crop |= pads[d] < 0 || pads[rank + d] < 0;
  }
  auto &b = ctx.b;
  Value y = ctx.create<PadOp>(x, b.getDenseI64ArrayAttr(low),
                              b.getDenseI64ArrayAttr(high),
                              PadModeAttr::get(b.getContext(), padMode),
                              b.getF64FloatAttr(value));
  if (crop) {
    RankedTensorType yt = typeOf(y);
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = std::max<int64_t>(-pads[d], 0);
      limit[d] = yt.getDimSize(d) - std::max<int64_t>(-pads[rank + d], 0);
    }
    y = ctx.create<SliceOp>(y, b.getDenseI64ArrayAttr(start),
                            b.getDenseI64ArrayAttr(limit),
                            b.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));
  }
  ctx.setOutput(0, y);
  return success();
}

LogicalResult expand(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  // Bidirectional: the result is the broadcast of both shapes.
  ArrayRef<int64_t> in = typeOf(x).getShape();
  size_t rank = std::max(in.size(), shape->size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
    int64_t b = i + shape->size() >= rank ? (*shape)[i + shape->size() - rank] : 1;
    if (b < 0 || (a != 1 && b != 1 && a != b)) {
      ctx.error() << "cannot expand " << typeOf(x) << " to shape ["
                  << llvm::make_range(shape->begin(), shape->end()) << "]";
      return failure();
    }
    out[i] = a == 1 ? b : a;
  }
  ctx.setOutput(0, ctx.broadcastTo(x, out));
  return success();
}

LogicalResult tile(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != xt.getRank() ||
      llvm::any_of(*repeats, [](int64_t r) { return r < 0; })) {
    ctx.error() << "repeats must have one non-negative entry per dimension";
    return failure();
  }
  // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0*d0, r1*d1].
  SmallVector<int64_t> spread, expanded, out;
  for (auto [d, r] : llvm::zip(xt.getShape(), *repeats)) {
    spread.append({1, d});
    expanded.append({r, d});
    int64_t tiled = kDyn;
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(r, d, tiled)) {
      ctx.error() << "repeating " << xt << " by [" << llvm::make_range(
                         repeats->begin(), repeats->end())
                  << "] gives a dimension past 64 bits";
      return failure();
    }
    out.push_back(tiled);
  }
  Value y = ctx.broadcastTo(ctx.reshape(x, spread), expanded);
  ctx.setOutput(0, ctx.reshape(y, out));
  return success();
}

LogicalResult shapeOp(NodeContext &ctx) {
  RankedTensorType xt = ctx.inputType(0);
  int64_t rank = xt.getRank();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (xt.isDynamicDim(d)) {
      ctx.error() << "dimension " << d << " of " << xt
                  << " is dynamic: pin it at import (--onnx-dim)";
      return failure();
    }
    dims.push_back(xt.getDimSize(d));
  }
  ctx.setOutput(0, ctx.constantInts(dims, ctx.b.getI64Type()));
  return success();
}

LogicalResult size(NodeContext &ctx) {
  RankedTensorType xt = ctx.inputType(0);
  if (!xt.hasStaticShape()) {
    ctx.error() << "the size of " << xt << " is not static";
    return failure();
  }
  ctx.setOutput(0, ctx.scalar(ctx.b.getI64Type(), xt.getNumElements()));
  return success();
}

LogicalResult constant(NodeContext &ctx) {
  MLIRContext *mctx = ctx.b.getContext();
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    std::string error;
    std::optional<reference::Tensor> t = decodeTensor(mctx, a->t(), "", error);
    if (!t) {
      ctx.error() << error;
      return failure();
    }
    ctx.setOutput(0, ctx.constantTensor(*t));
    return success();
  }
  Type f32 = ctx.b.getF32Type(), i64 = ctx.b.getI64Type();
  if (const onnx::AttributeProto *a = ctx.attr("value_float")) {
    ctx.setOutput(0, ctx.scalar(f32, a->f()));
    return success();
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_int")) {
    ctx.setOutput(0, ctx.scalar(i64, a->i()));
    return success();
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_ints")) {
    ctx.setOutput(0, ctx.constantInts(SmallVector<int64_t>(a->ints().begin(),
                                                           a->ints().end()),
                                      i64));
    return success();
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_floats")) {
    reference::Tensor t(f32, {a->floats_size()});
    for (int i = 0; i < a->floats_size(); ++i)
      t.setFloat(i, a->floats(i));
    ctx.setOutput(0, ctx.constantTensor(t));
    return success();
  }
  ctx.error() << "only tensor, float(s) and int(s) constants are supported";
  return failure();
}

LogicalResult constantOfShape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    ctx.error() << "shape entries must be non-negative";
    return failure();
  }
  reference::Tensor value(ctx.b.getF32Type(), {1});
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    std::string error;
    std::optional<reference::Tensor> t =
        decodeTensor(ctx.b.getContext(), a->t(), "", error);
    if (!t || t->getNumElements() != 1) {
      ctx.error() << "value must be a one-element tensor" << (t ? "" : ": ")
                  << error;
      return failure();
    }
    value = *t;
  }
  Value scalar = ctx.reshape(ctx.constantTensor(value), {});
  ctx.setOutput(0, ctx.broadcastTo(scalar, *shape));
  return success();
}

LogicalResult range(NodeContext &ctx) {
  std::optional<reference::Tensor> start = ctx.constant(0), limit = ctx.constant(1),
                                   delta = ctx.constant(2);
  if (!start || !limit || !delta || start->getNumElements() != 1 ||
      limit->getNumElements() != 1 || delta->getNumElements() != 1) {
    ctx.error() << "start, limit and delta must be scalars known at import "
                   "time";
    return failure();
  }
  double s = start->getFloat(0), l = limit->getFloat(0), d = delta->getFloat(0);
  if (d == 0) {
    ctx.error() << "delta must be non-zero";
    return failure();
  }
  double count = std::ceil((l - s) / d);
  constexpr double kMaxRange = 1 << 24;
  if (!(count <= kMaxRange)) {
    ctx.error() << "the range holds more than " << kMaxRange << " elements";
    return failure();
  }
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  reference::Tensor t(start->getElementType(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (t.isFloat())
      t.setFloat(i, s + i * d);
    else
      t.setInt(i, start->getInt(0) + i * delta->getInt(0));
  }
  ctx.setOutput(0, ctx.constantTensor(t));
  return success();
}

/// Gather and GatherElements: one input, indices and an axis.
template <typename OpTy> LogicalResult gatherAlong(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), typeOf(x).getRank());
  if (failed(axis))
    return failure();
  ctx.setOutput(0, ctx.create<OpTy>(x, ctx.input(1), *axis));
  return success();
}

LogicalResult oneHot(NodeContext &ctx) {
  Value indices = ctx.input(0);
  std::optional<reference::Tensor> depthT = ctx.constant(1);
  if (!depthT || depthT->getNumElements() != 1 || !(depthT->getFloat(0) >= 1)) {
    ctx.error() << "depth must be one positive value known at import time";
    return failure();
  }
  int64_t depth = static_cast<int64_t>(depthT->getFloat(0));
  if (ctx.inputType(2).getRank() != 1 || ctx.inputType(2).getDimSize(0) != 2) {
    ctx.error() << "values must be [off_value, on_value]";
    return failure();
  }
  int64_t rank = typeOf(indices).getRank() + 1;
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  Type i64 = ctx.b.getI64Type();
  if (isa<FloatType>(typeOf(indices).getElementType()))
    indices = ctx.create<FloorOp>(indices);
  indices = ctx.cast(indices, i64);
  SmallVector<int64_t> shape(typeOf(indices).getShape());
  shape.insert(shape.begin() + *axis, depth);
  Value hot = ctx.create<OneHotOp>(RankedTensorType::get(shape, ctx.b.getI1Type()),
                                   indices, depth, *axis);
  Value values = ctx.input(2);
  Type element = typeOf(values).getElementType();
  auto pick = [&](int64_t i) {
    Value v = ctx.create<SliceOp>(
        values, ctx.b.getDenseI64ArrayAttr({i}),
        ctx.b.getDenseI64ArrayAttr({i + 1}), ctx.b.getDenseI64ArrayAttr({1}));
    return ctx.reshape(v, {});
  };
  (void)element;
  ctx.setOutput(0, ctx.create<SelectOp>(hot, pick(1), pick(0)));
  return success();
}

/// A [rows, cols] i1 mask: col - row compared with k.
Value diagonalMask(NodeContext &ctx, int64_t rows, int64_t cols, int64_t k,
                   CompareDirection direction) {
  auto type = RankedTensorType::get({rows, cols}, ctx.b.getI64Type());
  Value r = ctx.create<IotaOp>(type, 0), c = ctx.create<IotaOp>(type, 1);
  Value diff = ctx.create<SubOp>(c, r);
  return ctx.create<CompareOp>(direction, diff, ctx.scalar(ctx.b.getI64Type(), k));
}

LogicalResult trilu(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (xt.getRank() < 2) {
    ctx.error() << "needs a tensor of rank >= 2, got " << xt;
    return failure();
  }
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> kv = ctx.constantInts(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1) {
      ctx.error() << "k must be one value";
      return failure();
    }
    k = kv->front();
  }
  int64_t rank = xt.getRank();
  Value keep = diagonalMask(ctx, xt.getDimSize(rank - 2), xt.getDimSize(rank - 1),
                            k, ctx.getInt("upper", 1) ? CompareDirection::ge
                                                      : CompareDirection::le);
  ctx.setOutput(0, ctx.create<SelectOp>(keep, x, ctx.scalar(xt.getElementType(), 0)));
  return success();
}

LogicalResult eyeLike(NodeContext &ctx) {
  RankedTensorType xt = ctx.inputType(0);
  if (xt.getRank() != 2 || !xt.hasStaticShape()) {
    ctx.error() << "needs a static matrix, got " << xt;
    return failure();
  }
  Type element = xt.getElementType();
  if (ctx.hasAttr("dtype")) {
    element = elementTypeOf(ctx.b.getContext(), ctx.getInt("dtype", 1));
    if (!element) {
      ctx.error() << "unsupported dtype";
      return failure();
    }
  }
  Value eye = diagonalMask(ctx, xt.getDimSize(0), xt.getDimSize(1),
                           ctx.getInt("k", 0), CompareDirection::eq);
  ctx.setOutput(0, ctx.cast(eye, element));
  return success();
}

LogicalResult cumsum(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axisV = ctx.constantInts(1, "axis");
  if (failed(axisV))
    return failure();
  if (axisV->size() != 1) {
    ctx.error() << "axis must be one value";
    return failure();
  }
  FailureOr<int64_t> axis = ctx.normalizeAxis(axisV->front(), typeOf(x).getRank());
  if (failed(axis))
    return failure();
  ctx.setOutput(0, ctx.create<CumSumOp>(x, *axis, ctx.getInt("exclusive", 0) != 0,
                                        ctx.getInt("reverse", 0) != 0));
  return success();
}

/// Checks a DepthToSpace/SpaceToDepth input and block size.
LogicalResult checkBlocks(NodeContext &ctx, Value x, bool toSpace) {
  RankedTensorType xt = typeOf(x);
  int64_t b = ctx.getInt("blocksize", 1);
  if (xt.getRank() != 4 || !xt.hasStaticShape() || b < 1 ||
      (toSpace ? xt.getDimSize(1) % (b * b) != 0
               : xt.getDimSize(2) % b != 0 || xt.getDimSize(3) % b != 0)) {
    ctx.error() << "needs a static [N, C, H, W] input that blocksize " << b
                << " divides, got " << xt;
    return failure();
  }
  return success();
}

LogicalResult depthToSpace(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(checkBlocks(ctx, x, /*toSpace=*/true)))
    return failure();
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t b = ctx.getInt("blocksize", 1);
  int64_t n = s[0], c = s[1], h = s[2], w = s[3], cb = c / (b * b);
  bool crd = ctx.getString("mode", "DCR") == "CRD";
  Value y = crd ? ctx.reshape(x, {n, cb, b, b, h, w})
                : ctx.reshape(x, {n, b, b, cb, h, w});
  y = crd ? ctx.transpose(y, {0, 1, 4, 2, 5, 3})
          : ctx.transpose(y, {0, 3, 4, 1, 5, 2});
  ctx.setOutput(0, ctx.reshape(y, {n, cb, h * b, w * b}));
  return success();
}

LogicalResult spaceToDepth(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(checkBlocks(ctx, x, /*toSpace=*/false)))
    return failure();
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t b = ctx.getInt("blocksize", 1);
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  Value y = ctx.reshape(x, {n, c, h / b, b, w / b, b});
  y = ctx.transpose(y, {0, 3, 5, 1, 2, 4});
  ctx.setOutput(0, ctx.reshape(y, {n, c * b * b, h / b, w / b}));
  return success();
}

//===----------------------------------------------------------------------===//
// Sequences, resolved at import time
//===----------------------------------------------------------------------===//

/// A position into a sequence of `size` (inclusive of the end when
/// `insert`), from input `i` or `dflt`.
FailureOr<int64_t> seqPosition(NodeContext &ctx, unsigned i, int64_t size,
                               int64_t dflt, bool insert) {
  if (!ctx.hasInput(i))
    return dflt;
  FailureOr<SmallVector<int64_t>> p = ctx.constantInts(i, "position");
  if (failed(p))
    return failure();
  if (p->size() != 1) {
    ctx.error() << "position must be one value";
    return failure();
  }
  int64_t pos = p->front(), limit = insert ? size + 1 : size;
  if (pos < 0)
    pos += size;
  if (pos < 0 || pos >= limit) {
    ctx.error() << "position " << (*p)[0] << " is out of range for a sequence "
                << "of " << size;
    return failure();
  }
  return pos;
}

const Sequence *requireSequence(NodeContext &ctx, unsigned i) {
  const Sequence *s = ctx.sequenceInput(i);
  if (!s)
    ctx.error() << "input #" << i << " is not a sequence";
  return s;
}

LogicalResult sequenceEmpty(NodeContext &ctx) {
  ctx.setSequenceOutput(0, {});
  return success();
}

LogicalResult sequenceConstruct(NodeContext &ctx) {
  ctx.setSequenceOutput(0, ctx.presentInputs());
  return success();
}

LogicalResult sequenceInsert(NodeContext &ctx) {
  const Sequence *s = requireSequence(ctx, 0);
  if (!s)
    return failure();
  FailureOr<int64_t> pos = seqPosition(ctx, 2, s->size(), s->size(), true);
  if (failed(pos))
    return failure();
  Sequence out = *s;
  out.insert(out.begin() + *pos, ctx.input(1));
  ctx.setSequenceOutput(0, out);
  return success();
}

LogicalResult sequenceErase(NodeContext &ctx) {
  const Sequence *s = requireSequence(ctx, 0);
  if (!s)
    return failure();
  if (s->empty()) {
    ctx.error() << "cannot erase from an empty sequence";
    return failure();
  }
  FailureOr<int64_t> pos = seqPosition(ctx, 1, s->size(), s->size() - 1, false);
  if (failed(pos))
    return failure();
  Sequence out = *s;
  out.erase(out.begin() + *pos);
  ctx.setSequenceOutput(0, out);
  return success();
}

LogicalResult sequenceAt(NodeContext &ctx) {
  const Sequence *s = requireSequence(ctx, 0);
  if (!s)
    return failure();
  FailureOr<int64_t> pos = seqPosition(ctx, 1, s->size(), 0, false);
  if (failed(pos))
    return failure();
  if (!ctx.hasInput(1)) {
    ctx.error() << "needs a position";
    return failure();
  }
  ctx.setOutput(0, (*s)[*pos]);
  return success();
}

LogicalResult sequenceLength(NodeContext &ctx) {
  const Sequence *s = requireSequence(ctx, 0);
  if (!s)
    return failure();
  ctx.setOutput(0, ctx.scalar(ctx.b.getI64Type(), s->size()));
  return success();
}

LogicalResult splitToSequence(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), xt.getRank());
  if (failed(axis))
    return failure();
  int64_t size = xt.getDimSize(*axis);
  if (ShapedType::isDynamic(size)) {
    ctx.error() << "needs a static size along axis " << *axis;
    return failure();
  }
  SmallVector<int64_t> sizes;
  bool squeezeEach = false;
  if (!ctx.hasInput(1)) {
    sizes.assign(size, 1);
    squeezeEach = !ctx.getInt("keepdims", 1);
  } else {
    std::optional<reference::Tensor> split = ctx.constant(1);
    if (!split) {
      ctx.error() << "split must be known at import time";
      return failure();
    }
    if (split->getRank() == 0) {
      int64_t chunk = split->getInt(0);
      if (chunk < 1) {
        ctx.error() << "split must be positive, got " << chunk;
        return failure();
      }
      for (int64_t left = size; left > 0; left -= chunk)
        sizes.push_back(std::min(chunk, left));
    } else {
      for (int64_t i = 0; i < split->getNumElements(); ++i)
        sizes.push_back(split->getInt(i));
      if (sizes.empty()) {
        ctx.error() << "split must not be empty";
        return failure();
      }
    }
  }
  Sequence pieces = splitInto(ctx, x, *axis, sizes);
  if (squeezeEach)
    for (Value &p : pieces) {
      SmallVector<int64_t> shape(typeOf(p).getShape());
      shape.erase(shape.begin() + *axis);
      p = ctx.reshape(p, shape);
    }
  ctx.setSequenceOutput(0, pieces);
  return success();
}

LogicalResult concatFromSequence(NodeContext &ctx) {
  const Sequence *s = requireSequence(ctx, 0);
  if (!s)
    return failure();
  if (s->empty()) {
    ctx.error() << "cannot concatenate an empty sequence";
    return failure();
  }
  bool newAxis = ctx.getInt("new_axis", 0);
  for (Value v : *s)
    if (typeOf(v).getRank() != typeOf(s->front()).getRank()) {
      ctx.error() << "sequence elements differ in rank";
      return failure();
    }
  int64_t rank = typeOf(s->front()).getRank() + (newAxis ? 1 : 0);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  ctx.setOutput(0, newAxis ? ctx.stack(*s, *axis)
                           : ctx.create<ConcatOp>(*s, *axis));
  return success();
}

LogicalResult stringNormalizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (!isa<StringType>(xt.getElementType())) {
    ctx.error() << "needs a string input, got " << xt;
    return failure();
  }
  std::optional<reference::Tensor> words = ctx.constant(0);
  if (!words) {
    ctx.error() << "its output size depends on the input's values, which "
                   "must be known at import time (ober-run provides them)";
    return failure();
  }
  std::string change = ctx.getString("case_change_action", "NONE");
  bool sensitive = ctx.getInt("is_case_sensitive", 0);
  std::vector<std::string> stopwords, in;
  if (const onnx::AttributeProto *a = ctx.attr("stopwords"))
    stopwords.assign(a->strings().begin(), a->strings().end());
  for (int64_t i = 0; i < words->getNumElements(); ++i)
    in.push_back(words->getString(i));
  int64_t n = reference::normalizeStrings(in, change, sensitive, stopwords).size();
  SmallVector<int64_t> shape = xt.getRank() == 2 ? SmallVector<int64_t>{1, n}
                                                 : SmallVector<int64_t>{n};
  SmallVector<Attribute> stops;
  for (const std::string &s : stopwords)
    stops.push_back(ctx.b.getStringAttr(s));
  ctx.setOutput(0, ctx.create<StringNormalizeOp>(
                       xt.clone(shape), x, ctx.b.getStringAttr(change),
                       ctx.b.getBoolAttr(sensitive), ctx.b.getArrayAttr(stops)));
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerShapeHandlers(HandlerMap &m) {
  m["StringNormalizer"] = stringNormalizer;
  m["Reshape"] = reshapeOp;
  m["Flatten"] = flatten;
  m["Squeeze"] = squeeze;
  m["Unsqueeze"] = unsqueeze;
  m["Transpose"] = transposeOp;
  m["Concat"] = concat;
  m["Split"] = split;
  m["Slice"] = slice;
  m["Pad"] = pad;
  m["CenterCropPad"] = centerCropPad;
  m["Expand"] = expand;
  m["Tile"] = tile;
  m["Shape"] = shapeOp;
  m["Size"] = size;
  m["Constant"] = constant;
  m["ConstantOfShape"] = constantOfShape;
  m["Range"] = range;
  m["Gather"] = gatherAlong<GatherOp>;
  m["GatherElements"] = gatherAlong<GatherElementsOp>;
  m["OneHot"] = oneHot;
  m["Trilu"] = trilu;
  m["EyeLike"] = eyeLike;
  m["CumSum"] = cumsum;
  m["DepthToSpace"] = depthToSpace;
  m["SpaceToDepth"] = spaceToDepth;
  m["SequenceEmpty"] = sequenceEmpty;
  m["SequenceConstruct"] = sequenceConstruct;
  m["SequenceInsert"] = sequenceInsert;
  m["SequenceErase"] = sequenceErase;
  m["SequenceAt"] = sequenceAt;
  m["SequenceLength"] = sequenceLength;
  m["SplitToSequence"] = splitToSequence;
  m["ConcatFromSequence"] = concatFromSequence;
}
