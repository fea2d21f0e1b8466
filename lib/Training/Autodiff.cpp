//===- Autodiff.cpp - reverse-mode differentiation ------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Training/Autodiff.h"

#include "GradBuilder.h"
#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

//===----------------------------------------------------------------------===//
// GradBuilder
//===----------------------------------------------------------------------===//

Value GradBuilder::zerosLike(Type type) {
  auto t = llvm::cast<RankedTensorType>(type);
  return broadcastTo(scalar(t.getElementType(), 0.0), t.getShape());
}

Value GradBuilder::sum(Value v, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return v;
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  return create<ReduceSumOp>(v, b.getDenseI64ArrayAttr(sorted),
                             b.getBoolAttr(keepdims));
}

Value GradBuilder::unbroadcast(Value grad, Type target) {
  auto t = llvm::cast<RankedTensorType>(target);
  ArrayRef<int64_t> shape = typeOf(grad).getShape();
  if (shape == t.getShape())
    return grad;
  int64_t offset = shape.size() - t.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d < offset || (t.getDimSize(d - offset) == 1 && shape[d] != 1))
      axes.push_back(d);
  return reshape(sum(grad, axes, /*keepdims=*/false), t.getShape());
}

Value GradBuilder::expandReduced(Value v, ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> shape) {
  SmallVector<int64_t> kept(shape);
  for (int64_t a : axes)
    kept[a] = 1;
  return broadcastTo(reshape(v, kept), shape);
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult mlir::ober::training::vjp(GradBuilder &gb, Operation *op,
                                        ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
  for (auto rule : {elementwiseVJP, nnVJP, shapeVJP})
    if (std::optional<LogicalResult> r = rule(gb, op, resultGrads, operandGrads))
      return *r;
  return op->emitError("ober-autodiff: no gradient rule for '")
         << op->getName()
         << "' (it is on the path from the parameters to the loss)";
}

//===----------------------------------------------------------------------===//
// The gradient function
//===----------------------------------------------------------------------===//

SmallVector<unsigned> mlir::ober::parameterArguments(func::FuncOp func) {
  SmallVector<unsigned> params;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, OberDialect::kParamAttrName))
      params.push_back(i);
  return params;
}

static bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// Propagates `adjoint` backwards through `ops` (in program order), adding
/// the adjoint of every float operand.
static LogicalResult reverseSweep(GradBuilder &gb, ArrayRef<Operation *> ops,
                                  DenseMap<Value, Value> &adjoint) {
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(adjoint.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    gb.loc = op->getLoc();
    SmallVector<Value> operandGrads;
    if (failed(vjp(gb, op, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !isFloatTensor(operand))
        continue;
      if (g.getType() != operand.getType())
        return op->emitError("ober-autodiff: gradient rule produced ")
               << g.getType() << " for an operand of type "
               << operand.getType();
      Value &slot = adjoint[operand];
      slot = slot ? gb.create<AddOp>(slot, g) : g;
    }
  }
  return success();
}

FailureOr<SmallVector<Value>>
mlir::ober::differentiateValues(OpBuilder &builder, Location loc, Value y,
                                ArrayRef<Value> xs) {
  if (!isFloatTensor(y))
    return emitError(loc, "cannot differentiate a non-float value");
  Block *block = builder.getInsertionBlock();
  SmallVector<Operation *> ops;
  for (Operation &op : *block) {
    if (&op == &*builder.getInsertionPoint())
      break;
    ops.push_back(&op);
  }
  GradBuilder gb(builder, loc);
  DenseMap<Value, Value> adjoint;
  adjoint[y] = gb.broadcastTo(gb.scalarLike(y, 1.0), typeOf(y).getShape());
  if (failed(reverseSweep(gb, ops, adjoint)))
    return failure();
  gb.loc = loc;
  SmallVector<Value> grads;
  for (Value x : xs) {
    Value a = adjoint.lookup(x);
    grads.push_back(a ? a : gb.zerosLike(x.getType()));
  }
  return grads;
}

FailureOr<func::FuncOp>
mlir::ober::buildGradientFunction(func::FuncOp forward, StringRef name,
                                  ArrayRef<unsigned> wrt, bool seedArgument,
                                  bool fusedAttention) {
  if (forward.isExternal())
    return forward.emitError("ober-autodiff: the function has no body");
  FunctionType fwdType = forward.getFunctionType();
  auto lossType = fwdType.getNumResults()
                      ? dyn_cast<RankedTensorType>(fwdType.getResult(0))
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return forward.emitError("ober-autodiff: the first result must be a "
                             "scalar float loss (tensor<f32> or alike), got ")
           << (fwdType.getNumResults() ? fwdType.getResult(0) : Type());
  for (unsigned i : wrt)
    if (i >= forward.getNumArguments() ||
        !isFloatTensor(forward.getArgument(i)))
      return forward.emitError("ober-autodiff: argument #")
             << i << " is not a float tensor";

  // The new function: the forward body, then the backward pass.
  SmallVector<Type> resultTypes(fwdType.getResults());
  for (unsigned i : wrt)
    resultTypes.push_back(fwdType.getInput(i));
  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto grad = func::FuncOp::create(
      builder, forward.getLoc(), name,
      builder.getFunctionType(fwdType.getInputs(), resultTypes));
  if (ArrayAttr args = forward.getAllArgAttrs())
    grad.setAllArgAttrs(args);
  IRMapping mapping;
  forward.getBody().cloneInto(&grad.getBody(), mapping);
  SymbolTable(forward->getParentOfType<ModuleOp>()).insert(grad);

  // Attention is differentiated through its decomposition, unless it stays
  // one op (ober.attention_grad's rule: no float mask).
  {
    RewritePatternSet patterns(grad.getContext());
    populateDecomposeAttentionPatterns(patterns, [&](Operation *op) {
      auto attention = dyn_cast<AttentionOp>(op);
      Value mask = attention ? attention.getMask() : Value();
      return fusedAttention &&
             (!mask || getElementTypeOrSelf(mask.getType()).isInteger(1));
    });
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(grad, std::move(patterns), config);
  }

  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> forwardResults(ret.getOperands());
  builder.setInsertionPoint(ret);
  GradBuilder gb(builder, grad.getLoc());

  DenseMap<Value, Value> adjoint;
  Value loss = forwardResults.front();
  if (seedArgument) {
    // The seed: a last argument of the loss's type.
    unsigned n = grad.getNumArguments();
    if (failed(grad.insertArgument(n, loss.getType(),
                                   builder.getDictionaryAttr(builder.getNamedAttr(
                                       "ober.loss_seed", builder.getUnitAttr())),
                                   grad.getLoc())))
      return failure();
    adjoint[loss] = body.getArgument(n);
  } else {
    adjoint[loss] = gb.scalarLike(loss, 1.0);
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (failed(reverseSweep(gb, ops, adjoint))) {
    grad.erase();
    return failure();
  }
  gb.loc = grad.getLoc();
  SmallVector<Value> results(forwardResults);
  SmallVector<int64_t> noGradient;
  for (auto [k, i] : llvm::enumerate(wrt)) {
    Value a = adjoint.lookup(body.getArgument(i));
    if (!a)
      noGradient.push_back(k);
    results.push_back(a ? a : gb.zerosLike(body.getArgument(i).getType()));
  }
  // Which gradients are structurally zero (no path to the loss), so that
  // optimizers can leave those arguments alone, as PyTorch does for
  // parameters whose .grad is None.
  if (!noGradient.empty())
    grad->setAttr("ober.no_gradient",
                  builder.getDenseI64ArrayAttr(noGradient));
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  // Rules also produce gradients for operands nothing needs (constants,
  // integer inputs); drop them so that they neither run nor keep forward
  // values alive.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  if (failed(verify(grad))) {
    grad.erase();
    return failure();
  }
  return grad;
}
