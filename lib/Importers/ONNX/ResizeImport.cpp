//===- ResizeImport.cpp - ONNX Resize and Upsample ------------------------===//
//
// Part of Ober-Train. Resizing is separable: each resized axis becomes
// gathers of the neighbouring input positions weighted by interpolation
// coefficients, both computed here from the static sizes. The result is
// plain ober ops (gather, mul, add), so autodiff and sharding need nothing
// special.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

enum class Mode { Nearest, Linear, Cubic };

struct ResizeSpec {
  Mode mode = Mode::Nearest;
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
};

/// The input coordinate of output position `x` along an axis.
double originalCoordinate(const std::string &transform, double x, double scale,
                          int64_t in, double out) {
  if (transform == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (transform == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (transform == "align_corners")
    return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
  if (transform == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  return x / scale; // asymmetric
}

int64_t nearestIndex(const std::string &mode, double x) {
  if (mode == "floor")
    return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil")
    return static_cast<int64_t>(std::ceil(x));
  double f = std::floor(x);
  if (x - f == 0.5)
    return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

void cubicCoefficients(double r, double a, double c[4]) {
  auto near = [&](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };
  auto far = [&](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };
  c[0] = far(r + 1);
  c[1] = near(r);
  c[2] = near(1 - r);
  c[3] = far(2 - r);
}

/// Resizes `x` along `axis` from its size to `out` positions.
/// `length` is the resized length the coordinate transforms use: the
/// output size, or the input size times the scale when scales are given
/// (ONNX's definition, not rounded).
Value resizeAxis(NodeContext &ctx, Value x, int64_t axis, int64_t out,
                 double scale, double length, const ResizeSpec &spec) {
  RankedTensorType xt = typeOf(x);
  int64_t in = xt.getDimSize(axis);
  int taps = spec.mode == Mode::Nearest ? 1 : spec.mode == Mode::Linear ? 2 : 4;
  std::vector<std::vector<int64_t>> index(taps, std::vector<int64_t>(out));
  std::vector<std::vector<double>> weight(taps, std::vector<double>(out));
  auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t i = 0; i < out; ++i) {
    double xo = originalCoordinate(spec.transform, i, scale, in, length);
    if (spec.mode == Mode::Nearest) {
      index[0][i] = clampIndex(nearestIndex(spec.nearest, xo));
      weight[0][i] = 1.0;
      continue;
    }
    if (spec.mode == Mode::Linear)
      xo = std::clamp<double>(xo, 0, in - 1);
    double x0 = std::floor(xo), r = xo - x0;
    double c[4];
    if (spec.mode == Mode::Linear) {
      c[0] = 1 - r;
      c[1] = r;
    } else {
      cubicCoefficients(r, spec.cubicA, c);
    }
    int64_t first = static_cast<int64_t>(x0) - (taps == 4 ? 1 : 0);
    double sum = 0;
    for (int t = 0; t < taps; ++t) {
      int64_t p = first + t;
      if (spec.excludeOutside && (p < 0 || p >= in))
        c[t] = 0;
      sum += c[t];
      index[t][i] = clampIndex(p);
    }
    for (int t = 0; t < taps; ++t)
      weight[t][i] = spec.excludeOutside && sum != 0 ? c[t] / sum : c[t];
  }
  Type element = xt.getElementType();
  SmallVector<int64_t> weightShape(xt.getRank(), 1);
  weightShape[axis] = out;
  Value acc;
  for (int t = 0; t < taps; ++t) {
    Value idx = ctx.constantInts(index[t], ctx.b.getI64Type());
    Value g = ctx.create<GatherOp>(x, idx, axis);
    if (spec.mode != Mode::Nearest) {
      reference::Tensor w(element, {out});
      for (int64_t i = 0; i < out; ++i)
        w.setFloat(i, weight[t][i]);
      g = ctx.create<MulOp>(g, ctx.reshape(ctx.constantTensor(w), weightShape));
    }
    acc = acc ? ctx.create<AddOp>(acc, g) : g;
  }
  return acc;
}

/// Resizes every axis whose size or scale changes.
LogicalResult resizeAll(NodeContext &ctx, Value x, ArrayRef<double> scales,
                        ArrayRef<int64_t> sizes, const ResizeSpec &spec) {
  RankedTensorType xt = typeOf(x);
  if (!xt.hasStaticShape()) {
    ctx.error() << "needs a static input shape, got " << xt;
    return failure();
  }
  if (spec.mode != Mode::Nearest && !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "linear and cubic modes need a float input";
    return failure();
  }
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    int64_t in = xt.getDimSize(d);
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(in * scales[d]))
                                : sizes[d];
    double scale = sizes.empty() ? scales[d] : static_cast<double>(out) / in;
    constexpr int64_t kMaxSize = 1 << 24;
    if (out < 1 || out > kMaxSize || !(scale > 0)) {
      ctx.error() << "resizing dimension " << d << " of size " << in
                  << " gives no output";
      return failure();
    }
    if (out == in && scale == 1.0)
      continue;
    double length = sizes.empty() ? in * scales[d] : out;
    x = resizeAxis(ctx, x, d, out, scale, length, spec);
  }
  ctx.setOutput(0, x);
  return success();
}

FailureOr<Mode> parseMode(NodeContext &ctx) {
  std::string mode = ctx.getString("mode", "nearest");
  if (mode == "nearest")
    return Mode::Nearest;
  if (mode == "linear" || mode == "bilinear")
    return Mode::Linear;
  if (mode == "cubic")
    return Mode::Cubic;
  ctx.error() << "mode '" << mode << "' is not supported (nearest, linear, "
              << "cubic)";
  return failure();
}

FailureOr<SmallVector<double>> floats(NodeContext &ctx, unsigned i) {
  std::optional<reference::Tensor> t = ctx.constant(i);
  if (!t) {
    ctx.error() << "scales must be known at import time";
    return failure();
  }
  SmallVector<double> out;
  for (int64_t k = 0; k < t->getNumElements(); ++k)
    out.push_back(t->getFloat(k));
  return out;
}

LogicalResult resize(NodeContext &ctx) {
  Value x = ctx.input(0);
  ResizeSpec spec;
  FailureOr<Mode> mode = parseMode(ctx);
  if (failed(mode))
    return failure();
  spec.mode = *mode;
  if (ctx.opset < 11) {
    spec.transform = "asymmetric";
    spec.nearest = "floor";
    FailureOr<SmallVector<double>> scales = floats(ctx, 1);
    if (failed(scales))
      return failure();
    return resizeAll(ctx, x, *scales, {}, spec);
  }
  spec.transform = ctx.getString("coordinate_transformation_mode", "half_pixel");
  spec.nearest = ctx.getString("nearest_mode", "round_prefer_floor");
  spec.cubicA = ctx.getFloat("cubic_coeff_a", -0.75);
  spec.excludeOutside = ctx.getInt("exclude_outside", 0);
  static const char *transforms[] = {"half_pixel", "pytorch_half_pixel",
                                     "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(transforms, spec.transform)) {
    ctx.error() << "coordinate_transformation_mode '" << spec.transform
                << "' is not supported (half_pixel, pytorch_half_pixel, "
                   "align_corners, asymmetric, tf_half_pixel_for_nn)";
    return failure();
  }
  static const char *nearestModes[] = {"round_prefer_floor",
                                       "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(nearestModes, spec.nearest)) {
    ctx.error() << "nearest_mode '" << spec.nearest << "' is not supported";
    return failure();
  }
  int64_t rank = typeOf(x).getRank();
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> sizes = ctx.constantInts(3, "sizes");
    if (failed(sizes))
      return failure();
    if (static_cast<int64_t>(sizes->size()) != rank) {
      ctx.error() << "sizes must have " << rank << " entries";
      return failure();
    }
    return resizeAll(ctx, x, {}, *sizes, spec);
  }
  FailureOr<SmallVector<double>> scales = floats(ctx, 2);
  if (failed(scales))
    return failure();
  if (static_cast<int64_t>(scales->size()) != rank) {
    ctx.error() << "scales must have " << rank << " entries";
    return failure();
  }
  return resizeAll(ctx, x, *scales, {}, spec);
}

LogicalResult upsample(NodeContext &ctx) {
  ResizeSpec spec;
  FailureOr<Mode> mode = parseMode(ctx);
  if (failed(mode))
    return failure();
  spec.mode = *mode;
  spec.transform = "asymmetric";
  spec.nearest = "floor";
  SmallVector<double> scales;
  if (ctx.opset >= 9) {
    FailureOr<SmallVector<double>> s = floats(ctx, 1);
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    const onnx::AttributeProto *a = ctx.attr("scales");
    if (a)
      scales.assign(a->floats().begin(), a->floats().end());
  }
  if (static_cast<int64_t>(scales.size()) != ctx.inputType(0).getRank()) {
    ctx.error() << "scales must have one entry per dimension";
    return failure();
  }
  return resizeAll(ctx, ctx.input(0), scales, {}, spec);
}

} // namespace

void mlir::ober::onnx_import::registerResizeHandlers(HandlerMap &m) {
  m["Resize"] = resize;
  m["Upsample"] = upsample;
}
