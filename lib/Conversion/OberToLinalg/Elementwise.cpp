//===- Elementwise.cpp - elementwise ober ops as linalg.generic -----------===//
//
// Part of Ober-Train. Each elementwise op (unary, binary with NumPy
// broadcasting, compare, select, cast) becomes one linalg.generic whose
// body computes what lib/Reference/ElementwiseKernels.cpp computes: NaN
// propagates through relu, sign, max and min; round is to nearest even;
// integer arithmetic wraps; logical and/or/xor of integers give 0 or 1.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

Type lowering::computeType(Type element) {
  if (element.isBF16() || element.isF16())
    return Float32Type::get(element.getContext());
  return element;
}

Value lowering::widen(OpBuilder &b, Location loc, Value v) {
  Type to = computeType(v.getType());
  return to == v.getType() ? v : arith::ExtFOp::create(b, loc, to, v);
}

Value lowering::narrow(OpBuilder &b, Location loc, Value v, Type element) {
  return v.getType() == element ? v
                                : arith::TruncFOp::create(b, loc, element, v);
}

Value lowering::scalarConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value lowering::mapElements(
    OpBuilder &b, Location loc, RankedTensorType result, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = result.getRank();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    auto type = cast<RankedTensorType>(in.getType());
    int64_t offset = rank - type.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      exprs.push_back(type.getDimSize(d) == 1 &&
                              result.getDimSize(d + offset) != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(d + offset));
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(b, loc, result.getShape(),
                                       result.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{result}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return generic.getResult(0);
}

Value lowering::castElement(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return fromFloat.getWidth() < toFloat.getWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, x))
               : Value(arith::TruncFOp::create(b, loc, to, x));
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   scalarConstant(b, loc, from, 0.0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 scalarConstant(b, loc, from, 0));
  }
  if (toFloat)
    return from.isInteger(1) ? Value(arith::UIToFPOp::create(b, loc, to, x))
                             : Value(arith::SIToFPOp::create(b, loc, to, x));
  if (fromFloat) {
    // Through i64 (the interpreter's integers), saturating there, then
    // wrapping to the target width.
    Type i64 = b.getI64Type();
    Value wide = widen(b, loc, x);
    Value v = arith::FPToSIOp::create(b, loc, i64, wide);
    Type w = wide.getType();
    Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, wide,
                                      scalarConstant(b, loc, w, 9223372036854775807.0));
    Value small = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLE, wide,
        scalarConstant(b, loc, w, -9223372036854775808.0));
    v = arith::SelectOp::create(
        b, loc, big,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(INT64_MAX)), v);
    v = arith::SelectOp::create(
        b, loc, small,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(INT64_MIN)), v);
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, wide,
                                      wide);
    v = arith::SelectOp::create(
        b, loc, nan, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)),
        v);
    return to.isInteger(64) ? v : Value(arith::TruncIOp::create(b, loc, to, v));
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, to, x);
  return from.isInteger(1) ? Value(arith::ExtUIOp::create(b, loc, to, x))
                           : Value(arith::ExtSIOp::create(b, loc, to, x));
}

namespace {

Value sigmoidOf(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value one = scalarConstant(b, loc, t, 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

/// x where x is NaN, else `value`.
Value unlessNaN(OpBuilder &b, Location loc, Value x, Value value) {
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc, nan, x, value);
}

/// A unary op on one float element (in its compute type).
Value floatUnary(Operation *op, OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  auto zero = [&] { return scalarConstant(b, loc, t, 0.0); };
  auto one = [&] { return scalarConstant(b, loc, t, 1.0); };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) { return arith::NegFOp::create(b, loc, x); })
      .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, x); })
      .Case([&](ExpOp) { return math::ExpOp::create(b, loc, x); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, x); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, x); })
      .Case([&](RsqrtOp) {
        return arith::DivFOp::create(b, loc, one(),
                                     math::SqrtOp::create(b, loc, x));
      })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, x); })
      .Case([&](SigmoidOp) { return sigmoidOf(b, loc, x); })
      .Case([&](ReluOp) {
        Value keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT,
                                           x, zero());
        return arith::SelectOp::create(b, loc, keep, x, zero());
      })
      .Case([&](SiluOp) {
        return arith::MulFOp::create(b, loc, x, sigmoidOf(b, loc, x));
      })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, x); })
      .Case([&](ReciprocalOp) { return arith::DivFOp::create(b, loc, one(), x); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, x); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, x); })
      .Case([&](TanOp) { return math::TanOp::create(b, loc, x); })
      .Case([&](AsinOp) { return math::AsinOp::create(b, loc, x); })
      .Case([&](AcosOp) { return math::AcosOp::create(b, loc, x); })
      .Case([&](AtanOp) { return math::AtanOp::create(b, loc, x); })
      .Case([&](SinhOp) { return math::SinhOp::create(b, loc, x); })
      .Case([&](CoshOp) { return math::CoshOp::create(b, loc, x); })
      .Case([&](AsinhOp) { return math::AsinhOp::create(b, loc, x); })
      .Case([&](AcoshOp) { return math::AcoshOp::create(b, loc, x); })
      .Case([&](AtanhOp) { return math::AtanhOp::create(b, loc, x); })
      .Case([&](FloorOp) { return math::FloorOp::create(b, loc, x); })
      .Case([&](CeilOp) { return math::CeilOp::create(b, loc, x); })
      .Case([&](RoundOp) { return math::RoundEvenOp::create(b, loc, x); })
      .Case([&](SignOp) {
        Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                          x, zero());
        Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                          x, zero());
        Value s = arith::SelectOp::create(
            b, loc, pos, one(),
            arith::SelectOp::create(b, loc, neg,
                                    scalarConstant(b, loc, t, -1.0), zero()));
        return unlessNaN(b, loc, x, s);
      })
      .Case([&](GeluOp g) -> Value {
        Value half = scalarConstant(b, loc, t, 0.5);
        Value hx = arith::MulFOp::create(b, loc, half, x);
        Value inner;
        if (g.getApproximate() == GeluApproximation::tanh) {
          Value x3 = arith::MulFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, x, x));
          Value poly = arith::AddFOp::create(
              b, loc, x,
              arith::MulFOp::create(b, loc, scalarConstant(b, loc, t, 0.044715),
                                    x3));
          inner = math::TanhOp::create(
              b, loc,
              arith::MulFOp::create(
                  b, loc, scalarConstant(b, loc, t, std::sqrt(2.0 / M_PI)),
                  poly));
        } else {
          inner = math::ErfOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, x,
                                    scalarConstant(b, loc, t, M_SQRT1_2)));
        }
        return arith::MulFOp::create(
            b, loc, hx, arith::AddFOp::create(b, loc, one(), inner));
      })
      .Default([](Operation *) { return Value(); });
}

/// A unary op on one integer element (i1 for `not`).
Value intUnary(Operation *op, OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value zero = scalarConstant(b, loc, t, 0);
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) { return arith::SubIOp::create(b, loc, zero, x); })
      .Case([&](AbsOp) {
        Value negative =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
        return arith::SelectOp::create(
            b, loc, negative, arith::SubIOp::create(b, loc, zero, x), x);
      })
      .Case([&](ReluOp) { return arith::MaxSIOp::create(b, loc, x, zero); })
      .Case([&](SignOp) {
        Value pos = arith::ExtUIOp::create(
            b, loc, t,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero));
        Value neg = arith::ExtUIOp::create(
            b, loc, t,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero));
        return arith::SubIOp::create(b, loc, pos, neg);
      })
      .Case([&](NotOp) {
        Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           x, zero);
        return t.isInteger(1) ? none
                              : Value(arith::ExtUIOp::create(b, loc, t, none));
      })
      .Case([&](GeluOp) { return x; })
      .Default([](Operation *) { return Value(); });
}

Value floatBinary(Operation *op, OpBuilder &b, Location loc, Value x, Value y) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) { return arith::AddFOp::create(b, loc, x, y); })
      .Case([&](SubOp) { return arith::SubFOp::create(b, loc, x, y); })
      .Case([&](MulOp) { return arith::MulFOp::create(b, loc, x, y); })
      .Case([&](DivOp) { return arith::DivFOp::create(b, loc, x, y); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, x, y); })
      .Case([&](MaxOp) { return arith::MaximumFOp::create(b, loc, x, y); })
      .Case([&](MinOp) { return arith::MinimumFOp::create(b, loc, x, y); })
      .Case([&](RemOp) { return arith::RemFOp::create(b, loc, x, y); })
      .Default([](Operation *) { return Value(); });
}

Value intBinary(Operation *op, OpBuilder &b, Location loc, Value x, Value y) {
  Type t = x.getType();
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  auto isZero = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, c(0));
  };
  auto boolOf = [&](Value v) {
    return t.isInteger(1) ? v
                          : Value(arith::CmpIOp::create(
                                b, loc, arith::CmpIPredicate::ne, v, c(0)));
  };
  auto fromBool = [&](Value v) {
    return t.isInteger(1) ? v : Value(arith::ExtUIOp::create(b, loc, t, v));
  };
  // Division by zero gives 0; a divisor of -1 negates (wrapping) or leaves
  // no remainder, never trapping on the smallest integer.
  auto divide = [&](bool remainder) -> Value {
    Value minusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                           c(-1));
    Value safe = arith::SelectOp::create(
        b, loc, arith::OrIOp::create(b, loc, isZero(y), minusOne), c(1), y);
    Value q = remainder ? Value(arith::RemSIOp::create(b, loc, x, safe))
                        : Value(arith::DivSIOp::create(b, loc, x, safe));
    Value special = remainder ? c(0)
                              : Value(arith::SubIOp::create(b, loc, c(0), x));
    return arith::SelectOp::create(
        b, loc, isZero(y), c(0),
        arith::SelectOp::create(b, loc, minusOne, special, q));
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) { return arith::AddIOp::create(b, loc, x, y); })
      .Case([&](SubOp) { return arith::SubIOp::create(b, loc, x, y); })
      .Case([&](MulOp) { return arith::MulIOp::create(b, loc, x, y); })
      .Case([&](DivOp) { return divide(false); })
      .Case([&](RemOp) { return divide(true); })
      .Case([&](MaxOp) { return arith::MaxSIOp::create(b, loc, x, y); })
      .Case([&](MinOp) { return arith::MinSIOp::create(b, loc, x, y); })
      .Case([&](AndOp) {
        return fromBool(arith::AndIOp::create(b, loc, boolOf(x), boolOf(y)));
      })
      .Case([&](OrOp) {
        return fromBool(arith::OrIOp::create(b, loc, boolOf(x), boolOf(y)));
      })
      .Case([&](XorOp) {
        return fromBool(arith::XOrIOp::create(b, loc, boolOf(x), boolOf(y)));
      })
      .Default([](Operation *) { return Value(); });
}

arith::CmpFPredicate floatPredicate(CompareDirection d) {
  switch (d) {
  case CompareDirection::eq: return arith::CmpFPredicate::OEQ;
  case CompareDirection::ne: return arith::CmpFPredicate::UNE;
  case CompareDirection::lt: return arith::CmpFPredicate::OLT;
  case CompareDirection::le: return arith::CmpFPredicate::OLE;
  case CompareDirection::gt: return arith::CmpFPredicate::OGT;
  case CompareDirection::ge: return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("compare direction");
}

arith::CmpIPredicate intPredicate(CompareDirection d) {
  switch (d) {
  case CompareDirection::eq: return arith::CmpIPredicate::eq;
  case CompareDirection::ne: return arith::CmpIPredicate::ne;
  case CompareDirection::lt: return arith::CmpIPredicate::slt;
  case CompareDirection::le: return arith::CmpIPredicate::sle;
  case CompareDirection::gt: return arith::CmpIPredicate::sgt;
  case CompareDirection::ge: return arith::CmpIPredicate::sge;
  }
  llvm_unreachable("compare direction");
}


/// Unary, binary, compare and select ops: one generic each.
struct ElementwiseLowering : RewritePattern {
  ElementwiseLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<OberDialect>(op->getDialect()) || op->getNumResults() != 1)
      return failure();
    bool unary = op->hasTrait<OpTrait::Elementwise>() &&
                 op->getNumOperands() == 1 && !isa<CastOp>(op);
    bool binary = isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, RemOp,
                      AndOp, OrOp, XorOp>(op);
    if (!unary && !binary && !isa<CompareOp, SelectOp, CastOp>(op))
      return failure();
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    Type out = result.getElementType();
    auto body = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      if (auto cmp = dyn_cast<CompareOp>(op)) {
        Value x = widen(b, loc, args[0]), y = widen(b, loc, args[1]);
        if (isa<FloatType>(x.getType()))
          return arith::CmpFOp::create(
              b, loc, floatPredicate(cmp.getDirection()), x, y);
        return arith::CmpIOp::create(b, loc, intPredicate(cmp.getDirection()),
                                     x, y);
      }
      if (isa<SelectOp>(op))
        return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
      if (isa<CastOp>(op))
        return castElement(b, loc, args[0], out);
      if (!isa<FloatType>(out))
        return unary ? intUnary(op, b, loc, args[0])
                     : intBinary(op, b, loc, args[0], args[1]);
      SmallVector<Value> wide;
      for (Value a : args)
        wide.push_back(widen(b, loc, a));
      Value r = unary ? floatUnary(op, b, loc, wide[0])
                      : floatBinary(op, b, loc, wide[0], wide[1]);
      return r ? narrow(b, loc, r, out) : r;
    };
    {
      // Whether the body exists for these types, built apart first.
      Block scratch;
      for (Value v : op->getOperands())
        scratch.addArgument(cast<RankedTensorType>(v.getType()).getElementType(),
                            op->getLoc());
      OpBuilder b(op->getContext());
      b.setInsertionPointToEnd(&scratch);
      bool ok = static_cast<bool>(body(b, op->getLoc(), scratch.getArguments()));
      while (!scratch.empty())
        scratch.back().erase();
      if (!ok)
        return rewriter.notifyMatchFailure(op, "no scalar form for its types");
    }
    Value local = mapElements(rewriter, op->getLoc(), result, op->getOperands(),
                              body);
    rewriter.replaceOp(op, local);
    return success();
  }
};

} // namespace

void lowering::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(patterns.getContext());
}
