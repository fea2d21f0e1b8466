//===- ModelLoader.cpp - open a model file for the ober tools -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/ModelLoader.h"

#include "ober/Tools/Devices.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Importers/InputShapes.h"
#include "ober/Importers/ONNX/ONNXImporter.h"
#include "ober/Reference/TensorIO.h"
#include "ober/Runtime/Weights.h"

#include "ober/Runtime/Init.h"
#include "ober/Tools/CommandLine.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/xxhash.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"


using namespace mlir;
using namespace mlir::ober;

bool mlir::ober::isImportedFormat(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return isONNXPath(path) || ext == ".pt";
}

/// TorchScript goes through ober-import-torchscript (beside this tool):
/// only that tool links libtorch, whose start-up costs every process that
/// loads it most of a second.
///
/// Input shapes: this tool's `--input-shape`s, else the shapes and types of
/// `knownInputs` (ober-run's `--input`s), in order.
static OwningOpRef<ModuleOp>
importTorchScriptInItsTool(StringRef path, MLIRContext &context,
                           ArrayRef<reference::Tensor> knownInputs) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  std::vector<InputShape> shapes;
  std::string shapeError;
  if (!inputShapesFromCommandLine(shapes, shapeError)) {
    emitError(loc) << shapeError;
    return nullptr;
  }
  // A float input's type stays the one the file records (an f32 .npy
  // feeds a bf16 input); other types are the files'.
  if (shapes.empty())
    for (const reference::Tensor &t : knownInputs) {
      InputShape shape;
      shape.shape.assign(t.getShape().begin(), t.getShape().end());
      if (!t.isFloat())
        shape.dtype = reference::dtypeOf(t.getElementType());
      shapes.push_back(shape);
    }
  std::string importer = toolBesideThisOne("ober-import-torchscript");
  if (!llvm::sys::fs::can_execute(importer)) {
    emitError(loc) << "cannot import '" << path
                   << "': this build has no TorchScript importer (no "
                   << importer << "; install libtorch-dev and reconfigure, "
                   << "or export the model to ONNX)";
    return nullptr;
  }
  SmallString<128> out, err;
  if (llvm::sys::fs::createTemporaryFile("ober-torchscript", "mlir", out) ||
      llvm::sys::fs::createTemporaryFile("ober-torchscript", "err", err)) {
    emitError(loc) << "cannot create a temporary file to import '" << path
                   << "'";
    return nullptr;
  }
  llvm::FileRemover removeOut(out), removeErr(err);
  std::string input = path.str();
  std::vector<std::string> given;
  for (const InputShape &shape : shapes)
    given.push_back("--input-shape=" + formatInputShape(shape));
  // With debug info: locations as the importer made them (the model's
  // source lines), not lines of the temporary file.
  SmallVector<StringRef> args = {importer, "--import-torchscript", input,
                                 "--mlir-print-debuginfo", "-o", out};
  args.append(given.begin(), given.end());
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt,
                                          StringRef(err)};
  int rc = llvm::sys::ExecuteAndWait(importer, args, std::nullopt, redirects);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(err);
    std::string message = text ? (*text)->getBuffer().trim().str() : "";
    // The importer's diagnostics already name the file: pass them on.
    StringRef body = message;
    if (body.consume_front(path) && body.consume_front(":0:0: error: "))
      message = body.str();
    emitError(loc) << message;
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(out.str(), &context);
}

OwningOpRef<ModuleOp>
mlir::ober::loadModel(StringRef path, MLIRContext &context,
                      ArrayRef<reference::Tensor> knownInputs) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".mlir" || ext == ".mlirbc" || path == "-")
    return parseSourceFile<ModuleOp>(path, &context);
  if (isONNXPath(path)) {
    ONNXImportOptions options = onnxOptionsFromCommandLine();
    options.knownInputs.assign(knownInputs.begin(), knownInputs.end());
    return importONNXFile(path, context, options);
  }
  if (ext == ".pt")
    return importTorchScriptInItsTool(path, context, knownInputs);
  emitError(UnknownLoc::get(&context))
      << "cannot read '" << path
      << "': unknown model format (supported: .mlir, .mlirbc, .onnx, .onnxtxt, .pt)";
  return nullptr;
}

reference::Tensor mlir::ober::initialParameter(StringRef name,
                                              RankedTensorType type,
                                              uint64_t seed) {
  reference::Tensor t(type.getElementType(), type.getShape());
  rt::InitKind kind = rt::initKindOf(name.str(), type.getRank());
  uint64_t hash = llvm::xxh3_64bits(name);
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    t.setFloat(i, rt::initialValue(kind, hash, seed, i));
  return t;
}

FailureOr<std::map<unsigned, reference::Tensor>>
mlir::ober::loadParameters(func::FuncOp func, StringRef modelDir,
                           StringRef weightsPath, std::optional<uint64_t> seed) {
  std::map<unsigned, reference::Tensor> params;
  SmallVector<unsigned> indices;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, OberDialect::kParamAttrName))
      indices.push_back(i);
  if (indices.empty())
    return params;
  std::string path = weightsPath.str();
  if (path.empty()) {
    auto module = func->getParentOfType<ModuleOp>();
    auto attr = module ? module->getAttrOfType<StringAttr>(
                             OberDialect::kWeightsAttrName)
                       : StringAttr();
    if (!attr && seed) {
      for (unsigned i : indices)
        params[i] = initialParameter(
            func.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName)
                .getValue(),
            serialArgumentType(func, i), *seed);
      return params;
    }
    if (!attr)
      return func.emitError("the function has ")
             << indices.size()
             << " parameter(s) but the module names no weights file ('"
             << OberDialect::kWeightsAttrName << "')";
    SmallString<256> full(modelDir);
    llvm::sys::path::append(full, attr.getValue());
    path = full.str().str();
  }
  std::string error;
  if (isONNXPath(path)) {
    std::map<std::string, Type> wanted;
    std::map<std::string, reference::Tensor> values;
    for (unsigned i : indices)
      wanted[func.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName)
                 .getValue()
                 .str()] = serialArgumentType(func, i)
                               .getElementType();
    if (!readONNXInitializers(path, wanted, values, error))
      return func.emitError(error);
    for (unsigned i : indices) {
      auto name =
          func.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName);
      reference::Tensor &t = values[name.getValue().str()];
      auto type = serialArgumentType(func, i);
      if (t.getShape() != type.getShape() ||
          t.getElementType() != type.getElementType())
        return func.emitError("parameter '")
               << name.getValue() << "' is " << type << " but " << path
               << " holds "
               << RankedTensorType::get(t.getShape(), t.getElementType());
      params[i] = t;
    }
    return params;
  }
  rt::WeightsFile file;
  if (!file.open(path, error))
    return func.emitError(error);
  SmallVector<std::string> missing;
  for (unsigned i : indices) {
    auto name = func.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName);
    auto type = serialArgumentType(func, i);
    const rt::WeightInfo *info = file.find(name.getValue().str());
    if (!info) {
      missing.push_back(name.getValue().str());
      continue;
    }
    if (ArrayRef<int64_t>(info->shape) != type.getShape())
      return func.emitError("parameter '")
             << name.getValue() << "' is " << type << " but " << path
             << " holds shape [" << llvm::make_range(info->shape.begin(),
                                                     info->shape.end())
             << "]";
    std::vector<char> bytes;
    if (!file.read(*info, bytes, error))
      return func.emitError(error);
    std::optional<reference::Tensor> t = reference::decodeTensor(
        info->dtype, info->shape, bytes, type.getElementType(), error);
    if (!t)
      return func.emitError("parameter '") << name.getValue() << "': " << error;
    params[i] = std::move(*t);
  }
  if (!missing.empty()) {
    InFlightDiagnostic diag = func.emitError();
    diag << path << " lacks " << missing.size() << " parameter(s):";
    for (const std::string &m : missing)
      diag << " '" << m << "'";
    return failure();
  }
  return params;
}
