//===- ober-compile.cpp - a model to a training (or inference) executable --===//
//
// Part of Ober-Train.
//
//   ober-compile MODEL.{onnx,pt,mlir} [--train-step=OPTS] [--plan=OPTS]
//                [--plan-report=FILE] [--target=cpu|cuda] [--inference]
//                [--emit=mlir|llvm|obj|exe] -o OUT
//
// Imports the model by extension, builds its training step (unless it is
// one, or --inference), plans and partitions it when --plan is given or
// the module carries a plan, lowers it with the CPU pipeline and links it
// with the runtime into one executable (its weights beside it, as
// OUT.safetensors).
//
//===----------------------------------------------------------------------===//

#include "ober/Conversion/LoweringKinds.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/InitAll.h"
#include "ober/Tools/CommandLine.h"
#include "ober/Tools/Diagnostics.h"
#include "ober/Tools/Devices.h"
#include "ober/Tools/Executable.h"
#include "ober/Tools/ModelLoader.h"
#include "ober/Tools/TrainLoop.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::ober;
namespace cl = llvm::cl;

static cl::OptionCategory category("ober-compile options");
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model (.onnx, .pt, .mlir)>"),
                                      cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::Required,
                                       cl::desc("Output file"),
                                       cl::value_desc("file"),
                                       cl::cat(category));
static cl::opt<std::string> trainStep(
    "train-step",
    cl::desc("Options of the training step (ober-build-train-step's: "
             "'loss=cross-entropy optimizer=adamw ...')"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    planOptions("plan",
                cl::desc("Plan the step with these options (ober-plan's: "
                         "'cluster=... gpus=...') and partition it"),
                cl::init(""), cl::cat(category));
static cl::opt<std::string> planReportPath(
    "plan-report",
    cl::desc("Write the plan's report here: a page to look at for a name "
             "ending in .html, else JSON"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu, or cuda (one NVIDIA GPU per rank)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<bool> cudaMappingOnCPU(
    "test-cuda-mapping-on-cpu",
    cl::desc("For tests: map the program to launches as --target=cuda "
             "does, then run each launch's threads as loops on the CPU"),
    cl::Hidden, cl::init(false), cl::cat(category));
static cl::list<std::string>
    cudaChips("cuda-chips",
              cl::desc("GPUs the CUDA target compiles machine code for "
                       "(default sm_80,sm_90,sm_100; the newest also as "
                       "PTX for later GPUs)"),
              cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string> attention(
    "attention",
    cl::desc("How attention compiles: 'blocked' (primitive ops a block of "
             "queries at a time, the scores through the GEMM library; the "
             "default), 'decomposed' (the whole score matrix at once), "
             "'fused' (memory-efficient loops that hold no score matrix) or, "
             "with --target=cuda, 'flash' (tensor-core kernels that hold no "
             "score matrix, for bf16/f16 without a mask and heads up to "
             "128; blocked elsewhere)"),
    cl::init(""), cl::cat(category));
static cl::opt<int64_t> attentionBlock(
    "attention-block",
    cl::desc("With --attention=blocked, queries a block (default 0: chosen "
             "from the scores' size)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    targetCpu("target-cpu",
              cl::desc("LLVM CPU to generate code for (default: native, "
                       "this machine's)"),
              cl::init("native"), cl::cat(category));
static cl::opt<bool> inference(
    "inference", cl::desc("Build an inference executable of the model's "
                          "function instead of a training step"),
    cl::cat(category));
static cl::opt<std::string>
    functionName("function",
                 cl::desc("The function to compile (default: the training "
                          "step, or the only public function)"),
                 cl::init(""), cl::cat(category));
static cl::opt<std::string> weightsPath(
    "weights", cl::desc("Weights to ship instead of the model's own"),
    cl::init(""), cl::cat(category));
static cl::opt<ExecutableOptions::Emit> emit(
    "emit", cl::desc("What to write"),
    cl::values(clEnumValN(ExecutableOptions::MLIR, "mlir",
                          "the lowered module (LLVM dialect)"),
               clEnumValN(ExecutableOptions::LLVMIR, "llvm",
                          "optimized LLVM IR"),
               clEnumValN(ExecutableOptions::Object, "obj", "the object file"),
               clEnumValN(ExecutableOptions::Executable, "exe",
                          "the executable (default)")),
    cl::init(ExecutableOptions::Executable), cl::cat(category));

/// Where the planner's report goes: --plan-report, or a temporary file
/// when --plan is given (the executable reports MFU against it).
static std::string planReportFile;

/// Runs `pipeline` (a pass list, e.g. "ober-plan{gpus=4}") on `module`.
static LogicalResult runPasses(ModuleOp module, StringRef pipeline) {
  PassManager pm(module.getContext());
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return emitError(module.getLoc()) << "ober-compile: bad options in '"
                                      << pipeline << "': " << error;
  return pm.run(module);
}

/// The training step: the module's, or one built with --train-step.
static func::FuncOp trainingStep(ModuleOp module) {
  if (func::FuncOp step = trainStepIn(module)) {
    if (!trainStep.empty())
      emitWarning(step.getLoc())
          << "ober-compile: the module already holds a training step; "
             "--train-step is ignored";
    return step;
  }
  // The step reports its gradient norm (the executable's grad_norm
  // metric) unless --train-step says grad-norm=false.
  if (failed(runPasses(module,
                       "ober-build-train-step{grad-norm=true " + trainStep + "}")))
    return nullptr;
  return findTrainStep(module, functionName);
}

/// Plans and partitions when asked (or when the module carries a plan that
/// is not realized yet).
static LogicalResult planAndPartition(ModuleOp module) {
  if (!planOptions.empty()) {
    if (module->hasAttr("ober.plan") || findGrid(module))
      return emitError(module.getLoc())
             << "ober-compile: the module is planned already; drop --plan";
    // The planner prices attention as --attention compiles it (unless
    // --plan says otherwise).
    std::string options = planOptions;
    auto given = [&](StringRef key) {
      return StringRef(" " + planOptions).contains(" " + key.str() + "=");
    };
    if (!attention.empty() && !given("attention"))
      options += " attention=" + attention;
    if (attentionBlock != 0 && !given("attention-block"))
      options += " attention-block=" + std::to_string(attentionBlock);
    // ... and convolutions as the target compiles them.
    if (target == "cuda" && !given("convolutions"))
      options += " convolutions=" + kCUDAConvolutions.str();
    if (failed(runPasses(module, "ober-plan{" + options + "}")))
      return failure();
  }
  if (module->hasAttr("ober.plan") && !findGrid(module) &&
      failed(runPasses(module, "ober-partition")))
    return failure();
  return success();
}

static LogicalResult compile(MLIRContext &context) {
  if (target != "cpu" && target != "cuda")
    return emitError(UnknownLoc::get(&context))
           << "ober-compile: --target=" << target
           << " is not supported (supported: cpu, cuda)";
  if (cudaMappingOnCPU && target == "cuda")
    return emitError(UnknownLoc::get(&context))
           << "ober-compile: --test-cuda-mapping-on-cpu builds a CPU "
              "executable (CUDA's mapping run on the host); it takes no "
              "--target=cuda";
  OwningOpRef<ModuleOp> module = loadModel(modelPath, context);
  if (!module)
    return failure();
  func::FuncOp func;
  if (inference) {
    if (!trainStep.empty() || !planOptions.empty())
      return emitError(module->getLoc())
             << "ober-compile: --inference takes no --train-step or --plan";
    func = selectFunction(*module, functionName);
  } else {
    func = trainingStep(*module);
    if (func && failed(planAndPartition(*module)))
      return failure();
    if (func)
      func = findTrainStep(*module, functionName);
  }
  if (!func)
    return failure();
  ExecutableOptions options;
  options.output = outputPath;
  options.emit = emit;
  options.cpu = targetCpu;
  options.target =
      target == "cuda" ? ExecutableOptions::CUDA : ExecutableOptions::CPU;
  options.cudaMappingOnCPU = cudaMappingOnCPU;
  options.cudaChips.assign(cudaChips.begin(), cudaChips.end());
  options.attention = attention;
  options.attentionBlock = attentionBlock;
  options.model = modelPath;
  options.weights = weightsPath;
  options.planReport = planReportFile;
  return buildExecutable(*module, func, inference, options);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  hideForeignOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Ober-Train: compile a model into a training (or inference) "
      "executable\n");
  // The planner writes its reports where its own option says: the JSON
  // one the executable reads its predictions from (the user's, or a
  // temporary file), and the user's page.
  bool page = StringRef(planReportPath).ends_with_insensitive(".html");
  planReportFile = page ? std::string() : std::string(planReportPath);
  SmallString<128> temporary;
  if (planReportFile.empty() && !planOptions.empty() &&
      !llvm::sys::fs::createTemporaryFile("ober-plan", "json", temporary))
    planReportFile = temporary.str().str();
  llvm::FileRemover removeReport(temporary.str());
  if (auto *report = static_cast<cl::list<std::string> *>(
          cl::getRegisteredOptions().lookup("ober-plan-report"))) {
    if (!planReportFile.empty())
      report->push_back(planReportFile);
    if (page)
      report->push_back(planReportPath);
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  ToolDiagnosticHandler handler(&context);
  return failed(compile(context)) ? 1 : 0;
}
