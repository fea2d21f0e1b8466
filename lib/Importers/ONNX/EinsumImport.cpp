//===- EinsumImport.cpp - ONNX Einsum -------------------------------------===//
//
// Part of Ober-Train. An Einsum becomes diagonals (a label repeated in one
// operand), sums (a label no later operand or the output needs), batched
// matrix products of the operands two at a time, and a final transpose.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

/// A label: a letter, or one dimension an ellipsis stands for (numbered
/// from the left of the broadcast ellipsis dimensions, after the letters).
using Label = int;
constexpr Label kEllipsisLabel = 256;

/// An operand with one label per dimension.
struct Term {
  Value value;
  SmallVector<Label> labels;
};

/// `text` (letters and at most one "...") as labels for a value of `rank`
/// dimensions, whose ellipsis covers `rank - letters` of `ellipsisRank`.
FailureOr<SmallVector<Label>> parseTerm(NodeContext &ctx, StringRef text,
                                        int64_t rank, int64_t ellipsisRank) {
  SmallVector<Label> labels;
  size_t dots = text.find("...");
  int64_t letters = text.size() - (dots == StringRef::npos ? 0 : 3);
  int64_t covered = rank - letters;
  if (dots == StringRef::npos ? covered != 0 : covered < 0) {
    ctx.error() << "term '" << text << "' does not fit an operand of rank "
                << rank;
    return failure();
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == dots) {
      for (int64_t e = 0; e < covered; ++e)
        labels.push_back(kEllipsisLabel + ellipsisRank - covered + e);
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(text[i])) {
      ctx.error() << "equation term '" << text << "' has '" << text[i]
                  << "' (letters and one '...' only)";
      return failure();
    }
    labels.push_back(text[i]);
  }
  return labels;
}

int64_t indexOf(ArrayRef<Label> labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}

/// The diagonal of `t` over its first two dimensions labelled alike, until
/// no label repeats.
void takeDiagonals(NodeContext &ctx, Term &t) {
  for (size_t i = 0; i < t.labels.size(); ++i)
    for (size_t j = i + 1; j < t.labels.size(); ++j) {
      if (t.labels[i] != t.labels[j])
        continue;
      // Move i and j last, merge them, read positions k * (n + 1).
      int64_t rank = t.labels.size(), n = typeOf(t.value).getDimSize(i);
      SmallVector<int64_t> perm;
      SmallVector<Label> labels;
      for (int64_t d = 0; d < rank; ++d)
        if (d != static_cast<int64_t>(i) && d != static_cast<int64_t>(j)) {
          perm.push_back(d);
          labels.push_back(t.labels[d]);
        }
      perm.push_back(i);
      perm.push_back(j);
      labels.push_back(t.labels[i]);
      Value v = ctx.transpose(t.value, perm);
      SmallVector<int64_t> shape(typeOf(v).getShape().drop_back(2));
      shape.push_back(n * n);
      SmallVector<int64_t> diagonal;
      for (int64_t k = 0; k < n; ++k)
        diagonal.push_back(k * (n + 1));
      t.value = ctx.create<GatherOp>(
          ctx.reshape(v, shape), ctx.constantInts(diagonal, ctx.b.getI64Type()),
          rank - 2);
      t.labels = labels;
      i = static_cast<size_t>(-1); // start over
      break;
    }
}

/// `t` summed over the labels `keep` does not hold.
void sumExcept(NodeContext &ctx, Term &t, ArrayRef<Label> keep) {
  SmallVector<int64_t> axes;
  SmallVector<Label> labels;
  for (auto [d, l] : llvm::enumerate(t.labels)) {
    if (llvm::is_contained(keep, l))
      labels.push_back(l);
    else
      axes.push_back(d);
  }
  if (axes.empty())
    return;
  t.value = ctx.reduce<ReduceSumOp>(t.value, axes, /*keepdims=*/false);
  t.labels = labels;
}

/// `t` transposed to `labels`' order.
Value permuted(NodeContext &ctx, const Term &t, ArrayRef<Label> labels) {
  SmallVector<int64_t> perm;
  for (Label l : labels)
    perm.push_back(indexOf(t.labels, l));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return t.value;
  return ctx.transpose(t.value, perm);
}

/// The product of `a` and `b` summed over their common labels that `keep`
/// does not hold: a batched matmul [batch, m, k] x [batch, k, n].
FailureOr<Term> contract(NodeContext &ctx, Term a, Term b,
                         ArrayRef<Label> keep) {
  SmallVector<Label> batch, summed, aOnly, bOnly;
  for (Label l : a.labels)
    (llvm::is_contained(b.labels, l)
         ? (llvm::is_contained(keep, l) ? batch : summed)
         : aOnly)
        .push_back(l);
  for (Label l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      bOnly.push_back(l);
  auto size = [&](const Term &t, Label l) {
    return typeOf(t.value).getDimSize(indexOf(t.labels, l));
  };
  // Ellipsis dimensions of size 1 broadcast against the other operand's.
  for (Term *t : {&a, &b}) {
    Term &other = t == &a ? b : a;
    SmallVector<int64_t> shape(typeOf(t->value).getShape());
    for (auto [d, l] : llvm::enumerate(t->labels))
      if (llvm::is_contained(other.labels, l) && shape[d] == 1)
        shape[d] = size(other, l);
    t->value = ctx.broadcastTo(t->value, shape);
  }
  for (Label l : llvm::concat<Label>(batch, summed))
    if (size(a, l) != size(b, l)) {
      ctx.error() << "a label stands for sizes " << size(a, l) << " and "
                  << size(b, l) << " in two operands";
      return failure();
    }
  auto dims = [&](const Term &t, ArrayRef<Label> labels) {
    SmallVector<int64_t> out;
    for (Label l : labels)
      out.push_back(size(t, l));
    return out;
  };
  SmallVector<int64_t> batchDims = dims(a, batch), mDims = dims(a, aOnly),
                       kDims = dims(a, summed), nDims = dims(b, bOnly);
  SmallVector<Label> aOrder(batch), bOrder(batch);
  aOrder.append(aOnly);
  aOrder.append(summed);
  bOrder.append(summed);
  bOrder.append(bOnly);
  int64_t nb = ShapedType::getNumElements(batchDims),
          m = ShapedType::getNumElements(mDims),
          k = ShapedType::getNumElements(kDims),
          n = ShapedType::getNumElements(nDims);
  Value lhs = ctx.reshape(permuted(ctx, a, aOrder), {nb, m, k});
  Value rhs = ctx.reshape(permuted(ctx, b, bOrder), {nb, k, n});
  SmallVector<int64_t> shape(batchDims);
  shape.append(mDims);
  shape.append(nDims);
  Term out;
  out.value = ctx.reshape(ctx.create<MatmulOp>(lhs, rhs), shape);
  out.labels = batch;
  out.labels.append(aOnly);
  out.labels.append(bOnly);
  return out;
}

LogicalResult einsum(NodeContext &ctx) {
  std::string equation;
  for (char c : ctx.getString("equation", ""))
    if (!llvm::isSpace(c))
      equation.push_back(c);
  StringRef eq(equation), lhs = eq, rhs;
  bool explicitOutput = eq.contains("->");
  if (explicitOutput)
    std::tie(lhs, rhs) = eq.split("->");
  SmallVector<StringRef> texts;
  lhs.split(texts, ',');
  SmallVector<Value> inputs = ctx.presentInputs();
  if (texts.size() != inputs.size() || inputs.empty()) {
    ctx.error() << "equation '" << equation << "' has " << texts.size()
                << " operand terms for " << inputs.size() << " inputs";
    return failure();
  }
  for (Value v : inputs)
    if (!typeOf(v).hasStaticShape()) {
      ctx.error() << "needs inputs of static shape, got " << typeOf(v);
      return failure();
    }
  int64_t ellipsisRank = 0;
  for (auto [text, v] : llvm::zip(texts, inputs))
    if (text.contains("..."))
      ellipsisRank = std::max<int64_t>(
          ellipsisRank, typeOf(v).getRank() - (int64_t(text.size()) - 3));
  SmallVector<Term> terms;
  for (auto [text, v] : llvm::zip(texts, inputs)) {
    FailureOr<SmallVector<Label>> labels =
        parseTerm(ctx, text, typeOf(v).getRank(), ellipsisRank);
    if (failed(labels))
      return failure();
    terms.push_back({v, *labels});
  }
  SmallVector<Label> output;
  if (explicitOutput) {
    FailureOr<SmallVector<Label>> labels = parseTerm(
        ctx, rhs,
        ellipsisRank + int64_t(rhs.size()) - (rhs.contains("...") ? 3 : 0),
        ellipsisRank);
    if (failed(labels))
      return failure();
    output = *labels;
  } else {
    // Implicit output: the ellipsis, then the letters used once, sorted.
    for (int64_t e = 0; e < ellipsisRank; ++e)
      output.push_back(kEllipsisLabel + e);
    std::map<Label, int> uses;
    for (const Term &t : terms)
      for (Label l : t.labels)
        if (l < kEllipsisLabel)
          ++uses[l];
    for (auto [l, n] : uses)
      if (n == 1)
        output.push_back(l);
  }
  for (Label l : output)
    if (llvm::none_of(terms, [&](const Term &t) {
          return llvm::is_contained(t.labels, l);
        })) {
      ctx.error() << "output label '" << char(l) << "' is in no operand";
      return failure();
    }
  // What operands after `i` and the output need.
  auto needed = [&](size_t i) {
    SmallVector<Label> keep(output);
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep.append(terms[j].labels);
    return keep;
  };
  for (Term &t : terms)
    takeDiagonals(ctx, t);
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    SmallVector<Label> keep = needed(i);
    SmallVector<Label> keepA(keep), keepB(keep);
    keepA.append(terms[i].labels);
    keepB.append(acc.labels);
    sumExcept(ctx, acc, keepA);
    sumExcept(ctx, terms[i], keepB);
    FailureOr<Term> next = contract(ctx, acc, terms[i], keep);
    if (failed(next))
      return failure();
    acc = *next;
  }
  sumExcept(ctx, acc, output);
  ctx.setOutput(0, permuted(ctx, acc, output));
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerEinsumHandlers(HandlerMap &m) {
  m["Einsum"] = einsum;
}
