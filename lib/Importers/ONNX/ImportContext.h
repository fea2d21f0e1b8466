//===- ImportContext.h - state shared by the ONNX op handlers ---*- C++ -*-===//
//
// Part of Ober-Train. Internal to the ONNX importer. One handler per ONNX op
// type turns a NodeProto into ober ops through a NodeContext.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_IMPORTERS_ONNX_IMPORTCONTEXT_H
#define OBER_LIB_IMPORTERS_ONNX_IMPORTCONTEXT_H

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Dialect/Ober/IR/OberShapeBuilder.h"
#include "ober/Reference/Tensor.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <optional>

namespace mlir::ober::onnx_import {

class GraphImporter;

/// A sequence value (ONNX Sequence types): resolved at import time into the
/// list of its tensors.
using Sequence = SmallVector<Value>;

/// A value of a graph: a tensor, or a sequence (resolved at import time).
struct GraphValue {
  Value tensor;
  std::optional<Sequence> sequence;
};

class NodeContext : public OberShapeBuilder<NodeContext> {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node, int64_t opset,
              Location loc, std::string label);

  const onnx::NodeProto &node;
  const int64_t opset;
  OpBuilder &b;
  const Location loc;
  /// The node's name, or its op type and position when it has none.
  const std::string label;

  //===--- inputs --------------------------------------------------------===//
  unsigned numInputs() const { return node.input_size(); }
  /// True if input `i` is present (optional inputs may be missing or "").
  bool hasInput(unsigned i) const {
    return i < static_cast<unsigned>(node.input_size()) && !node.input(i).empty();
  }
  Value input(unsigned i);
  /// The inputs that are present (optional ones left out), in order.
  SmallVector<Value> presentInputs() {
    SmallVector<Value> out;
    for (unsigned i = 0; i < numInputs(); ++i)
      if (hasInput(i))
        out.push_back(input(i));
    return out;
  }
  /// The value an earlier node or input named `name` (null if none).
  Value valueNamed(StringRef name);
  RankedTensorType inputType(unsigned i);
  const Sequence *sequenceInput(unsigned i);
  /// The value of input `i` if it is known at import time.
  std::optional<reference::Tensor> constant(unsigned i);
  /// The value of `v` if it is known at import time.
  std::optional<reference::Tensor> valueOf(Value v);
  /// Input `i` as one integer known at import time, or an error naming
  /// `what`.
  FailureOr<int64_t> constantInt(unsigned i, StringRef what);
  /// Input `i` as one number known at import time, or an error naming
  /// `what`.
  FailureOr<double> constantFloat(unsigned i, StringRef what);
  /// Input `i` as integers known at import time, or an error naming `what`.
  FailureOr<SmallVector<int64_t>> constantInts(unsigned i, StringRef what);

  //===--- attributes ----------------------------------------------------===//
  const onnx::AttributeProto *attr(StringRef name) const;
  bool hasAttr(StringRef name) const { return attr(name) != nullptr; }
  int64_t getInt(StringRef name, int64_t dflt) const;
  double getFloat(StringRef name, double dflt) const;
  std::string getString(StringRef name, StringRef dflt) const;
  SmallVector<int64_t> getInts(StringRef name) const;
  /// The `axes` attribute made non-negative, or every axis of a rank-`rank`
  /// value when it is absent (opset 18's Resize, CenterCropPad).
  FailureOr<SmallVector<int64_t>> axesOrAll(int64_t rank);
  /// Integers from input `i` (newer opsets) or attribute `name` (older
  /// ones); nullopt when neither is present.
  FailureOr<std::optional<SmallVector<int64_t>>>
  intsFromInputOrAttr(unsigned i, StringRef name);

  /// Imports the graph of attribute `attrName` (a body or branch) with its
  /// inputs bound to `inputs`; its outputs. `tag` tells repeated imports
  /// apart in diagnostics ("[3]" for a loop's fourth iteration).
  FailureOr<SmallVector<GraphValue>>
  importBody(StringRef attrName, ArrayRef<GraphValue> inputs,
             StringRef tag = "");

  //===--- outputs -------------------------------------------------------===//
  unsigned numOutputs() const { return node.output_size(); }
  bool wantsOutput(unsigned i) const {
    return i < static_cast<unsigned>(node.output_size()) &&
           !node.output(i).empty();
  }
  void setOutput(unsigned i, Value v);
  void setSequenceOutput(unsigned i, Sequence values);

  //===--- diagnostics ---------------------------------------------------===//
  /// An error prefixed with the node's name, op type and opset.
  InFlightDiagnostic error();

  //===--- building (results of constant operands fold) ------------------===//
  /// Creates a one-result op. Ops that infer their result type are built
  /// with a provisional type and inferred afterwards, so operands that do
  /// not fit are reported (and fail the node) instead of aborting.
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    bool opFailed = false;
    auto op =
        createInferred<OpTy>(b, loc, opFailed, std::forward<Args>(args)...);
    if (opFailed) {
      failedInference = true;
      return op->getResult(0);
    }
    return foldResults(op.getOperation()).front();
  }
  /// Creates an op with several results, given their types.
  template <typename OpTy, typename... Args>
  SmallVector<Value> createMulti(Args &&...args) {
    auto op = OpTy::create(b, loc, std::forward<Args>(args)...);
    if (op->template hasTrait<InferTypeOpInterface::Trait>() &&
        failed(inferResultTypes(op.getOperation())))
      return SmallVector<Value>(op->getResults());
    return foldResults(op.getOperation());
  }
  /// True once an op of this node failed type inference.
  bool hasFailed() const { return failedInference; }
  /// Replaces `op` by constants when all its operands are constants.
  SmallVector<Value> foldResults(Operation *op);

  Value constantTensor(const reference::Tensor &t);
  Value constantInts(ArrayRef<int64_t> values, Type elementType);
  /// A reduction over `axes` (any order) of the given ober reduce op.
  template <typename OpTy>
  Value reduce(Value v, ArrayRef<int64_t> axes, bool keepdims) {
    SmallVector<int64_t> sorted(axes);
    llvm::sort(sorted);
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    return create<OpTy>(v, b.getDenseI64ArrayAttr(sorted),
                        b.getBoolAttr(keepdims));
  }
  /// `axis` in [-rank, rank) made non-negative, or an error.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis");
  /// Every entry of an `axes` list made non-negative in place; an error for
  /// an entry out of range, or repeated unless `allowRepeats` (reductions
  /// treat a repeated axis as one).
  LogicalResult normalizeAxes(MutableArrayRef<int64_t> axes, int64_t rank,
                              bool allowRepeats = false);

private:
  /// Sets `op`'s result types from its InferTypeOpInterface; on failure the
  /// interface has reported why and the node fails.
  LogicalResult inferResultTypes(Operation *op);

  GraphImporter &graph;
  bool failedInference = false;
};

using Handler = LogicalResult (*)(NodeContext &);
using HandlerMap = llvm::StringMap<Handler>;

void registerElementwiseHandlers(HandlerMap &map);
void registerNNHandlers(HandlerMap &map);
void registerReductionHandlers(HandlerMap &map);
void registerShapeHandlers(HandlerMap &map);
void registerResizeHandlers(HandlerMap &map);
void registerRecurrentHandlers(HandlerMap &map);
void registerIndexingHandlers(HandlerMap &map);

void registerSignalHandlers(HandlerMap &map);
void registerEinsumHandlers(HandlerMap &map);
void registerControlFlowHandlers(HandlerMap &map);
/// ai.onnx.preview.training's optimizers (Adagrad, Adam, Momentum).
void registerOptimizerHandlers(HandlerMap &map);

/// The training preview domain: its optimizers, and Gradient (built with
/// ober's autodiff).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
LogicalResult importGradient(NodeContext &ctx);

/// All handlers of the default domain, by ONNX op type.
const HandlerMap &handlers();
/// The handler of `node`'s op in its domain; null when there is none.
Handler handlerFor(const onnx::NodeProto &node);

RankedTensorType typeOf(Value v);

} // namespace mlir::ober::onnx_import

#endif // OBER_LIB_IMPORTERS_ONNX_IMPORTCONTEXT_H
