//===- ReductionKernels.cpp - reductions, softmax, log_softmax ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

enum class Kind { Sum, Mean, Max, Min, Prod };

/// Strides that map an input index to its output element when `axes` are
/// reduced away (0 along reduced dimensions).
SmallVector<int64_t> reducedStrides(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (!llvm::is_contained(axes, d))
      kept.push_back(shape[d]);
  SmallVector<int64_t> keptStrides = stridesOf(kept);
  SmallVector<int64_t> strides(shape.size(), 0);
  for (int64_t d = 0, k = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (!llvm::is_contained(axes, d))
      strides[d] = keptStrides[k++];
  return strides;
}

Tensor reduce(Operation *op, const Tensor &in, ArrayRef<int64_t> axes,
              Kind kind) {
  Tensor out = resultTensor(op);
  int64_t n = out.getNumElements();
  int64_t count = n ? in.getNumElements() / n : 0;
  bool isFloat = in.isFloat();
  constexpr double inf = std::numeric_limits<double>::infinity();
  double fInit = kind == Kind::Max   ? -inf
                 : kind == Kind::Min ? inf
                 : kind == Kind::Prod ? 1.0
                                      : 0.0;
  int64_t iInit = kind == Kind::Max   ? std::numeric_limits<int64_t>::min()
                  : kind == Kind::Min ? std::numeric_limits<int64_t>::max()
                  : kind == Kind::Prod ? 1
                                       : 0;
  std::vector<double> facc(n, fInit);
  std::vector<int64_t> iacc(n, iInit);
  SmallVector<SmallVector<int64_t>> strides = {
      reducedStrides(in.getShape(), axes)};
  forEachElement(in.getShape(), strides, [&](int64_t i, ArrayRef<int64_t> o) {
    int64_t r = o[0];
    if (isFloat) {
      double v = in.getFloat(i);
      double &a = facc[r];
      switch (kind) {
      case Kind::Sum:
      case Kind::Mean: a += v; break;
      case Kind::Max: a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v); break;
      case Kind::Min: a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v); break;
      case Kind::Prod: a *= v; break;
      }
      return;
    }
    int64_t v = in.getInt(i);
    int64_t &a = iacc[r];
    switch (kind) {
    case Kind::Sum:
    case Kind::Mean:
      a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v));
      break;
    case Kind::Max: a = std::max(a, v); break;
    case Kind::Min: a = std::min(a, v); break;
    case Kind::Prod:
      a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v));
      break;
    }
  });
  for (int64_t r = 0; r < n; ++r) {
    if (isFloat)
      out.setFloat(r, kind == Kind::Mean ? facc[r] / count : facc[r]);
    else
      out.setInt(r, iacc[r]);
  }
  return out;
}

/// Index of the extreme along `axis` (NaN wins, like NumPy).
Tensor argReduce(Operation *op, const Tensor &in, int64_t axis, bool isMax,
                 bool last) {
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> shape = in.getShape();
  int64_t size = shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < in.getRank(); ++d)
    inner *= shape[d];
  int64_t outer = size ? in.getNumElements() / (size * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      int64_t best = 0;
      for (int64_t j = 1; j < size; ++j) {
        int64_t a = (o * size + best) * inner + k, b = (o * size + j) * inner + k;
        bool better;
        if (in.isFloat()) {
          double x = in.getFloat(a), y = in.getFloat(b);
          if (std::isnan(x))
            better = last && std::isnan(y);
          else if (std::isnan(y))
            better = true;
          else
            better = isMax ? (y > x || (last && y == x)) : (y < x || (last && y == x));
        } else {
          int64_t x = in.getInt(a), y = in.getInt(b);
          better = isMax ? (y > x || (last && y == x)) : (y < x || (last && y == x));
        }
        if (better)
          best = j;
      }
      out.setInt(o * inner + k, best);
    }
  return out;
}

Tensor cumsum(CumSumOp op, const Tensor &in) {
  Tensor out = resultTensor(op);
  int64_t axis = op.getAxis();
  ArrayRef<int64_t> shape = in.getShape();
  int64_t size = shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < in.getRank(); ++d)
    inner *= shape[d];
  int64_t outer = size ? in.getNumElements() / (size * inner) : 0;
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double fsum = 0;
      int64_t isum = 0;
      for (int64_t step = 0; step < size; ++step) {
        int64_t j = reverse ? size - 1 - step : step;
        int64_t idx = (o * size + j) * inner + k;
        if (exclusive) {
          in.isFloat() ? out.setFloat(idx, fsum) : out.setInt(idx, isum);
        }
        if (in.isFloat())
          fsum += in.getFloat(idx);
        else
          isum = static_cast<int64_t>(static_cast<uint64_t>(isum) +
                                      static_cast<uint64_t>(in.getInt(idx)));
        if (!exclusive) {
          in.isFloat() ? out.setFloat(idx, fsum) : out.setInt(idx, isum);
        }
      }
    }
  return out;
}

} // namespace

void mlir::ober::reference::detail::softmaxInto(const Tensor &input,
                                                int64_t axis, bool log,
                                                Tensor &out) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t size = shape[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < input.getRank(); ++d)
    inner *= shape[d];
  int64_t outer = size ? input.getNumElements() / (size * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * size * inner + in;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < size; ++j)
        m = std::max(m, input.getFloat(base + j * inner));
      double sum = 0;
      for (int64_t j = 0; j < size; ++j)
        sum += std::exp(input.getFloat(base + j * inner) - m);
      for (int64_t j = 0; j < size; ++j) {
        double x = input.getFloat(base + j * inner) - m;
        out.setFloat(base + j * inner, log ? x - std::log(sum) : std::exp(x) / sum);
      }
    }
}

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateReduction(Operation *op,
                                                 ArrayRef<Tensor> operands,
                                                 Results &results) {
  std::optional<Kind> kind;
  ArrayRef<int64_t> axes;
  if (auto r = dyn_cast<ReduceSumOp>(op))
    kind = Kind::Sum, axes = r.getAxes();
  else if (auto r = dyn_cast<ReduceMeanOp>(op))
    kind = Kind::Mean, axes = r.getAxes();
  else if (auto r = dyn_cast<ReduceMaxOp>(op))
    kind = Kind::Max, axes = r.getAxes();
  else if (auto r = dyn_cast<ReduceMinOp>(op))
    kind = Kind::Min, axes = r.getAxes();
  else if (auto r = dyn_cast<ReduceProdOp>(op))
    kind = Kind::Prod, axes = r.getAxes();
  if (kind) {
    results.push_back(reduce(op, operands[0], axes, *kind));
    return success();
  }
  if (auto a = dyn_cast<ArgMaxOp>(op)) {
    results.push_back(argReduce(op, operands[0], a.getAxis(), /*isMax=*/true,
                                a.getSelectLastIndex()));
    return success();
  }
  if (auto a = dyn_cast<ArgMinOp>(op)) {
    results.push_back(argReduce(op, operands[0], a.getAxis(), /*isMax=*/false,
                                a.getSelectLastIndex()));
    return success();
  }
  if (auto c = dyn_cast<CumSumOp>(op)) {
    results.push_back(cumsum(c, operands[0]));
    return success();
  }
  if (auto s = dyn_cast<SoftmaxOp>(op)) {
    Tensor out = resultTensor(op);
    softmaxInto(operands[0], s.getAxis(), false, out);
    results.push_back(std::move(out));
    return success();
  }
  if (auto s = dyn_cast<LogSoftmaxOp>(op)) {
    Tensor out = resultTensor(op);
    softmaxInto(operands[0], s.getAxis(), true, out);
    results.push_back(std::move(out));
    return success();
  }
  return std::nullopt;
}
