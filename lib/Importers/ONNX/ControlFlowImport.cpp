//===- ControlFlowImport.cpp - ONNX If, Loop, Scan, SequenceMap -----------===//
//
// Part of Ober-Train. ober compiles static dataflow, so control flow is
// resolved at import time: If takes the branch its condition names when the
// condition is known (else both, and a select); Loop, Scan and SequenceMap
// are unrolled, their bodies imported once per iteration. A Loop whose
// condition is not known at import time runs its trip count with the
// iterations after the condition turns false masked out.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "ober/Importers/ImportLimits.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {

GraphValue tensorValue(Value v) { return {v, std::nullopt}; }

/// Sets output `i` to `v` (a tensor or a sequence).
void setGraphOutput(NodeContext &ctx, unsigned i, const GraphValue &v) {
  if (v.sequence)
    ctx.setSequenceOutput(i, *v.sequence);
  else
    ctx.setOutput(i, v.tensor);
}

/// Input `i` as a graph value.
GraphValue inputValue(NodeContext &ctx, unsigned i) {
  if (const Sequence *seq = ctx.sequenceInput(i))
    return {Value(), *seq};
  return tensorValue(ctx.input(i));
}

/// A boolean known at import time, if `v` is one.
std::optional<bool> knownBool(NodeContext &ctx, Value v) {
  std::optional<reference::Tensor> t = ctx.valueOf(v);
  if (!t || t->getNumElements() != 1)
    return std::nullopt;
  return t->getFloat(0) != 0;
}

/// `v` as a 0-D i1 value.
Value asCondition(NodeContext &ctx, Value v) {
  return ctx.cast(ctx.reshape(v, {}), ctx.b.getI1Type());
}

/// `parts` (one per step, of one shape) stacked along a new `axis`.
FailureOr<Value> stack(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis,
                       StringRef what) {
  if (parts.empty()) {
    ctx.error() << what << " has no steps: its shape is not known";
    return failure();
  }
  RankedTensorType first = typeOf(parts.front());
  for (Value p : parts)
    if (typeOf(p) != first) {
      ctx.error() << what << " changes type between steps (" << first << " and "
                  << typeOf(p) << ")";
      return failure();
    }
  return ctx.stack(parts, axis);
}

LogicalResult ifOp(NodeContext &ctx) {
  std::optional<bool> cond = knownBool(ctx, ctx.input(0));
  if (cond) {
    FailureOr<SmallVector<GraphValue>> outs =
        ctx.importBody(*cond ? "then_branch" : "else_branch", {});
    if (failed(outs))
      return failure();
    if (outs->size() != ctx.numOutputs()) {
      ctx.error() << "the branch has " << outs->size() << " outputs, the node "
                  << ctx.numOutputs();
      return failure();
    }
    for (auto [i, v] : llvm::enumerate(*outs))
      setGraphOutput(ctx, i, v);
    return success();
  }
  // Both branches, and a choice between their results.
  FailureOr<SmallVector<GraphValue>> a = ctx.importBody("then_branch", {});
  if (failed(a))
    return failure();
  FailureOr<SmallVector<GraphValue>> b = ctx.importBody("else_branch", {});
  if (failed(b))
    return failure();
  if (a->size() != ctx.numOutputs() || b->size() != ctx.numOutputs()) {
    ctx.error() << "the branches have " << a->size() << " and " << b->size()
                << " outputs, the node " << ctx.numOutputs();
    return failure();
  }
  Value c = asCondition(ctx, ctx.input(0));
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    const GraphValue &x = (*a)[i], &y = (*b)[i];
    if (x.sequence || y.sequence || typeOf(x.tensor) != typeOf(y.tensor)) {
      ctx.error() << "output #" << i << " differs in type between the branches"
                  << " and the condition is not known at import time";
      return failure();
    }
    ctx.setOutput(i, ctx.create<SelectOp>(c, x.tensor, y.tensor));
  }
  return success();
}

LogicalResult loop(NodeContext &ctx) {
  std::optional<int64_t> tripCount;
  if (ctx.hasInput(0)) {
    FailureOr<int64_t> m = ctx.constantInt(0, "the trip count M");
    if (failed(m))
      return failure();
    tripCount = std::max<int64_t>(*m, 0);
  }
  Type i1 = ctx.b.getI1Type(), i64 = ctx.b.getI64Type();
  Value cond =
      ctx.hasInput(1) ? asCondition(ctx, ctx.input(1)) : ctx.scalar(i1, 1);
  unsigned numCarried = ctx.numInputs() - 2;
  SmallVector<GraphValue> carried;
  for (unsigned i = 2; i < ctx.numInputs(); ++i)
    carried.push_back(inputValue(ctx, i));
  unsigned numScans =
      ctx.numOutputs() > numCarried ? ctx.numOutputs() - numCarried : 0;
  SmallVector<SmallVector<Value>> scans(numScans);
  // Null while the condition is known; the run-time condition once it is
  // not (later iterations keep the carried values it turned false on).
  Value active;
  for (int64_t i = 0;; ++i) {
    if (tripCount && i >= *tripCount)
      break;
    if (!active) {
      std::optional<bool> go = knownBool(ctx, cond);
      if (go && !*go)
        break;
      if (!go) {
        if (!tripCount || numScans) {
          ctx.error() << "its condition is not known at import time, so it "
                      << "needs a trip count M known at import time and no "
                      << "scan outputs";
          return failure();
        }
        active = cond;
      }
    }
    if (i >= kMaxUnrolledIterations) {
      ctx.error() << "runs more than " << kMaxUnrolledIterations
                  << " iterations (unrolled at import time)";
      return failure();
    }
    SmallVector<GraphValue> in{tensorValue(ctx.scalar(i64, i)),
                               tensorValue(active ? active : cond)};
    in.append(carried);
    FailureOr<SmallVector<GraphValue>> outs =
        ctx.importBody("body", in, "[" + std::to_string(i) + "]");
    if (failed(outs))
      return failure();
    if (outs->size() != 1 + numCarried + numScans || (*outs)[0].sequence) {
      ctx.error() << "the body must give the condition, " << numCarried
                  << " carried values and " << numScans << " scan outputs; it "
                  << "gives " << outs->size() << " values";
      return failure();
    }
    Value next = asCondition(ctx, (*outs)[0].tensor);
    for (unsigned j = 0; j < numCarried; ++j) {
      GraphValue v = (*outs)[1 + j];
      if (active) {
        if (v.sequence || carried[j].sequence ||
            typeOf(v.tensor) != typeOf(carried[j].tensor)) {
          ctx.error() << "carried value #" << j << " changes type or is a "
                      << "sequence, which a condition not known at import "
                      << "time cannot mask";
          return failure();
        }
        v.tensor = ctx.create<SelectOp>(active, v.tensor, carried[j].tensor);
      }
      carried[j] = v;
    }
    for (unsigned k = 0; k < numScans; ++k) {
      const GraphValue &s = (*outs)[1 + numCarried + k];
      if (s.sequence) {
        ctx.error() << "scan output #" << k << " is a sequence";
        return failure();
      }
      scans[k].push_back(s.tensor);
    }
    if (active)
      active = ctx.create<AndOp>(active, next);
    else
      cond = next;
  }
  for (unsigned j = 0; j < numCarried; ++j)
    setGraphOutput(ctx, j, carried[j]);
  for (unsigned k = 0; k < numScans; ++k) {
    if (!ctx.wantsOutput(numCarried + k))
      continue;
    FailureOr<Value> v =
        stack(ctx, scans[k], 0, "scan output #" + std::to_string(k));
    if (failed(v))
      return failure();
    ctx.setOutput(numCarried + k, *v);
  }
  return success();
}

/// Per-input axis and direction attributes of Scan (`count` entries, zeros
/// by default), with negative axes counted from `ranks`.
FailureOr<SmallVector<int64_t>> scanAttr(NodeContext &ctx, StringRef name,
                                         size_t count,
                                         ArrayRef<int64_t> ranks = {}) {
  SmallVector<int64_t> v = ctx.getInts(name);
  if (v.empty())
    v.assign(count, 0);
  if (v.size() != count) {
    ctx.error() << name << " has " << v.size() << " entries for " << count
                << " values";
    return failure();
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    FailureOr<int64_t> a = ctx.normalizeAxis(v[i], ranks[i], name);
    if (failed(a))
      return failure();
    v[i] = *a;
  }
  return v;
}

/// One Scan over `states` and `inputs` (no batch dimension): the final
/// states, then the scan outputs.
FailureOr<SmallVector<Value>> scanOnce(NodeContext &ctx,
                                       SmallVector<Value> states,
                                       ArrayRef<Value> inputs,
                                       unsigned numOutputs, StringRef tag) {
  SmallVector<int64_t> ranks;
  for (Value v : inputs)
    ranks.push_back(typeOf(v).getRank());
  FailureOr<SmallVector<int64_t>> axes =
      scanAttr(ctx, "scan_input_axes", inputs.size(), ranks);
  FailureOr<SmallVector<int64_t>> dirs =
      scanAttr(ctx, "scan_input_directions", inputs.size());
  if (failed(axes) || failed(dirs))
    return failure();
  int64_t steps = -1;
  for (auto [v, axis] : llvm::zip(inputs, *axes)) {
    int64_t n = typeOf(v).getDimSize(axis);
    if (ShapedType::isDynamic(n) || (steps >= 0 && n != steps)) {
      ctx.error() << "scan inputs must have one static length along their "
                  << "scan axes, got " << typeOf(v) << " along axis " << axis;
      return failure();
    }
    steps = n;
  }
  if (steps > kMaxUnrolledIterations) {
    ctx.error() << "scans " << steps << " steps; supported up to "
                << kMaxUnrolledIterations << " (unrolled at import time)";
    return failure();
  }
  unsigned numScans = numOutputs - states.size();
  SmallVector<SmallVector<Value>> outs(numScans);
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<GraphValue> in;
    for (Value s : states)
      in.push_back(tensorValue(s));
    for (auto [v, axis, dir] : llvm::zip(inputs, *axes, *dirs)) {
      int64_t at = dir ? steps - 1 - t : t;
      SmallVector<int64_t> shape(typeOf(v).getShape());
      shape.erase(shape.begin() + axis);
      in.push_back(
          tensorValue(ctx.reshape(ctx.sliceAlong(v, axis, at, at + 1), shape)));
    }
    FailureOr<SmallVector<GraphValue>> r =
        ctx.importBody("body", in, (tag + "[" + std::to_string(t) + "]").str());
    if (failed(r))
      return failure();
    if (r->size() != numOutputs ||
        llvm::any_of(*r, [](const GraphValue &g) { return g.sequence; })) {
      ctx.error() << "the body must give " << numOutputs << " tensors";
      return failure();
    }
    for (size_t j = 0; j < states.size(); ++j)
      states[j] = (*r)[j].tensor;
    for (unsigned k = 0; k < numScans; ++k)
      outs[k].push_back((*r)[states.size() + k].tensor);
  }
  SmallVector<int64_t> outRanks;
  for (unsigned k = 0; k < numScans; ++k)
    outRanks.push_back(outs[k].empty() ? 1 : typeOf(outs[k][0]).getRank() + 1);
  FailureOr<SmallVector<int64_t>> outAxes =
      scanAttr(ctx, "scan_output_axes", numScans, outRanks);
  FailureOr<SmallVector<int64_t>> outDirs =
      scanAttr(ctx, "scan_output_directions", numScans);
  if (failed(outAxes) || failed(outDirs))
    return failure();
  SmallVector<Value> results(states);
  for (unsigned k = 0; k < numScans; ++k) {
    if ((*outDirs)[k])
      std::reverse(outs[k].begin(), outs[k].end());
    FailureOr<Value> v =
        stack(ctx, outs[k], (*outAxes)[k], "scan output #" + std::to_string(k));
    if (failed(v))
      return failure();
    results.push_back(*v);
  }
  return results;
}

LogicalResult scan(NodeContext &ctx) {
  int64_t numScanInputs = ctx.getInt("num_scan_inputs", 0);
  // Opset 8 has sequence_lens first and a batch dimension on everything.
  unsigned first = ctx.opset < 9 ? 1 : 0;
  int64_t numStates =
      static_cast<int64_t>(ctx.numInputs()) - first - numScanInputs;
  if (numScanInputs < 1 || numStates < 0 ||
      numStates > static_cast<int64_t>(ctx.numOutputs())) {
    ctx.error() << "num_scan_inputs " << numScanInputs << " does not fit "
                << ctx.numInputs() << " inputs and " << ctx.numOutputs()
                << " outputs";
    return failure();
  }
  SmallVector<Value> states, inputs;
  for (unsigned i = first; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v || ctx.sequenceInput(i) || !typeOf(v).hasStaticShape()) {
      ctx.error() << "input #" << i << " must be a tensor of static shape";
      return failure();
    }
    (static_cast<int64_t>(i - first) < numStates ? states : inputs)
        .push_back(v);
  }
  if (first == 0) {
    FailureOr<SmallVector<Value>> r =
        scanOnce(ctx, states, inputs, ctx.numOutputs(), "");
    if (failed(r))
      return failure();
    for (auto [i, v] : llvm::enumerate(*r))
      ctx.setOutput(i, v);
    return success();
  }
  // Opset 8: one scan per batch entry, over axis 1 of the scan inputs.
  if (ctx.hasInput(0)) {
    ctx.error() << "sequence_lens is not supported (every batch entry scans "
                << "the whole sequence)";
    return failure();
  }
  int64_t batch = typeOf(inputs.front()).getRank() >= 1
                      ? typeOf(inputs.front()).getDimSize(0)
                      : -1;
  for (Value v : llvm::concat<Value>(states, inputs))
    if (typeOf(v).getRank() < 1 || typeOf(v).getDimSize(0) != batch) {
      ctx.error() << "at opset 8 every state and scan input has the batch "
                  << "dimension first, of one size; got " << typeOf(v);
      return failure();
    }
  SmallVector<SmallVector<Value>> perOutput(ctx.numOutputs());
  for (int64_t b = 0; b < batch; ++b) {
    auto entry = [&](Value v) {
      SmallVector<int64_t> shape(typeOf(v).getShape().drop_front());
      return ctx.reshape(ctx.sliceAlong(v, 0, b, b + 1), shape);
    };
    SmallVector<Value> s, in;
    for (Value v : states)
      s.push_back(entry(v));
    for (Value v : inputs)
      in.push_back(entry(v));
    FailureOr<SmallVector<Value>> r = scanOnce(
        ctx, s, in, ctx.numOutputs(), "[batch " + std::to_string(b) + "]");
    if (failed(r))
      return failure();
    for (auto [i, v] : llvm::enumerate(*r))
      perOutput[i].push_back(v);
  }
  for (auto [i, parts] : llvm::enumerate(perOutput)) {
    FailureOr<Value> v = stack(ctx, parts, 0, "output #" + std::to_string(i));
    if (failed(v))
      return failure();
    ctx.setOutput(i, *v);
  }
  return success();
}

/// SequenceMap: the body once per position of the input sequence, with the
/// other sequences at the same position and the tensors as they are.
LogicalResult sequenceMap(NodeContext &ctx) {
  const Sequence *first = ctx.sequenceInput(0);
  if (!first) {
    ctx.error() << "input #0 must be a sequence";
    return failure();
  }
  size_t length = first->size();
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (const Sequence *s = ctx.sequenceInput(i); s && s->size() != length) {
      ctx.error() << "sequence input #" << i << " has " << s->size()
                  << " tensors, input #0 " << length;
      return failure();
    }
  SmallVector<Sequence> outs(ctx.numOutputs());
  for (size_t p = 0; p < length; ++p) {
    SmallVector<GraphValue> in;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      const Sequence *s = ctx.sequenceInput(i);
      in.push_back(tensorValue(s ? (*s)[p] : ctx.input(i)));
    }
    FailureOr<SmallVector<GraphValue>> r =
        ctx.importBody("body", in, "[" + std::to_string(p) + "]");
    if (failed(r))
      return failure();
    if (r->size() != ctx.numOutputs() ||
        llvm::any_of(*r, [](const GraphValue &g) { return g.sequence; })) {
      ctx.error() << "the body must give " << ctx.numOutputs() << " tensors";
      return failure();
    }
    for (auto [k, v] : llvm::enumerate(*r))
      outs[k].push_back(v.tensor);
  }
  for (auto [k, s] : llvm::enumerate(outs))
    ctx.setSequenceOutput(k, s);
  return success();
}

} // namespace

void mlir::ober::onnx_import::registerControlFlowHandlers(HandlerMap &m) {
  m["If"] = ifOp;
  m["Loop"] = loop;
  m["Scan"] = scan;
  m["SequenceMap"] = sequenceMap;
}
