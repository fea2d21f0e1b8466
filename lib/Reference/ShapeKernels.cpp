//===- ShapeKernels.cpp - constant, iota, reshape, transpose, ... ---------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

/// Copies `in` read with per-dimension `strides` from `base` into `out`.
void strided(const Tensor &in, int64_t base, ArrayRef<int64_t> strides,
             Tensor &out) {
  SmallVector<SmallVector<int64_t>> s = {SmallVector<int64_t>(strides)};
  forEachElement(out.getShape(), s, [&](int64_t i, ArrayRef<int64_t> o) {
    out.copyElement(i, in, base + o[0]);
  });
}

/// Copies `in` into `out` at `offset` along `axis`, or (extract) the slice of
/// `in` at `offset` into `out`.
void copyAlongAxis(const Tensor &in, Tensor &out, int64_t axis, int64_t offset,
                   bool extract) {
  const Tensor &small = extract ? out : in;
  const Tensor &big = extract ? in : out;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= small.getShape()[d];
  for (int64_t d = axis + 1; d < small.getRank(); ++d)
    inner *= small.getShape()[d];
  int64_t smallAxis = small.getShape()[axis], bigAxis = big.getShape()[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < smallAxis; ++j)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t s = (o * smallAxis + j) * inner + k;
        int64_t b = (o * bigAxis + offset + j) * inner + k;
        if (extract)
          out.copyElement(s, in, b);
        else
          out.copyElement(b, in, s);
      }
}

Tensor pad(PadOp op, const Tensor &in) {
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> low = op.getLow(), shape = in.getShape();
  ArrayRef<int64_t> outShape = out.getShape();
  SmallVector<int64_t> inStrides = stridesOf(shape);
  double value = op.getValue().convertToDouble();
  PadMode mode = op.getMode();
  int64_t rank = in.getRank();
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0, e = out.getNumElements(); i < e; ++i) {
    int64_t rem = i, offset = 0;
    bool outside = false;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rem % outShape[d] - low[d];
      rem /= outShape[d];
      if (c < 0 || c >= shape[d]) {
        if (mode == PadMode::constant) {
          outside = true;
          continue;
        }
        if (mode == PadMode::reflect)
          c = c < 0 ? -c : 2 * (shape[d] - 1) - c;
        else
          c = c < 0 ? 0 : shape[d] - 1;
      }
      offset += c * inStrides[d];
    }
    if (outside)
      out.setFloat(i, value);
    else
      out.copyElement(i, in, offset);
  }
  return out;
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateShape(Operation *op,
                                             ArrayRef<Tensor> operands,
                                             Results &results) {
  if (auto c = dyn_cast<ConstantOp>(op)) {
    results.push_back(Tensor::fromAttr(c.getValue()));
    return success();
  }
  if (auto iota = dyn_cast<IotaOp>(op)) {
    Tensor out = resultTensor(op);
    ArrayRef<int64_t> shape = out.getShape();
    int64_t dim = iota.getDimension();
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < out.getRank(); ++d)
      inner *= shape[d];
    for (int64_t i = 0, e = out.getNumElements(); i < e; ++i)
      out.setInt(i, (i / inner) % shape[dim]);
    results.push_back(std::move(out));
    return success();
  }
  if (isa<ReshapeOp>(op)) {
    results.push_back(operands[0].reshaped(
        cast<RankedTensorType>(op->getResult(0).getType()).getShape()));
    return success();
  }
  if (auto t = dyn_cast<TransposeOp>(op)) {
    Tensor out = resultTensor(op);
    SmallVector<int64_t> inStrides = stridesOf(operands[0].getShape());
    SmallVector<int64_t> strides;
    for (int64_t p : t.getPermutation())
      strides.push_back(inStrides[p]);
    strided(operands[0], 0, strides, out);
    results.push_back(std::move(out));
    return success();
  }
  if (isa<BroadcastToOp>(op)) {
    Tensor out = resultTensor(op);
    strided(operands[0], 0,
            broadcastStrides(operands[0].getShape(), out.getShape()), out);
    results.push_back(std::move(out));
    return success();
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    Tensor out = resultTensor(op);
    int64_t offset = 0;
    for (const Tensor &in : operands) {
      copyAlongAxis(in, out, c.getAxis(), offset, /*extract=*/false);
      offset += in.getShape()[c.getAxis()];
    }
    results.push_back(std::move(out));
    return success();
  }
  if (auto s = dyn_cast<SliceOp>(op)) {
    Tensor out = resultTensor(op);
    SmallVector<int64_t> inStrides = stridesOf(operands[0].getShape());
    int64_t base = 0;
    SmallVector<int64_t> strides;
    for (auto [d, start, step] :
         llvm::enumerate(s.getStarts(), s.getStrides())) {
      base += start * inStrides[d];
      strides.push_back(step * inStrides[d]);
    }
    if (out.getNumElements())
      strided(operands[0], base, strides, out);
    results.push_back(std::move(out));
    return success();
  }
  if (auto s = dyn_cast<SplitOp>(op)) {
    int64_t offset = 0;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      Tensor out = resultTensor(op, i);
      copyAlongAxis(operands[0], out, s.getAxis(), offset, /*extract=*/true);
      offset += out.getShape()[s.getAxis()];
      results.push_back(std::move(out));
    }
    return success();
  }
  if (auto p = dyn_cast<PadOp>(op)) {
    results.push_back(pad(p, operands[0]));
    return success();
  }
  return std::nullopt;
}
