//===- ober-run.cpp - run ober IR on the reference interpreter ------------===//
//
// Part of Ober-Train.
//
//   ober-run MODEL [--function NAME] --input a.npy [--input b.npy ...]
//            --output-dir DIR [--weights FILE] [--print] [--run-stats]
//
// MODEL is a .mlir file or anything the importers read. Inputs fill the
// function's non-parameter arguments in order; parameters come from the
// weights file. Writes DIR/0.npy, DIR/1.npy, ... one per result.
//
//===----------------------------------------------------------------------===//

#include "ober/Conversion/LoweringKinds.h"
#include "ober/InitAll.h"
#include "ober/Reference/Interpreter.h"
#include "ober/Reference/TensorIO.h"
#include "ober/Tools/CommandLine.h"
#include "ober/Tools/Diagnostics.h"
#include "ober/Tools/CompiledRun.h"
#include "ober/Tools/GradCheck.h"
#include "ober/Tools/ModelLoader.h"
#include "ober/Tools/Devices.h"
#include "ober/Tools/TrainLoop.h"
#include "ober/Transforms/RefineShapes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ober;
namespace cl = llvm::cl;

static cl::OptionCategory category("ober-run options");

static cl::opt<std::string> modelPath(cl::cat(category), cl::Positional,
                                      cl::Required,
                                      cl::desc("<model (.mlir, ...)>"));
static cl::opt<std::string> functionName(cl::cat(category), "function",
                                         cl::desc("Function to run"),
                                         cl::init(""));
static cl::list<std::string> inputPaths(cl::cat(category), "input",
                                        cl::desc("Input .npy, in order"));
static cl::opt<std::string> outputDir(cl::cat(category), "output-dir",
                                      cl::desc("Where to write <i>.npy"),
                                      cl::init(""));
static cl::opt<std::string>
    weightsPath(cl::cat(category), "weights",
                cl::desc("Weights file (default: the module's)"), cl::init(""));
static cl::opt<bool> printResults(cl::cat(category), "print",
                                  cl::desc("Print the results as text"));
static cl::opt<bool> printStats(cl::cat(category), "run-stats",
                                cl::desc("Print run statistics to stderr"));
static cl::opt<int64_t>
    trainSteps(cl::cat(category), "train-steps",
               cl::desc("Run the module's train step this many times"),
               cl::init(0));
static cl::opt<double>
    learningRate(cl::cat(category), "lr",
                 cl::desc("Learning rate (the peak of a schedule)"),
                 cl::init(1e-3));
static cl::opt<std::string> lrSchedule(
    cl::cat(category), "lr-schedule",
    cl::desc("constant, cosine or linear: after --warmup-steps of linear "
             "warm-up, decay to --min-lr by --decay-steps (as the "
             "executables do)"),
    cl::init("constant"));
static cl::opt<int64_t> warmupSteps(cl::cat(category), "warmup-steps",
                                    cl::desc("Steps of linear warm-up"),
                                    cl::init(0));
static cl::opt<double> minLearningRate(cl::cat(category), "min-lr",
                                       cl::desc("The decay's floor"),
                                       cl::init(0));
static cl::opt<int64_t> decaySteps(
    cl::cat(category), "decay-steps",
    cl::desc("The step the decay reaches --min-lr (default --train-steps)"),
    cl::init(-1));
static cl::opt<std::string>
    saveParams(cl::cat(category), "save-params",
               cl::desc("Write final parameters as DIR/<name>.npy"),
               cl::init(""));
static cl::opt<bool> gradCheck(
    cl::cat(category), "grad-check",
    cl::desc("Check the gradients of every public function (or --function) "
             "against finite differences"));
static cl::opt<double> gradTolerance(cl::cat(category), "grad-tolerance",
                                     cl::desc("Largest gradient error"),
                                     cl::init(1e-6));
static cl::opt<std::string>
    engine(cl::cat(category), "engine",
           cl::desc("What runs the function: 'reference' (the interpreter) or "
                    "'cpu' (compiled by the CPU pipeline, in this process)"),
           cl::init("reference"));
static cl::opt<std::string> convolutions(
    cl::cat(category), "convolutions",
    cl::desc("With --engine=cpu, how convolutions compile: 'library' (the "
             "kernel library's, the default) or 'gemm' (matrix products over "
             "gathered windows, as on GPUs)"));
static cl::opt<bool> lowPrecisionProducts(
    cl::cat(category), "low-precision-products",
    cl::desc("With --engine=cpu, bf16 and f16 matrix products (and "
             "convolutions as GEMMs) call the kernel library in their own "
             "type, as on GPUs, rather than widened to f32"));
static cl::opt<std::string> attention(
    cl::cat(category), "attention",
    cl::desc("With --engine=cpu, how attention compiles: 'blocked' "
             "(primitive ops a block of queries at a time, the default), "
             "'decomposed' (the whole score matrix at once) or 'fused' "
             "(memory-efficient loops)"));
static cl::opt<int64_t> attentionBlock(
    cl::cat(category), "attention-block",
    cl::desc("With --engine=cpu and --attention=blocked, queries a block "
             "(0: chosen from the scores' size)"));
static cl::opt<uint64_t> initSeed(
    cl::cat(category), "init-seed",
    cl::desc("Seed of the initialization of parameters without weights"),
    cl::init(0));

/// Prints `t` NumPy-style: nested brackets, %.9g values.
static void printTensor(llvm::raw_ostream &os, const reference::Tensor &t) {
  ArrayRef<int64_t> shape = t.getShape();
  int64_t i = 0;
  std::function<void(size_t)> rec = [&](size_t dim) {
    if (dim == shape.size()) {
      if (t.isFloat())
        os << llvm::format("%.9g", t.getFloat(i++));
      else
        os << t.getInt(i++);
      return;
    }
    os << '[';
    for (int64_t k = 0; k < shape[dim]; ++k) {
      if (k)
        os << ", ";
      rec(dim + 1);
    }
    os << ']';
  };
  rec(0);
}

/// Reads `--input` files as tensors of their own dtypes.
static FailureOr<SmallVector<reference::Tensor>> readInputs(MLIRContext *ctx,
                                                            Location loc) {
  SmallVector<reference::Tensor> tensors;
  for (const std::string &path : inputPaths) {
    rt::NpyArray npy;
    std::string error;
    if (!rt::readNpy(path, npy, error))
      return emitError(loc) << error;
    Type element = reference::elementTypeOf(ctx, npy.type);
    if (!element)
      return emitError(loc) << path << ": " << rt::dtypeName(npy.type)
                            << " inputs are not supported";
    std::optional<reference::Tensor> t = reference::decodeTensor(
        npy.type, npy.shape, npy.data, element, error);
    if (!t)
      return emitError(loc) << path << ": " << error;
    tensors.push_back(std::move(*t));
  }
  return tensors;
}

/// The device count and each collective with its group and the bytes of
/// its full buffer (the planner's convention).
static void printDeviceStats(int64_t devices,
                             ArrayRef<reference::CollectiveRecord> collectives,
                             StringRef per) {
  llvm::errs() << "devices: " << devices << "\n";
  int64_t total = 0;
  for (auto [i, c] : llvm::enumerate(collectives)) {
    llvm::errs() << "collective " << i << ": " << c.kind << " over "
                 << c.groupSize << " devices, " << c.bytes << " bytes\n";
    total += c.bytes;
  }
  llvm::errs() << "collective bytes" << (per.empty() ? "" : " in ") << per
               << ": " << total << "\n";
}

static LogicalResult trainModel(ModuleOp module, func::FuncOp step,
                                std::map<unsigned, reference::Tensor> params) {
  FailureOr<SmallVector<reference::Tensor>> batches =
      readInputs(module.getContext(), step.getLoc());
  if (failed(batches))
    return failure();
  TrainLoopOptions options;
  options.steps = trainSteps;
  options.lr.peak = learningRate;
  options.lr.min = minLearningRate;
  options.lr.warmup = warmupSteps;
  options.lr.decaySteps = decaySteps >= 0 ? decaySteps : trainSteps;
  // A bad option is the command line's fault, not the module's.
  Location cli = UnknownLoc::get(module.getContext());
  if (!::ober::rt::parseLRScheduleKind(lrSchedule, options.lr.kind))
    return emitError(cli) << "--lr-schedule=" << lrSchedule
                          << " is not one of "
                          << ::ober::rt::lrScheduleKinds();
  if (std::string why = options.lr.check(); !why.empty())
    return emitError(cli) << why;
  options.batches = std::move(*batches);
  for (auto [k, path] : llvm::enumerate(inputPaths))
    options.batchNames.push_back("--input " + std::to_string(k + 1) + " (" +
                                 path + ")");
  options.parameters = std::move(params);
  options.compiled = engine == "cpu";
  reference::RunStats stats;
  std::vector<reference::CollectiveRecord> collectives;
  int64_t devices = 1;
  if (printStats) {
    options.stats = &stats;
    options.collectives = &collectives;
    options.devices = &devices;
  }
  FailureOr<std::map<std::string, reference::Tensor>> final =
      runTrainLoop(module, step, options, llvm::outs());
  if (failed(final))
    return failure();
  if (printStats) {
    if (findGrid(module))
      printDeviceStats(devices, collectives, "each step");
    llvm::errs() << "ops executed: " << stats.opsExecuted
                 << "\npeak live bytes: " << stats.peakLiveBytes << "\n";
  }
  if (saveParams.empty())
    return success();
  if (std::error_code ec = llvm::sys::fs::create_directories(saveParams))
    return step.emitError("cannot create ") << saveParams << ": "
                                            << ec.message();
  for (const auto &[name, tensor] : *final) {
    SmallString<256> path(saveParams);
    llvm::sys::path::append(path, name + ".npy");
    std::string error;
    if (!rt::writeNpy(path.str().str(), reference::toNpy(tensor), error))
      return step.emitError(error);
  }
  return success();
}

static LogicalResult runModel(MLIRContext &context) {
  // Imported models may specialise on input values (shape arguments).
  SmallVector<reference::Tensor> known;
  if (isImportedFormat(modelPath))
    for (const std::string &path : inputPaths) {
      rt::NpyArray npy;
      std::string error;
      Type element;
      if (!rt::readNpy(path, npy, error) ||
          !(element = reference::elementTypeOf(&context, npy.type)))
        break;
      std::optional<reference::Tensor> t = reference::decodeTensor(
          npy.type, npy.shape, npy.data, element, error);
      if (!t)
        break;
      known.push_back(std::move(*t));
    }
  OwningOpRef<ModuleOp> module = loadModel(modelPath, context, known);
  if (!module || failed(reference::checkHostMemory(*module)))
    return failure();
  if (gradCheck) {
    SmallVector<func::FuncOp> funcs;
    for (auto f : module->getOps<func::FuncOp>())
      if (functionName.empty() ? f.isPublic() && !f.isExternal()
                               : f.getSymName() == functionName)
        funcs.push_back(f);
    bool ok = !funcs.empty();
    for (func::FuncOp f : funcs)
      ok &= succeeded(checkGradients(f, initSeed, gradTolerance, llvm::outs()));
    return success(ok);
  }
  if (trainSteps < 0)
    return emitError(UnknownLoc::get(&context))
           << "--train-steps must not be negative (0 runs the function "
              "once), got "
           << trainSteps.getValue();
  if (engine != "reference" && engine != "cpu")
    return emitError(UnknownLoc::get(&context))
           << "--engine must be 'reference' or 'cpu', got '" << engine << "'";
  // Its values are checked by convert-ober-to-linalg, which takes them.
  if ((convolutions.getNumOccurrences() || attention.getNumOccurrences() ||
       attentionBlock.getNumOccurrences() ||
       lowPrecisionProducts.getNumOccurrences()) &&
      engine != "cpu")
    return emitError(UnknownLoc::get(&context))
           << "--convolutions, --attention, --attention-block and "
              "--low-precision-products apply to --engine=cpu only";
  if (attention == "flash")
    return emitError(UnknownLoc::get(&context)) << kFlashNeedsCUDA;
  if (engine == "cpu" && findGrid(*module))
    return emitError(UnknownLoc::get(&context))
           << "--engine=cpu runs on one device; this module has simulated "
              "devices (a shard.grid)";
  func::FuncOp func = trainSteps > 0 ? findTrainStep(*module, functionName)
                                     : selectFunction(*module, functionName);
  if (!func)
    return failure();

  SmallString<256> modelDir(modelPath);
  llvm::sys::path::remove_filename(modelDir);
  FailureOr<std::map<unsigned, reference::Tensor>> params =
      loadParameters(func, modelDir, weightsPath, initSeed.getValue());
  if (failed(params))
    return failure();
  if (trainSteps > 0)
    return trainModel(*module, func, std::move(*params));

  unsigned numInputs = func.getNumArguments() - params->size();
  if (inputPaths.size() != numInputs)
    return func.emitError("expects ")
           << numInputs << " input(s) besides its " << params->size()
           << " parameter(s), got " << inputPaths.size() << " --input";

  // Pair each non-parameter argument with its .npy file. On simulated
  // devices (a module with a shard.grid) the files hold global tensors.
  shard::GridOp grid = findGrid(*module);
  SmallVector<reference::Tensor> args(func.getNumArguments());
  SmallVector<Type> argTypes(func.getArgumentTypes());
  bool dynamic = false;
  for (unsigned i = 0, next = 0; i < func.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(argTypes[i]);
    if (grid) {
      FailureOr<RankedTensorType> global = globalType(func, grid, i);
      if (failed(global))
        return failure();
      type = *global;
    }
    if (auto it = params->find(i); it != params->end()) {
      args[i] = it->second;
      continue;
    }
    // Named as the user numbered them: the n-th --input, from 1.
    const std::string &path = inputPaths[next++];
    rt::NpyArray npy;
    std::string error;
    if (!rt::readNpy(path, npy, error))
      return func.emitError(error);
    if (npy.shape.size() != static_cast<size_t>(type.getRank()) ||
        !llvm::all_of(llvm::zip(npy.shape, type.getShape()), [](auto p) {
          return ShapedType::isDynamic(std::get<1>(p)) ||
                 std::get<0>(p) == std::get<1>(p);
        }))
      return func.emitError("--input ")
             << next << " (" << path << ") has shape ["
             << llvm::make_range(npy.shape.begin(), npy.shape.end())
             << "] but @" << func.getSymName() << " expects " << type;
    std::optional<reference::Tensor> t = reference::decodeTensor(
        npy.type, npy.shape, npy.data, type.getElementType(), error);
    if (!t)
      return func.emitError("--input ") << next << " (" << path << "): "
                                        << error;
    dynamic |= !type.hasStaticShape();
    argTypes[i] = RankedTensorType::get(npy.shape, type.getElementType());
    args[i] = std::move(*t);
  }
  if (dynamic && failed(refineFunctionShapes(func, argTypes)))
    return failure();

  FailureOr<SmallVector<reference::Tensor>> results = failure();
  reference::RunStats stats;
  if (grid) {
    if (dynamic)
      return func.emitError("simulated devices need static shapes");
    FailureOr<DeviceRun> run = runOnDevices(*module, func, grid, args);
    if (failed(run))
      return failure();
    results = std::move(run->results);
    stats.peakLiveBytes = run->peakLiveBytes;
    stats.opsExecuted = run->opsExecuted;
    if (printStats)
      printDeviceStats(run->devices, run->collectives, "");
  } else if (engine == "cpu") {
    ConvertOberToLinalgOptions lowering;
    if (convolutions.getNumOccurrences())
      lowering.convolutions = convolutions;
    if (attention.getNumOccurrences())
      lowering.attention = attention;
    if (attentionBlock.getNumOccurrences())
      lowering.attentionBlock = attentionBlock;
    lowering.lowPrecisionProducts = lowPrecisionProducts;
    results = runCompiled(*module, func, args, lowering);
  } else {
    reference::Interpreter interpreter(*module);
    results = interpreter.run(func, args);
    stats = interpreter.getStats();
  }
  if (failed(results))
    return failure();

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return func.emitError("cannot create ")
             << outputDir << ": " << ec.message();
    for (auto [i, t] : llvm::enumerate(*results)) {
      SmallString<256> path(outputDir);
      llvm::sys::path::append(path, std::to_string(i) + ".npy");
      std::string error;
      if (!rt::writeNpy(path.str().str(), reference::toNpy(t), error))
        return func.emitError(error);
    }
  }
  if (printResults)
    for (auto [i, t] : llvm::enumerate(*results)) {
      llvm::outs() << "result #" << i << ": "
                   << RankedTensorType::get(t.getShape(), t.getElementType())
                   << " = ";
      printTensor(llvm::outs(), t);
      llvm::outs() << "\n";
    }
  if (printStats)
    llvm::errs() << "ops executed: " << stats.opsExecuted
                 << (grid ? " (on each device)" : "")
                 << "\npeak live bytes: " << stats.peakLiveBytes
                 << (grid ? " (the largest of the devices)" : "") << "\n";
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  hideForeignOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv, "Ober-Train reference interpreter\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the op; dumping whole functions into them is noise.
  context.printOpOnDiagnostic(false);
  ToolDiagnosticHandler handler(&context);
  return failed(runModel(context)) ? 1 : 0;
}
