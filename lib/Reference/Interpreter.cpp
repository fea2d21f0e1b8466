//===- Interpreter.cpp - the reference interpreter ------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Reference/Interpreter.h"

#include "ober/Runtime/Files.h"
#include "ober/Reference/Collectives.h"

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "ober/Dialect/Ober/IR/TensorSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;

Tensor mlir::ober::reference::detail::resultTensor(Operation *op, unsigned i) {
  auto type = cast<RankedTensorType>(op->getResult(i).getType());
  return Tensor(type.getElementType(), type.getShape());
}

LogicalResult mlir::ober::reference::checkHostMemory(Operation *root) {
  int64_t available = ::ober::rt::availableHostBytes();
  return verifyTensorSizes(root, [&](ShapedType t) -> std::optional<std::string> {
    // Elements are held as doubles or int64 (Tensor.h); strings larger.
    int64_t elements = *checkedNumElements(t.getShape());
    if (elements <= available / int64_t(sizeof(double)))
      return std::nullopt;
    return llvm::formatv("needs {0:f1} GiB in the reference interpreter, "
                         "more than the {1:f1} GiB this process can get",
                         double(elements) * sizeof(double) / (1 << 30),
                         double(available) / (1 << 30))
        .str();
  });
}

bool mlir::ober::reference::canEvaluate(Operation *op) {
  return isa<OberDialect>(op->getDialect()) || isa<arith::ConstantOp>(op);
}

LogicalResult mlir::ober::reference::evaluate(Operation *op,
                                              ArrayRef<Tensor> operands,
                                              SmallVectorImpl<Tensor> &results) {
  for (Type t : op->getResultTypes()) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || !ranked.hasStaticShape())
      return op->emitError("the reference interpreter needs static result "
                           "shapes, got ")
             << t;
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto value = dyn_cast<ElementsAttr>(c.getValue());
    if (!value)
      return op->emitError("the reference interpreter runs tensor constants "
                           "only");
    results.push_back(Tensor::fromAttr(value));
    return success();
  }
  using Group = std::optional<LogicalResult> (*)(Operation *, ArrayRef<Tensor>,
                                                 detail::Results &);
  for (Group group :
       {detail::evaluateElementwise, detail::evaluateContraction,
        detail::evaluateReduction, detail::evaluateNormalization,
        detail::evaluateIndexing, detail::evaluateLoss, detail::evaluateShape,
        detail::evaluateGradient, detail::evaluateString})
    if (std::optional<LogicalResult> r = group(op, operands, results))
      return *r;
  return op->emitError("the reference interpreter does not support '")
         << op->getName() << "'";
}

FailureOr<SmallVector<Tensor>> Interpreter::run(func::FuncOp func,
                                                ArrayRef<Tensor> args) {
  FunctionType type = func.getFunctionType();
  if (args.size() != type.getNumInputs())
    return func.emitError("expected ")
           << type.getNumInputs() << " input(s), got " << args.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(args, type.getInputs()))) {
    auto [tensor, expected] = pair;
    auto ranked = dyn_cast<RankedTensorType>(expected);
    if (!ranked || !ranked.hasStaticShape())
      return func.emitError("input #")
             << i << " has type " << expected
             << "; the reference interpreter needs static shapes (pin them "
                "first)";
    if (tensor.getElementType() != ranked.getElementType() ||
        tensor.getShape() != ranked.getShape())
      return func.emitError("input #")
             << i << " should be " << expected << ", got "
             << RankedTensorType::get(tensor.getShape(),
                                      tensor.getElementType());
  }
  if (func.isExternal())
    return func.emitError("cannot run a function without a body");
  stats = RunStats();
  int64_t live = 0;
  for (const Tensor &t : args)
    live += t.getSizeInBytes();
  stats.peakLiveBytes = live;
  SmallVector<Tensor> results;
  if (failed(runBlock(func.getBody().front(), args, results, live)))
    return failure();
  return results;
}

LogicalResult Interpreter::runLoop(Operation *op, ArrayRef<Tensor> init,
                                   SmallVectorImpl<Tensor> &results,
                                   int64_t &live, const Scope &scope,
                                   int64_t movedBytes) {
  auto loop = cast<scf::ForOp>(op);
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                         ub = getConstantIntValue(loop.getUpperBound()),
                         step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0)
    return loop.emitError("the reference interpreter runs scf.for with "
                          "constant bounds and a positive constant step");
  SmallVector<Tensor> carried(init);
  // The carried values are held between iterations: the first ones the
  // caller handed over (`movedBytes`; the others it still holds), the last
  // ones it counts as the loop's results.
  int64_t carriedBytes = movedBytes;
  live += movedBytes;
  for (int64_t i = *lb; i < *ub; i += *step) {
    Tensor counter(IntegerType::get(op->getContext(), 64), {});
    counter.setFloat(0, static_cast<double>(i));
    SmallVector<Tensor> args = {counter};
    args.append(carried.begin(), carried.end());
    SmallVector<Tensor> next;
    if (failed(runBlock(*loop.getBody(), args, next, live, &scope)))
      return failure();
    int64_t bytes = 0;
    for (const Tensor &t : next)
      bytes += t.getSizeInBytes();
    live += bytes - carriedBytes;
    carriedBytes = bytes;
    stats.peakLiveBytes = std::max(stats.peakLiveBytes, live);
    carried = std::move(next);
  }
  live -= carriedBytes;
  results.append(carried.begin(), carried.end());
  return success();
}

LogicalResult Interpreter::runBlock(Block &block, ArrayRef<Tensor> args,
                                    SmallVectorImpl<Tensor> &results,
                                    int64_t &live,
                                    const Scope *outer) {
  // Values are freed after their last use, so the peak reflects liveness.
  LastUses uses = lastUsesIn(block);
  DenseMap<Value, Tensor> values;
  for (auto [arg, tensor] : llvm::zip(block.getArguments(), args))
    values[arg] = tensor;
  auto free = [&](Value v) {
    if (isa<BlockArgument>(v) || !values.count(v))
      return;
    live -= values[v].getSizeInBytes();
    values.erase(v);
  };
  auto lookup = [&](Value v) -> const Tensor * {
    if (auto it = values.find(v); it != values.end())
      return &it->second;
    for (const Scope *s = outer; s; s = s->parent)
      if (auto it = s->values.find(v); it != s->values.end())
        return &it->second;
    return nullptr;
  };

  for (Operation &op : block) {
    // Index constants are a loop's bounds, read where the loop runs; no
    // other index is computed.
    if (isa<arith::ConstantIndexOp>(op))
      continue;
    if (op.getNumResults() &&
        llvm::all_of(op.getResultTypes(), [](Type t) { return t.isIndex(); }))
      return op.emitError("the reference interpreter computes no index "
                          "values; a loop's bounds and step must be "
                          "constants");
    auto loop = dyn_cast<scf::ForOp>(op);
    SmallVector<Tensor> operands;
    for (Value v : loop ? ValueRange(loop.getInitArgs())
                        : ValueRange(op.getOperands())) {
      const Tensor *t = lookup(v);
      if (!t)
        return op.emitError("operand defined outside the function body");
      operands.push_back(*t);
    }
    if (isa<func::ReturnOp, scf::YieldOp>(op)) {
      results.append(operands.begin(), operands.end());
      // Returned values change hands: the caller counts them as results.
      for (auto [v, t] : llvm::zip(op.getOperands(), operands))
        if (!isa<BlockArgument>(v) && values.count(v))
          live -= t.getSizeInBytes();
      return success();
    }
    SmallVector<Tensor> outs;
    if (loop) {
      // The body reads this block's values and those around it; initial
      // values read nowhere else become the first carried ones.
      int64_t moved = live;
      for (Value v : loop.getInitArgs())
        if (uses.of.lookup(v) == &op &&
            llvm::count(loop.getInitArgs(), v) == 1)
          free(v);
      moved -= live;
      Scope scope{values, outer};
      if (failed(runLoop(loop, operands, outs, live, scope, moved)))
        return failure();
    } else if (op.getNumRegions()) {
      return op.emitError("the reference interpreter does not run ops with "
                          "regions ('")
             << op.getName() << "')";
    } else if (Communicator::handles(&op)) {
      if (!communicator)
        return op.emitError("a collective needs simulated devices (a "
                            "shard.grid in the module)");
      FailureOr<Tensor> out = communicator->run(&op, rank, operands.front());
      if (failed(out))
        return failure();
      outs.push_back(std::move(*out));
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return op.emitError("no body for callee @") << call.getCallee();
      if (failed(runBlock(callee.getBody().front(), operands, outs, live)))
        return failure();
    } else if (failed(evaluate(&op, operands, outs))) {
      return failure();
    }
    ++stats.opsExecuted;
    for (auto [result, tensor] : llvm::zip(op.getResults(), outs)) {
      live += tensor.getSizeInBytes();
      values[result] = std::move(tensor);
    }
    stats.peakLiveBytes = std::max(stats.peakLiveBytes, live);
    // Free what this op (or one in its regions) read for the last time
    // (arguments stay with the caller, values of enclosing blocks with
    // their block), and results nobody reads.
    for (Value v : uses.dyingAt.lookup(&op))
      free(v);
    for (Value r : op.getResults())
      if (r.use_empty())
        free(r);
  }
  return block.getParentOp()->emitError("function body has no return");
}
