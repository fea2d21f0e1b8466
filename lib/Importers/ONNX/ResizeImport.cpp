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

#include <array>

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
  if (transform == "half_pixel_symmetric") {
    // Opset 19: half_pixel about the centre when the output size rounds.
    double adjustment = out > 0 ? std::floor(out) / out : 1.0;
    double offset = in / 2.0 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
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
    // Sizes and scales together (keep_aspect_ratio_policy): the sizes
    // with the one scale.
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(in * scales[d]))
                                : sizes[d];
    double scale = scales.empty() ? static_cast<double>(out) / in : scales[d];
    constexpr int64_t kMaxSize = 1 << 24;
    if (out < 1 || out > kMaxSize || !(scale > 0)) {
      ctx.error() << "resizing dimension " << d << " of size " << in
                  << " gives no output";
      return failure();
    }
    if (out == in && scale == 1.0)
      continue;
    double length = scales.empty() ? out : in * scales[d];
    x = resizeAxis(ctx, x, d, out, scale, length, spec);
  }
  ctx.setOutput(0, x);
  return success();
}

/// False, with an error, for `antialias` (opset 18) on a linear or cubic
/// resize that shrinks an axis: ober has no antialiasing filter.
bool checkAntialias(NodeContext &ctx, const ResizeSpec &spec,
                    ArrayRef<int64_t> sizes, ArrayRef<double> scales) {
  if (!ctx.getInt("antialias", 0) || spec.mode == Mode::Nearest)
    return true;
  RankedTensorType xt = typeOf(ctx.input(0));
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    bool shrinks = scales.empty() ? sizes[d] < xt.getDimSize(d) : scales[d] < 1;
    if (shrinks) {
      ctx.error() << "antialias = 1 when shrinking dimension " << d
                  << " is not supported";
      return false;
    }
  }
  return true;
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
                                     "tf_half_pixel_for_nn",
                                     "half_pixel_symmetric"};
  if (!llvm::is_contained(transforms, spec.transform) ||
      (spec.transform == "half_pixel_symmetric" && ctx.opset < 19)) {
    ctx.error() << "coordinate_transformation_mode '" << spec.transform
                << "' is not supported (half_pixel, pytorch_half_pixel, "
                   "align_corners, asymmetric, tf_half_pixel_for_nn; "
                   "half_pixel_symmetric from opset 19)";
    return failure();
  }
  static const char *nearestModes[] = {"round_prefer_floor",
                                       "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(nearestModes, spec.nearest)) {
    ctx.error() << "nearest_mode '" << spec.nearest << "' is not supported";
    return failure();
  }
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  // Opset 18: scales or sizes for the listed axes only.
  FailureOr<SmallVector<int64_t>> listed = ctx.axesOrAll(rank);
  if (failed(listed))
    return failure();
  SmallVector<int64_t> &axes = *listed;
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(3, "sizes");
    if (failed(given))
      return failure();
    if (given->size() != axes.size()) {
      ctx.error() << "sizes must have " << axes.size() << " entries";
      return failure();
    }
    SmallVector<int64_t> sizes(xt.getShape());
    for (auto [a, v] : llvm::zip(axes, *given))
      sizes[a] = v;
    std::string policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch")
      return checkAntialias(ctx, spec, sizes, {}) ? resizeAll(ctx, x, {}, sizes, spec)
                                                   : failure();
    if (policy != "not_larger" && policy != "not_smaller") {
      ctx.error() << "keep_aspect_ratio_policy '" << policy << "' is not "
                  << "supported (stretch, not_larger, not_smaller)";
      return failure();
    }
    // One scale for the listed axes, the sizes rounded from it.
    double scale = policy == "not_larger" ? INFINITY : 0.0;
    for (int64_t a : axes) {
      double r = double(sizes[a]) / double(xt.getDimSize(a));
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    SmallVector<double> scales(rank, 1.0);
    for (int64_t a : axes) {
      scales[a] = scale;
      sizes[a] = static_cast<int64_t>(std::round(scale * xt.getDimSize(a)));
    }
    return checkAntialias(ctx, spec, sizes, scales)
               ? resizeAll(ctx, x, scales, sizes, spec)
               : failure();
  }
  FailureOr<SmallVector<double>> given = floats(ctx, 2);
  if (failed(given))
    return failure();
  if (given->size() != axes.size()) {
    ctx.error() << "scales must have " << axes.size() << " entries";
    return failure();
  }
  SmallVector<double> scales(rank, 1.0);
  for (auto [a, v] : llvm::zip(axes, *given))
    scales[a] = v;
  return checkAntialias(ctx, spec, {}, scales) ? resizeAll(ctx, x, scales, {}, spec)
                                               : failure();
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

/// GridSample's arithmetic on [N, Ho, Wo] coordinate tensors of the
/// input's float type, as PyTorch's grid_sample computes it.
struct GridSampler {
  NodeContext &ctx;
  Type element;
  Value x;           // [N, C, H * W]
  int64_t n, c, h, w; // the input's sizes
  SmallVector<int64_t> out; // [Ho, Wo]
  bool alignCorners;
  std::string padding;

  Value num(double v) { return ctx.scalar(element, v); }
  Value add(Value a, Value b) { return ctx.create<AddOp>(a, b); }
  Value sub(Value a, Value b) { return ctx.create<SubOp>(a, b); }
  Value mul(Value a, Value b) { return ctx.create<MulOp>(a, b); }
  Value clip(Value v, double lo, double hi) {
    return ctx.create<MinOp>(ctx.create<MaxOp>(v, num(lo)), num(hi));
  }
  /// A grid coordinate in [-1, 1] as a position along an axis of `size`.
  Value unnormalize(Value g, int64_t size) {
    if (alignCorners)
      return mul(add(g, num(1)), num((size - 1) / 2.0));
    return ctx.create<DivOp>(sub(mul(add(g, num(1)), num(size)), num(1)),
                             num(2));
  }
  /// `v` reflected into [low, high] = [twiceLow / 2, twiceHigh / 2].
  Value reflect(Value v, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return mul(v, num(0));
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value d = ctx.create<AbsOp>(sub(v, num(low)));
    Value extra = ctx.create<RemOp>(d, num(span));
    Value flips = ctx.create<FloorOp>(ctx.create<DivOp>(d, num(span)));
    Value even = ctx.create<CompareOp>(
        CompareDirection::eq, ctx.create<RemOp>(flips, num(2)), num(0));
    return ctx.create<SelectOp>(even, add(extra, num(low)),
                                sub(num(span + low), extra));
  }
  /// A coordinate (or tap index) brought inside by the padding mode;
  /// `zeros` leaves it.
  Value bound(Value v, int64_t size) {
    if (padding == "border")
      return clip(v, 0, size - 1);
    if (padding == "reflection")
      return clip(alignCorners ? reflect(v, 0, 2 * (size - 1))
                               : reflect(v, -1, 2 * size - 1),
                  0, size - 1);
    return v;
  }
  /// The input at integral positions (yi, xi) ([N, Ho, Wo] each), zero
  /// outside: [N, C, Ho, Wo].
  Value tap(Value yi, Value xi) {
    Value inside = ctx.create<AndOp>(
        ctx.create<AndOp>(ctx.create<CompareOp>(CompareDirection::ge, xi, num(0)),
                          ctx.create<CompareOp>(CompareDirection::le, xi, num(w - 1))),
        ctx.create<AndOp>(ctx.create<CompareOp>(CompareDirection::ge, yi, num(0)),
                          ctx.create<CompareOp>(CompareDirection::le, yi, num(h - 1))));
    Value flat = add(mul(clip(yi, 0, h - 1), num(w)), clip(xi, 0, w - 1));
    int64_t p = out[0] * out[1];
    Value idx = ctx.broadcastTo(
        ctx.reshape(ctx.cast(flat, ctx.b.getI64Type()), {n, 1, p}), {n, c, p});
    Value v = ctx.reshape(ctx.create<GatherElementsOp>(x, idx, 2),
                          {n, c, out[0], out[1]});
    Value keep = ctx.cast(ctx.reshape(inside, {n, 1, out[0], out[1]}), element);
    return mul(v, keep);
  }
  /// `v` ([N, C, Ho, Wo]) times a per-position weight ([N, Ho, Wo]).
  Value weighted(Value v, Value weight) {
    return mul(v, ctx.reshape(weight, {n, 1, out[0], out[1]}));
  }
  /// The cubic convolution weights (A = -0.75) of the 4 taps at t in [0, 1).
  std::array<Value, 4> cubic(Value t) {
    constexpr double a = -0.75;
    auto nearW = [&](Value d) { // (a+2)d^3 - (a+3)d^2 + 1
      return add(mul(mul(sub(mul(num(a + 2), d), num(a + 3)), d), d), num(1));
    };
    auto farW = [&](Value d) { // a d^3 - 5a d^2 + 8a d - 4a
      return sub(mul(add(mul(sub(mul(num(a), d), num(5 * a)), d), num(8 * a)),
                     d),
                 num(4 * a));
    };
    return {farW(add(t, num(1))), nearW(t), nearW(sub(num(1), t)),
            farW(sub(num(2), t))};
  }
};

LogicalResult gridSample(NodeContext &ctx) {
  Value x = ctx.input(0), grid = ctx.input(1);
  RankedTensorType xt = typeOf(x), gt = typeOf(grid);
  if (xt.getRank() != 4 || !xt.hasStaticShape() || !gt.hasStaticShape() ||
      gt.getRank() != 4 || gt.getDimSize(0) != xt.getDimSize(0) ||
      gt.getDimSize(3) != 2 || !isa<FloatType>(xt.getElementType())) {
    ctx.error() << "needs a static float [N, C, H, W] input and an [N, Ho, "
                << "Wo, 2] grid, got " << xt << " and " << gt;
    return failure();
  }
  std::string mode = ctx.getString("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  if (mode == "linear")
    mode = "bilinear";
  if (mode == "cubic")
    mode = "bicubic";
  std::string padding = ctx.getString("padding_mode", "zeros");
  if ((mode != "bilinear" && mode != "nearest" && mode != "bicubic") ||
      (padding != "zeros" && padding != "border" && padding != "reflection")) {
    ctx.error() << "mode '" << mode << "' or padding_mode '" << padding
                << "' is not supported (bilinear/linear, nearest, "
                << "bicubic/cubic; zeros, border, reflection)";
    return failure();
  }
  Type element = xt.getElementType();
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3);
  GridSampler s{ctx, element, ctx.reshape(x, {n, c, h * w}), n, c, h, w,
                {gt.getDimSize(1), gt.getDimSize(2)},
                ctx.getInt("align_corners", 0) != 0, padding};
  grid = ctx.cast(grid, element);
  auto component = [&](int64_t i) {
    return ctx.reshape(ctx.sliceAlong(grid, 3, i, i + 1), {n, s.out[0], s.out[1]});
  };
  Value gx = s.unnormalize(component(0), w), gy = s.unnormalize(component(1), h);
  Value result;
  if (mode == "bicubic") {
    Value x0 = ctx.create<FloorOp>(gx), y0 = ctx.create<FloorOp>(gy);
    std::array<Value, 4> wx = s.cubic(s.sub(gx, x0)), wy = s.cubic(s.sub(gy, y0));
    for (int64_t i = 0; i < 4; ++i) {
      Value yi = s.bound(s.add(y0, s.num(i - 1)), h);
      Value row;
      for (int64_t j = 0; j < 4; ++j) {
        Value xi = s.bound(s.add(x0, s.num(j - 1)), w);
        Value v = s.weighted(s.tap(yi, xi), wx[j]);
        row = row ? s.add(row, v) : v;
      }
      row = s.weighted(row, wy[i]);
      result = result ? s.add(result, row) : row;
    }
  } else {
    gx = s.bound(gx, w);
    gy = s.bound(gy, h);
    if (mode == "nearest") {
      result = s.tap(ctx.create<RoundOp>(gy), ctx.create<RoundOp>(gx));
    } else {
      Value x0 = ctx.create<FloorOp>(gx), y0 = ctx.create<FloorOp>(gy);
      Value x1 = s.add(x0, s.num(1)), y1 = s.add(y0, s.num(1));
      Value fx = s.sub(gx, x0), fy = s.sub(gy, y0);
      Value ex = s.sub(s.num(1), fx), ey = s.sub(s.num(1), fy);
      result = s.add(
          s.add(s.weighted(s.tap(y0, x0), s.mul(ey, ex)),
                s.weighted(s.tap(y0, x1), s.mul(ey, fx))),
          s.add(s.weighted(s.tap(y1, x0), s.mul(fy, ex)),
                s.weighted(s.tap(y1, x1), s.mul(fy, fx))));
    }
  }
  ctx.setOutput(0, result);
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerResizeHandlers(HandlerMap &m) {
  m["Resize"] = resize;
  m["Upsample"] = upsample;
  m["GridSample"] = gridSample;
}
