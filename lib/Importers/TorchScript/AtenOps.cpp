//===- AtenOps.cpp - aten ops as ober ops ----------------------------------===//
//
// Part of Ober-Train. One mapping per aten op family that traced and
// scripted models use. Result types come from the traced graph's static
// types; the ops' verifiers check them. In-place variants (`add_`, `relu_`)
// map like their functional forms: the graph is in SSA form after tracing.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include <set>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::torchscript;

namespace {
/// `kind` without "aten::" and a trailing "_" (in-place).
std::string baseName(TSNode *n) {
  std::string kind = n->kind().toQualString();
  if (kind.rfind("aten::", 0) != 0)
    return kind;
  kind = kind.substr(6);
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_')
    kind.pop_back();
  return kind;
}

// The elementwise families, by base name (the index picks the ober op).
const std::map<std::string, int> binary = {
    {"add", 0}, {"sub", 1}, {"mul", 2}, {"div", 3}, {"rsub", 4},
    {"pow", 5}, {"maximum", 6}, {"minimum", 7}, {"remainder", 8}};
const std::map<std::string, int> unary = {
    {"neg", 0}, {"exp", 1}, {"log", 2}, {"sqrt", 3}, {"rsqrt", 4},
    {"tanh", 5}, {"sigmoid", 6}, {"relu", 7}, {"abs", 8}, {"erf", 9},
    {"silu", 10}, {"reciprocal", 11}, {"sin", 12}, {"cos", 13}};
const std::map<std::string, CompareDirection> compare = {
    {"eq", CompareDirection::eq}, {"ne", CompareDirection::ne},
    {"lt", CompareDirection::lt}, {"le", CompareDirection::le},
    {"gt", CompareDirection::gt}, {"ge", CompareDirection::ge}};

/// Whether `op` (a base name) has a mapping below: the tables above and
/// the ops `convert` names one by one.
bool isMapped(const std::string &op) {
  static const std::set<std::string> named = {
      "contiguous", "clone", "detach", "alias", "lift_fresh", "view",
      "reshape", "flatten", "unsqueeze", "squeeze", "unflatten", "view_as",
      "reshape_as", "expand", "expand_as", "broadcast_to", "t", "transpose",
      "permute", "numpy_T", "to", "type_as", "float", "double", "long", "int",
      "bool", "half", "gelu", "hardtanh", "relu6", "clamp", "clamp_min",
      "clamp_max", "hardsigmoid", "hardswish", "leaky_relu", "where",
      "masked_fill", "linear", "matmul", "mm", "bmm", "addmm", "baddbmm",
      "softmax", "log_softmax", "layer_norm", "batch_norm", "dropout",
      "feature_dropout", "alpha_dropout", "_convolution", "conv1d", "conv2d",
      "conv3d", "convolution", "max_pool1d", "max_pool2d", "avg_pool2d",
      "adaptive_avg_pool1d", "adaptive_avg_pool2d", "mean", "sum", "amax",
      "amin", "embedding", "cat", "concat", "stack", "slice", "select",
      "narrow", "chunk", "unsafe_chunk", "split", "split_with_sizes",
      "unbind", "zeros_like", "ones_like", "full_like", "Bool"};
  return named.count(op) || binary.count(op) || unary.count(op) ||
         compare.count(op) || Importer::recurrentCell(op) ||
         Importer::isFused(op);
}
} // namespace

bool Importer::mapped(TSNode *n) {
  std::string kind = n->kind().toQualString();
  return kind.rfind("aten::", 0) == 0 && isMapped(baseName(n));
}

bool Importer::convert(TSNode *n) {
  std::string op = baseName(n);
  if (n->outputs().empty()) {
    // Side effects only: warnings pass, anything else is not imported.
    if (op == "warn")
      return true;
    unsupported[n->kind().toQualString()].push_back(sourceLine(n));
    return false;
  }
  auto ins = n->inputs();
  auto out = [&](size_t i = 0) { return n->outputs()[i]; };
  RankedTensorType outType = out()->type()->cast<c10::TensorType>()
                                 ? typeOf(out())
                                 : RankedTensorType();
  auto fail = [&](const std::string &message) {
    error(n, message);
    return false;
  };
  // `a` as a dimension of a rank-`r` tensor (negative: from the end), or
  // nullopt with an error when it is out of range.
  auto axisOf = [&](int64_t a, int64_t r) -> std::optional<int64_t> {
    if (a < -r || a >= r) {
      fail("dimension " + std::to_string(a) + " is out of range for rank " +
           std::to_string(r));
      return std::nullopt;
    }
    return a < 0 ? a + r : a;
  };
  auto set = [&](Value v, size_t i = 0) {
    if (!v)
      return fail("could not build the result");
    tensors[out(i)] = v;
    return true;
  };
  // Operand i as a tensor.
  auto arg = [&](size_t i) -> Value { return tensor(ins[i]); };
  // Operand i in `like`'s element type: a number as a rank-0 constant.
  auto scalarLike = [&](size_t i, Value like) -> Value {
    Type et = llvm::cast<RankedTensorType>(like.getType()).getElementType();
    if (auto it = known.find(ins[i]);
        it != known.end() && !it->second.isTensor())
      return scalar(et, number(ins[i]));
    Value t = tensor(ins[i]);
    return t ? cast(t, et) : t;
  };
  auto rankOf = [](Value v) { return llvm::cast<RankedTensorType>(v.getType()).getRank(); };
  auto shapeOf = [](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  };
  auto attrs = [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); };

  // A one-element tensor as a condition (`if bool(t):` in a scripted
  // module, known only at run time): a 0-D i1 tensor.
  if (op == "Bool") {
    Value x = arg(0);
    if (!x || llvm::cast<RankedTensorType>(x.getType()).getNumElements() != 1)
      return fail("needs a one-element tensor");
    return set(cast(reshape(x, {}), b.getI1Type()));
  }

  // Views and copies.
  if (op == "contiguous" || op == "clone" || op == "detach" ||
      op == "alias" || op == "lift_fresh") {
    Value x = arg(0);
    return x ? set(x) : fail("needs a tensor");
  }
  bool listResult = op == "chunk" || op == "split" || op == "unsafe_chunk" ||
                    op == "split_with_sizes" || op == "unbind";
  if (!outType && !listResult) {
    if (auto it = exampleFailures.find(n); it != exampleFailures.end())
      return fail("does not run on the input shapes: " + it->second);
    if (isMapped(op))
      return fail("its result has no static shape and dtype (trace the "
                  "model with torch.jit.trace)");
    unsupported[n->kind().toQualString()].push_back(sourceLine(n));
    return false;
  }
  if (std::optional<RecurrentCell> cell = recurrentCell(op))
    return convertRecurrent(n, *cell);
  if (isFused(op))
    return convertFused(n, op);
  if (op == "view" || op == "reshape" || op == "flatten" ||
      op == "unsqueeze" || op == "squeeze" || op == "unflatten" ||
      op == "view_as" || op == "reshape_as") {
    Value x = arg(0);
    return x ? set(reshape(x, outType.getShape())) : fail("needs a tensor");
  }
  if (op == "expand" || op == "expand_as" || op == "broadcast_to") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    // Expand may add leading dimensions.
    SmallVector<int64_t> shape(outType.getRank() - rankOf(x), 1);
    llvm::append_range(shape, shapeOf(x));
    return set(broadcastTo(reshape(x, shape), outType.getShape()));
  }
  if (op == "t" || op == "transpose" || op == "permute" || op == "numpy_T") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    int64_t r = rankOf(x);
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    if (op == "permute") {
      std::vector<int64_t> dims = integers(ins[1]);
      if (static_cast<int64_t>(dims.size()) != r)
        return fail("permute needs one dimension per axis");
      for (int64_t i = 0; i < r; ++i) {
        std::optional<int64_t> d = axisOf(dims[i], r);
        if (!d)
          return false;
        perm[i] = *d;
      }
    } else if (op == "transpose") {
      std::optional<int64_t> d0 = axisOf(integer(ins[1]), r),
                             d1 = d0 ? axisOf(integer(ins[2]), r) : d0;
      if (!d1)
        return false;
      std::swap(perm[*d0], perm[*d1]);
    } else {
      std::reverse(perm.begin(), perm.end());
    }
    return set(transpose(x, perm));
  }
  if (op == "to" || op == "type_as" || op == "float" || op == "double" ||
      op == "long" || op == "int" || op == "bool" || op == "half") {
    Value x = arg(0);
    return x ? set(cast(x, outType.getElementType())) : fail("needs a tensor");
  }

  // Elementwise.
  if (auto it = binary.find(op); it != binary.end()) {
    Value a = arg(0);
    if (!a)
      return fail("needs a tensor first operand");
    a = cast(a, outType.getElementType());
    Value c = scalarLike(1, a);
    if (!c)
      return fail("needs a tensor or number second operand");
    if ((op == "add" || op == "sub" || op == "rsub") && ins.size() > 2) {
      double alpha = number(ins[2]);
      if (alpha != 1.0)
        c = create<MulOp>(c, scalar(outType.getElementType(), alpha));
    }
    if (op == "div" && ins.size() > 2 && !isNone(ins[2]))
      return fail("div with a rounding mode is not supported");
    Value r;
    switch (it->second) {
    case 0: r = create<AddOp>(a, c); break;
    case 1: r = create<SubOp>(a, c); break;
    case 2: r = create<MulOp>(a, c); break;
    case 3: r = create<DivOp>(a, c); break;
    case 4: r = create<SubOp>(c, a); break;
    case 5: r = create<PowOp>(a, c); break;
    case 6: r = create<MaxOp>(a, c); break;
    case 7: r = create<MinOp>(a, c); break;
    default: r = create<RemOp>(a, c); break;
    }
    return set(broadcastTo(r, outType.getShape()));
  }
  if (auto it = unary.find(op); it != unary.end()) {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    Value r;
    switch (it->second) {
    case 0: r = create<NegOp>(x); break;
    case 1: r = create<ExpOp>(x); break;
    case 2: r = create<LogOp>(x); break;
    case 3: r = create<SqrtOp>(x); break;
    case 4: r = create<RsqrtOp>(x); break;
    case 5: r = create<TanhOp>(x); break;
    case 6: r = create<SigmoidOp>(x); break;
    case 7: r = create<ReluOp>(x); break;
    case 8: r = create<AbsOp>(x); break;
    case 9: r = create<ErfOp>(x); break;
    case 10: r = create<SiluOp>(x); break;
    case 11: r = create<ReciprocalOp>(x); break;
    case 12: r = create<SinOp>(x); break;
    default: r = create<CosOp>(x); break;
    }
    return set(r);
  }
  // Clamps and the piecewise-linear activations built from them.
  if (op == "hardtanh" || op == "relu6" || op == "clamp" ||
      op == "clamp_min" || op == "clamp_max" || op == "hardsigmoid" ||
      op == "hardswish" || op == "leaky_relu") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    Type et = outType.getElementType();
    auto clampTo = [&](Value v, std::optional<double> lo,
                       std::optional<double> hi) {
      if (lo)
        v = create<MaxOp>(v, scalar(et, *lo));
      if (hi)
        v = create<MinOp>(v, scalar(et, *hi));
      return v;
    };
    auto bound = [&](size_t i) -> std::optional<double> {
      if (ins.size() <= i || isNone(ins[i]))
        return std::nullopt;
      if (!isKnown(ins[i]))
        return std::nullopt;
      return number(ins[i]);
    };
    if ((op == "clamp" || op == "clamp_min" || op == "clamp_max") &&
        llvm::any_of(llvm::seq<size_t>(1, ins.size()), [&](size_t i) {
          return !isNone(ins[i]) && !isKnown(ins[i]);
        }))
      return fail("clamp bounds must be numbers");
    Value y;
    if (op == "hardtanh")
      y = clampTo(x, bound(1).value_or(-1.0), bound(2).value_or(1.0));
    else if (op == "relu6")
      y = clampTo(x, 0.0, 6.0);
    else if (op == "clamp")
      y = clampTo(x, bound(1), bound(2));
    else if (op == "clamp_min")
      y = clampTo(x, bound(1), std::nullopt);
    else if (op == "clamp_max")
      y = clampTo(x, std::nullopt, bound(1));
    else if (op == "leaky_relu") {
      double slope = ins.size() > 1 ? number(ins[1]) : 0.01;
      y = create<SelectOp>(
          create<CompareOp>(CompareDirection::ge, x, scalar(et, 0.0)), x,
          create<MulOp>(x, scalar(et, slope)));
    } else {
      // hardsigmoid(x) = relu6(x + 3) / 6; hardswish(x) = x hardsigmoid(x).
      y = create<DivOp>(clampTo(create<AddOp>(x, scalar(et, 3.0)), 0.0, 6.0),
                        scalar(et, 6.0));
      if (op == "hardswish")
        y = create<MulOp>(x, y);
    }
    return set(y);
  }
  if (op == "gelu") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    std::string approx = "none";
    if (ins.size() > 1 && isKnown(ins[1]) && known[ins[1]].isString())
      approx = known[ins[1]].toStringRef();
    return set(create<GeluOp>(x, approx == "tanh" ? GeluApproximation::tanh
                                                  : GeluApproximation::none));
  }
  if (auto it = compare.find(op); it != compare.end()) {
    Value a = arg(0);
    if (!a)
      return fail("needs a tensor");
    Value c = scalarLike(1, a);
    if (!c)
      return fail("needs a tensor or number second operand");
    return set(broadcastTo(create<CompareOp>(it->second, a, c),
                           outType.getShape()));
  }
  if (op == "where" && ins.size() == 3) {
    Value c = arg(0), x = arg(1);
    if (!c || !x)
      return fail("needs a condition and a tensor");
    Value y = scalarLike(2, x);
    return set(broadcastTo(create<SelectOp>(c, cast(x, outType.getElementType()),
                                            cast(y, outType.getElementType())),
                           outType.getShape()));
  }
  if (op == "masked_fill") {
    Value x = arg(0), mask = arg(1);
    if (!x || !mask)
      return fail("needs a tensor and a mask");
    Value v = scalarLike(2, x);
    return set(broadcastTo(create<SelectOp>(mask, v, x), outType.getShape()));
  }

  // Matmuls.
  if (op == "linear") {
    Value x = arg(0), w = arg(1);
    if (!x || !w)
      return fail("needs an input and a weight");
    Value y = create<MatmulOp>(x, transpose(w, {1, 0}));
    if (ins.size() > 2 && !isNone(ins[2]))
      y = create<AddOp>(y, arg(2));
    return set(y);
  }
  if (op == "matmul" || op == "mm" || op == "bmm") {
    Value a = arg(0), c = arg(1);
    if (!a || !c)
      return fail("needs two tensors");
    return set(create<MatmulOp>(a, c));
  }
  if (op == "addmm" || op == "baddbmm") {
    Value bias = arg(0), a = arg(1), c = arg(2);
    if (!bias || !a || !c)
      return fail("needs three tensors");
    Value y = create<MatmulOp>(a, c);
    double beta = ins.size() > 3 ? number(ins[3]) : 1.0;
    double alpha = ins.size() > 4 ? number(ins[4]) : 1.0;
    Type et = outType.getElementType();
    if (alpha != 1.0)
      y = create<MulOp>(y, scalar(et, alpha));
    if (beta != 0.0)
      y = create<AddOp>(y, beta == 1.0 ? bias
                                       : create<MulOp>(bias, scalar(et, beta)));
    return set(broadcastTo(y, outType.getShape()));
  }

  // Normalization, softmax, dropout.
  if (op == "softmax" || op == "log_softmax") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    std::optional<int64_t> axis = axisOf(integer(ins[1]), rankOf(x));
    if (!axis)
      return false;
    x = cast(x, outType.getElementType());
    return set(op == "softmax"
                   ? create<SoftmaxOp>(x, b.getI64IntegerAttr(*axis))
                   : create<LogSoftmaxOp>(x, b.getI64IntegerAttr(*axis)));
  }
  if (op == "layer_norm") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    int64_t normalized = static_cast<int64_t>(integers(ins[1]).size());
    Value w = isNone(ins[2]) ? Value() : arg(2);
    Value bias = isNone(ins[3]) ? Value() : arg(3);
    return set(create<LayerNormOp>(
        x, w, bias, b.getI64IntegerAttr(rankOf(x) - normalized),
        b.getF64FloatAttr(number(ins[4]))));
  }
  if (op == "batch_norm") {
    Value x = arg(0);
    if (!x || isNone(ins[1]) || isNone(ins[2]) || isNone(ins[3]) ||
        isNone(ins[4]))
      return fail("needs affine parameters and running statistics");
    bool training = integer(ins[5]);
    auto eps = b.getF64FloatAttr(number(ins[7]));
    if (!training)
      return set(create<BatchNormInferenceOp>(x, arg(1), arg(2), arg(3),
                                              arg(4), eps));
    Value mean = arg(3), var = arg(4);
    auto bn = BatchNormTrainingOp::create(
        b, loc, TypeRange{x.getType(), mean.getType(), var.getType()}, x,
        arg(1), arg(2), mean, var, eps, b.getF64FloatAttr(number(ins[6])));
    return set(bn->getResult(0));
  }
  if (op == "dropout" || op == "feature_dropout" || op == "alpha_dropout") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    double p = number(ins[1]);
    bool train = integer(ins[2]);
    if (!train || p == 0.0)
      return set(x);
    if (op != "dropout")
      return fail("only elementwise dropout is supported in training mode");
    auto d = DropoutOp::create(b, loc, x, scalar(b.getI64Type(), 0),
                               b.getF64FloatAttr(p));
    return set(d->getResult(0));
  }

  // Convolution and pooling (2-D and other ranks alike).
  if (op == "_convolution" || op == "conv2d" || op == "conv1d" ||
      op == "conv3d" || op == "convolution") {
    Value x = arg(0), w = arg(1);
    if (!x || !w)
      return fail("needs an input and a weight");
    bool full = op == "_convolution" || op == "convolution";
    if (full && integer(ins[6]))
      return fail("transposed convolution is not supported");
    int64_t spatial = rankOf(x) - 2;
    auto expand = [&](std::vector<int64_t> v) {
      if (v.size() == 1)
        v.assign(spatial, v[0]);
      return v;
    };
    std::vector<int64_t> stride = expand(integers(ins[3]));
    std::vector<int64_t> pad = expand(integers(ins[4]));
    std::vector<int64_t> dilation = expand(integers(ins[5]));
    int64_t groups = integer(ins[full ? 8 : 6]);
    SmallVector<int64_t> pads(pad.begin(), pad.end());
    pads.append(pad.begin(), pad.end());
    Value bias = isNone(ins[2]) ? Value() : arg(2);
    return set(create<ConvOp>(x, w, bias, attrs(stride), attrs(pads),
                              attrs(dilation), b.getI64IntegerAttr(groups)));
  }
  if (op == "max_pool2d" || op == "max_pool1d" || op == "avg_pool2d") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    int64_t spatial = rankOf(x) - 2;
    auto expand = [&](std::vector<int64_t> v, int64_t fallback) {
      if (v.empty())
        v.assign(spatial, fallback);
      if (v.size() == 1)
        v.assign(spatial, v[0]);
      return v;
    };
    std::vector<int64_t> kernel = expand(integers(ins[1]), 1);
    std::vector<int64_t> stride = expand(integers(ins[2]), 0);
    for (int64_t i = 0; i < spatial; ++i)
      if (stride[i] == 0)
        stride[i] = kernel[i];
    std::vector<int64_t> pad = expand(integers(ins[3]), 0);
    SmallVector<int64_t> pads(pad.begin(), pad.end());
    pads.append(pad.begin(), pad.end());
    if (op == "avg_pool2d") {
      bool ceil = integer(ins[4]), countPad = integer(ins[5]);
      if (ins.size() > 6 && !isNone(ins[6]))
        return fail("divisor_override is not supported");
      return set(create<AvgPoolOp>(x, attrs(kernel), attrs(stride),
                                   attrs(pads), b.getBoolAttr(ceil),
                                   b.getBoolAttr(countPad)));
    }
    std::vector<int64_t> dilation = expand(integers(ins[4]), 1);
    return set(create<MaxPoolOp>(x, attrs(kernel), attrs(stride), attrs(pads),
                                 attrs(dilation),
                                 b.getBoolAttr(integer(ins[5]))));
  }
  if (op == "adaptive_avg_pool2d" || op == "adaptive_avg_pool1d") {
    Value x = arg(0);
    if (!x || rankOf(x) < 2)
      return fail("needs a tensor [N, C, d...]");
    std::vector<int64_t> size = integers(ins[1]);
    ArrayRef<int64_t> in = shapeOf(x).drop_front(2);
    if (size.size() != in.size())
      return fail("needs one output size per spatial dimension");
    if (llvm::all_of(size, [](int64_t s) { return s == 1; })) {
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(2, rankOf(x)));
      return set(create<ReduceMeanOp>(x, attrs(axes), b.getBoolAttr(true)));
    }
    // Windows of one size (the input divides the output), or each input
    // repeated (a 1x1 input).
    if (llvm::all_of(in, [](int64_t s) { return s == 1; }))
      return set(broadcastTo(x, outType.getShape()));
    SmallVector<int64_t> kernel, zeros(2 * in.size(), 0);
    for (auto [i, o] : llvm::zip(in, size)) {
      if (o < 1 || i % o)
        return fail("the input size must be a multiple of the output size");
      kernel.push_back(i / o);
    }
    return set(create<AvgPoolOp>(x, attrs(kernel), attrs(kernel),
                                 attrs(zeros), b.getBoolAttr(false),
                                 b.getBoolAttr(false)));
  }

  // Reductions.
  if (op == "mean" || op == "sum" || op == "amax" || op == "amin") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    int64_t r = rankOf(x);
    SmallVector<int64_t> axes;
    bool keep = false;
    if (ins.size() >= 3) {
      for (int64_t a : integers(ins[1])) {
        std::optional<int64_t> axis = axisOf(a, r);
        if (!axis)
          return false;
        axes.push_back(*axis);
      }
      keep = integer(ins[2]);
    }
    if (axes.empty())
      axes = llvm::to_vector(llvm::seq<int64_t>(0, r));
    llvm::sort(axes);
    x = cast(x, outType.getElementType());
    auto a = attrs(axes);
    auto k = b.getBoolAttr(keep);
    Value y = op == "mean"  ? create<ReduceMeanOp>(x, a, k)
              : op == "sum" ? create<ReduceSumOp>(x, a, k)
              : op == "amax" ? create<ReduceMaxOp>(x, a, k)
                             : create<ReduceMinOp>(x, a, k);
    return set(y);
  }

  // Indexing and joining.
  if (op == "embedding") {
    Value table = arg(0), ids = arg(1);
    if (!table || !ids)
      return fail("needs a table and indices");
    return set(create<EmbeddingOp>(table, ids));
  }
  if (op == "cat" || op == "concat" || op == "stack") {
    auto it = lists.find(ins[0]);
    if (it == lists.end())
      return fail("needs a list of tensors");
    SmallVector<Value> parts = it->second;
    std::optional<int64_t> axis = axisOf(integer(ins[1]), outType.getRank());
    if (!axis)
      return false;
    for (Value p : parts)
      if (rankOf(p) + (op == "stack") != outType.getRank())
        return fail("needs tensors of rank " +
                    std::to_string(outType.getRank() - (op == "stack")));
    if (op == "stack")
      return set(stack(parts, *axis));
    return set(create<ConcatOp>(parts, b.getI64IntegerAttr(*axis)));
  }
  if (op == "slice" || op == "select" || op == "narrow") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    ArrayRef<int64_t> shape = shapeOf(x);
    int64_t r = rankOf(x);
    std::optional<int64_t> axis = axisOf(integer(ins[1]), r);
    if (!axis)
      return false;
    int64_t dim = *axis, size = shape[dim], start, end, step = 1;
    if (ShapedType::isDynamic(size))
      return fail("needs a static size along dimension " + std::to_string(dim));
    // Python's index rules: a negative index counts from the end.
    auto wrap = [size](int64_t i) {
      return std::clamp<int64_t>(i < 0 ? std::max<int64_t>(i, -size) + size : i,
                                 0, size);
    };
    if (op == "slice") {
      start = isNone(ins[2]) ? 0 : wrap(integer(ins[2]));
      end = isNone(ins[3]) ? size : wrap(integer(ins[3]));
      step = integer(ins[4]);
      if (step < 1)
        return fail("slice step " + std::to_string(step) +
                    " must be positive");
    } else {
      int64_t index = integer(ins[2]);
      int64_t length = op == "narrow" ? integer(ins[3]) : 1;
      if (index < -size || index >= size + (op == "narrow") || length < 0 ||
          (index < 0 ? index + size : index) > size - length)
        return fail("index " + std::to_string(index) + " (length " +
                    std::to_string(length) + ") is out of range for size " +
                    std::to_string(size));
      start = index < 0 ? index + size : index;
      end = start + length;
    }
    end = std::max(end, start);
    SmallVector<int64_t> starts(r, 0), limits(shape), steps(r, 1);
    starts[dim] = start;
    limits[dim] = end;
    steps[dim] = step;
    Value y = create<SliceOp>(x, attrs(starts), attrs(limits), attrs(steps));
    return set(reshape(y, outType.getShape()));
  }
  if (op == "chunk" || op == "unsafe_chunk" || op == "split" ||
      op == "split_with_sizes" || op == "unbind") {
    Value x = arg(0);
    if (!x)
      return fail("needs a tensor");
    std::optional<int64_t> axis =
        axisOf(integer(ins[op == "unbind" ? 1 : 2]), rankOf(x));
    if (!axis)
      return false;
    int64_t dim = *axis, size = shapeOf(x)[dim];
    if (ShapedType::isDynamic(size))
      return fail("needs a static size along dimension " + std::to_string(dim));
    SmallVector<int64_t> sizes;
    auto pieces = [&](int64_t each) {
      for (int64_t s = 0; s < size; s += each)
        sizes.push_back(std::min(each, size - s));
    };
    if (op == "unbind") {
      sizes.assign(size, 1);
    } else if (op == "chunk" || op == "unsafe_chunk") {
      int64_t chunks = integer(ins[1]);
      if (chunks < 1)
        return fail("chunks=" + std::to_string(chunks) + " must be positive");
      pieces(std::max<int64_t>(1, size / chunks + (size % chunks != 0)));
    } else if (known.count(ins[1]) && known[ins[1]].isIntList()) {
      int64_t total = 0;
      for (int64_t s : integers(ins[1])) {
        if (s < 0 || s > size - total)
          return fail("split sizes must be non-negative and add up to " +
                      std::to_string(size));
        sizes.push_back(s);
        total += s;
      }
      if (total != size)
        return fail("split sizes must be non-negative and add up to " +
                    std::to_string(size));
    } else {
      int64_t each = integer(ins[1]);
      if (each < 1)
        return fail("split size " + std::to_string(each) +
                    " must be positive");
      pieces(each);
    }
    SmallVector<Type> types;
    for (int64_t s : sizes) {
      SmallVector<int64_t> shape(shapeOf(x));
      shape[dim] = s;
      types.push_back(llvm::cast<RankedTensorType>(x.getType()).clone(shape));
    }
    auto parts = SplitOp::create(b, loc, types, x, b.getI64IntegerAttr(dim),
                                 attrs(sizes));
    SmallVector<Value> values(parts->getResults());
    if (op == "unbind")
      for (Value &v : values) {
        SmallVector<int64_t> shape(shapeOf(v));
        shape.erase(shape.begin() + dim);
        v = reshape(v, shape);
      }
    lists[out()] = values;
    return true;
  }
  if (op == "zeros_like" || op == "ones_like" || op == "full_like") {
    double v = op == "zeros_like" ? 0.0 : op == "ones_like" ? 1.0
                                                            : number(ins[1]);
    return set(broadcastTo(scalar(outType.getElementType(), v),
                           outType.getShape()));
  }
  unsupported[n->kind().toQualString()].push_back(sourceLine(n));
  return false;
}
