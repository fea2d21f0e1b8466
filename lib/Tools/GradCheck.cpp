//===- GradCheck.cpp - finite-difference gradient checks ------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/GradCheck.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Reference/Interpreter.h"
#include "ober/Runtime/Random.h"
#include "ober/Training/Autodiff.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using reference::Tensor;

/// One check of `func`'s gradients, with attention differentiated through
/// its decomposition or (`fusedAttention`) by ober.attention_grad.
static LogicalResult checkOnce(func::FuncOp func, uint64_t seed,
                               double tolerance, bool fusedAttention,
                               llvm::raw_ostream &os) {
  auto module = func->getParentOfType<ModuleOp>();
  SmallVector<unsigned> params = parameterArguments(func);
  FailureOr<func::FuncOp> grad =
      buildGradientFunction(func, (func.getSymName() + "_gradcheck").str(),
                            params, /*seedArgument=*/false, fusedAttention);
  if (failed(grad))
    return failure();
  double low = -1.0, high = 1.0;
  if (auto a = func->getAttrOfType<FloatAttr>("gc_low"))
    low = a.getValueAsDouble();
  if (auto a = func->getAttrOfType<FloatAttr>("gc_high"))
    high = a.getValueAsDouble();

  SmallVector<Tensor> args;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto t = cast<RankedTensorType>(type);
    Tensor v(t.getElementType(), t.getShape());
    for (int64_t k = 0; k < v.getNumElements(); ++k) {
      double u = ::ober::rt::uniformAt(seed + 7919 * i, k);
      if (v.isFloat())
        v.setFloat(k, low + (high - low) * u);
      else
        v.setInt(k, static_cast<int64_t>(u * 3));
    }
    args.push_back(std::move(v));
  }
  reference::Interpreter interpreter(module);
  FailureOr<SmallVector<Tensor>> analytic = interpreter.run(*grad, args);
  if (failed(analytic))
    return failure();
  unsigned numResults = func.getNumResults();
  auto loss = [&](ArrayRef<Tensor> a) -> FailureOr<double> {
    FailureOr<SmallVector<Tensor>> r = interpreter.run(func, a);
    if (failed(r))
      return failure();
    return r->front().getFloat(0);
  };
  double worst = 0;
  std::string where;
  for (auto [k, i] : llvm::enumerate(params)) {
    const Tensor &g = (*analytic)[numResults + k];
    Tensor &p = args[i];
    double h = p.getElementType().isF64() ? 1e-6 : 1e-3;
    for (int64_t e = 0; e < p.getNumElements(); ++e) {
      double saved = p.getFloat(e);
      p.setFloat(e, saved + h);
      FailureOr<double> up = loss(args);
      p.setFloat(e, saved - h);
      FailureOr<double> down = loss(args);
      p.setFloat(e, saved);
      if (failed(up) || failed(down))
        return failure();
      double numeric = (*up - *down) / (2 * h);
      double err = std::fabs(numeric - g.getFloat(e)) /
                   std::max(1.0, std::fabs(numeric));
      if (err > worst) {
        worst = err;
        where = "argument #" + std::to_string(i) + " element " +
                std::to_string(e);
      }
    }
  }
  (*grad).erase();
  os << "grad-check @" << func.getSymName()
     << (fusedAttention ? " (attention_grad)" : "") << ": max error "
     << llvm::format("%.3g", worst) << (where.empty() ? "" : " at ") << where
     << (worst <= tolerance ? " OK" : " FAIL") << "\n";
  if (worst > tolerance)
    return func.emitError("grad-check: gradient error ")
           << worst << " exceeds " << tolerance << " at " << where;
  return success();
}

LogicalResult mlir::ober::checkGradients(func::FuncOp func, uint64_t seed,
                                         double tolerance,
                                         llvm::raw_ostream &os) {
  if (parameterArguments(func).empty())
    return func.emitError("grad-check: the function has no parameters");
  bool attention = false;
  func.walk([&](AttentionOp) { attention = true; });
  if (failed(checkOnce(func, seed, tolerance, /*fusedAttention=*/false, os)))
    return failure();
  if (!attention)
    return success();
  return checkOnce(func, seed, tolerance, /*fusedAttention=*/true, os);
}
