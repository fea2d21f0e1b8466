//===- IndexingKernels.cpp - embedding, gather, scatter, one_hot, dropout -===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/Random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

/// Sizes before, along and after `axis`.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
  AxisSplit(ArrayRef<int64_t> shape, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      if (d < axis)
        outer *= shape[d];
      else if (d == axis)
        size = shape[d];
      else
        inner *= shape[d];
    }
  }
};

/// Reads index `i` of `indices` for an axis of `size`, wrapping negative
/// values when `allowNegative`; fails with a message at `op` otherwise.
FailureOr<int64_t> indexAt(Operation *op, const Tensor &indices, int64_t i,
                           int64_t size, bool allowNegative) {
  int64_t v = indices.getInt(i);
  int64_t w = allowNegative && v < 0 ? v + size : v;
  if (w < 0 || w >= size)
    return op->emitError("index ")
           << v << " at position " << i << " is out of range for size "
           << size;
  return w;
}

/// `current` combined with `update` as ober.scatter's `combine` says.
double combineScatter(ScatterCombine combine, double current, double update) {
  switch (combine) {
  case ScatterCombine::replace:
    return update;
  case ScatterCombine::mul:
    return current * update;
  case ScatterCombine::max:
    return std::isnan(current) || std::isnan(update)
               ? std::numeric_limits<double>::quiet_NaN()
               : std::max(current, update);
  case ScatterCombine::min:
    return std::isnan(current) || std::isnan(update)
               ? std::numeric_limits<double>::quiet_NaN()
               : std::min(current, update);
  }
  return update;
}

/// gather (forward), scatter-add (no `combine`) or scatter (reverse) of
/// slices along `axis`.
LogicalResult gatherOrScatter(Operation *op, const Tensor &data,
                              const Tensor &indices, int64_t axis,
                              bool allowNegative, Tensor &out,
                              const Tensor *updates,
                              std::optional<ScatterCombine> combine = {}) {
  AxisSplit split(data.getShape(), axis);
  int64_t count = indices.getNumElements();
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      FailureOr<int64_t> idx =
          indexAt(op, indices, j, split.size, allowNegative);
      if (failed(idx))
        return failure();
      for (int64_t in = 0; in < split.inner; ++in) {
        int64_t dataPos = (o * split.size + *idx) * split.inner + in;
        int64_t slicePos = (o * count + j) * split.inner + in;
        if (!updates) {
          out.copyElement(slicePos, data, dataPos);
        } else if (combine == ScatterCombine::replace) {
          out.copyElement(dataPos, *updates, slicePos);
        } else if (combine && out.isFloat()) {
          out.setFloat(dataPos,
                       combineScatter(*combine, out.getFloat(dataPos),
                                      updates->getFloat(slicePos)));
        } else if (combine) {
          int64_t a = out.getInt(dataPos), u = updates->getInt(slicePos);
          out.setInt(dataPos, *combine == ScatterCombine::mul
                                  ? static_cast<int64_t>(
                                        static_cast<uint64_t>(a) *
                                        static_cast<uint64_t>(u))
                              : *combine == ScatterCombine::max
                                  ? std::max(a, u)
                                  : std::min(a, u));
        } else if (out.isFloat()) {
          out.setFloat(dataPos,
                       out.getFloat(dataPos) + updates->getFloat(slicePos));
        } else {
          out.setInt(dataPos, out.getInt(dataPos) + updates->getInt(slicePos));
        }
      }
    }
  return success();
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateIndexing(Operation *op,
                                                ArrayRef<Tensor> operands,
                                                Results &results) {
  if (isa<EmbeddingOp>(op)) {
    Tensor out = resultTensor(op);
    if (failed(gatherOrScatter(op, operands[0], operands[1], 0,
                               /*allowNegative=*/false, out, nullptr)))
      return failure();
    results.push_back(std::move(out));
    return success();
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    Tensor out = resultTensor(op);
    if (failed(gatherOrScatter(op, operands[0], operands[1], g.getAxis(),
                               /*allowNegative=*/true, out, nullptr)))
      return failure();
    results.push_back(std::move(out));
    return success();
  }
  if (auto g = dyn_cast<GatherElementsOp>(op)) {
    Tensor out = resultTensor(op);
    const Tensor &data = operands[0], &indices = operands[1];
    int64_t axis = g.getAxis(), size = data.getShape()[axis];
    SmallVector<int64_t> dataStrides = stridesOf(data.getShape());
    SmallVector<SmallVector<int64_t>> strides = {dataStrides};
    strides[0][axis] = 0;
    LogicalResult status = success();
    forEachElement(indices.getShape(), strides,
                   [&](int64_t i, ArrayRef<int64_t> o) {
                     if (failed(status))
                       return;
                     FailureOr<int64_t> idx = indexAt(op, indices, i, size, true);
                     if (failed(idx)) {
                       status = failure();
                       return;
                     }
                     out.copyElement(i, data, o[0] + *idx * dataStrides[axis]);
                   });
    if (failed(status))
      return failure();
    results.push_back(std::move(out));
    return success();
  }
  if (isa<ScatterAddOp, ScatterOp>(op)) {
    Tensor out = operands[0];
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    std::optional<ScatterCombine> combine;
    if (auto s = dyn_cast<ScatterOp>(op))
      combine = s.getCombine();
    if (failed(gatherOrScatter(op, operands[0], operands[1], axis,
                               /*allowNegative=*/true, out, &operands[2],
                               combine)))
      return failure();
    results.push_back(std::move(out));
    return success();
  }
  if (auto oh = dyn_cast<OneHotOp>(op)) {
    Tensor out = resultTensor(op);
    const Tensor &indices = operands[0];
    int64_t depth = oh.getDepth();
    AxisSplit split(out.getShape(), oh.getAxis());
    for (int64_t o = 0; o < split.outer; ++o)
      for (int64_t in = 0; in < split.inner; ++in) {
        int64_t v = indices.getInt(o * split.inner + in);
        if (v < 0)
          v += depth;
        if (v >= 0 && v < depth)
          out.setInt((o * depth + v) * split.inner + in, 1);
      }
    results.push_back(std::move(out));
    return success();
  }
  if (auto d = dyn_cast<DropoutOp>(op)) {
    const Tensor &x = operands[0];
    double ratio = d.getRatio().convertToDouble();
    uint64_t seed = static_cast<uint64_t>(operands[1].getInt(0));
    Tensor out = resultTensor(op, 0), mask = resultTensor(op, 1);
    // Each element draws by its index in the whole tensor: the block's
    // offset plus its local index, row-major in the whole shape.
    ArrayRef<int64_t> local = x.getShape();
    SmallVector<int64_t> whole(local), at(local.size(), 0);
    if (std::optional<ArrayRef<int64_t>> shape = d.getGlobalShape())
      whole.assign(shape->begin(), shape->end());
    if (d.getOffsets())
      for (size_t k = 0; k < at.size(); ++k)
        at[k] = operands[2].getInt(k);
    // The dimensions in the order the index counts them (`major_dim`
    // first).
    SmallVector<int64_t> order = d.getIndexOrder();
    SmallVector<int64_t> index(local.size(), 0);
    for (int64_t i = 0, e = x.getNumElements(); i < e; ++i) {
      int64_t global = 0;
      for (int64_t k : order)
        global = global * whole[k] + at[k] + index[k];
      for (size_t k = local.size(); k-- > 0 && ++index[k] == local[k];)
        index[k] = 0;
      bool keep = ::ober::rt::uniformAt(seed, global) >= ratio;
      mask.setInt(i, keep);
      out.setFloat(i, keep ? x.getFloat(i) / (1.0 - ratio) : 0.0);
    }
    results.push_back(std::move(out));
    results.push_back(std::move(mask));
    return success();
  }
  return std::nullopt;
}
