//===- GPT.cpp - the standard GPT family as ober IR -----------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/Generators/GPT.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::ober;

bool mlir::ober::parseGPTConfig(StringRef spec, GPTConfig &c,
                                std::string &error) {
  SmallVector<StringRef> items;
  spec.split(items, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    if (key == "dropout") {
      if (value.getAsDouble(c.dropout)) {
        error = "dropout='" + value.str() + "' is not a number";
        return false;
      }
      continue;
    }
    if (key == "dtype") {
      if (value != "f32" && value != "bf16" && value != "f16") {
        error = "dtype '" + value.str() + "' is not f32, bf16 or f16";
        return false;
      }
      c.dtype = value.str();
      continue;
    }
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("layers", &c.layers)
                         .Case("hidden", &c.hidden)
                         .Case("heads", &c.heads)
                         .Case("seq", &c.seq)
                         .Case("vocab", &c.vocab)
                         .Case("batch", &c.batch)
                         .Default(nullptr);
    if (!field) {
      error = "unknown key '" + key.str() +
              "' (layers, hidden, heads, seq, vocab, batch, dtype, dropout)";
      return false;
    }
    if (value.getAsInteger(10, *field)) {
      error = key.str() + "='" + value.str() + "' is not a positive integer";
      return false;
    }
  }
  return checkGPTConfig(c, error);
}

bool mlir::ober::checkGPTConfig(const GPTConfig &c, std::string &error) {
  std::pair<const char *, int64_t> sizes[] = {
      {"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads},
      {"seq", c.seq},       {"vocab", c.vocab},   {"batch", c.batch}};
  for (auto [key, value] : sizes)
    if (value < 1) {
      error = std::string(key) + "='" + std::to_string(value) +
              "' is not a positive integer";
      return false;
    }
  if (c.hidden % c.heads) {
    error = "hidden=" + std::to_string(c.hidden) + " is not divisible by heads=" +
            std::to_string(c.heads);
    return false;
  }
  if (!(c.dropout >= 0 && c.dropout < 1)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", c.dropout);
    error = "dropout='" + std::string(text) + "' is not in [0, 1)";
    return false;
  }
  return true;
}

namespace {
/// Builds one function, adding parameters as they are used.
class GPTBuilder {
public:
  GPTBuilder(OpBuilder &b, Location loc, Type element, func::FuncOp fn)
      : b(b), loc(loc), element(element), fn(fn) {}

  Value param(const std::string &name, ArrayRef<int64_t> shape) {
    Block &body = fn.getBody().front();
    Value arg = body.addArgument(RankedTensorType::get(shape, element), loc);
    names.push_back(name);
    return arg;
  }
  RankedTensorType type(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  }
  Value linear(Value x, const std::string &name, int64_t in, int64_t out) {
    Value w = param(name + ".weight", {in, out});
    Value bias = param(name + ".bias", {out});
    Value y = MatmulOp::create(b, loc, x, w);
    return AddOp::create(b, loc, y, bias);
  }
  Value layerNorm(Value x, const std::string &name, int64_t hidden) {
    Value g = param(name + ".weight", {hidden});
    Value bias = param(name + ".bias", {hidden});
    int64_t axis = cast<RankedTensorType>(x.getType()).getRank() - 1;
    return LayerNormOp::create(b, loc, x, g, bias, b.getI64IntegerAttr(axis),
                               b.getF64FloatAttr(1e-5));
  }

  OpBuilder &b;
  Location loc;
  Type element;
  func::FuncOp fn;
  SmallVector<std::string> names;
};
} // namespace

OwningOpRef<ModuleOp> mlir::ober::buildGPT(MLIRContext &context,
                                           const GPTConfig &c) {
  context.loadDialect<OberDialect, func::FuncDialect>();
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type element = c.dtype == "bf16"  ? Type(b.getBF16Type())
                 : c.dtype == "f16" ? Type(b.getF16Type())
                                    : Type(b.getF32Type());
  auto tokensType = RankedTensorType::get({c.batch, c.seq}, b.getI64Type());
  SmallVector<Type> inputs = {tokensType, tokensType};
  auto seedType = RankedTensorType::get({}, b.getI64Type());
  if (c.dropout > 0)
    inputs.push_back(seedType);
  auto fn = func::FuncOp::create(b, loc, "gpt", b.getFunctionType(inputs, {}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);
  GPTBuilder g(b, loc, element, fn);
  int64_t h = c.hidden, d = c.hidden / c.heads;
  unsigned numInputs = inputs.size();
  // Each dropout site draws from its own stream: the seed plus a site index.
  int64_t site = 0;
  auto dropout = [&](Value v) -> Value {
    if (c.dropout <= 0)
      return v;
    Value offset = createScalarConstant(b, loc, b.getI64Type(), ++site * 7919);
    Value seed = AddOp::create(b, loc, body->getArgument(2), offset);
    return DropoutOp::create(b, loc, v, seed, b.getF64FloatAttr(c.dropout))
        .getResult();
  };
  // Attention without the fused op, so that its probabilities can drop out.
  auto unfusedAttention = [&](Value q, Value k, Value v) -> Value {
    auto scores = g.type({c.batch, c.heads, c.seq, c.seq});
    Value kt = TransposeOp::create(b, loc, k, b.getDenseI64ArrayAttr({0, 1, 3, 2}));
    Value s = MatmulOp::create(b, loc, q, kt);
    s = MulOp::create(b, loc, s,
                      createScalarConstant(b, loc, element, 1.0 / std::sqrt(d)));
    auto idx = RankedTensorType::get({c.seq, c.seq}, b.getI64Type());
    Value keep = CompareOp::create(b, loc, CompareDirection::ge,
                                   IotaOp::create(b, loc, idx, 0),
                                   IotaOp::create(b, loc, idx, 1));
    s = SelectOp::create(b, loc, keep, s,
                         createScalarConstant(b, loc, element, -INFINITY));
    (void)scores;
    Value p = dropout(SoftmaxOp::create(b, loc, s, 3));
    return MatmulOp::create(b, loc, p, v);
  };

  Value wte = g.param("wte.weight", {c.vocab, h});
  Value wpe = g.param("wpe.weight", {c.seq, h});
  Value x = EmbeddingOp::create(b, loc, wte, body->getArgument(0));
  x = AddOp::create(b, loc, x, wpe);
  auto heads = [&](Value v) { // [B, S, h] -> [B, heads, S, d]
    Value r = ReshapeOp::create(b, loc, g.type({c.batch, c.seq, c.heads, d}), v);
    return TransposeOp::create(b, loc, r, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  };
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string p = "h." + std::to_string(l);
    Value a = g.layerNorm(x, p + ".ln_1", h);
    Value qkv = g.linear(a, p + ".attn.c_attn", h, 3 * h);
    auto parts = SplitOp::create(
        b, loc, TypeRange(SmallVector<Type>(3, g.type({c.batch, c.seq, h}))),
        qkv, b.getI64IntegerAttr(2), b.getDenseI64ArrayAttr({h, h, h}));
    Value att = c.dropout > 0
                    ? unfusedAttention(heads(parts.getResult(0)),
                                       heads(parts.getResult(1)),
                                       heads(parts.getResult(2)))
                    : AttentionOp::create(b, loc, heads(parts.getResult(0)),
                                          heads(parts.getResult(1)),
                                          heads(parts.getResult(2)), Value(),
                                          FloatAttr(), b.getUnitAttr())
                          .getResult();
    att = TransposeOp::create(b, loc, att, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
    att = ReshapeOp::create(b, loc, g.type({c.batch, c.seq, h}), att);
    x = AddOp::create(b, loc, x,
                      dropout(g.linear(att, p + ".attn.c_proj", h, h)));
    Value m = g.layerNorm(x, p + ".ln_2", h);
    m = g.linear(m, p + ".mlp.c_fc", h, 4 * h);
    m = GeluOp::create(b, loc, m, GeluApproximation::tanh);
    x = AddOp::create(b, loc, x,
                      dropout(g.linear(m, p + ".mlp.c_proj", 4 * h, h)));
  }
  x = g.layerNorm(x, "ln_f", h);
  Value head = TransposeOp::create(b, loc, wte, b.getDenseI64ArrayAttr({1, 0}));
  Value logits = MatmulOp::create(b, loc, x, head);
  Value loss = CrossEntropyOp::create(
      b, loc, logits, body->getArgument(1),
      LossReductionAttr::get(&context, LossReduction::mean),
      b.getF64FloatAttr(0.0), IntegerAttr());
  func::ReturnOp::create(b, loc, loss);
  fn.setFunctionType(b.getFunctionType(body->getArgumentTypes(),
                                       {loss.getType()}));
  for (auto [i, name] : llvm::enumerate(g.names))
    fn.setArgAttr(numInputs + i, OberDialect::kParamAttrName,
                  b.getStringAttr(name));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
