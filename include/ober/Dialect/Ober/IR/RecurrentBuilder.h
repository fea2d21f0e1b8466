//===- RecurrentBuilder.h - LSTM, GRU and RNN layers as ober ops -*- C++
//-*-===//
//
// Part of Ober-Train. Both importers unroll recurrent layers over their
// (static) sequence into the ops the rest of the compiler knows: one
// matrix product for the input projection of every step, then per step a
// product with the hidden state, the gates and the state update. Gradients
// come from those ops' rules; the planner and the code generator see
// nothing new.
//
// Weights follow PyTorch's layout and gate order (ONNX's importer reorders
// its own): `w_ih` [G*H, I], `w_hh` [G*H, H], biases [G*H], gates
//   LSTM  i, f, g, o   c' = f*c + i*g, h' = o*tanh(c') (peepholes: the
//                      gates i, f add p*c, o adds p*c')
//   GRU   r, z, n      n = tanh(x_n + r*(h W_hn + b_hn)), h' = (1-z)*n + z*h
//                      (ONNX's default, linear_before_reset = 0:
//                       n = tanh(x_n + (r*h) W_hn + b_hn))
//   RNN   one          h' = tanh or relu(x W_ih + b_ih + h W_hh + b_hh)
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_RECURRENTBUILDER_H
#define OBER_DIALECT_OBER_IR_RECURRENTBUILDER_H

#include "ober/Dialect/Ober/IR/OberOps.h"

namespace mlir::ober {

enum class RecurrentCell { LSTM, GRU, RNNTanh, RNNReLU };

/// Gates per cell: 4, 3, 1.
inline int64_t recurrentGates(RecurrentCell cell) {
  return cell == RecurrentCell::LSTM ? 4 : cell == RecurrentCell::GRU ? 3 : 1;
}

/// One direction of one layer: its weights (biases may be null) and, for
/// an LSTM with peepholes (ONNX's P), the [H] weights of the cell state in
/// the input, forget and output gates.
struct RecurrentWeights {
  Value wIh, wHh, bIh, bHh;
  Value peepI, peepF, peepO;
};

/// Its results: every step's hidden state [T, B, H], the last hidden state
/// [B, H] and (LSTM) the last cell state [B, H].
struct RecurrentLayer {
  Value output, h, c;
};

/// Runs `cell` over `x` [T, B, I] from `h0` (and `c0`, LSTM) [B, H], last
/// step first when `reverse`. `builder` supplies `create<OpTy>(args...)`,
/// `reshape`, `transpose` and `scalar` (an OberShapeBuilder).
template <typename Builder>
RecurrentLayer buildRecurrentLayer(Builder &builder, RecurrentCell cell,
                                   Value x, Value h0, Value c0,
                                   const RecurrentWeights &w, bool reverse,
                                   bool linearBeforeReset = true) {
  auto shapeOf = [](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  };
  auto attrs = [&](ArrayRef<int64_t> v) {
    return builder.b.getDenseI64ArrayAttr(v);
  };
  int64_t steps = shapeOf(x)[0], batch = shapeOf(x)[1], in = shapeOf(x)[2];
  int64_t hidden = shapeOf(w.wHh)[1], gates = recurrentGates(cell);
  // Columns [k*H, (k+1)*H) of a [rows, G*H] value: gate k.
  auto gate = [&](Value v, int64_t k) {
    int64_t rows = shapeOf(v)[0];
    return builder.template create<SliceOp>(v, attrs({0, k * hidden}),
                                            attrs({rows, (k + 1) * hidden}),
                                            attrs({1, 1}));
  };
  auto add = [&](Value a, Value c) {
    return c ? builder.template create<AddOp>(a, c) : a;
  };
  auto mul = [&](Value a, Value c) {
    return builder.template create<MulOp>(a, c);
  };
  auto sigmoid = [&](Value v) { return builder.template create<SigmoidOp>(v); };
  auto tanh = [&](Value v) { return builder.template create<TanhOp>(v); };
  // The input projection of every step at once: [T*B, G*H].
  Value xs = builder.reshape(x, {steps * batch, in});
  Value projected = add(
      builder.template create<MatmulOp>(xs, builder.transpose(w.wIh, {1, 0})),
      w.bIh);
  Value wHhT = builder.transpose(w.wHh, {1, 0});
  // GRU, ONNX's default: the hidden projection of the new gate comes after
  // the reset.
  Value wHnT, bHn;
  if (cell == RecurrentCell::GRU && !linearBeforeReset) {
    wHnT = builder.template create<SliceOp>(wHhT, attrs({0, 2 * hidden}),
                                            attrs({hidden, 3 * hidden}),
                                            attrs({1, 1}));
    if (w.bHh)
      bHn = builder.template create<SliceOp>(w.bHh, attrs({2 * hidden}),
                                             attrs({3 * hidden}), attrs({1}));
  }
  Value h = h0, c = c0;
  SmallVector<Value> outputs(steps);
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    Value xt = builder.template create<SliceOp>(
        projected, attrs({t * batch, 0}),
        attrs({(t + 1) * batch, gates * hidden}), attrs({1, 1}));
    Value ht = add(builder.template create<MatmulOp>(h, wHhT), w.bHh);
    switch (cell) {
    case RecurrentCell::LSTM: {
      Value sum = builder.template create<AddOp>(xt, ht);
      // Peepholes read the previous cell state (input and forget gates)
      // and the new one (output gate).
      auto peep = [&](Value pre, Value p, Value state) {
        return p ? builder.template create<AddOp>(pre, mul(p, state)) : pre;
      };
      Value i = sigmoid(peep(gate(sum, 0), w.peepI, c));
      Value f = sigmoid(peep(gate(sum, 1), w.peepF, c));
      Value g = tanh(gate(sum, 2));
      c = builder.template create<AddOp>(mul(f, c), mul(i, g));
      Value o = sigmoid(peep(gate(sum, 3), w.peepO, c));
      h = mul(o, tanh(c));
      break;
    }
    case RecurrentCell::GRU: {
      Value r =
          sigmoid(builder.template create<AddOp>(gate(xt, 0), gate(ht, 0)));
      Value z =
          sigmoid(builder.template create<AddOp>(gate(xt, 1), gate(ht, 1)));
      Value hn =
          linearBeforeReset
              ? mul(r, gate(ht, 2))
              : add(builder.template create<MatmulOp>(mul(r, h), wHnT), bHn);
      Value n = tanh(builder.template create<AddOp>(gate(xt, 2), hn));
      // (1 - z) * n + z * h = n + z * (h - n)
      h = builder.template create<AddOp>(
          n, mul(z, builder.template create<SubOp>(h, n)));
      break;
    }
    case RecurrentCell::RNNTanh:
    case RecurrentCell::RNNReLU: {
      Value sum = builder.template create<AddOp>(xt, ht);
      h = cell == RecurrentCell::RNNTanh ? tanh(sum)
                                         : builder.template create<ReluOp>(sum);
      break;
    }
    }
    outputs[t] = builder.reshape(h, {1, batch, hidden});
  }
  Value output = builder.template create<ConcatOp>(
      outputs, builder.b.getI64IntegerAttr(0));
  return {output, h, c};
}

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_RECURRENTBUILDER_H
