//===- ReductionImport.cpp - ONNX reductions ------------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

/// The axes a Reduce* node reduces (normalised), or nullopt for the
/// identity (empty axes with noop_with_empty_axes).
FailureOr<std::optional<SmallVector<int64_t>>> reduceAxes(NodeContext &ctx,
                                                          int64_t rank) {
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsFromInputOrAttr(1, "axes");
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty()) {
    if (ctx.getInt("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(
        llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  }
  if (failed(ctx.normalizeAxes(axes, rank, /*allowRepeats=*/true)))
    return failure();
  return std::optional<SmallVector<int64_t>>(axes);
}

enum class Kind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <Kind kind> LogicalResult reduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  auto axes = reduceAxes(ctx, typeOf(x).getRank());
  if (failed(axes))
    return failure();
  if (!*axes) {
    ctx.setOutput(0, x);
    return success();
  }
  bool keep = ctx.getInt("keepdims", 1);
  ArrayRef<int64_t> a = **axes;
  Value y;
  switch (kind) {
  case Kind::Sum: y = ctx.reduce<ReduceSumOp>(x, a, keep); break;
  case Kind::Mean: y = ctx.reduce<ReduceMeanOp>(x, a, keep); break;
  case Kind::Max: y = ctx.reduce<ReduceMaxOp>(x, a, keep); break;
  case Kind::Min: y = ctx.reduce<ReduceMinOp>(x, a, keep); break;
  case Kind::Prod: y = ctx.reduce<ReduceProdOp>(x, a, keep); break;
  case Kind::L1:
    y = ctx.reduce<ReduceSumOp>(ctx.create<AbsOp>(x), a, keep);
    break;
  case Kind::SumSquare:
    y = ctx.reduce<ReduceSumOp>(ctx.create<MulOp>(x, x), a, keep);
    break;
  case Kind::L2:
    if (!isa<FloatType>(typeOf(x).getElementType())) {
      Type f = ctx.b.getF64Type();
      Value xf = ctx.cast(x, f);
      y = ctx.create<SqrtOp>(
          ctx.reduce<ReduceSumOp>(ctx.create<MulOp>(xf, xf), a, keep));
      y = ctx.cast(ctx.create<RoundOp>(y), typeOf(x).getElementType());
      break;
    }
    y = ctx.create<SqrtOp>(
        ctx.reduce<ReduceSumOp>(ctx.create<MulOp>(x, x), a, keep));
    break;
  case Kind::LogSum:
    y = ctx.create<LogOp>(ctx.reduce<ReduceSumOp>(x, a, keep));
    break;
  case Kind::LogSumExp: {
    Value m = ctx.reduce<ReduceMaxOp>(x, a, true);
    Value s = ctx.reduce<ReduceSumOp>(ctx.create<ExpOp>(ctx.create<SubOp>(x, m)),
                                      a, true);
    y = ctx.create<AddOp>(ctx.create<LogOp>(s), m);
    if (!keep) {
      SmallVector<int64_t> shape;
      for (int64_t d = 0; d < typeOf(x).getRank(); ++d)
        if (!llvm::is_contained(a, d))
          shape.push_back(typeOf(x).getDimSize(d));
      y = ctx.reshape(y, shape);
    }
    break;
  }
  }
  ctx.setOutput(0, y);
  return success();
}

template <typename OpTy> LogicalResult argReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), typeOf(x).getRank());
  if (failed(axis))
    return failure();
  ctx.setOutput(0, ctx.create<OpTy>(x, *axis, ctx.getInt("keepdims", 1) != 0,
                                    ctx.getInt("select_last_index", 0) != 0));
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerReductionHandlers(HandlerMap &m) {
  m["ReduceSum"] = reduce<Kind::Sum>;
  m["ReduceMean"] = reduce<Kind::Mean>;
  m["ReduceMax"] = reduce<Kind::Max>;
  m["ReduceMin"] = reduce<Kind::Min>;
  m["ReduceProd"] = reduce<Kind::Prod>;
  m["ReduceL1"] = reduce<Kind::L1>;
  m["ReduceL2"] = reduce<Kind::L2>;
  m["ReduceSumSquare"] = reduce<Kind::SumSquare>;
  m["ReduceLogSum"] = reduce<Kind::LogSum>;
  m["ReduceLogSumExp"] = reduce<Kind::LogSumExp>;
  m["ArgMax"] = argReduce<ArgMaxOp>;
  m["ArgMin"] = argReduce<ArgMinOp>;
}
