//===- NNImport.cpp - ONNX neural-network ops -----------------------------===//
//
// Part of Ober-Train. MatMul, Gemm, convolution, pooling, normalisation,
// softmax, dropout and losses.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

LogicalResult matmul(NodeContext &ctx) {
  ctx.setOutput(0, ctx.create<MatmulOp>(ctx.input(0), ctx.input(1)));
  return success();
}

Value transposeLast2(NodeContext &ctx, Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return ctx.transpose(v, perm);
}

LogicalResult gemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (typeOf(a).getRank() != 2 || typeOf(b).getRank() != 2) {
    ctx.error() << "A and B must be matrices, got " << typeOf(a) << " and "
                << typeOf(b);
    return failure();
  }
  if (ctx.getInt("transA", 0))
    a = transposeLast2(ctx, a);
  if (ctx.getInt("transB", 0))
    b = transposeLast2(ctx, b);
  Type t = typeOf(a).getElementType();
  Value y = ctx.create<MatmulOp>(a, b);
  double alpha = ctx.getFloat("alpha", 1.0), beta = ctx.getFloat("beta", 1.0);
  if (alpha != 1.0)
    y = ctx.create<MulOp>(y, ctx.scalar(t, alpha));
  if (ctx.hasInput(2) && beta != 0.0) {
    Value c = ctx.input(2);
    if (beta != 1.0)
      c = ctx.create<MulOp>(c, ctx.scalar(t, beta));
    y = ctx.create<AddOp>(y, c);
  }
  ctx.setOutput(0, y);
  return success();
}

/// Window attributes of a conv or pool node over `input` with `kernel`.
struct Window {
  SmallVector<int64_t> strides, pads, dilations;
};

/// Window sizes, strides, dilations and padding are below 2^31, so that the
/// window arithmetic (a product of two, plus a few) stays within 64 bits.
constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

/// Whether every static value in `values` lies in [lo, kMaxWindowValue);
/// names `what` in the error otherwise.
LogicalResult checkWindowValues(NodeContext &ctx, StringRef what,
                                ArrayRef<int64_t> values, int64_t lo) {
  for (int64_t v : values)
    if (!ShapedType::isDynamic(v) && (v < lo || v >= kMaxWindowValue)) {
      ctx.error() << what << " [" << llvm::make_range(values.begin(),
                                                       values.end())
                  << "] must lie in [" << lo << ", 2^31)";
      return failure();
    }
  return success();
}

/// The strides, dilations and pads of a `k`-D window as the node spells them,
/// defaults filled in; checked for their counts and ranges, together with the
/// input's spatial sizes and the `kernel`.
FailureOr<Window> readWindow(NodeContext &ctx, RankedTensorType input,
                             ArrayRef<int64_t> kernel) {
  int64_t k = kernel.size();
  Window w;
  w.strides = ctx.getInts("strides");
  w.dilations = ctx.getInts("dilations");
  w.pads = ctx.getInts("pads");
  if (w.strides.empty())
    w.strides.assign(k, 1);
  if (w.dilations.empty())
    w.dilations.assign(k, 1);
  if (w.pads.empty())
    w.pads.assign(2 * k, 0);
  if (static_cast<int64_t>(w.strides.size()) != k ||
      static_cast<int64_t>(w.dilations.size()) != k ||
      static_cast<int64_t>(w.pads.size()) != 2 * k) {
    ctx.error() << "strides, dilations and pads must have " << k << ", " << k
                << " and " << 2 * k << " entries for a " << k
                << "-D window";
    return failure();
  }
  if (failed(checkWindowValues(ctx, "strides", w.strides, 1)) ||
      failed(checkWindowValues(ctx, "dilations", w.dilations, 1)) ||
      failed(checkWindowValues(ctx, "pads", w.pads, 0)) ||
      failed(checkWindowValues(ctx, "kernel", kernel, 1)) ||
      failed(checkWindowValues(ctx, "spatial sizes",
                               input.getShape().drop_front(2), 0)))
    return failure();
  return w;
}

FailureOr<Window> windowOf(NodeContext &ctx, RankedTensorType input,
                           ArrayRef<int64_t> kernel) {
  int64_t k = kernel.size();
  FailureOr<Window> read = readWindow(ctx, input, kernel);
  if (failed(read))
    return failure();
  Window w = std::move(*read);
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return w;
  if (autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
    return w;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    ctx.error() << "auto_pad '" << autoPad
                << "' is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)";
    return failure();
  }
  for (int64_t i = 0; i < k; ++i) {
    int64_t in = input.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel[i])) {
      ctx.error() << "auto_pad " << autoPad << " needs static spatial sizes";
      return failure();
    }
    int64_t out = (in + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[k + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return w;
}

LogicalResult checkSpatialRank(NodeContext &ctx, RankedTensorType input) {
  if (input.getRank() < 3 || input.getRank() > 5) {
    ctx.error() << "input must be [N, C, D1..Dk] with 1 to 3 spatial "
                   "dimensions, got rank "
                << input.getRank();
    return failure();
  }
  return success();
}

LogicalResult checkWeightRank(NodeContext &ctx, RankedTensorType input,
                              Value weight) {
  if (typeOf(weight).getRank() != input.getRank()) {
    ctx.error() << "weight " << typeOf(weight) << " must have the rank of the "
                << "input " << input;
    return failure();
  }
  return success();
}

LogicalResult conv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType xt = typeOf(x);
  if (failed(checkSpatialRank(ctx, xt)) || failed(checkWeightRank(ctx, xt, w)))
    return failure();
  SmallVector<int64_t> kernel(typeOf(w).getShape().drop_front(2));
  FailureOr<Window> win = windowOf(ctx, xt, kernel);
  if (failed(win))
    return failure();
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  auto &b = ctx.b;
  ctx.setOutput(0, ctx.create<ConvOp>(
                       x, w, bias, b.getDenseI64ArrayAttr(win->strides),
                       b.getDenseI64ArrayAttr(win->pads),
                       b.getDenseI64ArrayAttr(win->dilations),
                       b.getI64IntegerAttr(ctx.getInt("group", 1))));
  return success();
}

LogicalResult convTranspose(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType xt = typeOf(x);
  if (failed(checkSpatialRank(ctx, xt)) || failed(checkWeightRank(ctx, xt, w)))
    return failure();
  SmallVector<int64_t> kernel(typeOf(w).getShape().drop_front(2));
  int64_t k = kernel.size();
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> outputShape = ctx.getInts("output_shape");
  // Padding is derived from auto_pad or output_shape below, not windowOf.
  FailureOr<Window> read = readWindow(ctx, xt, kernel);
  if (failed(read))
    return failure();
  Window win = std::move(*read);
  SmallVector<int64_t> outPad = ctx.getInts("output_padding");
  if (outPad.empty())
    outPad.assign(k, 0);
  if (static_cast<int64_t>(outPad.size()) != k) {
    ctx.error() << "output_padding must have " << k << " entries";
    return failure();
  }
  if (outputShape.size() > static_cast<size_t>(k))
    outputShape.erase(outputShape.begin(), outputShape.end() - k);
  if (!outputShape.empty() && static_cast<int64_t>(outputShape.size()) != k) {
    ctx.error() << "output_shape must have " << k << " spatial entries";
    return failure();
  }
  if (failed(checkWindowValues(ctx, "output_padding", outPad, 0)) ||
      failed(checkWindowValues(ctx, "output_shape", outputShape, 0)))
    return failure();
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" ||
      !outputShape.empty()) {
    for (int64_t i = 0; i < k; ++i) {
      int64_t in = xt.getDimSize(2 + i);
      if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel[i])) {
        ctx.error() << "auto_pad and output_shape need static spatial sizes "
                    << "of the input and the weight";
        return failure();
      }
      int64_t target = outputShape.empty() ? in * win.strides[i] : outputShape[i];
      int64_t total = win.strides[i] * (in - 1) + outPad[i] +
                      (kernel[i] - 1) * win.dilations[i] + 1 - target;
      if (total < 0) {
        // The target is larger than the padding-free output: extend it with
        // output padding.
        outPad[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      bool upper = autoPad == "SAME_UPPER";
      win.pads[i] = upper ? half : total - half;
      win.pads[k + i] = upper ? total - half : half;
    }
  } else if (autoPad == "VALID") {
    win.pads.assign(2 * k, 0);
  }
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  auto &b = ctx.b;
  ctx.setOutput(0, ctx.create<ConvTransposeOp>(
                       x, w, bias, b.getDenseI64ArrayAttr(win.strides),
                       b.getDenseI64ArrayAttr(win.pads),
                       b.getDenseI64ArrayAttr(win.dilations),
                       b.getDenseI64ArrayAttr(outPad),
                       b.getI64IntegerAttr(ctx.getInt("group", 1))));
  return success();
}

/// AveragePool with dilations (opset 19): the window sums as a depthwise
/// convolution with a dilated kernel of ones, divided by how many of its
/// taps fall on the input (or on the padded input, count_include_pad).
LogicalResult dilatedAveragePool(NodeContext &ctx, Value x,
                                 ArrayRef<int64_t> kernel, const Window &win,
                                 bool ceil) {
  RankedTensorType xt = typeOf(x);
  if (!xt.hasStaticShape()) {
    ctx.error() << "dilated average pooling needs a static input, got " << xt;
    return failure();
  }
  int64_t k = kernel.size(), channels = xt.getDimSize(1);
  SmallVector<int64_t> pads(win.pads), padded, spatial;
  for (int64_t i = 0; i < k; ++i) {
    int64_t in = xt.getDimSize(2 + i), span = (kernel[i] - 1) * win.dilations[i] + 1;
    int64_t size = in + pads[i] + pads[k + i], s = win.strides[i];
    if (size < span) {
      ctx.error() << "the dilated window (" << span << ") is larger than "
                  << "the padded input (" << size << ") along dimension "
                  << 2 + i;
      return failure();
    }
    int64_t out = (size - span + (ceil ? s - 1 : 0)) / s + 1;
    // A last window may not start in the high padding alone.
    if (ceil && (out - 1) * s >= in + pads[i])
      --out;
    // ceil_mode's last windows run past the padding: extra zeros.
    pads[k + i] += std::max<int64_t>(0, (out - 1) * s + span - size);
    padded.push_back(size);
    spatial.push_back(in);
  }
  Type element = xt.getElementType();
  auto &b = ctx.b;
  auto windowSum = [&](Value v, ArrayRef<int64_t> p, int64_t groups) {
    SmallVector<int64_t> shape{typeOf(v).getDimSize(1), 1};
    shape.append(kernel.begin(), kernel.end());
    return ctx.create<ConvOp>(
        v, ctx.broadcastTo(ctx.scalar(element, 1), shape), Value(),
        b.getDenseI64ArrayAttr(win.strides), b.getDenseI64ArrayAttr(p),
        b.getDenseI64ArrayAttr(win.dilations), b.getI64IntegerAttr(groups));
  };
  Value sum = windowSum(x, pads, channels);
  // Ones where a tap counts: the input, or the padded input.
  bool includePad = ctx.getInt("count_include_pad", 0);
  SmallVector<int64_t> onesShape{1, 1};
  onesShape.append(includePad ? padded : spatial);
  SmallVector<int64_t> onesPads(pads);
  if (includePad)
    for (int64_t i = 0; i < k; ++i) {
      onesPads[k + i] -= win.pads[k + i];
      onesPads[i] = 0;
    }
  Value count = windowSum(ctx.broadcastTo(ctx.scalar(element, 1), onesShape),
                          onesPads, 1);
  ctx.setOutput(0, ctx.create<DivOp>(sum, count));
  return success();
}

template <bool isMax> LogicalResult pool(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (failed(checkSpatialRank(ctx, xt)))
    return failure();
  if (isMax && ctx.wantsOutput(1)) {
    ctx.error() << "the Indices output of MaxPool is not supported";
    return failure();
  }
  SmallVector<int64_t> kernel = ctx.getInts("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) != xt.getRank() - 2) {
    ctx.error() << "kernel_shape must have " << xt.getRank() - 2 << " entries";
    return failure();
  }
  FailureOr<Window> win = windowOf(ctx, xt, kernel);
  if (failed(win))
    return failure();
  auto &b = ctx.b;
  bool ceil = ctx.getInt("ceil_mode", 0);
  if (isMax) {
    ctx.setOutput(0, ctx.create<MaxPoolOp>(
                         x, b.getDenseI64ArrayAttr(kernel),
                         b.getDenseI64ArrayAttr(win->strides),
                         b.getDenseI64ArrayAttr(win->pads),
                         b.getDenseI64ArrayAttr(win->dilations),
                         b.getBoolAttr(ceil)));
    return success();
  }
  if (llvm::any_of(win->dilations, [](int64_t d) { return d != 1; }))
    return dilatedAveragePool(ctx, x, kernel, *win, ceil);
  ctx.setOutput(0, ctx.create<AvgPoolOp>(
                       x, b.getDenseI64ArrayAttr(kernel),
                       b.getDenseI64ArrayAttr(win->strides),
                       b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil),
                       b.getBoolAttr(ctx.getInt("count_include_pad", 0))));
  return success();
}

template <typename OpTy> LogicalResult globalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (typeOf(x).getRank() < 2) {
    ctx.error() << "needs input [N, C, d...], got " << typeOf(x);
    return failure();
  }
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(2, typeOf(x).getRank()));
  ctx.setOutput(0, ctx.reduce<OpTy>(x, axes, /*keepdims=*/true));
  return success();
}

LogicalResult batchNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  double eps = ctx.getFloat("epsilon", 1e-5);
  bool training = ctx.opset >= 14 ? ctx.getInt("training_mode", 0)
                                  : ctx.opset < 7 && !ctx.getInt("is_test", 0) &&
                                        ctx.wantsOutput(1);
  auto epsAttr = ctx.b.getF64FloatAttr(eps);
  if (!training) {
    ctx.setOutput(0, ctx.create<BatchNormInferenceOp>(
                         x, ctx.input(1), ctx.input(2), ctx.input(3),
                         ctx.input(4), epsAttr));
    return success();
  }
  // ONNX's momentum weights the running value, and its running variance
  // uses the biased batch variance (PyTorch's, in ober.batch_norm_training,
  // the unbiased one): compute the running statistics here.
  double momentum = ctx.getFloat("momentum", 0.9);
  SmallVector<Value> r = ctx.createMulti<BatchNormTrainingOp>(
      TypeRange{x.getType(), ctx.input(3).getType(), ctx.input(4).getType()},
      x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), epsAttr,
      ctx.b.getF64FloatAttr(1.0 - momentum));
  ctx.setOutput(0, r[0]);
  if (ctx.wantsOutput(1) || ctx.wantsOutput(2)) {
    RankedTensorType xt = typeOf(x);
    Type t = xt.getElementType();
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < xt.getRank(); ++d)
      axes.push_back(d);
    Value mean = ctx.reduce<ReduceMeanOp>(x, axes, true);
    Value centered = ctx.create<SubOp>(x, mean);
    Value var = ctx.reduce<ReduceMeanOp>(ctx.create<MulOp>(centered, centered),
                                         axes, false);
    mean = ctx.reshape(mean, {xt.getDimSize(1)});
    auto blend = [&](Value running, Value batch) {
      return ctx.create<AddOp>(
          ctx.create<MulOp>(running, ctx.scalar(t, momentum)),
          ctx.create<MulOp>(batch, ctx.scalar(t, 1.0 - momentum)));
    };
    ctx.setOutput(1, blend(ctx.input(3), mean));
    ctx.setOutput(2, blend(ctx.input(4), var));
  }
  if (ctx.wantsOutput(3) || ctx.wantsOutput(4)) {
    ctx.error() << "the saved mean and variance outputs are not supported";
    return failure();
  }
  return success();
}

/// A per-channel [C] vector shaped to broadcast over [N, C, D...].
Value channelVector(NodeContext &ctx, Value v, int64_t rank) {
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = typeOf(v).getDimSize(0);
  return ctx.reshape(v, shape);
}

LogicalResult instanceNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = typeOf(x).getRank();
  if (rank < 3 || ctx.inputType(1).getRank() != 1 ||
      ctx.inputType(2).getRank() != 1) {
    ctx.error() << "needs input [N, C, D...] and per-channel scale and bias";
    return failure();
  }
  Value y = ctx.create<LayerNormOp>(
      x, Value(), Value(), ctx.b.getI64IntegerAttr(2),
      ctx.b.getF64FloatAttr(ctx.getFloat("epsilon", 1e-5)));
  y = ctx.create<MulOp>(y, channelVector(ctx, ctx.input(1), rank));
  ctx.setOutput(0, ctx.create<AddOp>(y, channelVector(ctx, ctx.input(2), rank)));
  return success();
}

/// GroupNormalization: the channels in `num_groups` groups, each
/// normalised over its channels and positions, then scaled and shifted per
/// channel (opset 21) or per group (opset 18).
LogicalResult groupNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t groups = ctx.getInt("num_groups", 0), rank = xt.getRank();
  int64_t channels = rank >= 2 ? xt.getDimSize(1) : 0;
  if (rank < 3 || !xt.hasStaticShape() || groups < 1 || channels % groups) {
    ctx.error() << "needs a static [N, C, D...] input with C a multiple of "
                << "num_groups, got " << xt << " and num_groups " << groups;
    return failure();
  }
  int64_t per = ctx.opset < 21 ? groups : channels;
  for (unsigned i : {1u, 2u})
    if (ctx.inputType(i).getShape() != ArrayRef<int64_t>{per}) {
      ctx.error() << "input #" << i << " must be [" << per << "] at opset "
                  << ctx.opset << ", got " << ctx.inputType(i);
      return failure();
    }
  SmallVector<int64_t> grouped{xt.getDimSize(0), groups, -1};
  grouped[2] = xt.getNumElements() / (grouped[0] * groups);
  if (grouped[0] == 0) {
    ctx.setOutput(0, x);
    return success();
  }
  Value y = ctx.create<LayerNormOp>(
      ctx.reshape(x, grouped), Value(), Value(), ctx.b.getI64IntegerAttr(2),
      ctx.b.getF64FloatAttr(ctx.getFloat("epsilon", 1e-5)));
  y = ctx.reshape(y, xt.getShape());
  auto perChannel = [&](Value v) {
    if (per == channels)
      return v;
    // Opset 18: one value per group, repeated over its channels.
    Value b = ctx.broadcastTo(ctx.reshape(v, {groups, 1}),
                              {groups, channels / groups});
    return ctx.reshape(b, {channels});
  };
  y = ctx.create<MulOp>(y, channelVector(ctx, perChannel(ctx.input(1)), rank));
  ctx.setOutput(0, ctx.create<AddOp>(
                       y, channelVector(ctx, perChannel(ctx.input(2)), rank)));
  return success();
}

LogicalResult layerNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), xt.getRank());
  if (failed(axis))
    return failure();
  // The optional Mean and InvStdDev outputs, with the normalised dimensions
  // kept as size 1.
  if (ctx.wantsOutput(1) || ctx.wantsOutput(2)) {
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(*axis, xt.getRank()));
    Type t = xt.getElementType();
    Value mean = ctx.reduce<ReduceMeanOp>(x, axes, true);
    Value centered = ctx.create<SubOp>(x, mean);
    Value var = ctx.reduce<ReduceMeanOp>(ctx.create<MulOp>(centered, centered),
                                         axes, true);
    Value eps = ctx.scalar(t, ctx.getFloat("epsilon", 1e-5));
    ctx.setOutput(1, mean);
    ctx.setOutput(2, ctx.create<RsqrtOp>(ctx.create<AddOp>(var, eps)));
  }
  ArrayRef<int64_t> normalized = xt.getShape().drop_front(*axis);
  auto affine = [&](unsigned i) -> Value {
    if (!ctx.hasInput(i))
      return Value();
    Value v = ctx.input(i);
    RankedTensorType t = typeOf(v);
    if (t.getShape() == normalized)
      return v;
    return ctx.broadcastTo(v, normalized);
  };
  ctx.setOutput(0, ctx.create<LayerNormOp>(
                       x, affine(1), affine(2), ctx.b.getI64IntegerAttr(*axis),
                       ctx.b.getF64FloatAttr(ctx.getFloat("epsilon", 1e-5))));
  return success();
}

LogicalResult meanVarianceNorm(NodeContext &ctx) {
  Value x = ctx.input(0);
  SmallVector<int64_t> axes = ctx.getInts("axes");
  if (axes.empty())
    axes = {0, 2, 3};
  int64_t rank = typeOf(x).getRank();
  if (failed(ctx.normalizeAxes(axes, rank, /*allowRepeats=*/true)))
    return failure();
  Type t = typeOf(x).getElementType();
  Value mean = ctx.reduce<ReduceMeanOp>(x, axes, true);
  Value centered = ctx.create<SubOp>(x, mean);
  Value var = ctx.reduce<ReduceMeanOp>(ctx.create<MulOp>(centered, centered),
                                       axes, true);
  Value std = ctx.create<SqrtOp>(ctx.create<AddOp>(var, ctx.scalar(t, 1e-9)));
  ctx.setOutput(0, ctx.create<DivOp>(centered, std));
  return success();
}

/// LRN: each element divided by (bias + alpha / size * the sum of squares
/// over the `size` channels around it)^beta.
LogicalResult lrn(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t size = ctx.getInt("size", 0);
  if (xt.getRank() < 3 || size < 1 || xt.isDynamicDim(1)) {
    ctx.error() << "needs an [N, C, ...] input of known C and size >= 1, got "
                << xt << " and size " << size;
    return failure();
  }
  double alpha = ctx.getFloat("alpha", 1e-4), beta = ctx.getFloat("beta", 0.75),
         bias = ctx.getFloat("bias", 1.0);
  Type element = xt.getElementType();
  int64_t channels = xt.getDimSize(1), rank = xt.getRank();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  Value squares = ctx.padWithZeros(ctx.create<MulOp>(x, x), low, high);
  Value sum = ctx.sliceAlong(squares, 1, 0, channels);
  for (int64_t i = 1; i < size; ++i)
    sum = ctx.create<AddOp>(sum, ctx.sliceAlong(squares, 1, i, i + channels));
  Value scale = ctx.create<AddOp>(
      ctx.scalar(element, bias),
      ctx.create<MulOp>(sum, ctx.scalar(element, alpha / size)));
  ctx.setOutput(0, ctx.create<DivOp>(
                       x, ctx.create<PowOp>(scale, ctx.scalar(element, beta))));
  return success();
}

/// Softmax-family ops: one axis from opset 13, or (before) everything from
/// `axis` on, flattened into one dimension.
template <typename Build>
LogicalResult softmaxLike(NodeContext &ctx, Build build) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", ctx.opset < 13 ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  if (ctx.opset >= 13 || *axis == rank - 1) {
    ctx.setOutput(0, build(x, *axis));
    return success();
  }
  if (!xt.hasStaticShape()) {
    ctx.error() << "needs a static shape to flatten from axis " << *axis;
    return failure();
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < *axis ? outer : inner) *= xt.getDimSize(d);
  Value flat = ctx.reshape(x, {outer, inner});
  ctx.setOutput(0, ctx.reshape(build(flat, 1), xt.getShape()));
  return success();
}

LogicalResult softmax(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value v, int64_t axis) {
    return ctx.create<SoftmaxOp>(v, axis);
  });
}

LogicalResult logSoftmax(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value v, int64_t axis) {
    return ctx.create<LogSoftmaxOp>(v, axis);
  });
}

LogicalResult hardmax(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value v, int64_t axis) {
    RankedTensorType t = typeOf(v);
    Value idx = ctx.create<ArgMaxOp>(v, axis, false, false);
    return ctx.create<OneHotOp>(t, idx, t.getDimSize(axis), axis);
  });
}

LogicalResult dropout(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool training = false;
  double ratio = ctx.getFloat("ratio", 0.5);
  if (ctx.opset >= 12) {
    if (ctx.hasInput(2)) {
      FailureOr<SmallVector<int64_t>> t = ctx.constantInts(2, "training_mode");
      if (failed(t))
        return failure();
      training = !t->empty() && t->front();
    }
    if (ctx.hasInput(1)) {
      std::optional<reference::Tensor> r = ctx.constant(1);
      if (!r || r->getNumElements() != 1) {
        ctx.error() << "ratio must be known at import time";
        return failure();
      }
      ratio = r->getFloat(0);
    }
  } else if (ctx.opset < 7) {
    training = !ctx.getInt("is_test", 0);
  }
  RankedTensorType xt = typeOf(x);
  if (!training || ratio == 0.0) {
    ctx.setOutput(0, x);
    if (ctx.wantsOutput(1)) {
      if (!xt.hasStaticShape()) {
        ctx.error() << "the mask output needs a static shape";
        return failure();
      }
      ctx.setOutput(1, ctx.create<ConstantOp>(DenseElementsAttr::get(
                           xt.clone(ctx.b.getI1Type()), true)));
    }
    return success();
  }
  Value seed = ctx.scalar(ctx.b.getI64Type(), ctx.getInt("seed", 0));
  SmallVector<Value> r =
      ctx.createMulti<DropoutOp>(x, seed, ctx.b.getF64FloatAttr(ratio));
  ctx.setOutput(0, r[0]);
  ctx.setOutput(1, r[1]);
  return success();
}

/// NegativeLogLikelihoodLoss of log-probabilities [N, C, d...] and targets
/// [N, d...].
FailureOr<Value> nll(NodeContext &ctx, Value logProbs, Value targets,
                     Value weights) {
  RankedTensorType lt = typeOf(logProbs), tt = typeOf(targets);
  auto agree = [](int64_t a, int64_t b) {
    return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
  };
  bool fits = lt.getRank() >= 2 && tt.getRank() == lt.getRank() - 1;
  for (int64_t d = 0; fits && d < tt.getRank(); ++d)
    fits = agree(tt.getDimSize(d), lt.getDimSize(d == 0 ? 0 : d + 1));
  if (!fits || !isa<IntegerType>(tt.getElementType())) {
    ctx.error() << "needs input [N, C, d...] and integer target [N, d...], got "
                << lt << " and " << tt;
    return failure();
  }
  if (weights) {
    RankedTensorType wt = typeOf(weights);
    if (wt.getRank() != 1 || !agree(wt.getDimSize(0), lt.getDimSize(1)) ||
        wt.getElementType() != lt.getElementType()) {
      ctx.error() << "needs weight [C] of the input's type, got " << wt
                  << " for input " << lt;
      return failure();
    }
  }
  Type f = lt.getElementType(), it = tt.getElementType();
  std::string reduction = ctx.getString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    ctx.error() << "reduction '" << reduction
                << "' is not supported (none, sum, mean)";
    return failure();
  }
  Value mask;
  Value safe = targets;
  if (ctx.hasAttr("ignore_index")) {
    mask = ctx.create<CompareOp>(CompareDirection::ne, targets,
                                 ctx.scalar(it, ctx.getInt("ignore_index", 0)));
    safe = ctx.create<SelectOp>(mask, targets, ctx.scalar(it, 0));
  }
  SmallVector<int64_t> idxShape(tt.getShape());
  idxShape.insert(idxShape.begin() + 1, 1);
  Value picked = ctx.create<GatherElementsOp>(logProbs, ctx.reshape(safe, idxShape),
                                              ctx.b.getI64IntegerAttr(1));
  picked = ctx.reshape(picked, tt.getShape());
  Value w = weights ? ctx.create<GatherOp>(weights, safe, ctx.b.getI64IntegerAttr(0))
                    : ctx.broadcastTo(ctx.scalar(f, 1.0), tt.getShape());
  if (mask)
    w = ctx.create<SelectOp>(mask, w, ctx.scalar(f, 0.0));
  Value loss = ctx.create<NegOp>(ctx.create<MulOp>(picked, w));
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, tt.getRank()));
  Value sum = ctx.reduce<ReduceSumOp>(loss, all, false);
  if (reduction == "sum")
    return sum;
  return ctx.create<DivOp>(sum, ctx.reduce<ReduceSumOp>(w, all, false));
}

LogicalResult nllLoss(NodeContext &ctx) {
  FailureOr<Value> loss = nll(ctx, ctx.input(0), ctx.input(1),
                              ctx.hasInput(2) ? ctx.input(2) : Value());
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  return success();
}

LogicalResult softmaxCrossEntropy(NodeContext &ctx) {
  Value logProbs = ctx.create<LogSoftmaxOp>(ctx.input(0), 1);
  FailureOr<Value> loss = nll(ctx, logProbs, ctx.input(1),
                              ctx.hasInput(2) ? ctx.input(2) : Value());
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  ctx.setOutput(1, logProbs);
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerNNHandlers(HandlerMap &m) {
  m["MatMul"] = matmul;
  m["Gemm"] = gemm;
  m["Conv"] = conv;
  m["ConvTranspose"] = convTranspose;
  m["MaxPool"] = pool<true>;
  m["AveragePool"] = pool<false>;
  m["GlobalAveragePool"] = globalPool<ReduceMeanOp>;
  m["GlobalMaxPool"] = globalPool<ReduceMaxOp>;
  m["BatchNormalization"] = batchNorm;
  m["InstanceNormalization"] = instanceNorm;
  m["LayerNormalization"] = layerNorm;
  m["MeanVarianceNormalization"] = meanVarianceNorm;
  m["LRN"] = lrn;
  m["GroupNormalization"] = groupNorm;
  m["Softmax"] = softmax;
  m["LogSoftmax"] = logSoftmax;
  m["Hardmax"] = hardmax;
  m["Dropout"] = dropout;
  m["NegativeLogLikelihoodLoss"] = nllLoss;
  m["SoftmaxCrossEntropyLoss"] = softmaxCrossEntropy;
}
