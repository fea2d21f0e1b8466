//===- RecurrentImport.cpp - ONNX LSTM, GRU and RNN -----------------------===//
//
// Part of Ober-Train. Each direction is unrolled by buildRecurrentLayer
// (RecurrentBuilder.h) after reordering ONNX's gates into PyTorch's:
//   LSTM  ONNX i, o, f, c   -> i, f, c(g), o
//   GRU   ONNX z, r, h      -> r, z, h(n)   (linear_before_reset kept)
// Inputs: X [seq, batch, in] (layout 1: [batch, seq, in]), W [dirs, G*H,
// in], R [dirs, G*H, H], B [dirs, 2*G*H] (input biases, then recurrent),
// sequence_lens (only when every sequence is full), initial_h, initial_c
// [dirs, batch, H]. Outputs: Y [seq, dirs, batch, H] (layout 1: [batch,
// seq, dirs, H]), Y_h and Y_c [dirs, batch, H] (layout 1: [batch, dirs, H]).
// P [dirs, 3*H] holds an LSTM's peepholes (i, o, f). Not supported:
// activations other than the defaults (RNN: Tanh or Relu), clip,
// input_forget, shorter sequences.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "ober/Dialect/Ober/IR/RecurrentBuilder.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape();
}

/// Rows [lo, hi) of `v` along `axis` (a 2-D or 1-D value).
Value rows(NodeContext &ctx, Value v, int64_t lo, int64_t hi,
           int64_t axis = 0) {
  return ctx.sliceAlong(v, axis, lo, hi);
}

/// Direction `d` of a [dirs, ...] value, without its leading dimension.
Value direction(NodeContext &ctx, Value v, int64_t d) {
  SmallVector<int64_t> shape(shapeOf(v).drop_front());
  return ctx.reshape(rows(ctx, v, d, d + 1), shape);
}

/// `v`'s gate blocks of `hidden` rows put in the order `order` (indices of
/// ONNX's blocks).
Value reorder(NodeContext &ctx, Value v, ArrayRef<int64_t> order,
              int64_t hidden) {
  if (llvm::equal(order, llvm::seq<int64_t>(0, order.size())))
    return v;
  SmallVector<Value> blocks;
  for (int64_t k : order)
    blocks.push_back(rows(ctx, v, k * hidden, (k + 1) * hidden));
  return ctx.create<ConcatOp>(blocks, ctx.b.getI64IntegerAttr(0));
}

template <RecurrentCell Kind> LogicalResult recurrent(NodeContext &ctx) {
  RecurrentCell cell = Kind;
  int64_t gates = recurrentGates(cell);
  // ONNX's gate blocks in PyTorch's order.
  SmallVector<int64_t> order =
      cell == RecurrentCell::LSTM  ? SmallVector<int64_t>{0, 2, 3, 1}
      : cell == RecurrentCell::GRU ? SmallVector<int64_t>{1, 0, 2}
                                   : SmallVector<int64_t>{0};
  std::string dir = ctx.getString("direction", "forward");
  int64_t dirs = dir == "bidirectional" ? 2 : 1;
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") {
    ctx.error() << "direction '" << dir
                << "' is not one of forward, reverse, bidirectional";
    return failure();
  }
  if (cell != RecurrentCell::GRU && ctx.hasAttr("linear_before_reset")) {
    ctx.error() << "has no attribute linear_before_reset";
    return failure();
  }
  if (ctx.hasAttr("clip") || ctx.getInt("input_forget", 0) != 0) {
    ctx.error() << "clip and input_forget are not supported";
    return failure();
  }
  if (ctx.hasAttr("activations")) {
    const onnx::AttributeProto *a = ctx.attr("activations");
    SmallVector<std::string> names(a->strings().begin(), a->strings().end());
    SmallVector<std::string> defaults =
        cell == RecurrentCell::LSTM
            ? SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : cell == RecurrentCell::GRU
            ? SmallVector<std::string>{"Sigmoid", "Tanh"}
            : SmallVector<std::string>{"Tanh"};
    bool relu =
        cell == RecurrentCell::RNNTanh &&
        llvm::all_of(names, [](const std::string &n) { return n == "Relu"; }) &&
        !names.empty();
    bool standard = true;
    for (size_t i = 0; i < names.size(); ++i)
      standard &= names[i] == defaults[i % defaults.size()];
    if (relu)
      cell = RecurrentCell::RNNReLU;
    else if (!standard) {
      ctx.error() << "activations other than the defaults ("
                  << llvm::join(defaults, ", ")
                  << (cell == RecurrentCell::RNNTanh ? "; or Relu" : "")
                  << ") are not supported";
      return failure();
    }
  }
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  if (!x || !w || !r)
    return failure();
  bool layout = ctx.getInt("layout", 0) == 1;
  if (shapeOf(x).size() != 3 || shapeOf(w).size() != 3 ||
      shapeOf(r).size() != 3) {
    ctx.error() << "X, W and R must be 3-D";
    return failure();
  }
  if (layout)
    x = ctx.transpose(x, {1, 0, 2});
  int64_t steps = shapeOf(x)[0], batch = shapeOf(x)[1];
  int64_t hidden = ctx.getInt("hidden_size", shapeOf(r)[2]);
  if (ShapedType::isDynamic(steps) || ShapedType::isDynamic(batch) ||
      steps < 1) {
    ctx.error() << "needs a static, non-empty sequence and batch (pin them "
                   "with --onnx-dim)";
    return failure();
  }
  auto expect = [&](Value v, ArrayRef<int64_t> shape, StringRef what) {
    if (shapeOf(v) == shape)
      return true;
    ctx.error() << what << " has shape ["
                << llvm::make_range(shapeOf(v).begin(), shapeOf(v).end())
                << "], expected ["
                << llvm::make_range(shape.begin(), shape.end()) << "]";
    return false;
  };
  int64_t in = shapeOf(x)[2];
  if (!expect(w, {dirs, gates * hidden, in}, "W") ||
      !expect(r, {dirs, gates * hidden, hidden}, "R"))
    return failure();
  Value bias = ctx.hasInput(3) ? ctx.input(3) : Value();
  if (bias && !expect(bias, {dirs, 2 * gates * hidden}, "B"))
    return failure();
  Value peepholes = ctx.hasInput(7) ? ctx.input(7) : Value();
  if (peepholes && !expect(peepholes, {dirs, 3 * hidden}, "P"))
    return failure();
  if (ctx.hasInput(4)) {
    std::optional<reference::Tensor> lens = ctx.constant(4);
    bool full = lens.has_value();
    for (int64_t i = 0; full && i < lens->getNumElements(); ++i)
      full = lens->getInt(i) == steps;
    if (!full) {
      ctx.error() << "sequence_lens must be known and equal the sequence "
                     "length "
                  << steps << " (shorter sequences are not supported)";
      return failure();
    }
  }
  Type et = llvm::cast<RankedTensorType>(x.getType()).getElementType();
  auto initial = [&](unsigned i, StringRef what) -> Value {
    if (!ctx.hasInput(i))
      return ctx.broadcastTo(ctx.scalar(et, 0.0), {dirs, batch, hidden});
    Value v = ctx.input(i);
    if (v && layout)
      v = ctx.transpose(v, {1, 0, 2});
    return v && expect(v, {dirs, batch, hidden}, what) ? v : Value();
  };
  Value h0 = initial(5, "initial_h");
  Value c0 = cell == RecurrentCell::LSTM ? initial(6, "initial_c") : Value();
  if (!h0 || (cell == RecurrentCell::LSTM && !c0))
    return failure();

  bool beforeReset = ctx.getInt("linear_before_reset", 0) != 0;
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    RecurrentWeights weights;
    weights.wIh = reorder(ctx, direction(ctx, w, d), order, hidden);
    weights.wHh = reorder(ctx, direction(ctx, r, d), order, hidden);
    if (bias) {
      Value bd = direction(ctx, bias, d);
      weights.bIh =
          reorder(ctx, rows(ctx, bd, 0, gates * hidden), order, hidden);
      weights.bHh =
          reorder(ctx, rows(ctx, bd, gates * hidden, 2 * gates * hidden), order,
                  hidden);
    }
    if (peepholes) { // ONNX order: i, o, f
      Value pd = direction(ctx, peepholes, d);
      weights.peepI = rows(ctx, pd, 0, hidden);
      weights.peepO = rows(ctx, pd, hidden, 2 * hidden);
      weights.peepF = rows(ctx, pd, 2 * hidden, 3 * hidden);
    }
    RecurrentLayer layer = buildRecurrentLayer(
        ctx, cell, x, direction(ctx, h0, d),
        c0 ? direction(ctx, c0, d) : Value(), weights,
        /*reverse=*/dir == "reverse" || d == 1, beforeReset);
    if (ctx.hasFailed())
      return failure();
    ys.push_back(ctx.reshape(layer.output, {steps, 1, batch, hidden}));
    hs.push_back(ctx.reshape(layer.h, {1, batch, hidden}));
    if (layer.c)
      cs.push_back(ctx.reshape(layer.c, {1, batch, hidden}));
  }
  auto join = [&](ArrayRef<Value> parts, int64_t axis) {
    return parts.size() == 1
               ? parts[0]
               : ctx.create<ConcatOp>(parts, ctx.b.getI64IntegerAttr(axis));
  };
  Value y = join(ys, 1), yh = join(hs, 0);
  Value yc = cs.empty() ? Value() : join(cs, 0);
  if (layout) {
    y = ctx.transpose(y, {2, 0, 1, 3});
    yh = ctx.transpose(yh, {1, 0, 2});
    if (yc)
      yc = ctx.transpose(yc, {1, 0, 2});
  }
  if (ctx.wantsOutput(0))
    ctx.setOutput(0, y);
  if (ctx.wantsOutput(1))
    ctx.setOutput(1, yh);
  if (yc && ctx.wantsOutput(2))
    ctx.setOutput(2, yc);
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerRecurrentHandlers(HandlerMap &m) {
  m["LSTM"] = recurrent<RecurrentCell::LSTM>;
  m["GRU"] = recurrent<RecurrentCell::GRU>;
  m["RNN"] = recurrent<RecurrentCell::RNNTanh>;
}
