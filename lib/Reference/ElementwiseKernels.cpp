//===- ElementwiseKernels.cpp - unary, binary, compare, select, cast ------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double gelu(double x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::tanh)
    return 0.5 * x *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double sigmoid(double x) {
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

Tensor mapUnary(Operation *op, const Tensor &in,
                function_ref<double(double)> floatFn,
                function_ref<int64_t(int64_t)> intFn) {
  Tensor out = resultTensor(op);
  for (int64_t i = 0, e = in.getNumElements(); i < e; ++i) {
    if (in.isFloat())
      out.setFloat(i, floatFn(in.getFloat(i)));
    else
      out.setInt(i, intFn(in.getInt(i)));
  }
  return out;
}

std::optional<Tensor> unary(Operation *op, const Tensor &x) {
  auto f = [&](double (*fn)(double)) {
    return mapUnary(op, x, fn, [](int64_t v) { return v; });
  };
  return llvm::TypeSwitch<Operation *, std::optional<Tensor>>(op)
      .Case([&](NegOp) {
        return mapUnary(
            op, x, [](double v) { return -v; },
            [](int64_t v) { return static_cast<int64_t>(0ull - uint64_t(v)); });
      })
      .Case([&](AbsOp) {
        return mapUnary(
            op, x, [](double v) { return std::fabs(v); },
            [](int64_t v) {
              return v < 0 ? static_cast<int64_t>(0ull - uint64_t(v)) : v;
            });
      })
      .Case([&](ReluOp) {
        return mapUnary(
            op, x, [](double v) { return std::isnan(v) ? v : (v > 0 ? v : 0.0); },
            [](int64_t v) { return v > 0 ? v : 0; });
      })
      .Case([&](ExpOp) { return f(std::exp); })
      .Case([&](LogOp) { return f(std::log); })
      .Case([&](SqrtOp) { return f(std::sqrt); })
      .Case([&](RsqrtOp) {
        return f([](double v) { return 1.0 / std::sqrt(v); });
      })
      .Case([&](TanhOp) { return f(std::tanh); })
      .Case([&](SigmoidOp) { return f(sigmoid); })
      .Case([&](SiluOp) { return f([](double v) { return v * sigmoid(v); }); })
      .Case([&](ErfOp) { return f(std::erf); })
      .Case([&](ReciprocalOp) { return f([](double v) { return 1.0 / v; }); })
      .Case([&](SinOp) { return f(std::sin); })
      .Case([&](CosOp) { return f(std::cos); })
      .Case([&](TanOp) { return f(std::tan); })
      .Case([&](AsinOp) { return f(std::asin); })
      .Case([&](AcosOp) { return f(std::acos); })
      .Case([&](AtanOp) { return f(std::atan); })
      .Case([&](SinhOp) { return f(std::sinh); })
      .Case([&](CoshOp) { return f(std::cosh); })
      .Case([&](AsinhOp) { return f(std::asinh); })
      .Case([&](AcoshOp) { return f(std::acosh); })
      .Case([&](AtanhOp) { return f(std::atanh); })
      .Case([&](FloorOp) { return f(std::floor); })
      .Case([&](CeilOp) { return f(std::ceil); })
      .Case([&](RoundOp) { return f(std::nearbyint); })
      .Case([&](SignOp) {
        return mapUnary(
            op, x,
            [](double v) { return std::isnan(v) ? v : double((v > 0) - (v < 0)); },
            [](int64_t v) { return int64_t((v > 0) - (v < 0)); });
      })
      .Case([&](NotOp) {
        return mapUnary(
            op, x, [](double v) { return double(v == 0); },
            [](int64_t v) { return int64_t(v == 0); });
      })
      .Case([&](GeluOp g) {
        GeluApproximation a = g.getApproximate();
        return mapUnary(
            op, x, [a](double v) { return gelu(v, a); },
            [](int64_t v) { return v; });
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Applies `fn` to broadcast operands into a zero result of the op's type.
template <typename Fn>
Tensor broadcastMap(Operation *op, ArrayRef<const Tensor *> inputs, Fn fn) {
  Tensor out = resultTensor(op);
  SmallVector<SmallVector<int64_t>> strides;
  for (const Tensor *t : inputs)
    strides.push_back(broadcastStrides(t->getShape(), out.getShape()));
  forEachElement(out.getShape(), strides,
                 [&](int64_t i, ArrayRef<int64_t> offsets) {
                   fn(out, i, offsets);
                 });
  return out;
}

double floatBinary(Operation *op, double a, double b) {
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case([&](AddOp) { return a + b; })
      .Case([&](SubOp) { return a - b; })
      .Case([&](MulOp) { return a * b; })
      .Case([&](DivOp) { return a / b; })
      .Case([&](PowOp) { return std::pow(a, b); })
      .Case([&](MaxOp) {
        return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
      })
      .Case([&](MinOp) {
        return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
      })
      .Case([&](RemOp) { return std::fmod(a, b); })
      .Default([](Operation *) { return kNaN; });
}

/// Integer arithmetic with two's-complement wrap-around.
std::optional<int64_t> intBinary(Operation *op, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([&](AddOp) { return static_cast<int64_t>(ua + ub); })
      .Case([&](SubOp) { return static_cast<int64_t>(ua - ub); })
      .Case([&](MulOp) { return static_cast<int64_t>(ua * ub); })
      .Case([&](DivOp) -> std::optional<int64_t> {
        if (b == 0)
          return std::nullopt;
        if (a == std::numeric_limits<int64_t>::min() && b == -1)
          return a;
        return a / b;
      })
      .Case([&](MaxOp) { return std::max(a, b); })
      .Case([&](MinOp) { return std::min(a, b); })
      .Case([&](RemOp) -> std::optional<int64_t> {
        if (b == 0)
          return std::nullopt;
        if (b == -1)
          return 0;
        return a % b;
      })
      .Case([&](AndOp) { return int64_t(a && b); })
      .Case([&](OrOp) { return int64_t(a || b); })
      .Case([&](XorOp) { return int64_t((a != 0) != (b != 0)); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Ordered comparison: any comparison with NaN is false except `ne`.
template <typename T> bool compare(CompareDirection direction, T a, T b) {
  switch (direction) {
  case CompareDirection::eq: return a == b;
  case CompareDirection::ne: return a != b;
  case CompareDirection::lt: return a < b;
  case CompareDirection::le: return a <= b;
  case CompareDirection::gt: return a > b;
  case CompareDirection::ge: return a >= b;
  }
  return false;
}

/// ober.cast of a float to an integer: truncation toward zero, NaN to 0,
/// out-of-range values saturating at the int64 range before wrapping.
int64_t floatToInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateElementwise(Operation *op,
                                                   ArrayRef<Tensor> operands,
                                                   Results &results) {
  if (operands.size() == 1 && op->hasTrait<OpTrait::Elementwise>()) {
    if (std::optional<Tensor> t = unary(op, operands[0])) {
      results.push_back(std::move(*t));
      return success();
    }
  }
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, RemOp, AndOp, OrOp,
          XorOp>(op)) {
    const Tensor &a = operands[0], &b = operands[1];
    bool divByZero = false;
    Tensor out = broadcastMap(
        op, {&a, &b}, [&](Tensor &out, int64_t i, ArrayRef<int64_t> o) {
          if (a.isFloat()) {
            out.setFloat(i, floatBinary(op, a.getFloat(o[0]), b.getFloat(o[1])));
            return;
          }
          std::optional<int64_t> v = intBinary(op, a.getInt(o[0]), b.getInt(o[1]));
          divByZero |= !v;
          out.setInt(i, v.value_or(0));
        });
    if (divByZero)
      return op->emitError("integer division by zero");
    results.push_back(std::move(out));
    return success();
  }
  if (auto cmp = dyn_cast<CompareOp>(op)) {
    const Tensor &a = operands[0], &b = operands[1];
    CompareDirection d = cmp.getDirection();
    results.push_back(broadcastMap(
        op, {&a, &b}, [&](Tensor &out, int64_t i, ArrayRef<int64_t> o) {
          bool r = a.isFloat() ? compare(d, a.getFloat(o[0]), b.getFloat(o[1]))
                               : compare(d, a.getInt(o[0]), b.getInt(o[1]));
          out.setInt(i, r);
        }));
    return success();
  }
  if (isa<SelectOp>(op)) {
    const Tensor &c = operands[0], &t = operands[1], &f = operands[2];
    results.push_back(broadcastMap(
        op, {&c, &t, &f}, [&](Tensor &out, int64_t i, ArrayRef<int64_t> o) {
          if (c.getInt(o[0]))
            out.copyElement(i, t, o[1]);
          else
            out.copyElement(i, f, o[2]);
        }));
    return success();
  }
  if (isa<CastOp>(op)) {
    const Tensor &in = operands[0];
    Tensor out = resultTensor(op);
    for (int64_t i = 0, e = in.getNumElements(); i < e; ++i) {
      if (out.isFloat())
        out.setFloat(i, in.getFloat(i));
      else if (out.getElementType().isInteger(1))
        out.setInt(i, in.isFloat() ? in.getFloat(i) != 0.0 : in.getInt(i) != 0);
      else
        out.setInt(i, in.isFloat() ? floatToInt(in.getFloat(i)) : in.getInt(i));
    }
    results.push_back(std::move(out));
    return success();
  }
  return std::nullopt;
}
