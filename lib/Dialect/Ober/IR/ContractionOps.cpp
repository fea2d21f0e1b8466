//===- ContractionOps.cpp - matmul, conv2d, pooling, attention ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::detail;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType lhs = tensorOf(adaptor.getLhs());
  RankedTensorType rhs = tensorOf(adaptor.getRhs());
  if (lhs.getElementType() != rhs.getElementType())
    return diag("lhs and rhs element types differ: ", lhs.getElementType(),
                " vs ", rhs.getElementType());
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return diag("operands must have rank >= 1, got lhs ",
                shapeString(lhs.getShape()), " and rhs ",
                shapeString(rhs.getShape()));
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (!compatibleSize(k1, k2))
    return diag("contracting dimensions differ: lhs ",
                shapeString(lhs.getShape()), " has ", k1, ", rhs ",
                shapeString(rhs.getShape()), " has ", k2);
  ArrayRef<int64_t> batchA = ArrayRef(a).drop_back(2);
  ArrayRef<int64_t> batchB = ArrayRef(b).drop_back(2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes({batchA, batchB});
  if (failed(batch))
    return diag("batch dimensions are not broadcast-compatible: lhs ",
                shapeString(lhs.getShape()), ", rhs ",
                shapeString(rhs.getShape()));
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Window arithmetic shared by conv2d and pooling
//===----------------------------------------------------------------------===//

/// Output size of one windowed dimension, or dynamic for a dynamic input.
static FailureOr<int64_t> windowOutputSize(const OpDiag &diag, StringRef dim,
                                           int64_t in, int64_t kernel,
                                           int64_t stride, int64_t padLow,
                                           int64_t padHigh, int64_t dilation,
                                           bool ceilMode) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return ShapedType::kDynamic;
  int64_t span = in + padLow + padHigh - dilation * (kernel - 1) - 1;
  if (span < 0)
    return diag("window of ", dilation * (kernel - 1) + 1,
                " along ", dim, " does not fit the padded input of ",
                in + padLow + padHigh);
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window must start inside the input or its leading padding.
  if (ceilMode && (out - 1) * stride >= in + padLow)
    --out;
  return out;
}

static LogicalResult checkWindowAttrs(const OpDiag &diag,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations) {
  if (failed(checkArraySize(diag, "strides", strides, 2)) ||
      failed(checkArraySize(diag, "padding", padding, 4)) ||
      failed(checkArraySize(diag, "dilations", dilations, 2)))
    return failure();
  for (int64_t s : strides)
    if (s < 1)
      return diag("'strides' must be positive, got ", s);
  for (int64_t p : padding)
    if (p < 0)
      return diag("'padding' must be non-negative, got ", p);
  for (int64_t d : dilations)
    if (d < 1)
      return diag("'dilations' must be positive, got ", d);
  return success();
}

static LogicalResult checkRank4(const OpDiag &diag, StringRef name,
                                RankedTensorType type, StringRef layout) {
  if (type.getRank() != 4)
    return diag(name, " must be 4-D (", layout, "), got ",
                shapeString(type.getShape()));
  return success();
}

/// [N, C, OH, OW] for a 2-D window over `input`.
static FailureOr<SmallVector<int64_t>>
windowResultShape(const OpDiag &diag, RankedTensorType input, int64_t channels,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                  bool ceilMode) {
  FailureOr<int64_t> h =
      windowOutputSize(diag, "height", input.getDimSize(2), kernel[0],
                       strides[0], padding[0], padding[2], dilations[0], ceilMode);
  if (failed(h))
    return failure();
  FailureOr<int64_t> w =
      windowOutputSize(diag, "width", input.getDimSize(3), kernel[1],
                       strides[1], padding[1], padding[3], dilations[1], ceilMode);
  if (failed(w))
    return failure();
  return SmallVector<int64_t>{input.getDimSize(0), channels, *h, *w};
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  if (failed(checkRank4(diag, "input", input, "N, C, H, W")) ||
      failed(checkRank4(diag, "weight", weight, "O, C/groups, KH, KW")) ||
      failed(checkWindowAttrs(diag, adaptor.getStrides(), adaptor.getPadding(),
                              adaptor.getDilations())))
    return failure();
  if (input.getElementType() != weight.getElementType())
    return diag("input and weight element types differ: ",
                input.getElementType(), " vs ", weight.getElementType());
  int64_t groups = adaptor.getGroups();
  if (groups < 1)
    return diag("'groups' must be positive, got ", groups);
  int64_t channels = input.getDimSize(1), outChannels = weight.getDimSize(0);
  int64_t groupChannels = weight.getDimSize(1);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(groupChannels) &&
      channels != groupChannels * groups)
    return diag("input has ", channels, " channels but weight ",
                shapeString(weight.getShape()), " with ", groups,
                " group(s) expects ", groupChannels * groups);
  if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
    return diag("output channels ", outChannels,
                " are not divisible by 'groups' ", groups);
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = tensorOf(bias);
    if (biasType.getRank() != 1 ||
        !compatibleSize(biasType.getDimSize(0), outChannels) ||
        biasType.getElementType() != input.getElementType())
      return diag("bias must be ", outChannels, "x", input.getElementType(),
                  " (one per output channel), got ", biasType);
  }
  FailureOr<SmallVector<int64_t>> shape = windowResultShape(
      diag, input, outChannels, weight.getShape().drop_front(2),
      adaptor.getStrides(), adaptor.getPadding(), adaptor.getDilations(),
      /*ceilMode=*/false);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static LogicalResult inferPool(const OpDiag &diag, RankedTensorType input,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilations, bool ceilMode,
                               SmallVectorImpl<Type> &results) {
  if (failed(checkRank4(diag, "input", input, "N, C, H, W")) ||
      failed(checkArraySize(diag, "kernel", kernel, 2)) ||
      failed(checkWindowAttrs(diag, strides, padding, dilations)))
    return failure();
  for (int64_t k : kernel)
    if (k < 1)
      return diag("'kernel' must be positive, got ", k);
  FailureOr<SmallVector<int64_t>> shape =
      windowResultShape(diag, input, input.getDimSize(1), kernel, strides,
                        padding, dilations, ceilMode);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult MaxPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool(OpDiag(loc, getOperationName()), tensorOf(adaptor.getInput()),
                   adaptor.getKernel(), adaptor.getStrides(),
                   adaptor.getPadding(), adaptor.getDilations(),
                   adaptor.getCeilMode(), results);
}

LogicalResult AvgPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  int64_t unitDilations[] = {1, 1};
  return inferPool(OpDiag(loc, getOperationName()), tensorOf(adaptor.getInput()),
                   adaptor.getKernel(), adaptor.getStrides(),
                   adaptor.getPadding(), unitDilations, adaptor.getCeilMode(),
                   results);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType q = tensorOf(adaptor.getQuery());
  RankedTensorType k = tensorOf(adaptor.getKey());
  RankedTensorType v = tensorOf(adaptor.getValue());
  if (q.getRank() < 2 || k.getRank() != q.getRank() ||
      v.getRank() != q.getRank())
    return diag("query, key and value must have one rank >= 2, got ",
                shapeString(q.getShape()), ", ", shapeString(k.getShape()),
                " and ", shapeString(v.getShape()));
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return diag("query, key and value element types differ: ",
                q.getElementType(), ", ", k.getElementType(), ", ",
                v.getElementType());
  int64_t rank = q.getRank();
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  if (!compatibleShapes(batch, k.getShape().drop_back(2)) ||
      !compatibleShapes(batch, v.getShape().drop_back(2)))
    return diag("leading dimensions differ: query ", shapeString(q.getShape()),
                ", key ", shapeString(k.getShape()), ", value ",
                shapeString(v.getShape()));
  if (!compatibleSize(q.getDimSize(rank - 1), k.getDimSize(rank - 1)))
    return diag("query and key head sizes differ: ",
                shapeString(q.getShape()), " vs ", shapeString(k.getShape()));
  if (!compatibleSize(k.getDimSize(rank - 2), v.getDimSize(rank - 2)))
    return diag("key and value sequence lengths differ: ",
                shapeString(k.getShape()), " vs ", shapeString(v.getShape()));
  if (FloatAttr scale = adaptor.getScaleAttr();
      scale && !scale.getValue().isFiniteNonZero())
    return diag("'scale' must be finite and non-zero, got ",
                scale.getValueAsDouble());
  if (!adaptor.getScaleAttr() && q.isDynamicDim(rank - 1))
    return diag("needs a static head size or an explicit 'scale'");
  SmallVector<int64_t> scores(batch);
  scores.push_back(q.getDimSize(rank - 2));
  scores.push_back(k.getDimSize(rank - 2));
  if (Value mask = adaptor.getMask()) {
    RankedTensorType m = tensorOf(mask);
    if (m.getElementType() != q.getElementType() &&
        !m.getElementType().isInteger(1))
      return diag("mask must be i1 or ", q.getElementType(), ", got ",
                  m.getElementType());
    FailureOr<SmallVector<int64_t>> b =
        broadcastShapes({m.getShape(), ArrayRef<int64_t>(scores)});
    if (failed(b) || !compatibleShapes(*b, scores))
      return diag("mask ", shapeString(m.getShape()),
                  " does not broadcast to the scores ", shapeString(scores));
  }
  SmallVector<int64_t> shape(batch);
  shape.push_back(q.getDimSize(rank - 2));
  shape.push_back(v.getDimSize(rank - 1));
  results.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t d = getQuery().getType().getShape().back();
  return 1.0 / std::sqrt(static_cast<double>(d));
}
