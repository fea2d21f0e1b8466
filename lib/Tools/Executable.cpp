//===- Executable.cpp - a compiled function as a training binary -----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/Executable.h"

#include "ober/Config.h"
#include "ober/Conversion/LoweringKinds.h"
#include "ober/Conversion/Passes.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Tools/IndexRanges.h"
#include "ober/Reference/TensorIO.h"
#include "ober/Runtime/Init.h"
#include "ober/Runtime/Weights.h"
#include "ober/Target/CPU/Pipeline.h"
#include "ober/Target/CUDA/Pipeline.h"
#include "ober/Tools/Devices.h"
#include "ober/Tools/ModelLoader.h"
#include "ober/Training/TrainStep.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/xxhash.h"

#include <set>

using namespace mlir;
using namespace mlir::ober;
namespace rt = ::ober::rt;

namespace {

/// The argument's type, which a program's manifest can describe.
FailureOr<std::pair<rt::DType, std::vector<int64_t>>>
tensorSpec(func::FuncOp func, Type type, StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<rt::DType> dtype =
      tensor ? reference::dtypeOf(tensor.getElementType()) : std::nullopt;
  if (!tensor || !tensor.hasStaticShape() || !dtype ||
      *dtype == rt::DType::Unicode) {
    InFlightDiagnostic error =
        func.emitError("ober-compile: ")
        << what << " is " << type
        << "; executables take tensors of static shape with f32, bf16, "
           "f16, f64, i64, i32 or i1 elements";
    if (tensor && !tensor.hasStaticShape())
      error << " (" << kOpenDimensionHint << ")";
    return error;
  }
  return std::make_pair(*dtype, std::vector<int64_t>(tensor.getShape().begin(),
                                                     tensor.getShape().end()));
}

std::string stringAttr(func::FuncOp func, unsigned i, StringRef name) {
  auto attr = func.getArgAttrOfType<StringAttr>(i, name);
  return attr ? attr.getValue().str() : "";
}

/// The role of argument `i` of a training step by its `ober.*` attribute.
std::optional<rt::ArgRole> trainRole(func::FuncOp func, unsigned i) {
  if (func.getArgAttr(i, OberDialect::kParamAttrName))
    return rt::ArgRole::Parameter;
  if (func.getArgAttr(i, OberDialect::kStateAttrName))
    return rt::ArgRole::State;
  if (func.getArgAttr(i, OberDialect::kBatchAttrName) ||
      func.getArgAttr(i, OberDialect::kInputAttrName))
    return rt::ArgRole::Batch;
  if (func.getArgAttr(i, OberDialect::kLearningRateAttrName))
    return rt::ArgRole::LearningRate;
  return std::nullopt;
}

/// Runs `cmd` and reports its output as an error when it fails.
LogicalResult runTool(ArrayRef<StringRef> cmd, Location loc) {
  SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("ober-link", "log", log))
    return emitError(loc) << "cannot create a temporary file";
  llvm::FileRemover remove(log);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(cmd.front(), cmd, std::nullopt, redirects,
                                     0, 0, &error);
  if (rc == 0)
    return success();
  auto text = llvm::MemoryBuffer::getFile(log);
  InFlightDiagnostic diag = emitError(loc) << "linking failed (" << cmd.front();
  for (StringRef a : cmd.drop_front())
    diag << " " << a;
  diag << "): " << (error.empty() ? "" : error + ": ")
       << (text ? (*text)->getBuffer().trim() : StringRef());
  return failure();
}

/// The runtime's static libraries: beside the tools (`bin/../lib`) or
/// where the build put them.
std::string runtimeLibraryDir() {
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  SmallString<256> dir(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(dir, "lib");
  SmallString<256> probe(dir);
  llvm::sys::path::append(probe, "libober_rt_main.a");
  if (llvm::sys::fs::exists(probe))
    return dir.str().str();
  return OBER_RUNTIME_LIBRARY_DIR;
}

LogicalResult link(StringRef object, StringRef output,
                   ExecutableOptions::Target target, Location loc) {
  std::string cxx = OBER_CXX_COMPILER;
  if (const char *env = std::getenv("OBER_CXX"))
    cxx = env;
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName(cxx);
  if (!driver)
    return emitError(loc) << "cannot find the linker driver '" << cxx
                          << "' (set OBER_CXX to a C++ compiler)";
  std::string lib = runtimeLibraryDir();
  std::string rtMain = lib + "/libober_rt_main.a",
              rtCpu = lib + "/libober_rt_cpu.a",
              rtMpi = lib + "/libober_rt_mpi.a", rtCore = lib + "/libober_rt.a",
              rtCudaMain = lib + "/libober_rt_main_cuda.a",
              rtCuda = lib + "/libober_rt_cuda.a";
  SmallVector<StringRef> cmd = {*driver, object, "-o", output};
  // The configured linker only with the configured driver (another one,
  // from OBER_CXX, may not take its flag).
  if (cxx == OBER_CXX_COMPILER && *OBER_EXECUTABLE_LINK_FLAGS)
    cmd.push_back(OBER_EXECUTABLE_LINK_FLAGS);
  if (target == ExecutableOptions::CUDA) {
    if (!llvm::sys::fs::exists(rtCuda))
      return emitError(loc) << "this build has no CUDA runtime (" << rtCuda
                            << "): configure with the CUDA toolkit's headers "
                               "(/usr/local/cuda)";
    // The driver and CUDA's libraries are opened when first needed
    // (dlopen): nothing of CUDA is linked.
    cmd.append({rtCudaMain, rtCuda, rtMpi, rtCore, "-ldl"});
  } else {
    cmd.append({rtMain, rtCpu, rtMpi, rtCore, OBER_DNNL_LIBRARY,
                OBER_OMP_LIBRARY, OBER_CPU_LINK_FLAGS});
  }
  SmallVector<StringRef> mpi;
  StringRef(OBER_MPI_LIBRARIES).split(mpi, ';', -1, /*KeepEmpty=*/false);
  cmd.append(mpi.begin(), mpi.end());
  SmallVector<StringRef> sanitizers;
  StringRef(OBER_SANITIZE_FLAGS)
      .split(sanitizers, ';', -1, /*KeepEmpty=*/false);
  cmd.append(sanitizers.begin(), sanitizers.end());
  cmd.append({"-lm", "-lpthread"});
  return runTool(cmd, loc);
}

/// Writes the parameters' values as safetensors to `path`.
LogicalResult writeParameters(func::FuncOp func,
                              const std::map<unsigned, reference::Tensor> &params,
                              StringRef path) {
  std::vector<rt::WeightData> weights;
  std::vector<std::vector<char>> storage;
  storage.reserve(params.size());
  for (const auto &[i, t] : params) {
    rt::WeightData w;
    w.name = stringAttr(func, i, OberDialect::kParamAttrName);
    std::vector<char> bytes;
    reference::encodeTensor(t, /*bf16AsF32=*/false, w.dtype, bytes);
    storage.push_back(std::move(bytes));
    w.shape.assign(t.getShape().begin(), t.getShape().end());
    w.data = storage.back().data();
    w.size = storage.back().size();
    weights.push_back(std::move(w));
  }
  std::string error;
  if (!rt::writeWeights(path.str(), weights, {{"format", "pt"}}, error))
    return func.emitError(error);
  return success();
}

/// The name function `name` links under: `ober_fn_<name>` (a model's
/// `main` must not become the executable's).
std::string linkName(StringRef name) { return ("ober_fn_" + name).str(); }

/// Functions with bodies renamed by linkName; declarations of the kernel
/// library keep their names.
LogicalResult renameForLinking(ModuleOp module) {
  SymbolTable table(module);
  for (auto f : llvm::to_vector(module.getOps<func::FuncOp>())) {
    if (f.isExternal())
      continue;
    if (failed(table.rename(f, linkName(f.getSymName()))))
      return f.emitError("cannot rename for linking");
  }
  return success();
}

/// The results the pipeline wrote into their arguments' buffers (the
/// entry's `ober_cpu.results_in_place`: result, argument) are marked in
/// the manifest for `stage`: its function does not return them.
void markResultsInPlace(ModuleOp lowered, StringRef entry, int64_t stage,
                        rt::Program &program) {
  Operation *f = SymbolTable::lookupSymbolIn(lowered, entry);
  auto pairs = f ? f->getAttrOfType<ArrayAttr>(kResultsInPlaceAttrName)
                 : ArrayAttr();
  if (!pairs)
    return;
  for (Attribute pair : pairs) {
    auto p = cast<DenseI64ArrayAttr>(pair);
    program.results[p[0]].inPlace[stage] = p[1];
  }
}

/// The model FLOPs, a device's peak and the predictions of the planner's
/// report (left at 0 when it lacks them).
void readPlanFacts(StringRef path, rt::Program &program) {
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return;
  llvm::Expected<llvm::json::Value> report =
      llvm::json::parse((*text)->getBuffer());
  if (!report) {
    llvm::consumeError(report.takeError());
    return;
  }
  const llvm::json::Object *o = report->getAsObject();
  if (!o)
    return;
  double flops = o->getNumber("model_flops_per_step").value_or(0);
  double time = o->getNumber("step_time_s").value_or(0);
  double mfu = o->getNumber("mfu").value_or(0);
  double gpus = o->getNumber("gpus").value_or(0);
  if (flops <= 0 || time <= 0 || mfu <= 0 || gpus <= 0)
    return;
  program.modelFlops = flops;
  program.predictedStepTime = time;
  program.predictedMfu = mfu;
  program.predictedPeakMemory = o->getNumber("peak_memory_bytes").value_or(0);
  // mfu = flops / (time x devices x peak).
  program.peakFlops = flops / (time * gpus * mfu);
}

/// The (sending, receiving) stage pairs of the sends along the pipeline
/// axis in `stages` (the function of each stage), in order, each once.
std::vector<std::pair<int64_t, int64_t>>
stageTransfers(ArrayRef<func::FuncOp> stages, int64_t pipelineAxis) {
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (size_t stage = 0; stage < stages.size(); ++stage) {
    func::FuncOp f = stages[stage];
    f.walk([&](shard::SendOp send) {
      std::optional<ArrayRef<int64_t>> to = send.getDestination();
      if (send.getGridAxes().size() == 1 &&
          send.getGridAxes()[0] == pipelineAxis && to && to->size() == 1)
        pairs.emplace(static_cast<int64_t>(stage), (*to)[0]);
    });
  }
  return {pairs.begin(), pairs.end()};
}

} // namespace

FailureOr<rt::Program> mlir::ober::describeProgram(func::FuncOp func,
                                                   bool inference) {
  rt::Program program;
  program.kind = inference ? rt::Program::Inference : rt::Program::Train;
  auto module = func->getParentOfType<ModuleOp>();
  shard::GridOp grid = module ? findGrid(module) : shard::GridOp();
  SmallVector<func::FuncOp> stages = {func};
  if (grid) {
    program.grid.assign(grid.getShape().begin(), grid.getShape().end());
    FailureOr<SmallVector<func::FuncOp>> found =
        stageFunctions(module, func, grid, program.pipelineAxis);
    if (failed(found))
      return failure();
    stages = *found;
    program.stages = static_cast<int64_t>(stages.size());
    program.transfers = stageTransfers(stages, program.pipelineAxis);
    auto steps = func->getAttrOfType<IntegerAttr>("ober.local_steps");
    auto axis = func->getAttrOfType<IntegerAttr>("ober.replica_axis");
    if (steps && axis && steps.getInt() > 1) {
      program.localSteps = steps.getInt();
      program.replicaAxis = axis.getInt();
    }
  }
  auto splitOrWhole = [&](unsigned i, bool result,
                          rt::Split &out) -> LogicalResult {
    if (!grid)
      return success();
    FailureOr<rt::Split> split = splitOf(func, grid, i, result);
    if (failed(split))
      return failure();
    out = *split;
    return success();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    rt::ProgramArg arg;
    if (func.getArgAttr(i, OberDialect::kParamAttrName)) {
      arg.role = rt::ArgRole::Parameter;
    } else if (inference) {
      arg.role = rt::ArgRole::Input;
    } else if (std::optional<rt::ArgRole> role = trainRole(func, i)) {
      arg.role = *role;
    } else {
      return func.emitError("ober-compile: argument #")
             << i << " of the training step is not a parameter, optimizer "
             << "state, batch or learning rate";
    }
    std::string what = "argument #" + std::to_string(i);
    auto spec = tensorSpec(func, func.getArgumentTypes()[i], what);
    if (failed(spec))
      return failure();
    std::tie(arg.dtype, arg.shape) = *spec;
    for (StringRef attr :
         {OberDialect::kParamAttrName, OberDialect::kStateAttrName,
          OberDialect::kBatchAttrName, OberDialect::kInputAttrName})
      if (arg.name.empty())
        arg.name = stringAttr(func, i, attr);
    if (arg.name.empty())
      arg.name = arg.role == rt::ArgRole::LearningRate
                     ? "lr"
                     : "input" + std::to_string(
                                     program.argsWith(arg.role).size());
    if (arg.role == rt::ArgRole::Parameter) {
      arg.init = rt::initKindOf(arg.name, arg.shape.size());
      arg.initKey = llvm::xxh3_64bits(arg.name);
    }
    if (failed(splitOrWhole(i, /*result=*/false, arg.split)))
      return failure();
    program.args.push_back(std::move(arg));
  }
  std::vector<size_t> params = program.argsWith(rt::ArgRole::Parameter),
                      states = program.argsWith(rt::ArgRole::State);
  size_t lossResult = params.size() + states.size();
  bool gradNorm = !inference && returnsGradNorm(func);
  if (!inference && func.getNumResults() != lossResult + 1 + gradNorm)
    return func.emitError("ober-compile: a training step returns its ")
           << params.size() << " parameter(s), " << states.size()
           << " state tensor(s), the loss"
           << (gradNorm ? " and the gradient norm" : "")
           << "; this one returns " << func.getNumResults() << " value(s)";
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    rt::ProgramResult res;
    auto spec = tensorSpec(func, func.getResultTypes()[r],
                           "result #" + std::to_string(r));
    if (failed(spec))
      return failure();
    std::tie(res.dtype, res.shape) = *spec;
    res.inPlace.assign(program.stages, -1);
    if (failed(splitOrWhole(r, /*result=*/true, res.split)))
      return failure();
    if (auto stage = func.getResultAttrOfType<IntegerAttr>(r, "ober.stage");
        stage && program.stages > 1)
      res.stage = stage.getInt();
    if (inference) {
      res.role = rt::ResultRole::Output;
    } else if (r < params.size()) {
      res.role = rt::ResultRole::Parameter;
      res.arg = params[r];
    } else if (r < params.size() + states.size()) {
      res.role = rt::ResultRole::State;
      res.arg = states[r - params.size()];
    } else if (r == lossResult) {
      res.role = rt::ResultRole::Loss;
    } else {
      res.role = rt::ResultRole::GradNorm;
    }
    program.results.push_back(std::move(res));
  }
  // The throughput's units: samples per step (micro-batches times their
  // samples), and tokens per sample when the first batch input is ids.
  std::vector<size_t> batches = program.argsWith(rt::ArgRole::Batch);
  if (!inference && !batches.empty()) {
    const rt::ProgramArg &first = program.args[batches.front()];
    std::vector<int64_t> shape = rt::globalShape(
        first.shape, first.split,
        rt::Grid(program.grid.empty() ? std::vector<int64_t>{1}
                                      : program.grid));
    int64_t micro = 1;
    if (auto step = func->getAttrOfType<DictionaryAttr>(
            OberDialect::kTrainStepAttrName))
      if (auto m = step.getAs<IntegerAttr>("micro_batches"))
        micro = m.getInt();
    size_t lead = micro > 1 ? 2 : 1;
    if (shape.size() >= lead) {
      program.samplesPerStep = shape[0] * (lead == 2 ? shape[1] : 1);
      bool ids = first.dtype == rt::DType::I64 || first.dtype == rt::DType::I32;
      if (ids && shape.size() > lead) {
        program.tokensPerSample = 1;
        for (size_t d = lead; d < shape.size(); ++d)
          program.tokensPerSample *= shape[d];
      }
    }
  }
  // Which stages read each argument (an update from its owner goes
  // there); returning it unchanged as its own new value is no read (the
  // executable sees from the stage's in-place results whether that
  // touches the buffer).
  if (stages.size() > 1)
    for (auto [i, arg] : llvm::enumerate(program.args))
      for (auto [s, f] : llvm::enumerate(stages)) {
        bool reads = false;
        for (OpOperand &use : f.getArgument(i).getUses()) {
          unsigned r = use.getOperandNumber();
          reads |= !isa<func::ReturnOp>(use.getOwner()) ||
                   program.results[r].arg != static_cast<int64_t>(i);
        }
        if (reads)
          arg.readBy.push_back(static_cast<int64_t>(s));
      }
  describeIndexRanges(func, inference, program);
  return program;
}

/// The library kernels the lowered module calls, which the executable
/// creates before its first step.
static void listKernels(ModuleOp lowered, rt::Program &program) {
  auto kernels = lowered->getAttrOfType<ArrayAttr>(kKernelsAttrName);
  if (!kernels)
    return;
  for (auto use : kernels.getAsRange<DictionaryAttr>()) {
    auto name = use.getAs<StringAttr>("name");
    auto desc = use.getAs<DenseI64ArrayAttr>("desc");
    if (name && desc)
      program.kernels.push_back(
          {name.str(), std::vector<int64_t>(desc.asArrayRef().begin(),
                                            desc.asArrayRef().end())});
  }
}

LogicalResult mlir::ober::buildExecutable(ModuleOp module, func::FuncOp func,
                                          bool inference,
                                          const ExecutableOptions &options) {
  Location loc = func.getLoc();
  FailureOr<rt::Program> program = describeProgram(func, inference);
  if (failed(program))
    return failure();
  program->model = options.model;
  if (!options.planReport.empty())
    readPlanFacts(options.planReport, *program);

  // The parameters' values beside the executable, as safetensors (ONNX
  // initializers and the module's weights file alike); a module without
  // weights starts from the executable's --init-seed.
  bool hasWeights = !options.weights.empty() ||
                    module->hasAttr(OberDialect::kWeightsAttrName);
  bool writesExecutable = options.emit == ExecutableOptions::Executable;
  if (hasWeights && !program->argsWith(rt::ArgRole::Parameter).empty() &&
      writesExecutable) {
    SmallString<256> modelDir(options.model);
    llvm::sys::path::remove_filename(modelDir);
    FailureOr<std::map<unsigned, reference::Tensor>> params =
        loadParameters(func, modelDir, options.weights);
    if (failed(params))
      return failure();
    std::string path = options.output + ".safetensors";
    if (failed(writeParameters(func, *params, path)))
      return failure();
    program->weights = llvm::sys::path::filename(path).str();
  }

  // A step writes its new parameters and optimizer state over the old.
  SmallVector<bool> writable;
  for (const rt::ProgramArg &a : program->args)
    writable.push_back(!inference && (a.role == rt::ArgRole::Parameter ||
                                      a.role == rt::ArgRole::State));
  int64_t pipelineAxis = -1;
  FailureOr<SmallVector<func::FuncOp>> stages =
      stageFunctions(module, func, findGrid(module), pipelineAxis);
  if (failed(stages))
    return failure();
  OwningOpRef<ModuleOp> lowered = prepareForCodegen(module, *stages, writable);
  if (failed(renameForLinking(*lowered)))
    return failure();
  PassManager pm(module.getContext());
  if (options.target == ExecutableOptions::CUDA) {
    CUDAPipelineOptions cuda;
    cuda.chips = options.cudaChips;
    if (std::string wrong = cuda.checkChips(); !wrong.empty())
      return emitError(loc) << "--cuda-chips: " << wrong;
    if (!options.attention.empty())
      cuda.attention = options.attention;
    cuda.attentionBlock = options.attentionBlock;
    buildCUDAPipeline(pm, cuda);
  } else {
    ConvertOberToLinalgOptions lowering;
    if (options.attention == "flash")
      return emitError(loc) << kFlashNeedsCUDA;
    if (!options.attention.empty())
      lowering.attention = options.attention;
    lowering.attentionBlock = options.attentionBlock;
    if (options.cudaMappingOnCPU)
      buildCUDAMappingOnCPUPipeline(pm, lowering);
    else
      buildCPUPipeline(pm, lowering);
  }
  if (failed(pm.run(*lowered)))
    return failure();
  std::vector<std::string> entries;
  for (auto [stage, f] : llvm::enumerate(*stages)) {
    entries.push_back(linkName(f.getSymName()));
    markResultsInPlace(*lowered, entries.back(), stage, *program);
  }
  listKernels(*lowered, *program);
  if (auto groups = (*lowered)->getAttrOfType<ArrayAttr>(kGroupsAttrName))
    for (auto axes : groups.getAsRange<DenseI64ArrayAttr>())
      program->groups.emplace_back(axes.asArrayRef().begin(),
                                   axes.asArrayRef().end());

  std::string target = options.output;
  if (options.emit == ExecutableOptions::MLIR) {
    std::string error;
    auto out = openOutputFile(target, &error);
    if (!out)
      return emitError(loc) << error;
    lowered->print(out->os());
    out->keep();
    return success();
  }
  ProgramEmission emission;
  emission.kind = options.emit == ExecutableOptions::LLVMIR
                      ? ProgramEmission::LLVMIR
                      : ProgramEmission::Object;
  emission.functions = entries;
  emission.numArgs = func.getNumArguments();
  emission.manifest = rt::writeProgram(*program);
  emission.cpu = options.cpu;
  emission.launchesOnly = options.target == ExecutableOptions::CUDA ||
                          options.cudaMappingOnCPU;
  SmallString<128> object;
  if (writesExecutable) {
    if (llvm::sys::fs::createTemporaryFile("ober-program", "o", object))
      return emitError(loc) << "cannot create a temporary object file";
    target = object.str().str();
  }
  llvm::FileRemover removeObject(object);
  {
    std::string error;
    auto out = openOutputFile(target, &error);
    if (!out)
      return emitError(loc) << error;
    if (failed(emitProgram(*lowered, emission, out->os())))
      return failure();
    out->keep();
  }
  if (!writesExecutable)
    return success();
  return link(object, options.output, options.target, loc);
}
