//===- ONNXImporter.cpp - ONNX models to ober IR --------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/ONNX/ONNXImporter.h"

#include "ImportContext.h"
#include "Schema.h"
#include "TensorProto.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Importers/ImportLimits.h"
#include "ober/Reference/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

namespace {
/// Constant results above this many elements are not folded.
constexpr int64_t kMaxFoldedElements = 1 << 20;
constexpr int64_t kMinOpset = 1, kMaxOpset = 21;
} // namespace

RankedTensorType mlir::ober::onnx_import::typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

const HandlerMap &mlir::ober::onnx_import::handlers() {
  static const HandlerMap map = [] {
    HandlerMap m;
    registerElementwiseHandlers(m);
    registerNNHandlers(m);
    registerReductionHandlers(m);
    registerShapeHandlers(m);
    registerResizeHandlers(m);
    registerRecurrentHandlers(m);
    registerIndexingHandlers(m);
    registerSignalHandlers(m);
    registerEinsumHandlers(m);
    registerControlFlowHandlers(m);
    return m;
  }();
  return map;
}

Handler mlir::ober::onnx_import::handlerFor(const onnx::NodeProto &node) {
  if (isDefaultDomain(node.domain()))
    return handlers().lookup(node.op_type());
  if (node.domain() != kTrainingDomain)
    return nullptr;
  static const HandlerMap training = [] {
    HandlerMap m;
    registerOptimizerHandlers(m);
    m["Gradient"] = importGradient;
    return m;
  }();
  return training.lookup(node.op_type());
}

namespace mlir::ober::onnx_import {

/// Imports one ONNX graph into one function.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, const onnx::ModelProto &model,
                StringRef name, StringRef baseDir,
                const ONNXImportOptions &options)
      : context(context), builder(context), model(model), name(name),
        baseDir(baseDir), options(options) {}

  OwningOpRef<ModuleOp> run();
  void warnAboutUnknownDims(const onnx::GraphProto &graph);

  MLIRContext *context;
  OpBuilder builder;
  const onnx::ModelProto &model;
  std::string name, baseDir;
  const ONNXImportOptions &options;

  llvm::StringMap<Value> values;
  std::map<std::string, Sequence> sequences;
  std::set<std::string> poisoned;
  /// Initializers that became parameters, for constant lookups.
  std::map<std::string, const onnx::TensorProto *> paramProtos;
  llvm::DenseMap<Value, size_t> knownInputArgs;

  Location fileLoc() {
    return FileLineColLoc::get(builder.getStringAttr(name), 0, 0);
  }

  /// Imports `graph` (a node's body) with its inputs bound to `inputs`, in
  /// the scope of the values defined so far; returns its outputs. Names the
  /// body defines are forgotten afterwards.
  FailureOr<SmallVector<GraphValue>>
  importSubgraph(const onnx::GraphProto &graph, ArrayRef<GraphValue> inputs,
                 int64_t opset, const std::string &label);

private:
  FailureOr<int64_t> defaultOpset();
  LogicalResult checkSupported(int64_t opset);
  FailureOr<Type> valueInfoType(const onnx::ValueInfoProto &info);
  LogicalResult importNode(const onnx::NodeProto &node, int index,
                           int64_t opset);

  /// What labels of nodes in a body start with ("Loop #3/body/").
  std::string labelPrefix;
  /// Nodes converted so far, each unrolled iteration's again.
  int64_t importedNodes = 0;
};

} // namespace mlir::ober::onnx_import

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
                         int64_t opset, Location loc, std::string label)
    : node(node), opset(opset), b(graph.builder), loc(loc),
      label(std::move(label)), graph(graph) {}

Value NodeContext::valueNamed(StringRef name) {
  return graph.values.lookup(name);
}

Value NodeContext::input(unsigned i) {
  return hasInput(i) ? graph.values.lookup(node.input(i)) : Value();
}

RankedTensorType NodeContext::inputType(unsigned i) {
  return typeOf(input(i));
}

const Sequence *NodeContext::sequenceInput(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  auto it = graph.sequences.find(node.input(i));
  return it == graph.sequences.end() ? nullptr : &it->second;
}

/// The value of `v` if it follows from constants and known inputs alone,
/// evaluated on the reference interpreter.
static std::optional<reference::Tensor>
knownValue(GraphImporter &graph, Value v, int depth = 0) {
  if (auto c = v.getDefiningOp<ConstantOp>())
    return reference::Tensor::fromAttr(c.getValue());
  auto known = graph.knownInputArgs.find(v);
  if (known != graph.knownInputArgs.end()) {
    const reference::Tensor &t = graph.options.knownInputs.at(known->second);
    if (t.getElementType() == typeOf(v).getElementType() &&
        t.getShape() == typeOf(v).getShape())
      return t;
    return std::nullopt;
  }
  Operation *op = v.getDefiningOp();
  constexpr int kMaxDepth = 32;
  if (!op || depth > kMaxDepth || !reference::canEvaluate(op))
    return std::nullopt;
  for (Type t : op->getResultTypes()) {
    auto ranked = llvm::cast<RankedTensorType>(t);
    if (!ranked.hasStaticShape() || ranked.getNumElements() > kMaxFoldedElements)
      return std::nullopt;
  }
  SmallVector<reference::Tensor> operands, results;
  for (Value operand : op->getOperands()) {
    std::optional<reference::Tensor> t = knownValue(graph, operand, depth + 1);
    if (!t)
      return std::nullopt;
    operands.push_back(std::move(*t));
  }
  ScopedDiagnosticHandler silence(op->getContext(),
                                  [](Diagnostic &) { return success(); });
  if (failed(reference::evaluate(op, operands, results)))
    return std::nullopt;
  return results[llvm::cast<OpResult>(v).getResultNumber()];
}

std::optional<reference::Tensor> NodeContext::valueOf(Value v) {
  return knownValue(graph, v);
}

FailureOr<SmallVector<GraphValue>>
NodeContext::importBody(StringRef attrName, ArrayRef<GraphValue> inputs,
                        StringRef tag) {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a || !a->has_g()) {
    error() << "attribute '" << attrName << "' (a graph) is missing";
    return failure();
  }
  std::string name = label + "/" + attrName.str() + tag.str();
  return graph.importSubgraph(a->g(), inputs, opset, name);
}

std::optional<reference::Tensor> NodeContext::constant(unsigned i) {
  Value v = input(i);
  if (!v)
    return std::nullopt;
  if (std::optional<reference::Tensor> t = knownValue(graph, v))
    return t;
  auto param = graph.paramProtos.find(node.input(i));
  if (param != graph.paramProtos.end()) {
    std::string err;
    return decodeTensor(b.getContext(), *param->second, graph.baseDir, err);
  }
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  std::optional<reference::Tensor> t = constant(i);
  if (!t) {
    error() << what << " (input #" << i << " '" << node.input(i)
            << "') must be known at import time (an initializer, a Constant "
               "or a value computed from them); ober compiles static shapes";
    return failure();
  }
  SmallVector<int64_t> out;
  for (int64_t k = 0; k < t->getNumElements(); ++k)
    out.push_back(t->getInt(k));
  return out;
}

FailureOr<int64_t> NodeContext::constantInt(unsigned i, StringRef what) {
  FailureOr<SmallVector<int64_t>> v = constantInts(i, what);
  if (failed(v))
    return failure();
  if (v->size() != 1) {
    error() << what << " must hold one value, got " << v->size();
    return failure();
  }
  return v->front();
}

FailureOr<double> NodeContext::constantFloat(unsigned i, StringRef what) {
  std::optional<reference::Tensor> t = constant(i);
  if (!t) {
    error() << what << " (input #" << i << " '" << node.input(i)
            << "') must be known at import time (an initializer, a Constant "
               "or a value computed from them)";
    return failure();
  }
  if (t->getNumElements() != 1) {
    error() << what << " must hold one value, got " << t->getNumElements();
    return failure();
  }
  return t->getFloat(0);
}

FailureOr<SmallVector<int64_t>> NodeContext::axesOrAll(int64_t rank) {
  SmallVector<int64_t> axes = getInts("axes");
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (failed(normalizeAxes(axes, rank)))
    return failure();
  return axes;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::getInt(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

double NodeContext::getFloat(StringRef name, double dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeContext::getString(StringRef name, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> NodeContext::getInts(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? SmallVector<int64_t>(a->ints().begin(), a->ints().end())
           : SmallVector<int64_t>();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::intsFromInputOrAttr(unsigned i, StringRef name) {
  if (hasInput(i)) {
    FailureOr<SmallVector<int64_t>> v = constantInts(i, name);
    if (failed(v))
      return failure();
    return std::optional<SmallVector<int64_t>>(*v);
  }
  if (hasAttr(name))
    return std::optional<SmallVector<int64_t>>(getInts(name));
  return std::optional<SmallVector<int64_t>>();
}

void NodeContext::setOutput(unsigned i, Value v) {
  if (wantsOutput(i))
    graph.values[node.output(i)] = v;
}

void NodeContext::setSequenceOutput(unsigned i, Sequence values) {
  if (wantsOutput(i))
    graph.sequences[node.output(i)] = std::move(values);
}

InFlightDiagnostic NodeContext::error() {
  InFlightDiagnostic diag = emitError(loc);
  diag << "ONNX node '" << label << "' (" << node.op_type() << ", opset "
       << opset << "): ";
  return diag;
}

LogicalResult NodeContext::inferResultTypes(Operation *op) {
  if (failed(inferResultTypesInPlace(op))) {
    failedInference = true;
    return failure();
  }
  return success();
}

SmallVector<Value> NodeContext::foldResults(Operation *op) {
  SmallVector<Value> results(op->getResults());
  bool allConstant = llvm::all_of(op->getOperands(), [](Value v) {
    return v.getDefiningOp<ConstantOp>() != nullptr;
  });
  if (!allConstant || !reference::canEvaluate(op) || isa<ConstantOp>(op))
    return results;
  for (Type t : op->getResultTypes()) {
    auto ranked = llvm::cast<RankedTensorType>(t);
    if (!ranked.hasStaticShape() || ranked.getNumElements() > kMaxFoldedElements)
      return results;
  }
  SmallVector<reference::Tensor> operands, outs;
  for (Value v : op->getOperands())
    operands.push_back(reference::Tensor::fromAttr(
        v.getDefiningOp<ConstantOp>().getValue()));
  // Run-time errors (an index out of range) stay for run time.
  ScopedDiagnosticHandler silence(op->getContext(),
                                  [](Diagnostic &) { return success(); });
  if (failed(reference::evaluate(op, operands, outs)))
    return results;
  SmallVector<Value> folded;
  for (auto [result, tensor] : llvm::zip(op->getResults(), outs))
    folded.push_back(ConstantOp::create(
        b, loc, tensor.toAttr(llvm::cast<RankedTensorType>(result.getType()))));
  op->erase();
  return folded;
}

Value NodeContext::constantTensor(const reference::Tensor &t) {
  return ConstantOp::create(
      b, loc,
      t.toAttr(RankedTensorType::get(t.getShape(), t.getElementType())));
}

Value NodeContext::constantInts(ArrayRef<int64_t> values, Type elementType) {
  reference::Tensor t(elementType, {static_cast<int64_t>(values.size())});
  for (auto [i, v] : llvm::enumerate(values))
    t.setInt(i, v);
  return constantTensor(t);
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              StringRef what) {
  if (axis < -rank || axis >= rank) {
    error() << what << " " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

LogicalResult NodeContext::normalizeAxes(MutableArrayRef<int64_t> axes,
                                         int64_t rank, bool allowRepeats) {
  for (auto [i, a] : llvm::enumerate(axes)) {
    FailureOr<int64_t> n = normalizeAxis(a, rank, "axes entry");
    if (failed(n))
      return failure();
    a = *n;
    if (!allowRepeats && llvm::is_contained(axes.take_front(i), a)) {
      error() << "axes entry " << a << " is repeated";
      return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

FailureOr<int64_t> GraphImporter::defaultOpset() {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (isDefaultDomain(o.domain())) {
      if (o.version() < kMinOpset || o.version() > kMaxOpset) {
        emitError(fileLoc()) << "ONNX opset " << o.version()
                             << " is not supported (supported: " << kMinOpset
                             << " to " << kMaxOpset << ")";
        return failure();
      }
      return o.version();
    }
  // A graph of other domains' ops alone (the training preview's optimizers)
  // needs no default-domain opset.
  if (llvm::none_of(model.graph().node(), [](const onnx::NodeProto &node) {
        return isDefaultDomain(node.domain());
      }))
    return kMaxOpset;
  emitError(fileLoc()) << "the model imports no opset of the default ONNX "
                          "domain";
  return failure();
}

/// What the exporter did to parameters that changes what training trains,
/// by parameter: identical initializers merged into one (the others are
/// `Identity` nodes of it, as torch.onnx.export writes them), and values
/// folded from parameters (named `onnx::<Op>_<n>` by torch.onnx.export).
static std::map<std::string, std::string>
exportNotes(const onnx::GraphProto &graph,
            const std::map<std::string, const onnx::TensorProto *> &params) {
  std::map<std::string, std::vector<std::string>> aliases;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Identity" && node.input_size() == 1 &&
        node.output_size() == 1 && params.count(node.input(0)) &&
        !StringRef(node.output(0)).starts_with("onnx::"))
      aliases[node.input(0)].push_back(node.output(0));
  std::map<std::string, std::string> notes;
  for (const auto &[name, others] : aliases)
    notes[name] = "the export merged identical initializers: it also stands "
                  "for '" + llvm::join(others, "', '") + "'";
  for (const auto &entry : params)
    if (StringRef(entry.first).starts_with("onnx::") && !notes.count(entry.first))
      notes[entry.first] = "a value the export computed from parameters "
                           "(constant folding), not a parameter of the module";
  return notes;
}

/// How diagnostics name a node: its name, or its op type and position.
static std::string nodeLabel(const onnx::NodeProto &node, size_t index) {
  return node.name().empty() ? node.op_type() + " #" + std::to_string(index)
                             : node.name();
}

LogicalResult GraphImporter::checkSupported(int64_t opset) {
  SmallVector<std::string> unsupported;
  for (auto [index, node] : llvm::enumerate(model.graph().node())) {
    bool defaultDomain = isDefaultDomain(node.domain());
    if (handlerFor(node))
      continue;
    std::string entry = "'" + nodeLabel(node, index) + "' (" +
                        (defaultDomain ? "" : node.domain() + ".") +
                        node.op_type() + ", opset " + std::to_string(opset) +
                        ")";
    unsupported.push_back(entry);
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << unsupported.size() << " unsupported ONNX node(s):";
  for (const std::string &u : unsupported)
    diag << "\n  " << u;
  diag << "\n(supported ops are listed in docs/onnx-coverage.md)";
  return failure();
}

FailureOr<Type> GraphImporter::valueInfoType(const onnx::ValueInfoProto &info) {
  const onnx::TypeProto &type = info.type();
  bool sequence = type.has_sequence_type() &&
                  type.sequence_type().elem_type().has_tensor_type();
  if (!type.has_tensor_type() && !sequence) {
    emitError(fileLoc()) << "graph input '" << info.name()
                         << "' is not a tensor or a sequence of tensors (maps "
                            "and optional inputs are not supported)";
    return failure();
  }
  const onnx::TypeProto::Tensor &t =
      sequence ? type.sequence_type().elem_type().tensor_type()
               : type.tensor_type();
  Type element = elementTypeOf(context, t.elem_type());
  if (!element) {
    emitError(fileLoc()) << "graph input '" << info.name() << "' has element "
                         << "type " << dataTypeName(t.elem_type())
                         << " (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, "
                            "BOOL, INT8, INT32, INT64, STRING)";
    return failure();
  }
  if (!t.has_shape()) // the caller takes the shape of a known value
    return Type(UnrankedTensorType::get(element));
  SmallVector<int64_t> shape;
  for (const auto &dim : t.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        emitError(fileLoc()) << "graph input '" << info.name()
                             << "' has negative size " << dim.dim_value();
        return failure();
      }
      shape.push_back(dim.dim_value());
      continue;
    }
    auto pinned = options.dimValues.find(dim.dim_param());
    shape.push_back(dim.has_dim_param() && pinned != options.dimValues.end()
                        ? pinned->second
                        : ShapedType::kDynamic);
  }
  return RankedTensorType::get(shape, element);
}

FailureOr<SmallVector<GraphValue>>
GraphImporter::importSubgraph(const onnx::GraphProto &graph,
                              ArrayRef<GraphValue> inputs, int64_t opset,
                              const std::string &label) {
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    emitError(NameLoc::get(builder.getStringAttr(label), fileLoc()))
        << "ONNX graph '" << label << "' takes " << graph.input_size()
        << " inputs; the node gives it " << inputs.size();
    return failure();
  }
  // The body sees the enclosing scope; what it defines ends with it.
  llvm::StringMap<Value> outerValues = values;
  std::map<std::string, Sequence> outerSequences = sequences;
  std::set<std::string> outerPoisoned = poisoned;
  std::string outerPrefix = labelPrefix;
  llvm::scope_exit restore([&] {
    values = std::move(outerValues);
    sequences = std::move(outerSequences);
    poisoned = std::move(outerPoisoned);
    labelPrefix = outerPrefix;
  });
  labelPrefix = label + "/";
  Location loc = NameLoc::get(builder.getStringAttr(label), fileLoc());
  for (auto [info, in] : llvm::zip(graph.input(), inputs)) {
    values.erase(info.name());
    sequences.erase(info.name());
    if (in.sequence)
      sequences[info.name()] = *in.sequence;
    else
      values[info.name()] = in.tensor;
  }
  for (const onnx::TensorProto &t : graph.initializer()) {
    std::string error;
    std::optional<reference::Tensor> value =
        decodeTensor(context, t, baseDir, error);
    if (!value) {
      emitError(loc) << "initializer '" << t.name() << "' of graph '" << label
                     << "': " << error;
      return failure();
    }
    values[t.name()] = ConstantOp::create(
        builder, loc,
        value->toAttr(RankedTensorType::get(value->getShape(),
                                            value->getElementType())));
  }
  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index, opset)))
      return failure();
  SmallVector<GraphValue> outputs;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    auto seq = sequences.find(out.name());
    if (seq != sequences.end()) {
      outputs.push_back({Value(), seq->second});
      continue;
    }
    Value v = values.lookup(out.name());
    if (!v) {
      emitError(loc) << "output '" << out.name() << "' of graph '" << label
                     << "' is not defined";
      return failure();
    }
    outputs.push_back({v, std::nullopt});
  }
  return outputs;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node, int index,
                                        int64_t opset) {
  std::string label = labelPrefix + nodeLabel(node, index);
  Location loc = NameLoc::get(builder.getStringAttr(label), fileLoc());
  NodeContext ctx(*this, node, opset, loc, label);
  if (++importedNodes > kMaxImportedNodes) {
    ctx.error() << "the model unrolls to more than " << kMaxImportedNodes
                << " nodes (control flow is unrolled at import time)";
    return failure();
  }
  std::string arity = checkArity(node, opset);
  if (!arity.empty()) {
    ctx.error() << arity;
    return failure();
  }
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &in = node.input(i);
    if (in.empty())
      continue;
    if (poisoned.count(in))
      return failure(); // reported where it failed
    if (!values.count(in) && !sequences.count(in)) {
      ctx.error() << "input '" << in << "' is not defined before the node";
      return failure();
    }
    // A sequence where the op takes a tensor, or the other way round.
    int takes = inputTakesSequence(node, opset, i);
    bool isSequence = sequences.count(in);
    if (takes >= 0 && takes != isSequence) {
      ctx.error() << "input #" << i << " '" << in << "' is a "
                  << (isSequence ? "sequence" : "tensor") << "; "
                  << node.op_type() << " takes a "
                  << (takes ? "sequence" : "tensor") << " there";
      return failure();
    }
    // An element type outside the op's type constraint.
    if (isSequence)
      continue;
    Type element = typeOf(values.lookup(in)).getElementType();
    std::vector<int> dataTypes;
    for (int d = 1; d <= onnx::TensorProto_DataType_DataType_MAX; ++d)
      if (onnx::TensorProto_DataType_IsValid(d) &&
          elementTypeOf(context, d) == element)
        dataTypes.push_back(d);
    std::string allowed;
    if (!inputTakesType(node, opset, i, dataTypes, allowed)) {
      ctx.error() << "input #" << i << " '" << in << "' has element type "
                  << element << "; " << node.op_type() << " takes " << allowed
                  << " there";
      return failure();
    }
  }
  Handler handler = handlerFor(node);
  if (!handler) {
    ctx.error() << "op " << (node.domain().empty() ? "" : node.domain() + ".")
                << node.op_type() << " is not supported (supported ops are "
                << "listed in docs/onnx-coverage.md)";
    return failure();
  }
  if (failed(handler(ctx)) || ctx.hasFailed())
    return failure();
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !values.count(node.output(i)) &&
        !sequences.count(node.output(i))) {
      ctx.error() << "output #" << i << " '" << node.output(i)
                  << "' is not supported";
      return failure();
    }
  return success();
}

/// Warns about --onnx-dim names that no graph input's shape has (a typo
/// leaves the dimension open), listing those it has.
void GraphImporter::warnAboutUnknownDims(const onnx::GraphProto &graph) {
  std::set<std::string> symbolic;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    // A sequence input's tensors have the dimensions of its elements.
    const onnx::TypeProto &t = in.type().has_sequence_type()
                                   ? in.type().sequence_type().elem_type()
                                   : in.type();
    if (t.has_tensor_type() && t.tensor_type().has_shape())
      for (const auto &dim : t.tensor_type().shape().dim())
        if (dim.has_dim_param())
          symbolic.insert(dim.dim_param());
  }
  for (const auto &[name, size] : options.dimValues) {
    if (symbolic.count(name))
      continue;
    std::string known;
    for (const std::string &s : symbolic)
      known += (known.empty() ? "" : ", ") + s;
    emitWarning(fileLoc()) << "--onnx-dim=" << name << "=" << size
                           << ": no graph input has a dimension '" << name
                           << "' ("
                           << (known.empty() ? "it has no symbolic ones"
                                             : "its symbolic ones: " + known)
                           << ")";
  }
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  FailureOr<int64_t> opset = defaultOpset();
  if (failed(opset) || failed(checkSupported(*opset)))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  builder.setInsertionPointToEnd(module->getBody());

  // Data inputs: graph inputs that are not initializers.
  std::set<std::string> initializerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  // Sequence inputs: their name and their arguments [first, first + n).
  SmallVector<std::tuple<std::string, unsigned, unsigned>> sequenceArgs;
  warnAboutUnknownDims(graph);
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializerNames.count(in.name()))
      continue;
    FailureOr<Type> type = valueInfoType(in);
    if (failed(type))
      return nullptr;
    int64_t count = 1;
    if (in.type().has_sequence_type()) {
      auto length = options.sequenceLengths.find(in.name());
      if (length == options.sequenceLengths.end()) {
        emitError(fileLoc()) << "graph input '" << in.name() << "' is a "
                             << "sequence: give its length with "
                             << "--onnx-sequence-length=" << in.name()
                             << "=N (its tensors are then N inputs)";
        return nullptr;
      }
      count = length->second;
      sequenceArgs.push_back({in.name(), argTypes.size(), count});
    }
    for (int64_t k = 0; k < count; ++k) {
      // A known value pins the input's dynamic sizes (or gives the shape
      // the model leaves out).
      Type argType = *type;
      size_t index = argTypes.size();
      auto element = cast<TensorType>(*type).getElementType();
      if (index < options.knownInputs.size()) {
        ArrayRef<int64_t> known = options.knownInputs[index].getShape();
        auto ranked = dyn_cast<RankedTensorType>(*type);
        if (!ranked ||
            (known.size() == static_cast<size_t>(ranked.getRank()) &&
             llvm::all_of(llvm::zip(ranked.getShape(), known), [](auto p) {
               return ShapedType::isDynamic(std::get<0>(p)) ||
                      std::get<0>(p) == std::get<1>(p);
             })))
          argType = RankedTensorType::get(known, element);
      }
      if (!isa<RankedTensorType>(argType)) {
        emitError(fileLoc()) << "graph input '" << in.name()
                             << "' has no shape: its rank must be known";
        return nullptr;
      }
      argTypes.push_back(argType);
      argNames.push_back(in.type().has_sequence_type()
                             ? in.name() + "[" + std::to_string(k) + "]"
                             : in.name());
    }
  }
  unsigned numData = argTypes.size();

  // Initializers: float tensors with more than one element are parameters;
  // the rest are constants.
  SmallVector<const onnx::TensorProto *> params, constants;
  for (const onnx::TensorProto &t : graph.initializer()) {
    Type element = elementTypeOf(context, t.data_type());
    if (!element) {
      emitError(fileLoc()) << "initializer '" << t.name() << "' has type "
                           << dataTypeName(t.data_type())
                           << " (supported: FLOAT, DOUBLE, FLOAT16, "
                              "BFLOAT16, BOOL, INT8, INT32, INT64)";
      return nullptr;
    }
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    std::optional<int64_t> count =
        llvm::all_of(dims, [](int64_t d) { return d >= 0; })
            ? checkedNumElements(dims)
            : std::nullopt;
    if (!count) {
      emitError(fileLoc()) << "initializer '" << t.name() << "' has shape ["
                           << llvm::make_range(dims.begin(), dims.end())
                           << "]: negative, or more elements than 64 bits "
                              "count";
      return nullptr;
    }
    bool isParam = isa<FloatType>(element) && *count > 1;
    (isParam ? params : constants).push_back(&t);
  }
  for (const onnx::TensorProto *t : params) {
    std::string error;
    if (!validateTensorData(*t, baseDir, error)) {
      emitError(fileLoc()) << "initializer '" << t->name() << "': " << error;
      return nullptr;
    }
    SmallVector<int64_t> shape;
    for (int64_t d : t->dims()) {
      if (d < 0) {
        emitError(fileLoc()) << "initializer '" << t->name()
                             << "' has negative size " << d;
        return nullptr;
      }
      shape.push_back(d);
    }
    argTypes.push_back(RankedTensorType::get(
        shape, elementTypeOf(context, t->data_type())));
    argNames.push_back(t->name());
    paramProtos[t->name()] = t;
  }

  auto func = func::FuncOp::create(builder, fileLoc(), options.functionName,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  std::map<std::string, std::string> notes = exportNotes(graph, paramProtos);
  for (unsigned i = numData; i < argTypes.size(); ++i) {
    func.setArgAttr(i, OberDialect::kParamAttrName,
                    builder.getStringAttr(argNames[i]));
    if (auto note = notes.find(argNames[i]); note != notes.end())
      func.setArgAttr(i, OberDialect::kExportNoteAttrName,
                      builder.getStringAttr(note->second));
  }
  for (unsigned i = 0; i < argTypes.size(); ++i) {
    values[argNames[i]] = body->getArgument(i);
    if (i < numData && i < options.knownInputs.size())
      knownInputArgs[body->getArgument(i)] = i;
  }
  for (const auto &[name, first, count] : sequenceArgs) {
    Sequence &seq = sequences[name];
    for (unsigned k = 0; k < count; ++k) {
      values.erase(argNames[first + k]);
      seq.push_back(body->getArgument(first + k));
    }
  }
  builder.setInsertionPointToEnd(body);

  for (const onnx::TensorProto *t : constants) {
    std::string error;
    std::optional<reference::Tensor> value =
        decodeTensor(context, *t, baseDir, error);
    if (!value) {
      emitError(fileLoc()) << "initializer '" << t->name() << "': " << error;
      return nullptr;
    }
    values[t->name()] = ConstantOp::create(
        builder, fileLoc(),
        value->toAttr(RankedTensorType::get(value->getShape(),
                                            value->getElementType())));
  }

  bool ok = true;
  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index, *opset))) {
      ok = false;
      for (const std::string &out : node.output())
        poisoned.insert(out);
    }
  if (!ok)
    return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    // A sequence output: its tensors, in order.
    if (auto seq = sequences.find(out.name()); seq != sequences.end()) {
      results.append(seq->second.begin(), seq->second.end());
      continue;
    }
    Value v = values.lookup(out.name());
    if (!v) {
      emitError(fileLoc()) << "graph output '" << out.name()
                           << "' is not a tensor produced by the graph";
      return nullptr;
    }
    results.push_back(v);
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  if (!params.empty())
    (*module)->setAttr(OberDialect::kWeightsAttrName,
                       builder.getStringAttr(llvm::sys::path::filename(name)));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// Parses a binary model, or one in ONNX's text format (which starts with
/// its `<...>` header, a byte no binary model starts with); false with the
/// reason in `error`.
static bool parseModel(StringRef bytes, onnx::ModelProto &model,
                       std::string &error) {
  if (bytes.ltrim().starts_with("<")) {
    if (bytes.contains('\0')) {
      error = "not a valid ONNX text model (it holds a NUL byte)";
      return false;
    }
    if (!parseTextModel(bytes.str(), model, error)) {
      error = "not a valid ONNX text model: " + error;
      return false;
    }
  } else if (bytes.size() > static_cast<size_t>(INT_MAX) ||
             !model.ParseFromArray(bytes.data(),
                                   static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX model (protobuf parsing failed)";
    return false;
  }
  // Any bytes that parse as nothing (an empty file) make an empty model.
  if (!model.has_graph() || model.graph().output_size() == 0) {
    error = "not an ONNX model: it has no graph with outputs";
    return false;
  }
  return true;
}

OwningOpRef<ModuleOp> mlir::ober::importONNXBytes(
    StringRef bytes, StringRef name, MLIRContext &context,
    const ONNXImportOptions &options, StringRef baseDir) {
  context.loadDialect<OberDialect, func::FuncDialect>();
  onnx::ModelProto model;
  std::string error;
  if (!parseModel(bytes, model, error)) {
    emitError(FileLineColLoc::get(&context, name, 0, 0)) << error;
    return nullptr;
  }
  GraphImporter importer(&context, model, name, baseDir, options);
  return importer.run();
}

bool mlir::ober::isONNXPath(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".onnx" || ext == ".onnxtxt";
}

/// The folder holding `path` ("." for a bare file name).
static std::string folderOf(StringRef path) {
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  return dir.empty() ? "." : dir.str().str();
}

OwningOpRef<ModuleOp> mlir::ober::importONNXFile(
    StringRef path, MLIRContext &context, const ONNXImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "cannot read: " << buffer.getError().message();
    return nullptr;
  }
  return importONNXBytes((*buffer)->getBuffer(), path, context, options,
                         folderOf(path));
}

bool mlir::ober::readONNXInitializers(
    StringRef path, const std::map<std::string, Type> &wanted,
    std::map<std::string, reference::Tensor> &out, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer) {
    error = path.str() + ": cannot read: " + buffer.getError().message();
    return false;
  }
  onnx::ModelProto model;
  if (!parseModel((*buffer)->getBuffer(), model, error)) {
    error = path.str() + ": " + error;
    return false;
  }
  std::string dir = folderOf(path);
  MLIRContext *context = wanted.empty() ? nullptr
                                        : wanted.begin()->second.getContext();
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    auto it = wanted.find(t.name());
    if (it == wanted.end())
      continue;
    std::string err;
    std::optional<reference::Tensor> value = decodeTensor(context, t, dir, err);
    if (!value) {
      error = path.str() + ": initializer '" + t.name() + "': " + err;
      return false;
    }
    out[t.name()] = std::move(*value);
  }
  for (const auto &[name, type] : wanted)
    if (!out.count(name)) {
      error = path.str() + " has no initializer '" + name + "'";
      return false;
    }
  return true;
}
