//===- TorchScriptImporter.cpp - TorchScript modules to ober IR -----------===//
//
// Part of Ober-Train. Loads the module with libtorch, inlines its methods
// into one graph, and walks it: `prim::GetAttr` chains from `self` name
// parameters and buffers (their `state_dict` names), nodes whose inputs are
// all known are evaluated by libtorch (shape arithmetic, constant masks),
// and aten ops become ober ops (AtenOps.cpp). Parameters and float buffers
// become `ober.param` arguments whose values are written to a safetensors
// file.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/TorchScript/TorchScriptImporter.h"
#include "Importer.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Importers/ImportLimits.h"
#include "ober/Runtime/Weights.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::torchscript;

std::string mlir::ober::torchscript::sourceLine(TSNode *node) {
  try {
    // A saved module's code points back to the Python that generated it.
    torch::jit::SourceRange range = node->sourceRange();
    if (auto original = range.findSourceRangeThatGenerated())
      range = *original;
    if (auto where = range.file_line_col()) {
      auto [file, line, col] = *where;
      (void)col;
      return file + ":" + std::to_string(line);
    }
  } catch (...) {
  }
  return "";
}

void Importer::error(TSNode *node, const std::string &message) {
  std::string where = sourceLine(node);
  errors.push_back(std::string(node->kind().toQualString()) +
                   (where.empty() ? "" : " at " + where) + ": " + message);
}

Type Importer::elementType(c10::ScalarType type) {
  switch (type) {
  case c10::ScalarType::Float:
    return b.getF32Type();
  case c10::ScalarType::Double:
    return b.getF64Type();
  case c10::ScalarType::Half:
    return b.getF16Type();
  case c10::ScalarType::BFloat16:
    return b.getBF16Type();
  case c10::ScalarType::Long:
    return b.getI64Type();
  case c10::ScalarType::Int:
    return b.getI32Type();
  case c10::ScalarType::Bool:
    return b.getI1Type();
  default:
    return Type();
  }
}

RankedTensorType Importer::typeOf(const TSValue *v) {
  auto t = v->type()->cast<c10::TensorType>();
  if (!t)
    return nullptr;
  auto sizes = t->sizes().concrete_sizes();
  auto scalar = t->scalarType();
  if (!sizes || !scalar) {
    auto it = example.find(v);
    if (it == example.end() || !it->second.isTensor())
      return nullptr;
    const at::Tensor &e = it->second.toTensor();
    sizes = e.sizes().vec();
    scalar = e.scalar_type();
  }
  Type element = elementType(*scalar);
  if (!element)
    return nullptr;
  return RankedTensorType::get(*sizes, element);
}

Value Importer::constant(const c10::IValue &value, Type element) {
  at::Tensor t;
  if (value.isTensor())
    t = value.toTensor().contiguous();
  else if (value.isDouble())
    t = at::scalar_tensor(value.toDouble(), at::kDouble);
  else if (value.isInt())
    t = at::scalar_tensor(value.toInt(), at::kLong);
  else if (value.isBool())
    t = at::scalar_tensor(value.toBool(), at::kBool);
  else
    return Value();
  if (!element)
    element = elementType(t.scalar_type());
  if (!element)
    return Value();
  SmallVector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  auto type = RankedTensorType::get(shape, element);
  DenseElementsAttr attr;
  if (auto f = dyn_cast<FloatType>(element)) {
    at::Tensor d = t.to(at::kDouble).contiguous();
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < d.numel(); ++i) {
      APFloat x(d.data_ptr<double>()[i]);
      bool lost;
      x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(x);
    }
    attr = DenseElementsAttr::get(type, values);
  } else {
    at::Tensor l = t.to(at::kLong).contiguous();
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    for (int64_t i = 0; i < l.numel(); ++i)
      values.push_back(APInt(width, l.data_ptr<int64_t>()[i], true));
    attr = DenseElementsAttr::get(type, values);
  }
  return create<ConstantOp>(attr);
}

Value Importer::tensor(const TSValue *v) {
  if (auto it = tensors.find(v); it != tensors.end())
    return it->second;
  if (auto it = known.find(v); it != known.end()) {
    RankedTensorType type = typeOf(v);
    Value c = constant(it->second, type ? type.getElementType() : Type());
    if (c)
      tensors[v] = c;
    return c;
  }
  return Value();
}

int64_t Importer::integer(const TSValue *v) {
  auto it = known.find(v);
  if (it == known.end())
    return 0;
  if (it->second.isInt())
    return it->second.toInt();
  if (it->second.isBool())
    return it->second.toBool();
  if (it->second.isTensor())
    return it->second.toTensor().item<int64_t>();
  return 0;
}

double Importer::number(const TSValue *v) {
  auto it = known.find(v);
  if (it == known.end())
    return 0;
  if (it->second.isDouble())
    return it->second.toDouble();
  if (it->second.isInt())
    return static_cast<double>(it->second.toInt());
  if (it->second.isBool())
    return it->second.toBool();
  if (it->second.isTensor())
    return it->second.toTensor().item<double>();
  return 0;
}

std::vector<int64_t> Importer::integers(const TSValue *v) {
  auto it = known.find(v);
  if (it == known.end())
    return {};
  if (it->second.isIntList())
    return it->second.toIntVector();
  if (it->second.isInt())
    return {it->second.toInt()};
  return {};
}

namespace {
/// The graph of `forward` with every call inlined.
std::shared_ptr<torch::jit::Graph> forwardGraph(torch::jit::Module &m) {
  auto graph = m.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::LowerSimpleTuples(graph);
  torch::jit::EliminateDeadCode(graph);
  return graph;
}

/// Nodes evaluated by libtorch when their inputs are known: every aten and
/// prim op but control flow, calls, attributes and random ops.
bool evaluable(TSNode *n) {
  std::string kind = n->kind().toQualString();
  if (kind == "prim::If" || kind == "prim::Loop" || kind == "prim::GetAttr" ||
      kind == "prim::CallMethod" || kind == "prim::CallFunction")
    return false;
  return (kind.rfind("aten::", 0) == 0 || kind.rfind("prim::", 0) == 0) &&
         kind.find("dropout") == kind.npos && kind.find("rand") == kind.npos;
}

/// `v` with each of its tensors (also inside lists and tuples) replaced by
/// what `f` makes of it; nullopt when `f` makes nothing of one.
std::optional<c10::IValue>
mapTensors(const c10::IValue &v,
           const std::function<std::optional<at::Tensor>(const at::Tensor &)>
               &f) {
  if (v.isTensor()) {
    std::optional<at::Tensor> t = f(v.toTensor());
    return t ? std::optional<c10::IValue>(*t) : std::nullopt;
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor &t : v.toTensorVector()) {
      std::optional<at::Tensor> mapped = f(t);
      if (!mapped)
        return std::nullopt;
      list.push_back(*mapped);
    }
    return c10::IValue(list);
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const c10::IValue &item : v.toTupleRef().elements()) {
      std::optional<c10::IValue> mapped = mapTensors(item, f);
      if (!mapped)
        return std::nullopt;
      items.push_back(*mapped);
    }
    return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
  }
  return v;
}

/// `v` with its tensors as meta tensors: their types without their data.
c10::IValue toMeta(const c10::IValue &v) {
  return *mapTensors(v, [](const at::Tensor &t) -> std::optional<at::Tensor> {
    return t.is_meta() ? t : t.to(at::kMeta);
  });
}

/// `v` with its meta tensors as zeros of their types; nullopt when that
/// would take more than `budget` bytes.
/// Whether `v` is no tensor and holds none (in lists and tuples).
bool holdsNoTensor(const c10::IValue &v) {
  if (v.isTensor() || v.isTensorList() || v.isObject() || v.isCapsule() ||
      v.isFuture() || v.isRRef())
    return false;
  if (v.isList())
    return llvm::all_of(v.toListRef(), holdsNoTensor);
  if (v.isTuple())
    return llvm::all_of(v.toTupleRef().elements(), holdsNoTensor);
  if (v.isGenericDict())
    return false;
  return true;
}

std::optional<c10::IValue> materialize(const c10::IValue &v, int64_t &budget) {
  return mapTensors(v, [&](const at::Tensor &t) -> std::optional<at::Tensor> {
    if (!t.is_meta())
      return t;
    budget -= static_cast<int64_t>(t.nbytes());
    if (budget < 0)
      return std::nullopt;
    return at::zeros(t.sizes(), t.options().device(at::kCPU));
  });
}

/// The largest tensor the importer computes from constants (it becomes a
/// constant of the program).
constexpr int64_t kMaxConstantBytes = int64_t(1) << 30;
/// The most bytes of zeros the importer makes to run an op on the example
/// inputs that libtorch cannot run on meta tensors alone.
constexpr int64_t kMaxExampleBytes = int64_t(1) << 28;

/// Runs `n` on `inputs` with libtorch (lists and tuples built here: their
/// operators want the node's static list type); nullopt when it fails,
/// with libtorch's reason in `why` when given.
std::optional<std::vector<c10::IValue>>
evaluate(TSNode *n, const std::vector<c10::IValue> &inputs,
         std::string *why = nullptr) {
  try {
    auto kind = n->kind();
    if (kind == c10::prim::ListConstruct) {
      auto type = n->output()->type()->cast<c10::ListType>();
      c10::TypePtr element = type ? type->getElementType() : nullptr;
      if (element && element->kind() == c10::TypeKind::IntType) {
        c10::List<int64_t> list;
        for (const c10::IValue &v : inputs)
          list.push_back(v.toInt());
        return std::vector<c10::IValue>{list};
      }
      c10::impl::GenericList list(element ? element : c10::AnyType::get());
      for (const c10::IValue &v : inputs)
        list.push_back(v);
      return std::vector<c10::IValue>{list};
    }
    if (kind == c10::prim::TupleConstruct)
      return std::vector<c10::IValue>{c10::ivalue::Tuple::create(inputs)};
    if (kind == c10::prim::ListUnpack) {
      auto list = inputs.at(0).toListRef();
      if (list.size() != n->outputs().size())
        return std::nullopt; // TorchScript fails it when it runs
      return std::vector<c10::IValue>(list.begin(), list.end());
    }
    if (kind == c10::prim::TupleUnpack) {
      auto items = inputs.at(0).toTupleRef().elements();
      if (items.size() != n->outputs().size())
        return std::nullopt;
      return std::vector<c10::IValue>(items.begin(), items.end());
    }
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    // A vararg op (aten::format) reads its operand count from the stack,
    // as TorchScript's interpreter pushes it.
    if (const c10::FunctionSchema *schema = n->maybeSchema();
        schema && schema->is_vararg())
      stack.push_back(static_cast<int64_t>(inputs.size()));
    n->getOperation()(stack);
    if (stack.size() != n->outputs().size())
      return std::nullopt;
    return std::vector<c10::IValue>(stack.begin(), stack.end());
  } catch (const std::exception &e) {
    if (why) {
      std::string what = e.what();
      *why = what.substr(0, what.find('\n'));
    }
    return std::nullopt;
  }
}

/// Whether what `n` computes from the constants `inputs` is small enough to
/// compute (and keep): its tensor results' sizes, found on meta copies (and
/// on the meta device), add up to at most kMaxConstantBytes. True without
/// that second run for a node with no tensor result (shape arithmetic), and
/// when libtorch cannot tell (an op without a meta kernel).
bool fitsAsConstant(TSNode *n, const std::vector<c10::IValue> &inputs) {
  if (llvm::none_of(n->outputs(), [](const TSValue *v) {
        return v->type()->cast<c10::TensorType>() != nullptr;
      }))
    return true;
  std::vector<c10::IValue> meta;
  for (const c10::IValue &v : inputs)
    meta.push_back(toMeta(v));
  // Factory ops (zeros, ones, arange, ...) make their result where their
  // `device` argument says.
  if (const c10::FunctionSchema *schema = n->maybeSchema())
    for (size_t i = 0; i < schema->arguments().size() && i < meta.size(); ++i)
      if (schema->arguments()[i].name() == "device")
        meta[i] = c10::Device(c10::kMeta);
  std::optional<std::vector<c10::IValue>> results = evaluate(n, meta);
  if (!results)
    return true;
  int64_t bytes = 0;
  for (const c10::IValue &r : *results)
    if (r.isTensor())
      bytes += static_cast<int64_t>(r.toTensor().nbytes());
  return bytes <= kMaxConstantBytes;
}

/// The results of `n` on the example values `inputs` (meta tensors), as
/// meta tensors: run on the meta tensors, or where libtorch has no meta
/// kernel for `n`, on zeros of their types (up to kMaxExampleBytes).
std::optional<std::vector<c10::IValue>>
evaluateExample(TSNode *n, const std::vector<c10::IValue> &inputs,
                std::string &why, bool &onMeta) {
  onMeta = true;
  if (auto results = evaluate(n, inputs, &why))
    return results;
  onMeta = false;
  int64_t budget = kMaxExampleBytes;
  std::vector<c10::IValue> zeros;
  for (const c10::IValue &v : inputs) {
    std::optional<c10::IValue> z = materialize(v, budget);
    if (!z)
      return std::nullopt;
    zeros.push_back(*z);
  }
  std::optional<std::vector<c10::IValue>> results = evaluate(n, zeros, &why);
  if (results)
    for (c10::IValue &r : *results)
      r = toMeta(r);
  return results;
}

struct Parameter {
  std::string name;
  at::Tensor value;
};

/// libtorch's type of an input of element type `dtype`; nullopt for the
/// types the importer does not take as inputs.
std::optional<at::ScalarType> inputScalarType(::ober::rt::DType dtype) {
  using ::ober::rt::DType;
  static const std::map<DType, at::ScalarType> types = {
      {DType::F16, at::kHalf},   {DType::BF16, at::kBFloat16},
      {DType::F32, at::kFloat},  {DType::F64, at::kDouble},
      {DType::Bool, at::kBool},  {DType::I32, at::kInt},
      {DType::I64, at::kLong}};
  auto it = types.find(dtype);
  return it == types.end() ? std::nullopt
                           : std::optional<at::ScalarType>(it->second);
}

/// The example inputs' shapes and dtypes `ober.export` saves with the
/// module (`ober_inputs.json`: [{"shape": [...], "dtype": "float32"}]).
bool exampleInputs(const std::string &json, std::vector<at::Tensor> &out,
                   std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Array *items = parsed->getAsArray();
  if (!items) {
    error = "expected a list of inputs";
    return false;
  }
  for (const llvm::json::Value &item : *items) {
    const llvm::json::Object *o = item.getAsObject();
    const llvm::json::Array *shape = o ? o->getArray("shape") : nullptr;
    auto name = o ? o->getString("dtype") : std::nullopt;
    std::optional<::ober::rt::DType> dtype =
        name ? ::ober::rt::dtypeFromName(name->str()) : std::nullopt;
    std::optional<at::ScalarType> type =
        dtype ? inputScalarType(*dtype) : std::nullopt;
    if (!shape || !type) {
      error = "each input needs a shape and a dtype (float32, int64, ...)";
      return false;
    }
    std::vector<int64_t> sizes;
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> size = d.getAsInteger();
      if (!size || *size < 0) {
        error = "a shape's sizes must be non-negative integers";
        return false;
      }
      sizes.push_back(*size);
    }
    // Only the types matter: meta tensors carry them without memory.
    out.push_back(
        at::zeros(sizes, at::TensorOptions(*type).device(at::kMeta)));
  }
  return true;
}

/// Meta tensors of the `shapes` given for the inputs `names`, in
/// `examples` (which they replace).
bool givenExamples(ArrayRef<InputShape> shapes,
                   const std::vector<std::string> &names,
                   std::vector<at::Tensor> &examples, Location loc) {
  std::vector<std::optional<InputShape>> assigned;
  std::string error;
  if (!assignInputShapes(names, shapes, assigned, error)) {
    emitError(loc) << error;
    return false;
  }
  for (size_t i = 0; i < assigned.size(); ++i) {
    if (!assigned[i])
      continue;
    // No type given: the recorded one, else float32.
    std::optional<at::ScalarType> type =
        assigned[i]->dtype    ? inputScalarType(*assigned[i]->dtype)
        : examples[i].defined() ? examples[i].scalar_type()
                                : at::kFloat;
    if (!type) {
      emitError(loc) << "input '" << names[i] << "': element type "
                     << ::ober::rt::dtypeMLIRName(*assigned[i]->dtype)
                     << " is not supported by the TorchScript importer "
                        "(supported: f32, f64, f16, bf16, i64, i32, i1)";
      return false;
    }
    examples[i] = at::zeros(assigned[i]->shape,
                            at::TensorOptions(*type).device(at::kMeta));
  }
  return true;
}

} // namespace

OwningOpRef<ModuleOp>
mlir::ober::importTorchScriptFile(StringRef path, MLIRContext &context,
                                  const TorchScriptImportOptions &options) {
  context.loadDialect<OberDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  torch::jit::Module module;
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<at::Tensor> examples;
  try {
    torch::jit::ExtraFilesMap extra{{"ober_inputs.json", ""}};
    module = torch::jit::load(path.str(), c10::nullopt, extra);
    graph = forwardGraph(module);
    // A saved module keeps no traced shapes: take the example inputs'
    // from the file (ober.export writes them).
    std::string recorded = extra["ober_inputs.json"];
    if (!recorded.empty()) {
      std::string error;
      if (!exampleInputs(recorded, examples, error)) {
        emitError(fileLoc) << "'" << path
                           << "': bad ober_inputs.json: " << error;
        return nullptr;
      }
    }
  } catch (const std::exception &e) {
    std::string what = e.what();
    emitError(fileLoc) << "cannot load the TorchScript module '" << path
                       << "': " << what.substr(0, what.find('\n'));
    return nullptr;
  }

  Importer im(context);
  OwningOpRef<ModuleOp> out = ModuleOp::create(fileLoc);
  im.b.setInsertionPointToEnd(out->getBody());
  im.loc = fileLoc;
  // Data inputs: the given shapes, else the recorded examples, else
  // static types the graph carries.
  auto inputs = graph->inputs();
  std::vector<std::string> names;
  for (size_t i = 1; i < inputs.size(); ++i) {
    std::string name = inputs[i]->debugName();
    names.push_back(name.substr(0, name.find('.')));
  }
  examples.resize(names.size());
  if (!givenExamples(options.inputShapes, names, examples, fileLoc))
    return nullptr;
  for (size_t i = 1; i < inputs.size(); ++i)
    if (examples[i - 1].defined())
      im.example[inputs[i]] = examples[i - 1];
  SmallVector<Type> inputTypes;
  std::vector<const TSValue *> argInputs;
  for (size_t i = 1; i < inputs.size(); ++i) {
    // An optional input (`mask: Optional[Tensor] = None`) given no value
    // or shape is None.
    if (inputs[i]->type()->kind() == c10::TypeKind::OptionalType &&
        !examples[i - 1].defined()) {
      im.known[inputs[i]] = im.example[inputs[i]] = c10::IValue();
      continue;
    }
    RankedTensorType t = im.typeOf(inputs[i]);
    if (!t) {
      emitError(fileLoc) << "input " << i << " ('" << names[i - 1]
                         << "') of the TorchScript module has no static "
                            "tensor type (shape and dtype): give it with "
                            "--input-shape="
                         << names[i - 1]
                         << ":2x3x64x64:f32 (ober-run takes it from --input), "
                            "or save the module with ober.export(module, "
                            "example_inputs, path), which records it";
      return nullptr;
    }
    inputTypes.push_back(t);
    argInputs.push_back(inputs[i]);
  }
  auto func = func::FuncOp::create(im.b, fileLoc, options.functionName,
                                   im.b.getFunctionType(inputTypes, {}));
  Block *body = func.addEntryBlock();
  im.b.setInsertionPointToEnd(body);
  for (auto [i, v] : llvm::enumerate(argInputs))
    im.tensors[v] = body->getArgument(i);

  // Modules and their attributes: objects by value, with their prefix.
  std::map<const TSValue *, c10::IValue> objects;
  std::map<const TSValue *, std::string> prefix;
  objects[inputs[0]] = module._ivalue();
  prefix[inputs[0]] = "";
  std::vector<Parameter> params;
  std::set<const TSValue *> blockedValues;
  std::map<std::string, Value> paramArgs;

  // Values whose examples were computed from zeros standing for data.
  std::set<const TSValue *> fromZeros;
  // The argument of parameter (or float buffer) `full`, added once.
  auto paramArg = [&](const std::string &full, const at::Tensor &t) {
    Value &arg = paramArgs[full];
    if (!arg) {
      Type element = im.elementType(t.scalar_type());
      SmallVector<int64_t> shape(t.sizes().begin(), t.sizes().end());
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(
          index, RankedTensorType::get(shape, element),
          im.b.getDictionaryAttr(im.b.getNamedAttr(
              OberDialect::kParamAttrName, im.b.getStringAttr(full))),
          fileLoc);
      arg = body->getArgument(index);
      params.push_back({full, t.detach().clone()});
    }
    return arg;
  };

  // Nodes, and the blocks of control flow (ControlFlow.cpp) recursively.
  std::function<void(TSNode *)> importNode;
  Importer::BlockImporter importBlock = [&](torch::jit::Block *block) {
    for (TSNode *n : block->nodes())
      importNode(n);
  };
  int64_t importedNodes = 0;
  importNode = [&](TSNode *n) {
    if (++importedNodes == kMaxImportedNodes + 1)
      im.error(n, "the module unrolls to more than " +
                      std::to_string(kMaxImportedNodes) +
                      " nodes (loops are unrolled at import time)");
    if (importedNodes > kMaxImportedNodes) {
      for (const TSValue *v : n->outputs())
        blockedValues.insert(v);
      return;
    }
    std::string where = sourceLine(n);
    im.loc = where.empty()
                 ? fileLoc
                 : Location(NameLoc::get(im.b.getStringAttr(where), fileLoc));
    auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      if (auto v = torch::jit::toIValue(n->output())) {
        im.known[n->output()] = *v;
        im.example[n->output()] = *v;
      }
      return;
    }
    // Known inputs: libtorch computes the result (which is also its example
    // value: known values are the examples' too).
    bool allKnown = kind != c10::prim::GetAttr &&
                    llvm::all_of(n->inputs(), [&](const TSValue *v) {
                      return im.isKnown(v);
                    });
    if (allKnown && n->outputs().size() > 0 && evaluable(n)) {
      std::vector<c10::IValue> args;
      for (const TSValue *v : n->inputs())
        args.push_back(im.known[v]);
      if (!fitsAsConstant(n, args)) {
        im.error(n, "computes a constant larger than 1 GiB from constants");
        for (const TSValue *v : n->outputs())
          blockedValues.insert(v);
        return;
      }
      if (auto results = evaluate(n, args)) {
        for (size_t i = 0; i < results->size(); ++i)
          im.known[n->outputs()[i]] = im.example[n->outputs()[i]] =
              (*results)[i];
        return;
      }
    }
    // Run it on the example values (for the types of its results); control
    // flow gets its results' examples from its blocks.
    if (!examples.empty() && kind != c10::prim::GetAttr &&
        kind != c10::prim::If && kind != c10::prim::Loop) {
      std::vector<c10::IValue> args;
      bool ready = true;
      for (const TSValue *v : n->inputs()) {
        auto it = im.example.find(v);
        ready &= it != im.example.end();
        if (ready)
          args.push_back(toMeta(it->second));
      }
      std::string why;
      bool onMeta = false, viaZeros = false;
      if (ready) {
        if (auto results = evaluateExample(n, args, why, onMeta)) {
          viaZeros = !onMeta;
          for (size_t i = 0; i < results->size(); ++i)
            im.example[n->outputs()[i]] = (*results)[i];
        } else {
          im.exampleFailures[n] = why;
        }
      }
      // A value computed from zeros standing for data (an op without a
      // meta kernel), or from such a value, is not the module's. Tensors
      // keep their shapes (an op whose shape follows from values needs
      // them known to be converted at all).
      bool tainted = llvm::any_of(n->inputs(), [&](const TSValue *v) {
        return fromZeros.count(v) > 0;
      });
      for (const TSValue *v : n->outputs()) {
        auto it = im.example.find(v);
        bool tensor = it != im.example.end() && !holdsNoTensor(it->second);
        if ((tainted || viaZeros) && !tensor)
          fromZeros.insert(v);
      }
    }
    if (kind == c10::prim::GetAttr) {
      auto parent = objects.find(n->input());
      if (parent == objects.end() || !parent->second.isObject()) {
        im.error(n, "an attribute of something other than a module");
        return;
      }
      std::string name = n->s(c10::attr::name);
      c10::IValue attr = parent->second.toObject()->getAttr(name);
      std::string full = prefix[n->input()] + name;
      // The example run works on copies: in-place ops (a training batch
      // norm's running statistics) must not change the weights written.
      im.example[n->output()] =
          attr.isTensor() ? c10::IValue(attr.toTensor().to(at::kMeta)) : attr;
      // A list of the module's own parameters (nn.LSTM's _flat_weights):
      // each under its own name, so that training trains it.
      if (attr.isList() || attr.isTensorList()) {
        c10::ivalue::Object &object = *parent->second.toObject();
        std::vector<std::string> names;
        for (const c10::IValue &item : attr.toListRef()) {
          if (!item.isTensor() ||
              !at::isFloatingType(item.toTensor().scalar_type()))
            break;
          for (size_t s = 0; s < object.type()->numAttributes(); ++s) {
            const c10::IValue &slot = object.getSlot(s);
            if (slot.isTensor() && slot.toTensor().is_same(item.toTensor())) {
              names.push_back(object.type()->getAttributeName(s));
              break;
            }
          }
        }
        if (!names.empty() && names.size() == attr.toListRef().size()) {
          SmallVector<Value> items;
          for (auto [k, item] : llvm::enumerate(attr.toListRef()))
            items.push_back(paramArg(prefix[n->input()] + names[k],
                                     item.toTensor()));
          im.lists[n->output()] = items;
          return;
        }
      }
      if (attr.isTensor()) {
        at::Tensor t = attr.toTensor();
        if (!at::isFloatingType(t.scalar_type())) {
          im.known[n->output()] = attr; // an integer buffer: a constant
          return;
        }
        im.tensors[n->output()] = paramArg(full, t);
      } else if (attr.isObject()) {
        objects[n->output()] = attr;
        prefix[n->output()] = full + ".";
      } else {
        im.known[n->output()] = attr;
      }
      return;
    }
    if (kind == c10::prim::device) {
      // Examples live on the meta device; the module runs on the CPU.
      im.known[n->output()] = im.example[n->output()] = c10::Device(c10::kCPU);
      return;
    }
    // What libtorch computed from the examples and holds no tensor (a size,
    // a dtype, whether a tensor is nested) is known: the examples are meta
    // tensors, so no tensor's data reaches it.
    if (evaluable(n) && kind != c10::prim::ListConstruct &&
        kind != c10::prim::TupleConstruct && !n->outputs().empty() &&
        llvm::all_of(n->outputs(), [&](const TSValue *v) {
          auto it = im.example.find(v);
          return it != im.example.end() && !fromZeros.count(v) &&
                 holdsNoTensor(it->second);
        })) {
      for (const TSValue *v : n->outputs())
        im.known[v] = im.example[v];
      return;
    }
    if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct) {
      SmallVector<Value> items;
      bool ok = true;
      for (const TSValue *v : n->inputs()) {
        Value t = im.tensor(v);
        ok &= static_cast<bool>(t);
        items.push_back(t);
      }
      bool blockedItem = llvm::any_of(n->inputs(), [&](const TSValue *v) {
        return blockedValues.count(v) > 0;
      });
      if (ok) {
        im.lists[n->output()] = items;
      } else if (kind == c10::prim::TupleConstruct && !blockedItem &&
                 llvm::all_of(n->inputs(), [&](const TSValue *v) {
                   return im.defined(v);
                 })) {
        // A tuple of tensors and other values (an attention's output and
        // its None weights): its items as they are.
        std::vector<Importer::Snapshot> tuple;
        for (const TSValue *v : n->inputs())
          tuple.push_back(im.snapshot(v));
        im.tuples[n->output()] = std::move(tuple);
      } else {
        blockedValues.insert(n->output());
        if (!blockedItem)
          im.error(n, "a list that mixes tensors and other values");
      }
      return;
    }
    if (kind == c10::prim::TupleIndex || kind == c10::prim::TupleUnpack) {
      auto tuple = im.tuples.find(n->input(0));
      if (tuple != im.tuples.end()) {
        const std::vector<Importer::Snapshot> &items = tuple->second;
        if (kind == c10::prim::TupleUnpack &&
            items.size() == n->outputs().size()) {
          for (size_t i = 0; i < items.size(); ++i)
            im.restore(n->outputs()[i], items[i]);
          return;
        }
        if (kind == c10::prim::TupleIndex && im.isKnown(n->input(1))) {
          int64_t i = im.integer(n->input(1));
          if (i < 0)
            i += items.size();
          if (i >= 0 && i < static_cast<int64_t>(items.size())) {
            im.restore(n->output(), items[i]);
            return;
          }
        }
        im.error(n, "reads a tuple of " + std::to_string(items.size()) +
                        " values out of range or by an index not known at "
                        "import time");
        for (const TSValue *v : n->outputs())
          blockedValues.insert(v);
        return;
      }
    }
    if (kind == c10::prim::TupleIndex && im.lists.count(n->input(0)) &&
        im.isKnown(n->input(1))) {
      const SmallVector<Value> &items = im.lists[n->input(0)];
      int64_t i = im.integer(n->input(1));
      if (i < 0)
        i += items.size();
      if (i >= 0 && i < static_cast<int64_t>(items.size())) {
        im.tensors[n->output()] = items[i];
        return;
      }
    }
    if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
      auto it = im.lists.find(n->input());
      if (it == im.lists.end() || it->second.size() != n->outputs().size()) {
        if (it != im.lists.end())
          im.error(n, "unpacks " + std::to_string(it->second.size()) +
                          " values into " +
                          std::to_string(n->outputs().size()));
        else if (!blockedValues.count(n->input()))
          im.error(n, "unpacks a list the importer does not know");
        for (const TSValue *v : n->outputs())
          blockedValues.insert(v);
        return;
      }
      for (size_t i = 0; i < n->outputs().size(); ++i)
        im.tensors[n->outputs()[i]] = it->second[i];
      return;
    }
    // An op reading what could not be imported is not reported again.
    bool blocked = llvm::any_of(n->inputs(), [&](const TSValue *v) {
      return blockedValues.count(v) > 0;
    });
    if (kind == c10::prim::If || kind == c10::prim::Loop) {
      bool resolved = !blocked && (kind == c10::prim::If
                                       ? im.convertIf(n, importBlock)
                                       : im.convertLoop(n, importBlock));
      if (!resolved)
        for (const TSValue *v : n->outputs())
          blockedValues.insert(v);
      return;
    }
    if (blocked && !Importer::mapped(n))
      im.unsupported[n->kind().toQualString()].push_back(sourceLine(n));
    bool converted = !blocked && im.convert(n);
    if (im.takeFailedInference()) {
      im.error(n, "its operands' types do not fit it (the error above)");
      converted = false;
    }
    if (!converted)
      for (const TSValue *v : n->outputs())
        blockedValues.insert(v);
  };
  for (TSNode *n : graph->nodes())
    importNode(n);

  // Results: tensors, or a tuple of them.
  SmallVector<Value> results;
  for (const TSValue *v : graph->outputs()) {
    if (auto it = im.lists.find(v); it != im.lists.end()) {
      llvm::append_range(results, it->second);
      continue;
    }
    // A known result (computed from constants) is a constant tensor.
    if (Value t = im.tensor(v))
      results.push_back(t);
    else if (!blockedValues.count(v))
      im.errors.push_back("result '" + v->debugName() +
                          "' of forward is not a tensor or a tuple of "
                          "tensors");
  }
  if (!im.unsupported.empty() || !im.errors.empty()) {
    InFlightDiagnostic diag = emitError(fileLoc);
    diag << "cannot import the TorchScript module '" << path << "'";
    if (!im.unsupported.empty()) {
      diag << "; " << im.unsupported.size()
           << " op(s) have no mapping to ober (see docs/TorchScript.md for "
              "the supported ones):";
      for (auto &[op, all] : im.unsupported) {
        // Each source line once (layers share their module's lines).
        std::vector<std::string> uses;
        for (const std::string &u : all)
          if (llvm::find(uses, u) == uses.end())
            uses.push_back(u);
        diag << "\n  " << op << " at ";
        for (size_t i = 0; i < uses.size() && i < 4; ++i)
          diag << (i ? ", " : "") << (uses[i].empty() ? "?" : uses[i]);
        if (uses.size() > 4)
          diag << " and " << uses.size() - 4 << " more";
      }
    }
    for (const std::string &e : im.errors)
      diag << "\n  " << e;
    return nullptr;
  }
  if (results.empty()) {
    emitError(fileLoc) << "the TorchScript module returns no tensor";
    return nullptr;
  }
  im.b.setInsertionPointToEnd(body);
  func::ReturnOp::create(im.b, fileLoc, results);
  func.setFunctionType(im.b.getFunctionType(body->getArgumentTypes(),
                                            ValueRange(results).getTypes()));

  // Weights.
  if (!params.empty()) {
    std::string weights = options.weightsPath;
    if (weights.empty()) {
      SmallString<256> p(path);
      llvm::sys::path::replace_extension(p, ".safetensors");
      weights = p.str().str();
    }
    // The values were copied (contiguous) when first read.
    std::vector< ::ober::rt::WeightData> data;
    for (const Parameter &p : params) {
      const at::Tensor &t = p.value;
      ::ober::rt::WeightData w;
      w.name = p.name;
      w.dtype = t.scalar_type() == at::kDouble  ? ::ober::rt::DType::F64
                : t.scalar_type() == at::kHalf  ? ::ober::rt::DType::F16
                : t.scalar_type() == at::kBFloat16 ? ::ober::rt::DType::BF16
                                                   : ::ober::rt::DType::F32;
      w.shape.assign(t.sizes().begin(), t.sizes().end());
      w.data = t.data_ptr();
      w.size = t.numel() * t.element_size();
      data.push_back(w);
    }
    std::string error;
    if (!::ober::rt::writeWeights(weights, data,
                                {{"format", "pt"}, {"source", path.str()}},
                                error)) {
      emitError(fileLoc) << error;
      return nullptr;
    }
    // Named relative to the model's folder when it is there.
    SmallString<256> folder(path);
    llvm::sys::path::remove_filename(folder);
    StringRef name = weights;
    if (llvm::sys::path::parent_path(weights) == folder.str())
      name = llvm::sys::path::filename(weights);
    (*out)->setAttr(OberDialect::kWeightsAttrName, im.b.getStringAttr(name));
  }
  if (failed(verify(*out)))
    return nullptr;
  return out;
}

void mlir::ober::registerTorchScriptTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-torchscript",
      "Import a TorchScript module (.pt) into the ober dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        TorchScriptImportOptions options;
        std::string error;
        if (!inputShapesFromCommandLine(options.inputShapes, error)) {
          emitError(UnknownLoc::get(context)) << error;
          return OwningOpRef<Operation *>();
        }
        OwningOpRef<ModuleOp> module = importTorchScriptFile(
            buffer->getBufferIdentifier(), *context, options);
        return OwningOpRef<Operation *>(module.release());
      });
}
