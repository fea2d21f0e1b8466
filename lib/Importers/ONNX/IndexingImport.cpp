//===- IndexingImport.cpp - ONNX gathers, scatters and TopK ---------------===//
//
// Part of Ober-Train. GatherND, ScatterND, ScatterElements (and the older
// Scatter), TopK and ReverseSequence, written with ober's gather, scatter,
// comparison and reduction ops: multi-dimensional indices become linear
// indices into a flattened tensor.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include <array>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

/// Elements a decomposition may materialise in one intermediate (TopK's
/// pairwise comparisons): 2^27 (512 MiB of i32).
constexpr int64_t kMaxPairwiseElements = int64_t(1) << 27;

/// True when every operand of the node has a static shape; an error
/// naming the first that does not otherwise.
bool staticShapes(NodeContext &ctx, ArrayRef<Value> values) {
  for (auto [i, v] : llvm::enumerate(values))
    if (v && !typeOf(v).hasStaticShape()) {
      ctx.error() << "needs inputs of static shape; input #" << i << " is "
                  << typeOf(v);
      return false;
    }
  return true;
}

Value iota(NodeContext &ctx, ArrayRef<int64_t> shape, int64_t dim) {
  return ctx.create<IotaOp>(RankedTensorType::get(shape, ctx.b.getI64Type()),
                            dim);
}

/// `idx` (i64) with negative entries counted from `sizes` (broadcast).
Value wrapNegative(NodeContext &ctx, Value idx, Value sizes) {
  Type i64 = ctx.b.getI64Type();
  Value negative =
      ctx.create<CompareOp>(CompareDirection::lt, idx, ctx.scalar(i64, 0));
  return ctx.create<SelectOp>(negative, ctx.create<AddOp>(idx, sizes), idx);
}

/// `indices` ([..., k], i64) as linear positions in a tensor whose leading
/// dimensions are `dims` (k of them), negative entries counted from the end.
Value linearize(NodeContext &ctx, Value indices, ArrayRef<int64_t> dims) {
  Type i64 = ctx.b.getI64Type();
  Value sizes = ctx.constantInts(dims, i64);
  Value wrapped = wrapNegative(ctx, indices, sizes);
  Value scaled = ctx.create<MulOp>(
      wrapped, ctx.constantInts(reference::stridesOf(dims), i64));
  return ctx.reduce<ReduceSumOp>(scaled, {typeOf(indices).getRank() - 1},
                                 /*keepdims=*/false);
}

LogicalResult gatherND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  if (!staticShapes(ctx, {data, indices}))
    return failure();
  ArrayRef<int64_t> ds = typeOf(data).getShape(),
                    is = typeOf(indices).getShape();
  int64_t b = ctx.getInt("batch_dims", 0), r = ds.size(), q = is.size();
  if (b < 0 || b >= std::min(r, q) || q < 1) {
    ctx.error() << "batch_dims " << b << " must be in [0, min(rank(data), "
                << "rank(indices))) = [0, " << std::min(r, q) << ")";
    return failure();
  }
  int64_t k = is.back();
  if (k < 1 || b + k > r || ds.take_front(b) != is.take_front(b)) {
    ctx.error() << "indices " << typeOf(indices) << " do not fit data "
                << typeOf(data) << " with batch_dims " << b;
    return failure();
  }
  ArrayRef<int64_t> indexed = ds.slice(b, k), rest = ds.drop_front(b + k);
  int64_t batch = ShapedType::getNumElements(ds.take_front(b)),
          block = ShapedType::getNumElements(indexed);
  SmallVector<int64_t> flatShape{batch * block};
  flatShape.append(rest.begin(), rest.end());
  Value flat = ctx.reshape(data, flatShape);
  Value linear = linearize(ctx, ctx.cast(indices, ctx.b.getI64Type()), indexed);
  // Each batch reads its own block of the flattened data.
  SmallVector<int64_t> outer(is.drop_back());
  int64_t perBatch =
      ShapedType::getNumElements(outer) / std::max<int64_t>(batch, 1);
  Value offsets = ctx.create<MulOp>(iota(ctx, {batch, perBatch}, 0),
                                    ctx.scalar(ctx.b.getI64Type(), block));
  linear = ctx.reshape(
      ctx.create<AddOp>(ctx.reshape(linear, {batch, perBatch}), offsets),
      outer);
  ctx.setOutput(0, ctx.create<GatherOp>(flat, linear, 0));
  return success();
}

/// ONNX's scatter reductions as ober ops: "add" is ober.scatter_add, the
/// others ober.scatter's `combine`.
FailureOr<Value> scatterFlat(NodeContext &ctx, Value flat, Value linear,
                             Value updates) {
  std::string reduction = ctx.getString("reduction", "none");
  if (reduction == "add")
    return ctx.create<ScatterAddOp>(flat, linear, updates, 0);
  std::optional<ScatterCombine> combine =
      reduction == "none" ? ScatterCombine::replace
                          : symbolizeScatterCombine(reduction);
  if (!combine) {
    ctx.error() << "reduction '" << reduction
                << "' is not supported (supported: none, add, mul, max, min)";
    return failure();
  }
  return ctx.create<ScatterOp>(
      flat, linear, updates, ctx.b.getI64IntegerAttr(0),
      ScatterCombineAttr::get(ctx.b.getContext(), *combine));
}

LogicalResult scatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!staticShapes(ctx, {data, indices, updates}))
    return failure();
  ArrayRef<int64_t> ds = typeOf(data).getShape(),
                    is = typeOf(indices).getShape();
  int64_t r = ds.size(), q = is.size();
  int64_t k = q ? is.back() : 0;
  SmallVector<int64_t> expected;
  if (q >= 1)
    expected.append(is.begin(), is.end() - 1);
  if (k >= 1 && k <= r)
    expected.append(ds.begin() + k, ds.end());
  if (q < 1 || k < 1 || k > r ||
      typeOf(updates).getShape() != ArrayRef(expected)) {
    ctx.error() << "indices " << typeOf(indices) << " and updates "
                << typeOf(updates) << " do not fit data " << typeOf(data)
                << " (updates must be indices.shape[:-1] + data.shape[k:])";
    return failure();
  }
  ArrayRef<int64_t> indexed = ds.take_front(k), rest = ds.drop_front(k);
  SmallVector<int64_t> flatShape{ShapedType::getNumElements(indexed)};
  flatShape.append(rest.begin(), rest.end());
  int64_t count = ShapedType::getNumElements(is.drop_back());
  SmallVector<int64_t> updShape{count};
  updShape.append(rest.begin(), rest.end());
  Value linear = linearize(ctx, ctx.cast(indices, ctx.b.getI64Type()), indexed);
  FailureOr<Value> out =
      scatterFlat(ctx, ctx.reshape(data, flatShape),
                  ctx.reshape(linear, {count}), ctx.reshape(updates, updShape));
  if (failed(out))
    return failure();
  ctx.setOutput(0, ctx.reshape(*out, ds));
  return success();
}

/// ScatterElements and Scatter: each update lands at its own position with
/// its index along `axis`.
LogicalResult scatterElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  if (!staticShapes(ctx, {data, indices, updates}))
    return failure();
  ArrayRef<int64_t> ds = typeOf(data).getShape(),
                    is = typeOf(indices).getShape();
  int64_t r = ds.size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), r);
  if (failed(axis))
    return failure();
  bool fits =
      static_cast<int64_t>(is.size()) == r && typeOf(updates).getShape() == is;
  for (int64_t d = 0; fits && d < r; ++d)
    fits = d == *axis || is[d] <= ds[d];
  if (!fits) {
    ctx.error() << "indices " << typeOf(indices) << " and updates "
                << typeOf(updates) << " must have one shape, of the rank of "
                << "data " << typeOf(data) << " and no larger off the axis";
    return failure();
  }
  Type i64 = ctx.b.getI64Type();
  SmallVector<int64_t> strides = reference::stridesOf(ds);
  Value idx =
      wrapNegative(ctx, ctx.cast(indices, i64), ctx.scalar(i64, ds[*axis]));
  Value linear = ctx.create<MulOp>(idx, ctx.scalar(i64, strides[*axis]));
  for (int64_t d = 0; d < r; ++d)
    if (d != *axis)
      linear = ctx.create<AddOp>(
          linear,
          ctx.create<MulOp>(iota(ctx, is, d), ctx.scalar(i64, strides[d])));
  int64_t count = ShapedType::getNumElements(is);
  FailureOr<Value> out =
      scatterFlat(ctx, ctx.reshape(data, {ShapedType::getNumElements(ds)}),
                  ctx.reshape(linear, {count}), ctx.reshape(updates, {count}));
  if (failed(out))
    return failure();
  ctx.setOutput(0, ctx.reshape(*out, ds));
  return success();
}

/// TopK by ranks: element i's rank is the number of elements that come
/// before it (better, or equal with a lower index), so ranks are a
/// permutation; the k elements ranked 0..k-1 are read in order. NaN counts
/// as larger than any number (as in PyTorch).
LogicalResult topK(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!staticShapes(ctx, {x}))
    return failure();
  int64_t k;
  if (ctx.opset < 10) {
    k = ctx.getInt("k", -1);
  } else {
    FailureOr<int64_t> kv = ctx.constantInt(1, "K");
    if (failed(kv))
      return failure();
    k = *kv;
  }
  RankedTensorType xt = typeOf(x);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), xt.getRank());
  if (failed(axis))
    return failure();
  int64_t n = xt.getDimSize(*axis);
  if (k < 0 || k > n) {
    ctx.error() << "K = " << k << " is outside [0, " << n << "] (the size of "
                << "axis " << *axis << ")";
    return failure();
  }
  int64_t rows = xt.getNumElements() / std::max<int64_t>(n, 1);
  if (n > 0 &&
      (n > kMaxPairwiseElements / n || rows > kMaxPairwiseElements / (n * n))) {
    ctx.error() << "TopK compares every pair of the " << n << " elements along "
                << "axis " << *axis << " (" << rows << " rows): supported up "
                << "to " << kMaxPairwiseElements << " comparisons";
    return failure();
  }
  bool largest = ctx.getInt("largest", 1);
  int64_t lastAxis = xt.getRank() - 1;
  Value last = ctx.moveAxis(x, *axis, lastAxis);
  SmallVector<int64_t> shape(typeOf(last).getShape());
  SmallVector<int64_t> colShape(shape), rowShape(shape);
  colShape.push_back(1);                  // [..., n(i), 1]
  rowShape.insert(rowShape.end() - 1, 1); // [..., 1, n(j)]
  Value xi = ctx.reshape(last, colShape), xj = ctx.reshape(last, rowShape);
  Value better = ctx.create<CompareOp>(
      largest ? CompareDirection::gt : CompareDirection::lt, xj, xi);
  Value equal = ctx.create<CompareOp>(CompareDirection::eq, xj, xi);
  if (isa<FloatType>(xt.getElementType())) {
    Value nanI = ctx.create<CompareOp>(CompareDirection::ne, xi, xi);
    Value nanJ = ctx.create<CompareOp>(CompareDirection::ne, xj, xj);
    Value nanFirst = largest ? ctx.create<AndOp>(nanJ, ctx.create<NotOp>(nanI))
                             : ctx.create<AndOp>(nanI, ctx.create<NotOp>(nanJ));
    better = ctx.create<OrOp>(better, nanFirst);
    equal = ctx.create<OrOp>(equal, ctx.create<AndOp>(nanI, nanJ));
  }
  Value earlier = ctx.create<CompareOp>(
      CompareDirection::lt, iota(ctx, {n, n}, 1), iota(ctx, {n, n}, 0));
  Value before = ctx.create<OrOp>(better, ctx.create<AndOp>(equal, earlier));
  Type i64 = ctx.b.getI64Type();
  Value rank =
      ctx.reduce<ReduceSumOp>(ctx.cast(before, i64), {int64_t(shape.size())},
                              /*keepdims=*/true); // [..., n, 1]
  // position r of the result reads the element ranked r.
  Value hit = ctx.create<CompareOp>(CompareDirection::eq, rank,
                                    iota(ctx, {1, k}, 1)); // [..., n, k]
  Value picked =
      ctx.create<SelectOp>(hit, iota(ctx, {n, 1}, 0), ctx.scalar(i64, 0));
  Value order = ctx.reduce<ReduceSumOp>(picked, {int64_t(shape.size()) - 1},
                                        /*keepdims=*/false); // [..., k]
  Value values =
      ctx.create<GatherElementsOp>(last, order, int64_t(shape.size()) - 1);
  ctx.setOutput(0, ctx.moveAxis(values, lastAxis, *axis));
  ctx.setOutput(1, ctx.moveAxis(order, lastAxis, *axis));
  return success();
}

/// ReverseSequence: batch b's first seq_lens[b] steps reversed, the rest
/// kept, as a gather of each element's source step.
LogicalResult reverseSequence(NodeContext &ctx) {
  Value x = ctx.input(0), lens = ctx.input(1);
  if (!staticShapes(ctx, {x, lens}))
    return failure();
  RankedTensorType xt = typeOf(x);
  int64_t batchAxis = ctx.getInt("batch_axis", 1),
          timeAxis = ctx.getInt("time_axis", 0);
  if (xt.getRank() < 2 || !((batchAxis == 0 && timeAxis == 1) ||
                            (batchAxis == 1 && timeAxis == 0))) {
    ctx.error() << "batch_axis and time_axis must be 0 and 1 (either way) of "
                << "an input of rank >= 2, got " << batchAxis << " and "
                << timeAxis << " for " << xt;
    return failure();
  }
  int64_t batch = xt.getDimSize(batchAxis);
  if (typeOf(lens).getShape() != ArrayRef<int64_t>{batch}) {
    ctx.error() << "sequence_lens must be [" << batch << "], got "
                << typeOf(lens);
    return failure();
  }
  Type i64 = ctx.b.getI64Type();
  SmallVector<int64_t> lensShape(xt.getRank(), 1);
  lensShape[batchAxis] = batch;
  Value len = ctx.reshape(ctx.cast(lens, i64), lensShape);
  Value t = iota(ctx, xt.getShape(), timeAxis);
  Value reversed =
      ctx.create<SubOp>(ctx.create<SubOp>(len, ctx.scalar(i64, 1)), t);
  Value inside = ctx.create<CompareOp>(CompareDirection::lt, t, len);
  Value source = ctx.create<SelectOp>(inside, reversed, t);
  ctx.setOutput(0, ctx.create<GatherElementsOp>(x, source, timeAxis));
  return success();
}

/// The value of input `i`, which decides the output's size; an error when
/// it is not known at import time.
std::optional<reference::Tensor> sizingValue(NodeContext &ctx, unsigned i,
                                             StringRef what) {
  std::optional<reference::Tensor> t = ctx.constant(i);
  if (!t)
    ctx.error() << "its output size depends on the values of " << what
                << " (input #" << i << "), which must be known at import time "
                << "(ober-run provides the values of its --input files)";
  return t;
}

/// Compress: the slices along `axis` (of the flattened input without one)
/// whose condition is true, as a gather.
LogicalResult compress(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<reference::Tensor> cond = sizingValue(ctx, 1, "the condition");
  if (!cond || !staticShapes(ctx, {x}))
    return failure();
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> a =
        ctx.normalizeAxis(ctx.getInt("axis", 0), typeOf(x).getRank());
    if (failed(a))
      return failure();
    axis = *a;
  } else {
    x = ctx.reshape(x, {typeOf(x).getNumElements()});
  }
  int64_t size = typeOf(x).getDimSize(axis);
  if (cond->getRank() != 1 || cond->getNumElements() > size) {
    ctx.error() << "the condition must be 1-D with at most " << size
                << " entries";
    return failure();
  }
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < cond->getNumElements(); ++i)
    if (cond->getFloat(i) != 0)
      kept.push_back(i);
  ctx.setOutput(0, ctx.create<GatherOp>(
                       x, ctx.constantInts(kept, ctx.b.getI64Type()), axis));
  return success();
}

/// NonZero: the [rank, count] indices of the non-zero elements.
LogicalResult nonZero(NodeContext &ctx) {
  std::optional<reference::Tensor> x = sizingValue(ctx, 0, "the input");
  if (!x)
    return failure();
  SmallVector<int64_t> strides = reference::stridesOf(x->getShape());
  SmallVector<int64_t> hits;
  for (int64_t i = 0; i < x->getNumElements(); ++i)
    if (x->isString() ? !x->getString(i).empty() : x->getFloat(i) != 0)
      hits.push_back(i);
  int64_t rank = x->getRank(), count = hits.size();
  reference::Tensor out(ctx.b.getI64Type(), {rank, count});
  for (int64_t d = 0; d < rank; ++d)
    for (auto [k, flat] : llvm::enumerate(hits))
      out.setInt(d * count + k, flat / strides[d] % x->getShape()[d]);
  ctx.setOutput(0, ctx.constantTensor(out));
  return success();
}

/// Unique: the distinct elements (or slices along `axis`), sorted or in
/// order of first appearance, with their first positions, each element's
/// position among them, and their counts.
LogicalResult unique(NodeContext &ctx) {
  std::optional<reference::Tensor> x = sizingValue(ctx, 0, "the input");
  if (!x)
    return failure();
  if (x->isString()) {
    ctx.error() << "string inputs are not supported";
    return failure();
  }
  bool hasAxis = ctx.hasAttr("axis");
  int64_t axis = 0;
  reference::Tensor data = hasAxis ? *x : x->reshaped({x->getNumElements()});
  if (hasAxis) {
    FailureOr<int64_t> a =
        ctx.normalizeAxis(ctx.getInt("axis", 0), x->getRank());
    if (failed(a))
      return failure();
    axis = *a;
  }
  ArrayRef<int64_t> shape = data.getShape();
  int64_t outer = ShapedType::getNumElements(shape.take_front(axis)),
          n = shape[axis],
          inner = ShapedType::getNumElements(shape.drop_front(axis + 1));
  // Each slice along the axis as a key of its values in row-major order.
  std::vector<std::vector<double>> keys(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t in = 0; in < inner; ++in)
        keys[i].push_back(data.getFloat((o * n + i) * inner + in));
  SmallVector<int64_t> firsts; // first position of each distinct slice
  std::vector<int64_t> inverse(n);
  std::map<std::vector<double>, int64_t> seen;
  for (int64_t i = 0; i < n; ++i) {
    auto [it, added] = seen.try_emplace(keys[i], firsts.size());
    if (added)
      firsts.push_back(i);
    inverse[i] = it->second;
  }
  SmallVector<int64_t> order = llvm::to_vector(
      llvm::seq<int64_t>(0, static_cast<int64_t>(firsts.size())));
  if (ctx.getInt("sorted", 1))
    llvm::sort(order, [&](int64_t a, int64_t b) {
      return keys[firsts[a]] < keys[firsts[b]];
    });
  SmallVector<int64_t> rankOf(order.size()), counts(order.size(), 0);
  for (auto [r, u] : llvm::enumerate(order))
    rankOf[u] = r;
  SmallVector<int64_t> picked, inv;
  for (int64_t u : order)
    picked.push_back(firsts[u]);
  for (int64_t i = 0; i < n; ++i) {
    inv.push_back(rankOf[inverse[i]]);
    ++counts[rankOf[inverse[i]]];
  }
  Type i64 = ctx.b.getI64Type();
  ctx.setOutput(0, ctx.create<GatherOp>(ctx.constantTensor(data),
                                        ctx.constantInts(picked, i64), axis));
  ctx.setOutput(1, ctx.constantInts(picked, i64));
  ctx.setOutput(2, ctx.constantInts(inv, i64));
  ctx.setOutput(3, ctx.constantInts(counts, i64));
  return success();
}

/// MaxUnpool: zeros with each input element written where its index (into
/// the whole output, as MaxPool's Indices count) says.
LogicalResult maxUnpool(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (!staticShapes(ctx, {x, indices}))
    return failure();
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank(), spatial = rank - 2;
  if (spatial < 1) {
    ctx.error() << "needs an [N, C, D...] input, got " << xt;
    return failure();
  }
  SmallVector<int64_t> kernel = ctx.getInts("kernel_shape"),
                       strides = ctx.getInts("strides"),
                       pads = ctx.getInts("pads");
  if (strides.empty())
    strides.assign(spatial, 1);
  if (pads.empty())
    pads.assign(2 * spatial, 0);
  if (static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial ||
      typeOf(indices).getShape() != xt.getShape()) {
    ctx.error() << "needs [N, C, D...] input and indices of one shape, and "
                << "kernel_shape, strides and pads for its " << spatial
                << " spatial dimensions";
    return failure();
  }
  SmallVector<int64_t> inferred(xt.getShape());
  for (int64_t d = 0; d < spatial; ++d)
    inferred[2 + d] = (xt.getDimSize(2 + d) - 1) * strides[d] + kernel[d] -
                      pads[d] - pads[spatial + d];
  SmallVector<int64_t> shape = inferred;
  if (ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(2, "output_shape");
    if (failed(given))
      return failure();
    if (static_cast<int64_t>(given->size()) != rank) {
      ctx.error() << "output_shape must have " << rank << " entries";
      return failure();
    }
    shape.assign(given->begin(), given->end());
  }
  if (llvm::any_of(inferred, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(llvm::zip(shape, inferred),
                   [](auto p) { return std::get<0>(p) < std::get<1>(p); }) ||
      shape[0] != inferred[0] || shape[1] != inferred[1]) {
    ctx.error() << "output_shape must be at least the unpooled shape ["
                << llvm::make_range(inferred.begin(), inferred.end())
                << "] with its N and C";
    return failure();
  }
  // Indices count positions in the unpooled shape; a larger output_shape
  // keeps their coordinates.
  Type i64 = ctx.b.getI64Type();
  int64_t total = ShapedType::getNumElements(shape),
          count = xt.getNumElements();
  Value at = ctx.reshape(ctx.cast(indices, i64), {count});
  if (shape != inferred) {
    SmallVector<int64_t> from = reference::stridesOf(inferred),
                         to = reference::stridesOf(shape);
    Value linear = ctx.scalar(i64, 0);
    for (int64_t d = 0; d < rank; ++d) {
      Value coord =
          ctx.create<RemOp>(ctx.create<DivOp>(at, ctx.scalar(i64, from[d])),
                            ctx.scalar(i64, inferred[d]));
      linear = ctx.create<AddOp>(
          linear, ctx.create<MulOp>(coord, ctx.scalar(i64, to[d])));
    }
    at = linear;
  }
  Value zeros = ctx.broadcastTo(ctx.scalar(xt.getElementType(), 0), {total});
  Value out = ctx.create<ScatterOp>(zeros, at, ctx.reshape(x, {count}), 0);
  ctx.setOutput(0, ctx.reshape(out, shape));
  return success();
}

/// NonMaxSuppression: per batch and class, the boxes scoring above the
/// threshold, best first, each kept unless it overlaps a kept one by more
/// than the IoU threshold: [selected, 3] (batch, class, box).
LogicalResult nonMaxSuppression(NodeContext &ctx) {
  std::optional<reference::Tensor> boxes = sizingValue(ctx, 0, "the boxes");
  if (!boxes)
    return failure();
  std::optional<reference::Tensor> scores = sizingValue(ctx, 1, "the scores");
  if (!scores)
    return failure();
  // The optional limits, or their defaults.
  auto limit = [&](unsigned i, StringRef what, double dflt) {
    return ctx.hasInput(i) ? ctx.constantFloat(i, what)
                           : FailureOr<double>(dflt);
  };
  FailureOr<double> maxPerClass = limit(2, "max_output_boxes_per_class", 0),
                    iouLimit = limit(3, "iou_threshold", 0),
                    scoreLimit = limit(4, "score_threshold", -INFINITY);
  if (failed(maxPerClass) || failed(iouLimit) || failed(scoreLimit))
    return failure();
  ArrayRef<int64_t> bs = boxes->getShape(), ss = scores->getShape();
  if (bs.size() != 3 || ss.size() != 3 || bs[2] != 4 || ss[0] != bs[0] ||
      ss[2] != bs[1]) {
    ctx.error() << "needs boxes [B, N, 4] and scores [B, C, N], got ["
                << llvm::make_range(bs.begin(), bs.end()) << "] and ["
                << llvm::make_range(ss.begin(), ss.end()) << "]";
    return failure();
  }
  bool center = ctx.getInt("center_point_box", 0);
  int64_t batches = bs[0], count = bs[1], classes = ss[1];
  if (batches * classes * count * count > kMaxPairwiseElements) {
    ctx.error() << "compares up to " << count << " boxes pairwise per batch "
                << "and class (" << batches << " x " << classes
                << "): supported up to " << kMaxPairwiseElements
                << " comparisons";
    return failure();
  }
  // Corners (y1, x1, y2, x2), ordered, of box i of batch b.
  auto corners = [&](int64_t b, int64_t i) {
    std::array<double, 4> v;
    for (int k = 0; k < 4; ++k)
      v[k] = boxes->getFloat((b * count + i) * 4 + k);
    if (center)
      return std::array<double, 4>{v[1] - v[3] / 2, v[0] - v[2] / 2,
                                   v[1] + v[3] / 2, v[0] + v[2] / 2};
    return std::array<double, 4>{std::min(v[0], v[2]), std::min(v[1], v[3]),
                                 std::max(v[0], v[2]), std::max(v[1], v[3])};
  };
  auto iou = [&](const std::array<double, 4> &a,
                 const std::array<double, 4> &b) {
    double ih = std::min(a[2], b[2]) - std::max(a[0], b[0]);
    double iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
    double inter = std::max(ih, 0.0) * std::max(iw, 0.0);
    double areaA = (a[2] - a[0]) * (a[3] - a[1]),
           areaB = (b[2] - b[0]) * (b[3] - b[1]);
    double uni = areaA + areaB - inter;
    return inter <= 0 || uni <= 0 ? 0.0 : inter / uni;
  };
  SmallVector<int64_t> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      auto score = [&](int64_t i) {
        return scores->getFloat((b * classes + c) * count + i);
      };
      SmallVector<int64_t> order;
      for (int64_t i = 0; i < count; ++i)
        if (score(i) > *scoreLimit)
          order.push_back(i);
      llvm::sort(order, [&](int64_t i, int64_t j) {
        return score(i) != score(j) ? score(i) > score(j) : i < j;
      });
      SmallVector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<double>(kept.size()) >= *maxPerClass)
          break;
        if (llvm::all_of(kept, [&](int64_t k) {
              return iou(corners(b, i), corners(b, k)) <= *iouLimit;
            }))
          kept.push_back(i);
      }
      for (int64_t k : kept)
        selected.append({b, c, k});
    }
  reference::Tensor out(ctx.b.getI64Type(),
                        {static_cast<int64_t>(selected.size()) / 3, 3});
  for (auto [i, v] : llvm::enumerate(selected))
    out.setInt(i, v);
  ctx.setOutput(0, ctx.constantTensor(out));
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerIndexingHandlers(HandlerMap &m) {
  m["NonMaxSuppression"] = nonMaxSuppression;
  m["Compress"] = compress;
  m["NonZero"] = nonZero;
  m["Unique"] = unique;
  m["MaxUnpool"] = maxUnpool;
  m["GatherND"] = gatherND;
  m["ScatterND"] = scatterND;
  m["ScatterElements"] = scatterElements;
  m["Scatter"] = scatterElements;
  m["TopK"] = topK;
  m["ReverseSequence"] = reverseSequence;
}
