//===- FusedOps.cpp - torch.nn's fused inference paths --------------------===//
//
// Part of Ober-Train. In evaluation mode without gradients (a model traced
// under torch.no_grad()), nn.MultiheadAttention and nn.TransformerEncoder-
// Layer call one fused kernel each:
//   aten::_native_multi_head_attention(query, key, value, embed_dim,
//       num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
//       need_weights, average_attn_weights, mask_type) -> (out, weights)
//   aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads,
//       qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first,
//       eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
//       ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type)
// Both take batch-first [B, S, E] inputs. They become the ops of the
// unfused path (projections, scaled dot-product attention, layer norms,
// the feed-forward block), which also have gradients.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::torchscript;

bool Importer::isFused(const std::string &op) {
  return op == "_native_multi_head_attention" ||
         op == "_transformer_encoder_layer_fwd";
}

namespace {
/// The attention block both fused ops share.
struct Attention {
  Importer &im;
  int64_t heads;
  Value qkvWeight, qkvBias, projWeight, projBias;

  ArrayRef<int64_t> shapeOf(Value v) const {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  }
  /// Rows [k*E, (k+1)*E) of the packed projection: x W_k^T + b_k.
  Value project(Value x, int64_t k, int64_t embed) {
    auto a = [&](ArrayRef<int64_t> v) { return im.b.getDenseI64ArrayAttr(v); };
    Value w = im.create<SliceOp>(qkvWeight, a({k * embed, 0}),
                                 a({(k + 1) * embed, embed}), a({1, 1}));
    Value y = im.create<MatmulOp>(x, im.transpose(w, {1, 0}));
    if (!qkvBias)
      return y;
    Value bias = im.create<SliceOp>(qkvBias, a({k * embed}),
                                    a({(k + 1) * embed}), a({1}));
    return im.create<AddOp>(y, bias);
  }
  /// [B, S, E] -> [B, H, S, D].
  Value splitHeads(Value x) {
    ArrayRef<int64_t> s = shapeOf(x);
    return im.transpose(im.reshape(x, {s[0], s[1], heads, s[2] / heads}),
                        {0, 2, 1, 3});
  }
  /// The attention output [B, Sq, E] and the weights [B, H, Sq, Sk]. A
  /// `mask` broadcast to the scores' shape hides the keys where it is
  /// true (bool; a row it hides entirely gets zero weights, as PyTorch's
  /// masked softmax gives) or is added to the scores (float).
  std::pair<Value, Value> operator()(Value query, Value key, Value value,
                                     Value mask = Value()) {
    int64_t batch = shapeOf(query)[0], sq = shapeOf(query)[1],
            embed = shapeOf(query)[2];
    Value q = splitHeads(project(query, 0, embed));
    Value k = splitHeads(project(key, 1, embed));
    Value v = splitHeads(project(value, 2, embed));
    Type et = llvm::cast<RankedTensorType>(q.getType()).getElementType();
    Value scores =
        im.create<MulOp>(im.create<MatmulOp>(q, im.transpose(k, {0, 1, 3, 2})),
                         im.scalar(et, 1.0 / std::sqrt(double(embed / heads))));
    bool hide = mask && llvm::cast<RankedTensorType>(mask.getType())
                            .getElementType()
                            .isInteger(1);
    if (mask && hide)
      scores = im.create<SelectOp>(mask, im.scalar(et, -INFINITY), scores);
    else if (mask)
      scores = im.create<AddOp>(scores, im.cast(mask, et));
    Value weights = im.create<SoftmaxOp>(scores, im.b.getI64IntegerAttr(3));
    if (hide)
      weights = im.create<SelectOp>(mask, im.scalar(et, 0), weights);
    Value out =
        im.reshape(im.transpose(im.create<MatmulOp>(weights, v), {0, 2, 1, 3}),
                   {batch, sq, embed});
    out = im.create<MatmulOp>(out, im.transpose(projWeight, {1, 0}));
    if (projBias)
      out = im.create<AddOp>(out, projBias);
    return {out, weights};
  }
};
} // namespace

bool Importer::convertFused(TSNode *n, const std::string &op) {
  auto fail = [&](const std::string &message) {
    error(n, message);
    return false;
  };
  auto ins = n->inputs();
  auto opt = [&](size_t i) {
    return isNone(ins[i]) ? Value() : tensor(ins[i]);
  };
  bool mha = op == "_native_multi_head_attention";
  if (ins.size() < (mha ? 10u : 19u))
    return fail("has " + std::to_string(ins.size()) + " operands");
  Value x = tensor(ins[0]);
  int64_t embed = integer(ins[mha ? 3 : 1]), heads = integer(ins[mha ? 4 : 2]);
  Attention attention{*this,
                      heads,
                      tensor(ins[mha ? 5 : 3]),
                      opt(mha ? 6 : 4),
                      tensor(ins[mha ? 7 : 5]),
                      opt(mha ? 8 : 6)};
  if (!x || !attention.qkvWeight || !attention.projWeight)
    return fail("needs its input and projection weights");
  auto shape = llvm::cast<RankedTensorType>(x.getType()).getShape();
  if (shape.size() != 3 || shape[2] != embed || heads < 1 || embed % heads != 0)
    return fail("needs a [batch, sequence, " + std::to_string(embed) +
                "] input and heads dividing the embedding");
  // The mask: a key padding mask [B, Sk] (mask_type 1) or an attention
  // mask [Sq, Sk] (mask_type 0), as [B or 1, 1, Sq or 1, Sk].
  size_t maskIndex = mha ? 9 : 18, typeIndex = mha ? 12 : 19;
  Value mask;
  if (!isNone(ins[maskIndex])) {
    mask = tensor(ins[maskIndex]);
    int64_t type = ins.size() > typeIndex && !isNone(ins[typeIndex])
                       ? integer(ins[typeIndex])
                       : 0;
    auto ms = mask ? llvm::cast<RankedTensorType>(mask.getType()).getShape()
                   : ArrayRef<int64_t>();
    if (!mask || ms.size() != 2 || (type != 0 && type != 1))
      return fail("supports a [batch, keys] key padding mask (mask_type 1) "
                  "or a [queries, keys] attention mask (mask_type 0)");
    mask = type == 1 ? reshape(mask, {ms[0], 1, 1, ms[1]})
                     : reshape(mask, {1, 1, ms[0], ms[1]});
  }
  if (mha) {
    Value key = tensor(ins[1]), value = tensor(ins[2]);
    if (!key || !value)
      return fail("needs query, key and value tensors");
    auto [out, weights] = attention(x, key, value, mask);
    tensors[n->outputs()[0]] = out;
    bool needWeights = integer(ins[10]);
    if (n->outputs().size() > 1 && n->outputs()[1]->hasUses()) {
      if (!needWeights)
        return fail("its attention weights are used but not computed");
      bool average = ins.size() > 11 ? integer(ins[11]) : 1;
      tensors[n->outputs()[1]] =
          average ? create<ReduceMeanOp>(weights, b.getDenseI64ArrayAttr({1}),
                                         b.getBoolAttr(false))
                  : weights;
    }
    return !takeFailedInference();
  }

  bool gelu = integer(ins[7]), normFirst = integer(ins[8]);
  auto eps = b.getF64FloatAttr(number(ins[9]));
  Value n1w = opt(10), n1b = opt(11), n2w = opt(12), n2b = opt(13);
  Value f1w = tensor(ins[14]), f1b = opt(15), f2w = tensor(ins[16]),
        f2b = opt(17);
  if (!f1w || !f2w)
    return fail("needs the feed-forward weights");
  auto norm = [&](Value h, Value w, Value bias) {
    return create<LayerNormOp>(h, w, bias, b.getI64IntegerAttr(2), eps);
  };
  auto linear = [&](Value h, Value w, Value bias) {
    Value y = create<MatmulOp>(h, transpose(w, {1, 0}));
    return bias ? create<AddOp>(y, bias) : y;
  };
  auto selfAttention = [&](Value h) { return attention(h, h, h, mask).first; };
  auto feedForward = [&](Value h) {
    Value inner = linear(h, f1w, f1b);
    inner = gelu ? create<GeluOp>(inner, GeluApproximation::none)
                 : create<ReluOp>(inner);
    return linear(inner, f2w, f2b);
  };
  Value h;
  if (normFirst) {
    h = create<AddOp>(x, selfAttention(norm(x, n1w, n1b)));
    h = create<AddOp>(h, feedForward(norm(h, n2w, n2b)));
  } else {
    h = norm(create<AddOp>(x, selfAttention(x)), n1w, n1b);
    h = norm(create<AddOp>(h, feedForward(h)), n2w, n2b);
  }
  tensors[n->outputs()[0]] = h;
  return !takeFailedInference();
}
