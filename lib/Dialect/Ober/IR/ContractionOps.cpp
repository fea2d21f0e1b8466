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
// Window arithmetic shared by convolution and pooling
//===----------------------------------------------------------------------===//

/// Output size of one windowed dimension, or dynamic for a dynamic input.
static FailureOr<int64_t> windowOutputSize(const OpDiag &diag, int64_t dim,
                                           int64_t in, int64_t kernel,
                                           int64_t stride, int64_t padLow,
                                           int64_t padHigh, int64_t dilation,
                                           bool ceilMode) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return ShapedType::kDynamic;
  int64_t span = in + padLow + padHigh - dilation * (kernel - 1) - 1;
  if (span < 0)
    return diag("window of ", dilation * (kernel - 1) + 1,
                " along spatial dimension ", dim,
                " does not fit the padded input of ", in + padLow + padHigh);
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window must start inside the input or its leading padding.
  if (ceilMode && (out - 1) * stride >= in + padLow)
    --out;
  return out;
}

/// Checks the channels-first `input` ([N, C, D1..Dk], k in 1..3) and the
/// window attributes; returns k.
static FailureOr<int64_t> checkWindowed(const OpDiag &diag,
                                        RankedTensorType input,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> padding,
                                        ArrayRef<int64_t> dilations) {
  int64_t k = input.getRank() - 2;
  if (k < 1 || k > 3)
    return diag("input must be [N, C, D1, ..., Dk] with 1 to 3 spatial "
                "dimensions, got ",
                shapeString(input.getShape()));
  if (failed(checkArraySize(diag, "strides", strides, k)) ||
      failed(checkArraySize(diag, "padding", padding, 2 * k)) ||
      failed(checkArraySize(diag, "dilations", dilations, k)))
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
  return k;
}

/// [N, channels, O1..Ok] for windows `kernel` over `input`.
static FailureOr<SmallVector<int64_t>>
windowResultShape(const OpDiag &diag, RankedTensorType input, int64_t channels,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                  bool ceilMode) {
  int64_t k = kernel.size();
  SmallVector<int64_t> shape = {input.getDimSize(0), channels};
  for (int64_t i = 0; i < k; ++i) {
    FailureOr<int64_t> size = windowOutputSize(
        diag, i, input.getDimSize(2 + i), kernel[i], strides[i], padding[i],
        padding[k + i], dilations[i], ceilMode);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return shape;
}

/// Checks a convolution's weight and bias against its input; `weightIn` and
/// `weightOut` are the weight dimensions holding input and output channels.
static LogicalResult checkConvOperands(const OpDiag &diag,
                                       RankedTensorType input,
                                       RankedTensorType weight, Value bias,
                                       int64_t groups, int64_t outChannels,
                                       int64_t inPerGroup, StringRef layout) {
  if (weight.getRank() != input.getRank())
    return diag("weight must be ", layout, " with the input's rank ",
                input.getRank(), ", got ", shapeString(weight.getShape()));
  if (input.getElementType() != weight.getElementType())
    return diag("input and weight element types differ: ",
                input.getElementType(), " vs ", weight.getElementType());
  if (groups < 1)
    return diag("'groups' must be positive, got ", groups);
  int64_t channels = input.getDimSize(1);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(inPerGroup) &&
      channels != inPerGroup * groups)
    return diag("input has ", channels, " channels but weight ",
                shapeString(weight.getShape()), " with ", groups,
                " group(s) expects ", inPerGroup * groups);
  if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
    return diag("output channels ", outChannels,
                " are not divisible by 'groups' ", groups);
  if (bias) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 ||
        !compatibleSize(biasType.getDimSize(0), outChannels) ||
        biasType.getElementType() != input.getElementType())
      return diag("bias must be ", outChannels, "x", input.getElementType(),
                  " (one per output channel), got ", biasType);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConvOp, ConvTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  FailureOr<int64_t> k =
      checkWindowed(diag, input, adaptor.getStrides(), adaptor.getPadding(),
                    adaptor.getDilations());
  if (failed(k))
    return failure();
  int64_t outChannels = weight.getRank() > 1 ? weight.getDimSize(0) : 0;
  int64_t inPerGroup = weight.getRank() > 1 ? weight.getDimSize(1) : 0;
  if (failed(checkConvOperands(diag, input, weight, adaptor.getBias(),
                               adaptor.getGroups(), outChannels, inPerGroup,
                               "[O, C/groups, K...]")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = windowResultShape(
      diag, input, outChannels, weight.getShape().drop_front(2),
      adaptor.getStrides(), adaptor.getPadding(), adaptor.getDilations(),
      /*ceilMode=*/false);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  OpDiag diag(loc, getOperationName());
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  ArrayRef<int64_t> strides = adaptor.getStrides(),
                    padding = adaptor.getPadding(),
                    dilations = adaptor.getDilations(),
                    outputPadding = adaptor.getOutputPadding();
  FailureOr<int64_t> k =
      checkWindowed(diag, input, strides, padding, dilations);
  if (failed(k) ||
      failed(checkArraySize(diag, "output_padding", outputPadding, *k)))
    return failure();
  int64_t groups = adaptor.getGroups();
  int64_t inPerGroup =
      weight.getRank() > 1 && groups > 0 ? weight.getDimSize(0) / groups : 0;
  int64_t outChannels = weight.getRank() > 1 && !weight.isDynamicDim(1)
                            ? weight.getDimSize(1) * groups
                            : ShapedType::kDynamic;
  if (weight.getRank() > 1 && !weight.isDynamicDim(0) && groups > 0 &&
      weight.getDimSize(0) % groups != 0)
    return diag("weight input channels ", weight.getDimSize(0),
                " are not divisible by 'groups' ", groups);
  if (failed(checkConvOperands(diag, input, weight, adaptor.getBias(), groups,
                               outChannels, inPerGroup,
                               "[C, O/groups, K...]")))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  for (int64_t i = 0; i < *k; ++i) {
    int64_t in = input.getDimSize(2 + i), kernel = weight.getDimSize(2 + i);
    if (outputPadding[i] < 0 ||
        (outputPadding[i] >= strides[i] && outputPadding[i] >= dilations[i]))
      return diag("'output_padding' ", outputPadding[i],
                  " must be non-negative and smaller than the stride or the "
                  "dilation");
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t size = (in - 1) * strides[i] - padding[i] - padding[*k + i] +
                   dilations[i] * (kernel - 1) + outputPadding[i] + 1;
    if (size < 1)
      return diag("padding leaves no output along spatial dimension ", i);
    shape.push_back(size);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
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
  FailureOr<int64_t> k =
      checkWindowed(diag, input, strides, padding, dilations);
  if (failed(k) || failed(checkArraySize(diag, "kernel", kernel, *k)))
    return failure();
  for (int64_t size : kernel)
    if (size < 1)
      return diag("'kernel' must be positive, got ", size);
  FailureOr<SmallVector<int64_t>> shape =
      windowResultShape(diag, input, input.getDimSize(1), kernel, strides,
                        padding, dilations, ceilMode);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferPool(OpDiag(loc, getOperationName()), tensorOf(adaptor.getInput()),
                   adaptor.getKernel(), adaptor.getStrides(),
                   adaptor.getPadding(), adaptor.getDilations(),
                   adaptor.getCeilMode(), results);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  SmallVector<int64_t> unitDilations(
      std::max<int64_t>(0, tensorOf(adaptor.getInput()).getRank() - 2), 1);
  return inferPool(OpDiag(loc, getOperationName()), tensorOf(adaptor.getInput()),
                   adaptor.getKernel(), adaptor.getStrides(),
                   adaptor.getPadding(), unitDilations, adaptor.getCeilMode(),
                   results);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType> mlir::ober::detail::inferAttention(
    const OpDiag &diag, RankedTensorType q, RankedTensorType k,
    RankedTensorType v, RankedTensorType m, FloatAttr scale) {
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
  if (scale && !scale.getValue().isFiniteNonZero())
    return diag("'scale' must be finite and non-zero, got ",
                scale.getValueAsDouble());
  if (!scale && q.isDynamicDim(rank - 1))
    return diag("needs a static head size or an explicit 'scale'");
  SmallVector<int64_t> scores(batch);
  scores.push_back(q.getDimSize(rank - 2));
  scores.push_back(k.getDimSize(rank - 2));
  if (m) {
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
  return RankedTensorType::get(shape, q.getElementType());
}

double mlir::ober::detail::attentionScale(std::optional<APFloat> scale,
                                          RankedTensorType query) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(query.getShape().back()));
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  Value mask = adaptor.getMask();
  FailureOr<RankedTensorType> out = inferAttention(
      OpDiag(loc, getOperationName()), tensorOf(adaptor.getQuery()),
      tensorOf(adaptor.getKey()), tensorOf(adaptor.getValue()),
      mask ? tensorOf(mask) : RankedTensorType(), adaptor.getScaleAttr());
  if (failed(out))
    return failure();
  results.push_back(*out);
  return success();
}

double AttentionOp::getEffectiveScale() {
  return attentionScale(getScale(), getQuery().getType());
}
