//===- ElementwiseVJP.cpp - gradients of elementwise ops ------------------===//
//
// Part of Ober-Train. Binary ops sum their gradients back over broadcast
// dimensions.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

namespace {

/// dy/dx of a unary op as an expression of x and y, or null for ops whose
/// derivative is zero almost everywhere.
FailureOr<Value> unaryDerivative(GradBuilder &gb, Operation *op, Value x,
                                 Value y) {
  auto c = [&](double v) { return gb.scalarLike(x, v); };
  auto mul = [&](Value a, Value b) { return gb.create<MulOp>(a, b); };
  auto add = [&](Value a, Value b) { return gb.create<AddOp>(a, b); };
  auto sub = [&](Value a, Value b) { return gb.create<SubOp>(a, b); };
  auto div = [&](Value a, Value b) { return gb.create<DivOp>(a, b); };
  auto sq = [&](Value a) { return mul(a, a); };
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](NegOp) { return c(-1.0); })
      .Case([&](AbsOp) { return gb.create<SignOp>(x); })
      .Case([&](ExpOp) { return y; })
      .Case([&](LogOp) { return gb.create<ReciprocalOp>(x); })
      .Case([&](SqrtOp) { return div(c(0.5), y); })
      .Case([&](RsqrtOp) { return mul(c(-0.5), mul(y, sq(y))); })
      .Case([&](TanhOp) { return sub(c(1.0), sq(y)); })
      .Case([&](SigmoidOp) { return mul(y, sub(c(1.0), y)); })
      .Case([&](ReluOp) {
        Value pos = gb.create<CompareOp>(CompareDirection::gt, x, c(0.0));
        return gb.create<SelectOp>(pos, c(1.0), c(0.0));
      })
      .Case([&](SiluOp) {
        Value s = gb.create<SigmoidOp>(x);
        return mul(s, add(c(1.0), mul(x, sub(c(1.0), s))));
      })
      .Case([&](GeluOp g) -> Value {
        if (g.getApproximate() == GeluApproximation::tanh) {
          double k = std::sqrt(2.0 / M_PI);
          Value x2 = sq(x);
          Value u = mul(mul(x, add(c(1.0), mul(c(0.044715), x2))), c(k));
          Value t = gb.create<TanhOp>(u);
          Value du = mul(c(k), add(c(1.0), mul(c(3 * 0.044715), x2)));
          Value left = mul(c(0.5), add(c(1.0), t));
          Value right = mul(mul(c(0.5), x), mul(sub(c(1.0), sq(t)), du));
          return add(left, right);
        }
        Value cdf = mul(c(0.5), add(c(1.0), gb.create<ErfOp>(mul(x, c(M_SQRT1_2)))));
        Value pdf = mul(c(1.0 / std::sqrt(2 * M_PI)),
                        gb.create<ExpOp>(mul(c(-0.5), sq(x))));
        return add(cdf, mul(x, pdf));
      })
      .Case([&](ErfOp) {
        return mul(c(2.0 / std::sqrt(M_PI)), gb.create<ExpOp>(gb.create<NegOp>(sq(x))));
      })
      .Case([&](ReciprocalOp) { return gb.create<NegOp>(sq(y)); })
      .Case([&](SinOp) { return gb.create<CosOp>(x); })
      .Case([&](CosOp) { return gb.create<NegOp>(gb.create<SinOp>(x)); })
      .Case([&](TanOp) { return add(c(1.0), sq(y)); })
      .Case([&](AsinOp) { return gb.create<RsqrtOp>(sub(c(1.0), sq(x))); })
      .Case([&](AcosOp) {
        return gb.create<NegOp>(gb.create<RsqrtOp>(sub(c(1.0), sq(x))));
      })
      .Case([&](AtanOp) { return gb.create<ReciprocalOp>(add(c(1.0), sq(x))); })
      .Case([&](SinhOp) { return gb.create<CoshOp>(x); })
      .Case([&](CoshOp) { return gb.create<SinhOp>(x); })
      .Case([&](AsinhOp) { return gb.create<RsqrtOp>(add(sq(x), c(1.0))); })
      .Case([&](AcoshOp) { return gb.create<RsqrtOp>(sub(sq(x), c(1.0))); })
      .Case([&](AtanhOp) { return gb.create<ReciprocalOp>(sub(c(1.0), sq(x))); })
      .Case<FloorOp, CeilOp, RoundOp, SignOp>([&](Operation *) { return Value(); })
      .Default([](Operation *) { return failure(); });
}

} // namespace

std::optional<LogicalResult> mlir::ober::training::elementwiseVJP(
    GradBuilder &gb, Operation *op, ArrayRef<Value> grads,
    SmallVectorImpl<Value> &out) {
  Value g = grads.front();
  auto mul = [&](Value a, Value b) { return gb.create<MulOp>(a, b); };
  auto c = [&](double v) { return gb.scalarLike(g, v); };

  if (op->getNumOperands() == 1 && op->hasTrait<OpTrait::Elementwise>() &&
      isa<FloatType>(typeOf(op->getResult(0)).getElementType())) {
    FailureOr<Value> d = unaryDerivative(gb, op, op->getOperand(0), op->getResult(0));
    if (failed(d))
      return std::nullopt;
    if (*d)
      out[0] = gb.broadcastTo(mul(g, *d), typeOf(g).getShape());
    return success();
  }
  Value a = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
  Value b = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
  auto ub = [&](Value grad, Value operand) {
    return gb.unbroadcast(grad, operand.getType());
  };
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AddOp) {
        out[0] = ub(g, a);
        out[1] = ub(g, b);
        return success();
      })
      .Case([&](SubOp) {
        out[0] = ub(g, a);
        out[1] = ub(gb.create<NegOp>(g), b);
        return success();
      })
      .Case([&](MulOp) {
        out[0] = ub(mul(g, b), a);
        out[1] = ub(mul(g, a), b);
        return success();
      })
      .Case([&](DivOp d) {
        out[0] = ub(gb.create<DivOp>(g, b), a);
        out[1] = ub(gb.create<NegOp>(gb.create<DivOp>(mul(g, d.getResult()), b)), b);
        return success();
      })
      .Case([&](PowOp p) {
        // d/da = b * a^(b-1); d/db = a^b * log(a).
        Value bm1 = gb.create<SubOp>(b, c(1.0));
        out[0] = ub(mul(g, mul(b, gb.create<PowOp>(a, bm1))), a);
        out[1] = ub(mul(g, mul(p.getResult(), gb.create<LogOp>(a))), b);
        return success();
      })
      .Case<MaxOp, MinOp>([&](Operation *) {
        // Ties share the gradient evenly, as in PyTorch.
        CompareDirection wins =
            isa<MaxOp>(op) ? CompareDirection::gt : CompareDirection::lt;
        Value aWins = gb.create<CompareOp>(wins, a, b);
        Value tie = gb.create<CompareOp>(CompareDirection::eq, a, b);
        Value half = mul(g, c(0.5));
        Value ga = gb.create<SelectOp>(aWins, g, gb.create<SelectOp>(tie, half, c(0.0)));
        Value gbv = gb.create<SubOp>(g, ga);
        out[0] = ub(ga, a);
        out[1] = ub(gbv, b);
        return success();
      })
      .Case([&](RemOp) {
        // fmod(a, b) = a - trunc(a / b) * b.
        Value q = gb.create<DivOp>(a, b);
        Value trunc = gb.create<SelectOp>(
            gb.create<CompareOp>(CompareDirection::lt, q, c(0.0)),
            gb.create<CeilOp>(q), gb.create<FloorOp>(q));
        out[0] = ub(g, a);
        out[1] = ub(gb.create<NegOp>(mul(g, trunc)), b);
        return success();
      })
      .Case([&](SelectOp s) {
        Value zero = c(0.0);
        Value cond = s.getCondition();
        out[1] = ub(gb.create<SelectOp>(cond, g, zero), s.getOnTrue());
        out[2] = ub(gb.create<SelectOp>(cond, zero, g), s.getOnFalse());
        return success();
      })
      .Case([&](CastOp cast) {
        if (isa<FloatType>(typeOf(cast.getInput()).getElementType()))
          out[0] = gb.cast(g, typeOf(cast.getInput()).getElementType());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}
