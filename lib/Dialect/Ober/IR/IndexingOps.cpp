//===- IndexingOps.cpp - embedding, gather, scatter, one_hot, dropout -----===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// input.shape[:axis] + indices.shape + input.shape[axis+1:]
static SmallVector<int64_t> gatherShape(RankedTensorType input,
                                        RankedTensorType indices,
                                        int64_t axis) {
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  return shape;
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType table = tensorOf(adaptor.getTable());
  if (table.getRank() != 2)
    return diag("table must be 2-D [vocabulary, features], got ",
                shapeString(table.getShape()));
  results.push_back(RankedTensorType::get(
      gatherShape(table, tensorOf(adaptor.getIndices()), 0),
      table.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(diag, "axis", axis, input.getRank())))
    return failure();
  results.push_back(RankedTensorType::get(
      gatherShape(input, tensorOf(adaptor.getIndices()), axis),
      input.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType indices = tensorOf(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(diag, "axis", axis, input.getRank())))
    return failure();
  if (indices.getRank() != input.getRank())
    return diag("indices must have the rank of the input ",
                shapeString(input.getShape()), ", got ",
                shapeString(indices.getShape()));
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (d != axis && !input.isDynamicDim(d) && !indices.isDynamicDim(d) &&
        indices.getDimSize(d) > input.getDimSize(d))
      return diag("indices ", shapeString(indices.getShape()),
                  " exceed the input ", shapeString(input.getShape()),
                  " in dimension ", d);
  results.push_back(indices.clone(input.getElementType()));
  return success();
}

/// scatter and scatter_add: `updates` has the shape gather would read;
/// the result is the input's type.
template <typename Adaptor>
static LogicalResult inferScatter(std::optional<Location> loc, StringRef name,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, name);
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType updates = tensorOf(adaptor.getUpdates());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(diag, "axis", axis, input.getRank())))
    return failure();
  if (updates.getElementType() != input.getElementType())
    return diag("input and updates element types differ: ",
                input.getElementType(), " vs ", updates.getElementType());
  SmallVector<int64_t> expected =
      gatherShape(input, tensorOf(adaptor.getIndices()), axis);
  if (!compatibleShapes(updates.getShape(), expected))
    return diag("updates must have shape ", shapeString(expected),
                " (what gather with these indices reads), got ",
                shapeString(updates.getShape()));
  results.push_back(input);
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  return inferScatter(loc, getOperationName(), adaptor, results);
}

LogicalResult ScatterOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferScatter(loc, getOperationName(), adaptor, results);
}

LogicalResult OneHotOp::verify() {
  OpDiag diag(getLoc(), getOperationName());
  int64_t depth = getDepth(), axis = getAxis();
  RankedTensorType indices = getIndices().getType();
  if (depth < 1)
    return diag("'depth' must be positive, got ", depth);
  if (axis < 0 || axis > indices.getRank())
    return diag("'axis' ", axis, " must be in [0, ", indices.getRank(), "]");
  SmallVector<int64_t> expected(indices.getShape());
  expected.insert(expected.begin() + axis, depth);
  if (!compatibleShapes(getType().getShape(), expected))
    return diag("result must have shape ", shapeString(expected), ", got ",
                shapeString(getType().getShape()));
  return success();
}

LogicalResult StringNormalizeOp::verify() {
  OpDiag diag(getLoc(), getOperationName());
  RankedTensorType in = getInput().getType(), out = getType();
  bool twoD = in.getRank() == 2 && in.getDimSize(0) == 1;
  if (in.getRank() != 1 && !twoD)
    return diag("input must be [C] or [1, C], got ", shapeString(in.getShape()));
  if (out.getRank() != in.getRank() || (twoD && out.getDimSize(0) != 1))
    return diag("result must have the input's layout, got ",
                shapeString(out.getShape()));
  StringRef change = getCaseChange();
  if (change != "LOWER" && change != "UPPER" && change != "NONE")
    return diag("'case_change' must be LOWER, UPPER or NONE, got '", change,
                "'");
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  double ratio = adaptor.getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return diag("'ratio' must be in [0, 1), got ", ratio);
  RankedTensorType input = tensorOf(adaptor.getInput());
  results.push_back(input);
  results.push_back(input.clone(IntegerType::get(context, 1)));
  return success();
}

SmallVector<int64_t> DropoutOp::getWholeShape() {
  if (std::optional<ArrayRef<int64_t>> whole = getGlobalShape())
    return SmallVector<int64_t>(*whole);
  return SmallVector<int64_t>(getInput().getType().getShape());
}

SmallVector<int64_t> DropoutOp::getIndexOrder() {
  int64_t rank = getInput().getType().getRank(),
          major = getMajorDim().value_or(0);
  if (rank == 0)
    return {};
  SmallVector<int64_t> order = {major};
  for (int64_t d = 0; d < rank; ++d)
    if (d != major)
      order.push_back(d);
  return order;
}

LogicalResult DropoutOp::verify() {
  OpDiag diag(getLoc(), getOperationName());
  RankedTensorType input = getInput().getType();
  if (std::optional<uint64_t> major = getMajorDim();
      major && (input.getRank() == 0 ||
                static_cast<int64_t>(*major) >= input.getRank()))
    return diag("'major_dim' (", static_cast<int64_t>(*major),
                ") must be a dimension of the input (rank ", input.getRank(),
                ")");
  std::optional<ArrayRef<int64_t>> whole = getGlobalShape();
  if (static_cast<bool>(whole) != static_cast<bool>(getOffsets()))
    return diag("'global_shape' and 'offsets' come together (a block of a "
                "larger tensor), got only '",
                whole ? "global_shape" : "offsets", "'");
  if (!whole)
    return success();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(whole->size()) != rank)
    return diag("'global_shape' must have one size per input dimension (", rank,
                "), got ", shapeString(*whole));
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  if (offsets.getDimSize(0) != rank)
    return diag("'offsets' must have one entry per input dimension (", rank,
                "), got ", shapeString(offsets.getShape()));
  for (int64_t d = 0; d < rank; ++d)
    if (!input.isDynamicDim(d) && input.getDimSize(d) > (*whole)[d])
      return diag("the input (", shapeString(input.getShape()),
                  ") must be a block of 'global_shape' (", shapeString(*whole),
                  ")");
  return success();
}

namespace {
/// dropout with ratio 0 keeps everything: result = input, mask = true.
struct FoldZeroDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getRatio().isZero() || !op.getMask().getType().hasStaticShape())
      return failure();
    auto mask = ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(op.getMask().getType(), true));
    rewriter.replaceOp(op, {op.getInput(), mask.getResult()});
    return success();
  }
};
} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<FoldZeroDropout>(context);
}
