//===- torchscript.cpp - fuzz target: TorchScript modules -----------------===//
//
// Part of Ober-Train. Any bytes as a TorchScript module, cut at "\n--\n":
// the source of its methods (`def forward(self, x): ...`, using the
// parameters self.w1 [6, 16], self.b1 [16], self.w2 [16, 4], self.conv
// [4, 2, 3, 3] and the embedding self.emb [11, 8], and the integer buffer
// self.steps), then the example inputs `ober.export` records
// (extra/ober_inputs.json). libtorch compiles the methods and saves the
// module as a .pt file with its own writer; the importer reads that file.
// The fuzzing is aimed at the importer, on every graph TorchScript
// compiles; the archive's pickles and zip records are libtorch's (their
// reader is not fuzzed here). Errors are expected and dropped; a crash,
// hang or sanitizer report is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Importers/TorchScript/TorchScriptImporter.h"
#include "ober/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <torch/script.h>

#include <cctype>

namespace {

/// Whether `source` subscripts something with nothing (`b[]`, `f()[ ]`):
/// libtorch 1.13's script compiler dereferences a null pointer on it (a
/// crash in libtorch, before the importer sees anything), so such sources
/// are skipped. An empty list (`x = []`) is fine.
bool hasEmptySubscript(const std::string &source) {
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '[')
      continue;
    size_t close = source.find_first_not_of(" \t", i + 1);
    if (close == std::string::npos || source[close] != ']')
      continue;
    size_t before = source.find_last_not_of(" \t", i == 0 ? 0 : i - 1);
    if (i > 0 && before != std::string::npos) {
      char c = source[before];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
          c == ')' || c == ']')
        return true;
    }
  }
  return false;
}

/// The module the fuzzer's source defines, saved to `path`; false when
/// TorchScript does not compile it.
bool saveModule(const std::string &path, const std::string &source,
                const std::string &inputs) {
  if (hasEmptySubscript(source))
    return false;
  try {
    torch::jit::Module m("__torch__.Fuzz");
    torch::manual_seed(0);
    m.register_parameter("w1", torch::randn({6, 16}), false);
    m.register_parameter("b1", torch::randn({16}), false);
    m.register_parameter("w2", torch::randn({16, 4}), false);
    m.register_parameter("conv", torch::randn({4, 2, 3, 3}), false);
    m.register_parameter("emb", torch::randn({11, 8}), false);
    m.register_buffer("steps", torch::zeros({1}, torch::kLong));
    m.define(source);
    if (!m.find_method("forward"))
      return false;
    torch::jit::ExtraFilesMap extra;
    if (!inputs.empty())
      extra["ober_inputs.json"] = inputs;
    m.save(path, extra);
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::ober::registerAllDialects(*r);
    return r;
  }();
  std::vector<std::string> parts = ober::fuzz::splitInput(data, size, 2);
  std::string path = ober::fuzz::scratchDir() + "/model.pt";
  if (!saveModule(path, parts[0], parts[1]))
    return 0;
  mlir::MLIRContext context(*registry,
                            mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  (void)mlir::ober::importTorchScriptFile(path, context);
  return 0;
}
