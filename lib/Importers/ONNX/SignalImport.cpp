//===- SignalImport.cpp - ONNX signal processing ops ----------------------===//
//
// Part of Ober-Train. Windows and mel filter banks (constants computed from
// sizes known at import time), and DFT and STFT as products with cosine and
// sine matrices.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"
#include "TensorProto.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

/// Entries a computed constant may have (a window, a filter bank, a DFT
/// matrix): 2^26.
constexpr int64_t kMaxTableElements = int64_t(1) << 26;

/// The element type `output_datatype` names (FLOAT by default).
FailureOr<Type> outputType(NodeContext &ctx) {
  int64_t dt = ctx.getInt("output_datatype", onnx::TensorProto::FLOAT);
  Type t = elementTypeOf(ctx.b.getContext(), dt);
  if (!t || !t.isIntOrFloat()) {
    ctx.error() << "output_datatype " << dt << " is not a supported numeric "
                << "type";
    return failure();
  }
  return t;
}

/// Hann, Hamming and Blackman windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi
/// n / N), N the size (periodic) or the size - 1 (symmetric).
template <int Kind> LogicalResult window(NodeContext &ctx) {
  FailureOr<int64_t> size = ctx.constantInt(0, "size");
  FailureOr<Type> element = outputType(ctx);
  if (failed(size) || failed(element))
    return failure();
  if (*size < 0 || *size > kMaxTableElements) {
    ctx.error() << "size " << *size << " is outside [0, " << kMaxTableElements
                << "]";
    return failure();
  }
  static constexpr double kCoefficients[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = kCoefficients[Kind];
  double n = ctx.getInt("periodic", 1) ? *size : *size - 1;
  reference::Tensor t(*element, {*size});
  for (int64_t i = 0; i < *size; ++i) {
    double x = n > 0 ? 2 * M_PI * i / n : 0;
    t.setFloat(i, a[0] - a[1] * std::cos(x) + a[2] * std::cos(2 * x));
  }
  ctx.setOutput(0, ctx.constantTensor(t));
  return success();
}

/// MelWeightMatrix: triangular filters between mel-spaced frequencies, as
/// ONNX's reference computes them.
LogicalResult melWeightMatrix(NodeContext &ctx) {
  FailureOr<int64_t> bins = ctx.constantInt(0, "num_mel_bins"),
                     dft = ctx.constantInt(1, "dft_length"),
                     rate = ctx.constantInt(2, "sample_rate");
  FailureOr<double> lower = ctx.constantFloat(3, "lower_edge_hertz"),
                    upper = ctx.constantFloat(4, "upper_edge_hertz");
  FailureOr<Type> element = outputType(ctx);
  if (failed(bins) || failed(dft) || failed(rate) || failed(lower) ||
      failed(upper) || failed(element))
    return failure();
  int64_t spectrum = *dft / 2 + 1;
  if (*bins < 1 || *dft < 1 || *rate < 1 || *bins > kMaxTableElements ||
      spectrum > kMaxTableElements / *bins) {
    ctx.error() << "num_mel_bins, dft_length and sample_rate must be positive "
                << "(and the matrix at most " << kMaxTableElements
                << " entries), got " << *bins << ", " << *dft << ", " << *rate;
    return failure();
  }
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low = mel(*lower), step = (mel(*upper) - low) / (*bins + 2);
  SmallVector<int64_t> edge;
  for (int64_t i = 0; i < *bins + 2; ++i) {
    double hz = 700 * (std::pow(10, (i * step + low) / 2595) - 1);
    edge.push_back(static_cast<int64_t>(std::floor((*dft + 1) * hz / *rate)));
  }
  reference::Tensor t(*element, {spectrum, *bins});
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < spectrum)
      t.setFloat(row * *bins + col, v);
  };
  for (int64_t i = 0; i < *bins; ++i) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left)
      set(center, i, 1);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, double(j - left) / double(center - left));
    for (int64_t j = center; j < right; ++j)
      set(j, i, double(right - j) / double(right - center));
  }
  ctx.setOutput(0, ctx.constantTensor(t));
  return success();
}

/// The [length, bins] matrix of cos (or sin) of 2 pi k n / length.
Value dftMatrix(NodeContext &ctx, Type element, int64_t length, int64_t bins,
                bool sine) {
  reference::Tensor t(element, {length, bins});
  for (int64_t n = 0; n < length; ++n)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * double((n * k) % length) / double(length);
      t.setFloat(n * bins + k, sine ? std::sin(angle) : std::cos(angle));
    }
  return ctx.constantTensor(t);
}

/// The discrete Fourier transform of `signal` ([..., n, 1 or 2], real or
/// complex along dimension -2) at `length` points (truncated or zero
/// padded), `bins` of them kept: [..., bins, 2].
FailureOr<Value> dft(NodeContext &ctx, Value signal, int64_t length,
                     int64_t bins, bool inverse) {
  RankedTensorType st = typeOf(signal);
  int64_t rank = st.getRank(), n = st.getDimSize(rank - 2);
  int64_t parts = st.getDimSize(rank - 1);
  Type element = st.getElementType();
  if (!isa<FloatType>(element) || (parts != 1 && parts != 2)) {
    ctx.error() << "needs a float signal whose last dimension is 1 (real) or "
                << "2 (complex), got " << st;
    return failure();
  }
  if (length > kMaxTableElements / std::max<int64_t>(bins, 1)) {
    ctx.error() << "a transform of length " << length << " needs a matrix of "
                << length * bins << " entries (supported up to "
                << kMaxTableElements << ")";
    return failure();
  }
  if (length < n)
    signal = ctx.sliceAlong(signal, rank - 2, 0, length);
  if (length > n) {
    SmallVector<int64_t> low(rank, 0), high(rank, 0);
    high[rank - 2] = length - n;
    signal = ctx.padWithZeros(signal, low, high);
  }
  SmallVector<int64_t> flat(typeOf(signal).getShape().drop_back(2));
  flat.push_back(length);
  auto part = [&](int64_t p) {
    return ctx.reshape(ctx.sliceAlong(signal, rank - 1, p, p + 1), flat);
  };
  Value cosM = dftMatrix(ctx, element, length, bins, false);
  Value sinM = dftMatrix(ctx, element, length, bins, true);
  Value re = part(0);
  // Forward: X = sum x e^{-i..}; inverse: (1/length) sum x e^{+i..}.
  Value real = ctx.create<MatmulOp>(re, cosM);
  Value imag = ctx.create<NegOp>(ctx.create<MatmulOp>(re, sinM));
  if (inverse)
    imag = ctx.create<NegOp>(imag);
  if (parts == 2) {
    Value im = part(1);
    Value imCos = ctx.create<MatmulOp>(im, cosM);
    Value imSin = ctx.create<MatmulOp>(im, sinM);
    real = inverse ? ctx.create<SubOp>(real, imSin)
                   : ctx.create<AddOp>(real, imSin);
    imag = ctx.create<AddOp>(imag, imCos);
  }
  if (inverse) {
    Value scale = ctx.scalar(element, 1.0 / length);
    real = ctx.create<MulOp>(real, scale);
    imag = ctx.create<MulOp>(imag, scale);
  }
  return ctx.stack({real, imag}, typeOf(real).getRank());
}

LogicalResult dftOp(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (!xt.hasStaticShape() || xt.getRank() < 3) {
    ctx.error() << "needs a [batch, ..., signal, 1 or 2] input of static "
                << "shape, got " << xt;
    return failure();
  }
  int64_t rank = xt.getRank();
  // Opset 20 gives the axis as input #2 (default -2), counted with the
  // last dimension; before, an attribute (default 1).
  int64_t given = ctx.getInt("axis", 1);
  if (ctx.opset >= 20) {
    given = -2;
    if (ctx.hasInput(2)) {
      FailureOr<int64_t> a = ctx.constantInt(2, "axis");
      if (failed(a))
        return failure();
      given = *a;
    }
  }
  FailureOr<int64_t> axis = ctx.normalizeAxis(given, rank);
  if (failed(axis))
    return failure();
  if (*axis == 0 || *axis == rank - 1) {
    ctx.error() << "axis " << *axis << " must be a signal dimension (not the "
                << "batch or the last one)";
    return failure();
  }
  int64_t length = xt.getDimSize(*axis);
  if (ctx.hasInput(1)) {
    FailureOr<int64_t> l = ctx.constantInt(1, "dft_length");
    if (failed(l))
      return failure();
    length = *l;
  }
  bool inverse = ctx.getInt("inverse", 0), onesided = ctx.getInt("onesided", 0);
  if (length < 1 || (onesided && inverse)) {
    ctx.error() << "dft_length must be positive (got " << length
                << ") and onesided is for forward transforms";
    return failure();
  }
  // The signal axis next to the last.
  FailureOr<Value> y = dft(ctx, ctx.moveAxis(x, *axis, rank - 2), length,
                           onesided ? length / 2 + 1 : length, inverse);
  if (failed(y))
    return failure();
  ctx.setOutput(0, ctx.moveAxis(*y, rank - 2, *axis));
  return success();
}

/// STFT: frames of `frame_length` every `frame_step` samples, windowed,
/// transformed: [batch, frames, bins, 2].
LogicalResult stft(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (!xt.hasStaticShape() || xt.getRank() != 3) {
    ctx.error() << "needs a [batch, length, 1 or 2] signal of static shape, "
                << "got " << xt;
    return failure();
  }
  FailureOr<int64_t> step = ctx.constantInt(1, "frame_step");
  if (failed(step))
    return failure();
  Value window = ctx.hasInput(2) ? ctx.input(2) : Value();
  int64_t frameLength = -1;
  if (ctx.hasInput(3)) {
    FailureOr<int64_t> l = ctx.constantInt(3, "frame_length");
    if (failed(l))
      return failure();
    frameLength = *l;
  }
  if (window) {
    RankedTensorType wt = typeOf(window);
    if (wt.getRank() != 1 || wt.isDynamicDim(0) ||
        (frameLength >= 0 && wt.getDimSize(0) != frameLength)) {
      ctx.error() << "window must be 1-D of frame_length entries, got " << wt;
      return failure();
    }
    frameLength = wt.getDimSize(0);
  }
  int64_t length = xt.getDimSize(1);
  if (frameLength < 1 || frameLength > length || *step < 1) {
    ctx.error() << "frame_length (" << frameLength << ") must be in [1, "
                << length << "] and frame_step (" << *step << ") positive";
    return failure();
  }
  int64_t frames = (length - frameLength) / *step + 1;
  if (frames > kMaxTableElements / frameLength) {
    ctx.error() << frames << " frames of " << frameLength << " samples are "
                << "more than " << kMaxTableElements << " positions";
    return failure();
  }
  reference::Tensor at(ctx.b.getI64Type(), {frames, frameLength});
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < frameLength; ++i)
      at.setInt(f * frameLength + i, f * *step + i);
  // [batch, frames, frameLength, parts]
  Value framed = ctx.create<GatherOp>(x, ctx.constantTensor(at), 1);
  if (window)
    framed = ctx.create<MulOp>(
        framed,
        ctx.reshape(ctx.cast(window, xt.getElementType()), {frameLength, 1}));
  bool onesided = ctx.getInt("onesided", 1);
  FailureOr<Value> y = dft(ctx, framed, frameLength,
                           onesided ? frameLength / 2 + 1 : frameLength, false);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerSignalHandlers(HandlerMap &m) {
  m["HannWindow"] = window<0>;
  m["HammingWindow"] = window<1>;
  m["BlackmanWindow"] = window<2>;
  m["MelWeightMatrix"] = melWeightMatrix;
  m["DFT"] = dftOp;
  m["STFT"] = stft;
}
