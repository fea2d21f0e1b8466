//===- RecurrentOps.cpp - aten::lstm, gru, rnn_tanh, rnn_relu -------------===//
//
// Part of Ober-Train. nn.LSTM, nn.GRU and nn.RNN trace to one aten op over
// the whole sequence:
//   aten::lstm(input, [h0, c0], params, has_biases, num_layers, dropout,
//              train, bidirectional, batch_first) -> (output, h_n, c_n)
//   aten::gru / rnn_tanh / rnn_relu(input, h0, ...)  -> (output, h_n)
// `params` holds, per layer and direction (forward, then reverse),
// w_ih, w_hh[, b_ih, b_hh]. Each layer and direction is unrolled by
// buildRecurrentLayer.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "ober/Dialect/Ober/IR/RecurrentBuilder.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::torchscript;

std::optional<RecurrentCell> Importer::recurrentCell(const std::string &op) {
  if (op == "lstm")
    return RecurrentCell::LSTM;
  if (op == "gru")
    return RecurrentCell::GRU;
  if (op == "rnn_tanh")
    return RecurrentCell::RNNTanh;
  if (op == "rnn_relu")
    return RecurrentCell::RNNReLU;
  return std::nullopt;
}

std::optional<SmallVector<Value>> Importer::tensorList(const TSValue *v) {
  if (auto it = lists.find(v); it != lists.end())
    return it->second;
  auto it = known.find(v);
  if (it == known.end() || !it->second.isTensorList())
    return std::nullopt;
  SmallVector<Value> values;
  for (const at::Tensor &t : it->second.toTensorVector()) {
    Value c = constant(t, Type());
    if (!c)
      return std::nullopt;
    values.push_back(c);
  }
  return values;
}

bool Importer::convertRecurrent(TSNode *n, RecurrentCell cell) {
  auto fail = [&](const std::string &message) {
    error(n, message);
    return false;
  };
  auto ins = n->inputs();
  // The packed-sequence overload (data, batch_sizes, hx, params, ...).
  if (ins.size() != 9 || ins[3]->type()->kind() != c10::TypeKind::BoolType)
    return fail("packed sequences (pack_padded_sequence) are not supported: "
                "pass a padded tensor");
  bool lstm = cell == RecurrentCell::LSTM;
  Value x = tensor(ins[0]);
  std::optional<SmallVector<Value>> hx =
      lstm ? tensorList(ins[1])
           : std::optional<SmallVector<Value>>(
                 SmallVector<Value>{tensor(ins[1])});
  std::optional<SmallVector<Value>> params = tensorList(ins[2]);
  if (!x || !hx || !params || llvm::any_of(*hx, [](Value v) { return !v; }))
    return fail("needs an input tensor, its initial state and the layer's "
                "weights");
  bool hasBiases = known.count(ins[3]) && known[ins[3]].toBool();
  int64_t layers = integer(ins[4]);
  double dropout = number(ins[5]);
  bool train = known.count(ins[6]) && known[ins[6]].toBool();
  bool bidirectional = known.count(ins[7]) && known[ins[7]].toBool();
  bool batchFirst = known.count(ins[8]) && known[ins[8]].toBool();
  if (train && dropout > 0 && layers > 1)
    return fail("dropout between layers in training mode is not supported "
                "(trace the model in eval mode, or with dropout=0)");
  int64_t dirs = bidirectional ? 2 : 1, perLayer = hasBiases ? 4 : 2;
  if (layers < 1 ||
      static_cast<int64_t>(params->size()) != layers * dirs * perLayer)
    return fail("expects " + std::to_string(layers * dirs * perLayer) +
                " weight tensors for " + std::to_string(layers) +
                " layer(s), got " + std::to_string(params->size()));
  if (hx->size() != (lstm ? 2u : 1u))
    return fail("expects " + std::string(lstm ? "(h0, c0)" : "h0"));

  auto shapeOf = [](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  };
  // Unbatched input: [T, I] and states [L*D, H].
  bool unbatched = shapeOf(x).size() == 2;
  if (!unbatched && shapeOf(x).size() != 3)
    return fail("needs a 2-D or 3-D input");
  if (unbatched) {
    x = reshape(x, {shapeOf(x)[0], 1, shapeOf(x)[1]});
    for (Value &s : *hx)
      s = reshape(s, {shapeOf(s)[0], 1, shapeOf(s)[1]});
  } else if (batchFirst) {
    x = transpose(x, {1, 0, 2});
  }
  int64_t steps = shapeOf(x)[0], batch = shapeOf(x)[1];
  if (steps < 1 || ShapedType::isDynamic(steps) || ShapedType::isDynamic(batch))
    return fail("needs a static, non-empty sequence");
  for (Value s : *hx)
    if (shapeOf(s).size() != 3 || shapeOf(s)[0] != layers * dirs ||
        shapeOf(s)[1] != batch)
      return fail("needs initial states of shape [" +
                  std::to_string(layers * dirs) + ", " + std::to_string(batch) +
                  ", hidden]");
  int64_t hidden = shapeOf((*hx)[0])[2];
  // State k of layer/direction `index` as [B, H].
  auto state = [&](Value s, int64_t index) {
    Value slice =
        create<SliceOp>(s, b.getDenseI64ArrayAttr({index, 0, 0}),
                        b.getDenseI64ArrayAttr({index + 1, batch, hidden}),
                        b.getDenseI64ArrayAttr({1, 1, 1}));
    return reshape(slice, {batch, hidden});
  };

  SmallVector<Value> lastH, lastC;
  for (int64_t l = 0; l < layers; ++l) {
    SmallVector<Value> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t index = l * dirs + d, p = index * perLayer;
      RecurrentWeights w;
      w.wIh = (*params)[p];
      w.wHh = (*params)[p + 1];
      if (hasBiases) {
        w.bIh = (*params)[p + 2];
        w.bHh = (*params)[p + 3];
      }
      if (shapeOf(w.wIh).size() != 2 || shapeOf(w.wHh).size() != 2 ||
          shapeOf(w.wHh)[1] != hidden ||
          shapeOf(w.wIh)[0] != recurrentGates(cell) * hidden ||
          shapeOf(w.wIh)[1] != shapeOf(x)[2])
        return fail("layer " + std::to_string(l) +
                    ": weights do not fit the input and hidden sizes");
      RecurrentLayer r = buildRecurrentLayer(
          *this, cell, x, state((*hx)[0], index),
          lstm ? state((*hx)[1], index) : Value(), w, /*reverse=*/d == 1);
      if (takeFailedInference())
        return false;
      outs.push_back(r.output);
      lastH.push_back(reshape(r.h, {1, batch, hidden}));
      if (lstm)
        lastC.push_back(reshape(r.c, {1, batch, hidden}));
    }
    x = outs.size() == 1 ? outs[0]
                         : create<ConcatOp>(outs, b.getI64IntegerAttr(2));
  }
  Value hN = create<ConcatOp>(lastH, b.getI64IntegerAttr(0));
  Value cN = lstm ? create<ConcatOp>(lastC, b.getI64IntegerAttr(0)) : Value();
  if (unbatched) {
    x = reshape(x, {steps, shapeOf(x)[2]});
    hN = reshape(hN, {layers * dirs, hidden});
    if (cN)
      cN = reshape(cN, {layers * dirs, hidden});
  } else if (batchFirst) {
    x = transpose(x, {1, 0, 2});
  }
  SmallVector<Value> results = {x, hN};
  if (lstm)
    results.push_back(cN);
  if (n->outputs().size() != results.size())
    return fail("expects " + std::to_string(results.size()) + " results");
  for (auto [i, v] : llvm::enumerate(results))
    tensors[n->outputs()[i]] = v;
  return true;
}
