//===- ONNXTranslation.cpp - `--import-onnx` and its options --------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/ONNX/ONNXImporter.h"
#include "ober/Tools/CommandLine.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::ober;

static llvm::cl::list<std::string> onnxDims(
    "onnx-dim",
    llvm::cl::desc("Pin a symbolic ONNX dimension: --onnx-dim=batch=8"),
    llvm::cl::value_desc("name=size"), llvm::cl::cat(importOptionCategory()));

static llvm::cl::list<std::string> onnxSequenceLengths(
    "onnx-sequence-length",
    llvm::cl::desc("The number of tensors of a sequence-typed ONNX graph "
                   "input (one argument, or --input, each): "
                   "--onnx-sequence-length=xs=3"),
    llvm::cl::value_desc("name=length"), llvm::cl::cat(importOptionCategory()));

/// `name=value` entries of `option` into `out`; malformed ones are warned
/// about and skipped.
static void readNamedSizes(const llvm::cl::list<std::string> &option,
                           std::map<std::string, int64_t> &out) {
  for (const std::string &entry : option) {
    StringRef name, value;
    std::tie(name, value) = StringRef(entry).split('=');
    int64_t size;
    if (name.empty() || value.getAsInteger(10, size) || size < 0) {
      llvm::errs() << "warning: ignoring --" << option.ArgStr << " '" << entry
                   << "' (expected name=size)\n";
      continue;
    }
    out[name.str()] = size;
  }
}

ONNXImportOptions mlir::ober::onnxOptionsFromCommandLine() {
  ONNXImportOptions options;
  readNamedSizes(onnxDims, options.dimValues);
  readNamedSizes(onnxSequenceLengths, options.sequenceLengths);
  return options;
}

void mlir::ober::registerONNXTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model into the ober dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        StringRef name = buffer->getBufferIdentifier();
        std::string dir;
        if (llvm::sys::fs::exists(name)) {
          SmallString<256> folder(name);
          llvm::sys::path::remove_filename(folder);
          dir = folder.empty() ? "." : folder.str().str();
        }
        OwningOpRef<ModuleOp> module = importONNXBytes(
            buffer->getBuffer(), name, *context, onnxOptionsFromCommandLine(),
            dir);
        return OwningOpRef<Operation *>(module.release());
      });
}
