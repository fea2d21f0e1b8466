//===- ControlFlow.cpp - prim::If and prim::Loop of scripted modules ------===//
//
// Part of Ober-Train. ober compiles static dataflow, so a scripted module's
// control flow is resolved at import time, as the ONNX importer resolves
// If and Loop: an `if` on a value known at import time imports the branch
// it takes (else both, and a select per result); a loop is unrolled, its
// body imported once per iteration. A loop whose condition is not known at
// import time runs its trip count with the iterations after the condition
// turns false masked out.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "ober/Importers/ImportLimits.h"

#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::torchscript;

Importer::Snapshot Importer::snapshot(const TSValue *v) {
  Snapshot s;
  if (auto it = tensors.find(v); it != tensors.end())
    s.tensor = it->second;
  if (auto it = lists.find(v); it != lists.end())
    s.list = it->second;
  if (auto it = known.find(v); it != known.end())
    s.known = it->second;
  if (auto it = example.find(v); it != example.end())
    s.example = it->second;
  if (auto it = tuples.find(v); it != tuples.end())
    s.tuple = std::make_shared<std::vector<Snapshot>>(it->second);
  return s;
}

void Importer::restore(const TSValue *v, const Snapshot &s) {
  auto put = [&](auto &map, const auto &value) {
    if (value)
      map[v] = *value;
    else
      map.erase(v);
  };
  put(tensors, s.tensor);
  put(lists, s.list);
  put(known, s.known);
  put(example, s.example);
  if (s.tuple)
    tuples[v] = *s.tuple;
  else
    tuples.erase(v);
}

bool Importer::defined(const TSValue *v) const {
  return tensors.count(v) || lists.count(v) || known.count(v) ||
         tuples.count(v);
}

/// The condition of `v` if it is known at import time.
static std::optional<bool> knownCondition(Importer &im, const TSValue *v) {
  auto it = im.known.find(v);
  if (it == im.known.end())
    return std::nullopt;
  const c10::IValue &c = it->second;
  if (c.isBool())
    return c.toBool();
  if (c.isInt())
    return c.toInt() != 0;
  if (c.isTensor() && c.toTensor().numel() == 1)
    return c.toTensor().item<double>() != 0;
  return std::nullopt;
}

/// `v` as a 0-D i1 value (a condition known only at run time).
static Value runtimeCondition(Importer &im, const TSValue *v) {
  Value c = im.tensor(v);
  if (!c)
    return c;
  auto type = llvm::cast<RankedTensorType>(c.getType());
  if (type.getNumElements() != 1)
    return Value();
  return im.cast(im.reshape(c, {}), im.b.getI1Type());
}

bool Importer::convertIf(TSNode *n, const BlockImporter &importBlock) {
  torch::jit::Block *yes = n->blocks()[0], *no = n->blocks()[1];
  if (std::optional<bool> take = knownCondition(*this, n->input())) {
    torch::jit::Block *block = *take ? yes : no;
    importBlock(block);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (!defined(block->outputs()[i]))
        return false; // reported where it failed
      restore(n->outputs()[i], snapshot(block->outputs()[i]));
    }
    return true;
  }
  Value cond = runtimeCondition(*this, n->input());
  if (!cond) {
    error(n, "its condition is neither known at import time nor a "
             "one-element tensor");
    return false;
  }
  // Both branches, and a choice between their results.
  std::vector<std::optional<c10::IValue>> examples;
  auto results = [&](torch::jit::Block *block) {
    importBlock(block);
    SmallVector<Value> out;
    for (const TSValue *v : block->outputs()) {
      out.push_back(defined(v) ? tensor(v) : Value());
      examples.push_back(snapshot(v).example);
    }
    return out;
  };
  SmallVector<Value> a = results(yes), b = results(no);
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    if (!a[i] || !b[i] || a[i].getType() != b[i].getType()) {
      error(n, "result " + std::to_string(i) +
                   " must be a tensor of one "
                   "type in both branches when the condition is known only at "
                   "run time");
      return false;
    }
    tensors[n->outputs()[i]] = create<SelectOp>(cond, a[i], b[i]);
    // Either branch's example tensor gives the result's type; a number or
    // bool the branches give is chosen by the data, so it has no example
    // (nothing may take it as known).
    if (examples[i] && examples[i]->isTensor())
      example[n->outputs()[i]] = *examples[i];
  }
  return true;
}

bool Importer::convertLoop(TSNode *n, const BlockImporter &importBlock) {
  torch::jit::Block *body = n->blocks()[0];
  const TSValue *tripValue = n->inputs()[0];
  if (!isKnown(tripValue) || !known[tripValue].isInt()) {
    error(n, "its trip count must be known at import time (loops are "
             "unrolled)");
    return false;
  }
  int64_t trips = known[tripValue].toInt();
  size_t numCarried = n->inputs().size() - 2;
  std::vector<Snapshot> state;
  for (size_t j = 0; j < numCarried; ++j)
    state.push_back(snapshot(n->inputs()[2 + j]));
  bool whileLoop = trips == std::numeric_limits<int64_t>::max();
  // `v` as a run-time condition (null, with the error, when it is none).
  auto condition = [&](const TSValue *v) -> Value {
    if (whileLoop) {
      error(n, "a while loop's condition must be known at import time");
      return Value();
    }
    Value c = runtimeCondition(*this, v);
    if (!c)
      error(n, "its condition is neither known at import time nor a "
               "one-element tensor");
    return c;
  };
  // Null while the condition is known; the run-time condition once not.
  Value active;
  std::optional<bool> go = knownCondition(*this, n->inputs()[1]);
  if (!go) {
    active = condition(n->inputs()[1]);
    if (!active)
      return false;
  }
  for (int64_t i = 0; i < trips && (active || *go); ++i) {
    if (i >= kMaxUnrolledIterations) {
      error(n, "runs more than " + std::to_string(kMaxUnrolledIterations) +
                   " iterations (loops are unrolled at import time)");
      return false;
    }
    restore(body->inputs()[0],
            Snapshot{{}, {}, c10::IValue(i), c10::IValue(i), nullptr});
    for (size_t j = 0; j < numCarried; ++j)
      restore(body->inputs()[1 + j], state[j]);
    importBlock(body);
    for (const TSValue *v : body->outputs())
      if (!defined(v))
        return false; // reported where it failed
    for (size_t j = 0; j < numCarried; ++j) {
      Snapshot s = snapshot(body->outputs()[1 + j]);
      if (active) {
        // Keep the value of the iteration the condition turned false on.
        Value now = tensor(body->outputs()[1 + j]);
        Value before = tensor(body->inputs()[1 + j]);
        if (!now || !before || now.getType() != before.getType()) {
          error(n, "carried value " + std::to_string(j) +
                       " must be a "
                       "tensor of one type when the condition is known only at "
                       "run time");
          return false;
        }
        s = Snapshot{
            create<SelectOp>(active, now, before), {}, {}, s.example, nullptr};
      }
      state[j] = s;
    }
    std::optional<bool> next = knownCondition(*this, body->outputs()[0]);
    if (!active && next) {
      go = next;
      continue;
    }
    Value c =
        next ? scalar(b.getI1Type(), *next) : condition(body->outputs()[0]);
    if (!c)
      return false;
    active = active ? create<AndOp>(active, c) : c;
  }
  for (size_t j = 0; j < numCarried; ++j)
    restore(n->outputs()[j], state[j]);
  return true;
}
