//===- ElementwiseImport.cpp - ONNX elementwise ops -----------------------===//
//
// Part of Ober-Train. Unary math, activations, broadcasting binary ops,
// comparisons, logic, Where, Clip and casts.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"
#include "TensorProto.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

template <typename OpTy> LogicalResult unary(NodeContext &ctx) {
  ctx.setOutput(0, ctx.create<OpTy>(ctx.input(0)));
  return success();
}

LogicalResult identity(NodeContext &ctx) {
  if (const Sequence *seq = ctx.sequenceInput(0)) {
    ctx.setSequenceOutput(0, *seq);
    return success();
  }
  ctx.setOutput(0, ctx.input(0));
  return success();
}

/// Opset < 7 binary ops broadcast only with `broadcast = 1`, aligning the
/// right operand at `axis` (trailing when absent).
Value legacyBroadcast(NodeContext &ctx, Value lhs, Value rhs) {
  if (ctx.opset >= 7 || !ctx.getInt("broadcast", 0) || !ctx.hasAttr("axis"))
    return rhs;
  int64_t rank = typeOf(lhs).getRank(), rrank = typeOf(rhs).getRank();
  int64_t axis = ctx.getInt("axis", 0);
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> shape(rank, 1);
  for (int64_t i = 0; i < rrank && axis + i < rank; ++i)
    shape[axis + i] = typeOf(rhs).getDimSize(i);
  shape.resize(std::min<int64_t>(rank, axis + rrank));
  return ctx.reshape(rhs, shape);
}

template <typename OpTy> LogicalResult binary(NodeContext &ctx) {
  Value lhs = ctx.input(0);
  Value rhs = legacyBroadcast(ctx, lhs, ctx.input(1));
  ctx.setOutput(0, ctx.create<OpTy>(lhs, rhs));
  return success();
}

LogicalResult pow(NodeContext &ctx) {
  Value base = ctx.input(0), exponent = ctx.input(1);
  Type element = typeOf(base).getElementType();
  if (isa<FloatType>(element)) {
    ctx.setOutput(0, ctx.create<PowOp>(base, ctx.cast(exponent, element)));
    return success();
  }
  // Integer powers: compute in f64 (exact for the values that fit) and
  // convert back.
  Type f64 = ctx.b.getF64Type();
  Value r = ctx.create<PowOp>(ctx.cast(base, f64), ctx.cast(exponent, f64));
  ctx.setOutput(0, ctx.cast(ctx.create<RoundOp>(r), element));
  return success();
}

LogicalResult mod(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  Value r = ctx.create<RemOp>(a, b);
  if (ctx.getInt("fmod", 0)) {
    ctx.setOutput(0, r);
    return success();
  }
  if (isa<FloatType>(typeOf(a).getElementType())) {
    ctx.error() << "fmod = 0 needs integer inputs, got "
                << typeOf(a).getElementType();
    return failure();
  }
  // Python's modulo: the remainder takes the divisor's sign.
  Type element = typeOf(a).getElementType();
  Value zero = ctx.scalar(element, 0);
  Value rNeg = ctx.create<CompareOp>(CompareDirection::lt, r, zero);
  Value bNeg = ctx.create<CompareOp>(CompareDirection::lt, b, zero);
  Value rNonZero = ctx.create<CompareOp>(CompareDirection::ne, r, zero);
  Value fix = ctx.create<AndOp>(rNonZero, ctx.create<XorOp>(rNeg, bNeg));
  ctx.setOutput(0, ctx.create<SelectOp>(fix, ctx.create<AddOp>(r, b), r));
  return success();
}

template <CompareDirection D> LogicalResult compare(NodeContext &ctx) {
  Value lhs = ctx.input(0);
  Value rhs = legacyBroadcast(ctx, lhs, ctx.input(1));
  ctx.setOutput(0, ctx.create<CompareOp>(D, lhs, rhs));
  return success();
}

/// Sum, Mean, Max, Min over any number of inputs.
template <typename OpTy, bool mean = false>
LogicalResult variadic(NodeContext &ctx) {
  SmallVector<Value> inputs = ctx.presentInputs();
  if (inputs.empty()) {
    ctx.error() << "needs at least one input";
    return failure();
  }
  Value acc = inputs.front();
  for (Value v : ArrayRef(inputs).drop_front())
    acc = ctx.create<OpTy>(acc, v);
  if (mean)
    acc = ctx.create<DivOp>(
        acc, ctx.scalar(typeOf(acc).getElementType(), inputs.size()));
  ctx.setOutput(0, acc);
  return success();
}

/// select(x < 0, negative, x).
Value whereNegative(NodeContext &ctx, Value x, Value negative) {
  Value zero = ctx.scalar(typeOf(x).getElementType(), 0);
  Value isNeg = ctx.create<CompareOp>(CompareDirection::lt, x, zero);
  return ctx.create<SelectOp>(isNeg, negative, x);
}

LogicalResult leakyRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  Value scaled = ctx.create<MulOp>(x, ctx.scalar(t, ctx.getFloat("alpha", 0.01)));
  ctx.setOutput(0, whereNegative(ctx, x, scaled));
  return success();
}

/// alpha * (exp(x) - 1), the negative branch of ELU-like activations.
Value expm1Scaled(NodeContext &ctx, Value x, double alpha, double divisor) {
  Type t = typeOf(x).getElementType();
  Value in = divisor == 1.0 ? x : ctx.create<DivOp>(x, ctx.scalar(t, divisor));
  Value e = ctx.create<SubOp>(ctx.create<ExpOp>(in), ctx.scalar(t, 1.0));
  return ctx.create<MulOp>(e, ctx.scalar(t, alpha));
}

LogicalResult elu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  ctx.setOutput(0, whereNegative(ctx, x, expm1Scaled(ctx, x, alpha, 1.0)));
  return success();
}

LogicalResult celu(NodeContext &ctx) {
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0);
  ctx.setOutput(0, whereNegative(ctx, x, expm1Scaled(ctx, x, alpha, alpha)));
  return success();
}

LogicalResult selu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  double alpha = ctx.getFloat("alpha", 1.67326319217681884765625);
  double gamma = ctx.getFloat("gamma", 1.05070102214813232421875);
  Value e = whereNegative(ctx, x, expm1Scaled(ctx, x, alpha, 1.0));
  ctx.setOutput(0, ctx.create<MulOp>(e, ctx.scalar(t, gamma)));
  return success();
}

Value hardSigmoid(NodeContext &ctx, Value x, double alpha, double beta) {
  Type t = typeOf(x).getElementType();
  Value y = ctx.create<AddOp>(ctx.create<MulOp>(x, ctx.scalar(t, alpha)),
                              ctx.scalar(t, beta));
  y = ctx.create<MaxOp>(y, ctx.scalar(t, 0.0));
  return ctx.create<MinOp>(y, ctx.scalar(t, 1.0));
}

LogicalResult hardSigmoidOp(NodeContext &ctx) {
  ctx.setOutput(0, hardSigmoid(ctx, ctx.input(0), ctx.getFloat("alpha", 0.2),
                               ctx.getFloat("beta", 0.5)));
  return success();
}

LogicalResult hardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  ctx.setOutput(0, ctx.create<MulOp>(x, hardSigmoid(ctx, x, 1.0 / 6, 0.5)));
  return success();
}

/// log(1 + exp(x)), stable for large x: max(x, 0) + log(1 + exp(-|x|)).
Value softplus(NodeContext &ctx, Value x) {
  Type t = typeOf(x).getElementType();
  Value e = ctx.create<ExpOp>(ctx.create<NegOp>(ctx.create<AbsOp>(x)));
  Value l = ctx.create<LogOp>(ctx.create<AddOp>(e, ctx.scalar(t, 1.0)));
  return ctx.create<AddOp>(ctx.create<ReluOp>(x), l);
}

LogicalResult softplusOp(NodeContext &ctx) {
  ctx.setOutput(0, softplus(ctx, ctx.input(0)));
  return success();
}

LogicalResult softsign(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  Value d = ctx.create<AddOp>(ctx.create<AbsOp>(x), ctx.scalar(t, 1.0));
  ctx.setOutput(0, ctx.create<DivOp>(x, d));
  return success();
}

LogicalResult gelu(NodeContext &ctx) {
  std::string approximate = ctx.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    ctx.error() << "approximate '" << approximate << "' is not supported "
                << "(none, tanh)";
    return failure();
  }
  ctx.setOutput(0, ctx.create<GeluOp>(ctx.input(0),
                                      approximate == "tanh"
                                          ? GeluApproximation::tanh
                                          : GeluApproximation::none));
  return success();
}

LogicalResult mish(NodeContext &ctx) {
  Value x = ctx.input(0);
  ctx.setOutput(0, ctx.create<MulOp>(x, ctx.create<TanhOp>(softplus(ctx, x))));
  return success();
}

LogicalResult prelu(NodeContext &ctx) {
  Value x = ctx.input(0), slope = ctx.input(1);
  RankedTensorType xt = typeOf(x), st = typeOf(slope);
  // Per-channel slopes [C] of [N, C, ...] (PyTorch's export).
  if (st.getRank() == 1 && xt.getRank() > 2 && st.getDimSize(0) != 1 &&
      st.getDimSize(0) == xt.getDimSize(1) &&
      st.getDimSize(0) != xt.getShape().back()) {
    SmallVector<int64_t> shape(xt.getRank() - 1, 1);
    shape[0] = st.getDimSize(0);
    slope = ctx.reshape(slope, shape);
  }
  ctx.setOutput(0, whereNegative(ctx, x, ctx.create<MulOp>(x, slope)));
  return success();
}

LogicalResult thresholdedRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  Value keep = ctx.create<CompareOp>(CompareDirection::gt, x,
                                     ctx.scalar(t, ctx.getFloat("alpha", 1.0)));
  ctx.setOutput(0, ctx.create<SelectOp>(keep, x, ctx.scalar(t, 0.0)));
  return success();
}

LogicalResult shrink(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  double lambd = ctx.getFloat("lambd", 0.5), bias = ctx.getFloat("bias", 0.0);
  Value below = ctx.create<CompareOp>(CompareDirection::lt, x, ctx.scalar(t, -lambd));
  Value above = ctx.create<CompareOp>(CompareDirection::gt, x, ctx.scalar(t, lambd));
  Value plus = ctx.create<AddOp>(x, ctx.scalar(t, bias));
  Value minus = ctx.create<SubOp>(x, ctx.scalar(t, bias));
  Value y = ctx.create<SelectOp>(above, minus, ctx.scalar(t, 0.0));
  ctx.setOutput(0, ctx.create<SelectOp>(below, plus, y));
  return success();
}

LogicalResult clip(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  Value lo, hi;
  if (ctx.opset < 11) {
    if (ctx.hasAttr("min"))
      lo = ctx.scalar(t, ctx.getFloat("min", 0));
    if (ctx.hasAttr("max"))
      hi = ctx.scalar(t, ctx.getFloat("max", 0));
  } else {
    if (ctx.hasInput(1))
      lo = ctx.input(1);
    if (ctx.hasInput(2))
      hi = ctx.input(2);
  }
  if (lo)
    x = ctx.create<MaxOp>(x, lo);
  if (hi)
    x = ctx.create<MinOp>(x, hi);
  ctx.setOutput(0, x);
  return success();
}

LogicalResult isNaN(NodeContext &ctx) {
  Value x = ctx.input(0);
  ctx.setOutput(0, ctx.create<CompareOp>(CompareDirection::ne, x, x));
  return success();
}

LogicalResult isInf(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type t = typeOf(x).getElementType();
  double inf = std::numeric_limits<double>::infinity();
  bool pos = ctx.getInt("detect_positive", 1), neg = ctx.getInt("detect_negative", 1);
  Value isPos = ctx.create<CompareOp>(CompareDirection::eq, x, ctx.scalar(t, inf));
  Value isNeg = ctx.create<CompareOp>(CompareDirection::eq, x, ctx.scalar(t, -inf));
  Value r;
  if (pos && neg)
    r = ctx.create<OrOp>(isPos, isNeg);
  else if (pos)
    r = isPos;
  else if (neg)
    r = isNeg;
  else // x < x is false everywhere, NaN included.
    r = ctx.create<CompareOp>(CompareDirection::lt, x, x);
  ctx.setOutput(0, r);
  return success();
}

/// Input #0 converted to `element` (named `name` in errors): strings
/// neither way.
LogicalResult castTo(NodeContext &ctx, Type element, StringRef name) {
  Type from = ctx.inputType(0).getElementType();
  if (!element || isa<StringType>(element) || isa<StringType>(from)) {
    ctx.error() << "cast from " << from << " to " << name
                << " is not supported (supported: FLOAT, DOUBLE, FLOAT16, "
                   "BFLOAT16, BOOL, INT8, INT32, INT64; no STRING)";
    return failure();
  }
  ctx.setOutput(0, ctx.cast(ctx.input(0), element));
  return success();
}

LogicalResult castOp(NodeContext &ctx) {
  int64_t to = ctx.getInt("to", 0);
  return castTo(ctx, elementTypeOf(ctx.b.getContext(), to), dataTypeName(to));
}

LogicalResult castLike(NodeContext &ctx) {
  Type element = ctx.inputType(1).getElementType();
  std::string name;
  llvm::raw_string_ostream(name) << element;
  return castTo(ctx, element, name);
}

LogicalResult where(NodeContext &ctx) {
  ctx.setOutput(0, ctx.create<SelectOp>(ctx.input(0), ctx.input(1), ctx.input(2)));
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerElementwiseHandlers(HandlerMap &m) {
  m["Abs"] = unary<AbsOp>;
  m["Neg"] = unary<NegOp>;
  m["Exp"] = unary<ExpOp>;
  m["Log"] = unary<LogOp>;
  m["Sqrt"] = unary<SqrtOp>;
  m["Tanh"] = unary<TanhOp>;
  m["Sigmoid"] = unary<SigmoidOp>;
  m["Relu"] = unary<ReluOp>;
  m["Erf"] = unary<ErfOp>;
  m["Reciprocal"] = unary<ReciprocalOp>;
  m["Sin"] = unary<SinOp>;
  m["Cos"] = unary<CosOp>;
  m["Tan"] = unary<TanOp>;
  m["Asin"] = unary<AsinOp>;
  m["Acos"] = unary<AcosOp>;
  m["Atan"] = unary<AtanOp>;
  m["Sinh"] = unary<SinhOp>;
  m["Cosh"] = unary<CoshOp>;
  m["Asinh"] = unary<AsinhOp>;
  m["Acosh"] = unary<AcoshOp>;
  m["Atanh"] = unary<AtanhOp>;
  m["Floor"] = unary<FloorOp>;
  m["Ceil"] = unary<CeilOp>;
  m["Round"] = unary<RoundOp>;
  m["Sign"] = unary<SignOp>;
  m["Not"] = unary<NotOp>;
  m["Identity"] = identity;
  m["Add"] = binary<AddOp>;
  m["Sub"] = binary<SubOp>;
  m["Mul"] = binary<MulOp>;
  m["Div"] = binary<DivOp>;
  m["Pow"] = pow;
  m["Mod"] = mod;
  m["And"] = binary<AndOp>;
  m["Or"] = binary<OrOp>;
  m["Xor"] = binary<XorOp>;
  m["Equal"] = compare<CompareDirection::eq>;
  m["Less"] = compare<CompareDirection::lt>;
  m["LessOrEqual"] = compare<CompareDirection::le>;
  m["Greater"] = compare<CompareDirection::gt>;
  m["GreaterOrEqual"] = compare<CompareDirection::ge>;
  m["Sum"] = variadic<AddOp>;
  m["Mean"] = variadic<AddOp, true>;
  m["Max"] = variadic<MaxOp>;
  m["Min"] = variadic<MinOp>;
  m["LeakyRelu"] = leakyRelu;
  m["Elu"] = elu;
  m["Celu"] = celu;
  m["Selu"] = selu;
  m["HardSigmoid"] = hardSigmoidOp;
  m["HardSwish"] = hardSwish;
  m["Softplus"] = softplusOp;
  m["Softsign"] = softsign;
  m["Mish"] = mish;
  m["Gelu"] = gelu;
  m["PRelu"] = prelu;
  m["ThresholdedRelu"] = thresholdedRelu;
  m["Shrink"] = shrink;
  m["Clip"] = clip;
  m["IsNaN"] = isNaN;
  m["IsInf"] = isInf;
  m["Cast"] = castOp;
  m["CastLike"] = castLike;
  m["Where"] = where;
}
