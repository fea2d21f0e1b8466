//===- OptimizerImport.cpp - ai.onnx.preview.training optimizers ----------===//
//
// Part of Ober-Train. Adagrad, Adam and Momentum of ONNX's training preview
// domain: each updates n tensors from a learning rate R, an update count T
// and per-tensor gradients and state, elementwise, as the operator
// definitions write it.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

/// The optimized tensors of a node with inputs R, T, then `groups` lists of
/// n tensors each: n, or an error.
FailureOr<int64_t> tensorCount(NodeContext &ctx, int64_t groups) {
  int64_t rest = static_cast<int64_t>(ctx.numInputs()) - 2;
  if (rest < groups || rest % groups != 0 ||
      static_cast<int64_t>(ctx.numOutputs()) > rest) {
    ctx.error() << "takes R, T and " << groups << " lists of n tensors (n >= "
                << "1), and at most that many outputs; got " << ctx.numInputs()
                << " inputs and " << ctx.numOutputs() << " outputs";
    return failure();
  }
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i)) {
      ctx.error() << "input #" << i << " is missing";
      return failure();
    }
  for (unsigned i = 2; i < ctx.numInputs(); ++i)
    if (!isa<FloatType>(ctx.inputType(i).getElementType())) {
      ctx.error() << "input #" << i << " must be a float tensor, got "
                  << ctx.inputType(i);
      return failure();
    }
  return rest / groups;
}

/// Sets output `i` if the node names it.
void maybeSet(NodeContext &ctx, int64_t i, Value v) {
  if (ctx.wantsOutput(i))
    ctx.setOutput(i, v);
}

/// Helpers over one element type, with scalars broadcast.
struct Math {
  NodeContext &ctx;
  Type element;
  Value c(double v) { return ctx.scalar(element, v); }
  Value add(Value a, Value b) { return ctx.create<AddOp>(a, b); }
  Value sub(Value a, Value b) { return ctx.create<SubOp>(a, b); }
  Value mul(Value a, Value b) { return ctx.create<MulOp>(a, b); }
  Value div(Value a, Value b) { return ctx.create<DivOp>(a, b); }
  /// R and T as 0-D values of the element type.
  Value scalarInput(unsigned i) {
    return ctx.cast(ctx.reshape(ctx.input(i), {}), element);
  }
  /// norm_coefficient * X + G.
  Value regularized(Value x, Value g) {
    return add(mul(c(ctx.getFloat("norm_coefficient", 0.0)), x), g);
  }
};

LogicalResult adagrad(NodeContext &ctx) {
  FailureOr<int64_t> n = tensorCount(ctx, 3);
  if (failed(n))
    return failure();
  Math m{ctx, ctx.inputType(2).getElementType()};
  double decay = ctx.getFloat("decay_factor", 0.0),
         epsilon = ctx.getFloat("epsilon", 1e-6);
  Value r = m.div(m.scalarInput(0),
                  m.add(m.c(1), m.mul(m.scalarInput(1), m.c(decay))));
  for (int64_t i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = m.regularized(x, ctx.input(2 + *n + i));
    Value h = m.add(ctx.input(2 + 2 * *n + i), m.mul(g, g));
    Value adaptive = m.add(ctx.create<SqrtOp>(h), m.c(epsilon));
    maybeSet(ctx, i, m.sub(x, m.div(m.mul(r, g), adaptive)));
    maybeSet(ctx, *n + i, h);
  }
  return success();
}

LogicalResult momentum(NodeContext &ctx) {
  FailureOr<int64_t> n = tensorCount(ctx, 3);
  if (failed(n))
    return failure();
  std::string mode = ctx.getString("mode", "standard");
  if (mode != "standard" && mode != "nesterov") {
    ctx.error() << "mode '" << mode
                << "' is not supported (standard, nesterov)";
    return failure();
  }
  Math m{ctx, ctx.inputType(2).getElementType()};
  double alpha = ctx.getFloat("alpha", 0.0), beta = ctx.getFloat("beta", 0.0);
  Value r = m.scalarInput(0), t = m.scalarInput(1);
  // The first update (T = 0) takes the gradient unscaled.
  Value first = ctx.create<CompareOp>(CompareDirection::gt, t, m.c(0));
  Value betaNow = ctx.create<SelectOp>(first, m.c(beta), m.c(1));
  for (int64_t i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = m.regularized(x, ctx.input(2 + *n + i));
    Value v =
        m.add(m.mul(m.c(alpha), ctx.input(2 + 2 * *n + i)), m.mul(betaNow, g));
    Value step = mode == "standard" ? v : m.add(g, m.mul(m.c(alpha), v));
    maybeSet(ctx, i, m.sub(x, m.mul(r, step)));
    maybeSet(ctx, *n + i, v);
  }
  return success();
}

LogicalResult adam(NodeContext &ctx) {
  FailureOr<int64_t> n = tensorCount(ctx, 4);
  if (failed(n))
    return failure();
  Math m{ctx, ctx.inputType(2).getElementType()};
  double alpha = ctx.getFloat("alpha", 0.9), beta = ctx.getFloat("beta", 0.999),
         epsilon = ctx.getFloat("epsilon", 1e-6),
         post = ctx.getFloat("norm_coefficient_post", 0.0);
  Value r = m.scalarInput(0), t = m.scalarInput(1);
  // Bias correction from the second update on (T > 0).
  Value corrected = m.div(
      m.mul(r,
            ctx.create<SqrtOp>(m.sub(m.c(1), ctx.create<PowOp>(m.c(beta), t)))),
      m.sub(m.c(1), ctx.create<PowOp>(m.c(alpha), t)));
  Value later = ctx.create<CompareOp>(CompareDirection::gt, t, m.c(0));
  Value rate = ctx.create<SelectOp>(later, corrected, r);
  for (int64_t i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = m.regularized(x, ctx.input(2 + *n + i));
    Value v = m.add(m.mul(m.c(alpha), ctx.input(2 + 2 * *n + i)),
                    m.mul(m.c(1 - alpha), g));
    Value h = m.add(m.mul(m.c(beta), ctx.input(2 + 3 * *n + i)),
                    m.mul(m.c(1 - beta), m.mul(g, g)));
    Value denom = m.add(ctx.create<SqrtOp>(h), m.c(epsilon));
    Value updated = m.sub(x, m.mul(rate, m.div(v, denom)));
    maybeSet(ctx, i, m.mul(m.c(1 - post), updated));
    maybeSet(ctx, *n + i, v);
    maybeSet(ctx, 2 * *n + i, h);
  }
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerOptimizerHandlers(HandlerMap &m) {
  m["Adagrad"] = adagrad;
  m["Adam"] = adam;
  m["Momentum"] = momentum;
}
