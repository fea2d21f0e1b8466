//===- mlir.cpp - fuzz target: MLIR text through the pipeline passes ------===//
//
// Part of Ober-Train. Any bytes as an MLIR module (parsed, verified), then,
// after "\n--\n", a pipeline of the project's passes with their option
// strings, "pass{options},pass{options}" (ober-build-train-step,
// ober-autodiff, ober-plan, ober-partition, the lowering and the CPU target's
// passes; function passes are nested under func.func here). A pipeline
// naming any other pass, or none, runs --ober-build-train-step and
// --ober-plan with their defaults. Diagnostics are expected and dropped; a
// crash, hang, sanitizer report, or a pipeline that fails without an error
// saying why is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSet.h"

#include <cstdlib>

namespace {

/// The passes a pipeline may name: module passes, then function passes.
const llvm::StringSet<> &modulePasses() {
  static const llvm::StringSet<> names = {
      "ober-build-train-step",      "ober-autodiff",
      "ober-plan",                  "ober-partition",
      "convert-ober-to-linalg",     "convert-shard-to-runtime",
      "ober-cpu-fuse-elementwise",  "ober-cpu-reuse-dead-inputs",
      "ober-cpu-distribute",        "ober-cpu-return-in-place",
      "ober-cpu-free-at-last-use",  "ober-cpu-outline-kernels",
      "ober-cpu-vectorizable-math", "ober-cpu-copies-as-loops"};
  return names;
}
const llvm::StringSet<> &functionPasses() {
  static const llvm::StringSet<> names = {"ober-decompose-attention",
                                          "ober-record-shardings"};
  return names;
}

/// `text` cut at the commas outside braces and quotes.
std::vector<std::string> pipelineElements(const std::string &text) {
  std::vector<std::string> out(1);
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

/// The textual pipeline (on the module) to run for the fuzzer's `text`:
/// only allowed passes, function passes nested; the default when `text`
/// names another.
std::string pipelineFor(const std::string &text) {
  const std::string fallback = "ober-build-train-step,ober-plan";
  std::string out;
  for (const std::string &element : pipelineElements(text)) {
    std::string name = element.substr(0, element.find('{'));
    std::string nested;
    if (modulePasses().contains(name))
      nested = element;
    else if (functionPasses().contains(name))
      nested = "func.func(" + element + ")";
    else
      return fallback;
    out += (out.empty() ? "" : ",") + nested;
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::ober::registerAllDialects(*r);
    mlir::ober::registerAllPasses();
    return r;
  }();
  std::vector<std::string> parts = ober::fuzz::splitInput(data, size, 2);
  // A fresh context per input: nothing leaks from one input to the next.
  mlir::MLIRContext context(*registry,
                            mlir::MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  bool reported = false;
  mlir::ScopedDiagnosticHandler silence(&context, [&](mlir::Diagnostic &d) {
    reported |= d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(parts[0], &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  std::string error;
  llvm::raw_string_ostream errors(error);
  if (mlir::failed(mlir::parsePassPipeline(pipelineFor(parts[1]), pm, errors)))
    return 0;
  // A pass that fails says why (the pass manager verifies after each pass,
  // and says so too when a pass left the module invalid).
  reported = false;
  if (mlir::failed(pm.run(*module)) && !reported)
    std::abort();
  return 0;
}
