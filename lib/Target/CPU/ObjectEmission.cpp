//===- ObjectEmission.cpp - LLVM IR and objects in the compiler process
//----===//
//
// Part of Ober-Train. After the CPU pipeline, the LLVM dialect becomes LLVM
// IR with the program's entry points (`ober_program_entries`, one per
// pipeline stage: the packed form of each function's C interface) and its
// manifest (`ober_program_manifest`),
// is optimized at O3 for the target CPU (the host's, with its vector
// extensions, unless told otherwise) and emitted as an object with LLVM's
// TargetMachine: no compiler is run as a subprocess.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Pipeline.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace {

/// The target machine for `cpu` ("native": the host's CPU and features).
FailureOr<std::unique_ptr<llvm::TargetMachine>>
targetMachine(StringRef cpu, llvm::CodeGenOptLevel level, Location loc) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc) << "no LLVM target for " << triple.str() << ": "
                          << error;
  std::string name = cpu.str(), features;
  if (cpu != "native") {
    // LLVM warns about an unknown CPU, then aborts in code generation.
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(name))
      return emitError(loc) << "--target-cpu: '" << name
                            << "' is not a CPU LLVM knows for "
                            << triple.str()
                            << " (native, or a CPU name as clang's -mcpu "
                               "takes it)";
  }
  if (cpu == "native") {
    name = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") +
                  std::string(feature.second ? "+" : "-") +
                  feature.first().str();
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, name, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!machine)
    return emitError(loc) << "cannot create a target machine for CPU '" << name
                          << "'";
  return machine;
}

/// `ober_program_run_<index>(void **args)`: calls the C interface of
/// `function` with args[0] as the results' address (when it has results)
/// and args[1...] as its arguments' descriptors.
FailureOr<llvm::Function *> addEntryPoint(llvm::Module &module,
                                          StringRef function, unsigned index,
                                          unsigned numArgs, Location loc) {
  llvm::Function *callee = module.getFunction(("_mlir_ciface_" + function).str());
  if (!callee)
    return emitError(loc) << "no C interface for @" << function
                          << " in the lowered module";
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  llvm::Function *entry = llvm::Function::Create(
      type, llvm::GlobalValue::InternalLinkage,
      "ober_program_run_" + std::to_string(index), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  unsigned skip = callee->arg_size() == numArgs ? 1 : 0;
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < callee->arg_size(); ++i) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, entry->getArg(0), i + skip);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
  return entry;
}

/// `ober_program_entries`: the entry points, by stage.
LogicalResult addEntryPoints(llvm::Module &module,
                             ArrayRef<std::string> functions, unsigned numArgs,
                             Location loc) {
  SmallVector<llvm::Constant *> entries;
  for (auto [i, f] : llvm::enumerate(functions)) {
    FailureOr<llvm::Function *> entry =
        addEntryPoint(module, f, static_cast<unsigned>(i), numArgs, loc);
    if (failed(entry))
      return failure();
    entries.push_back(*entry);
  }
  auto *ptr = llvm::PointerType::getUnqual(module.getContext());
  auto *type = llvm::ArrayType::get(ptr, entries.size());
  new llvm::GlobalVariable(
      module, type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantArray::get(type, entries), "ober_program_entries");
  return success();
}

void addManifest(llvm::Module &module, StringRef manifest) {
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(module.getContext(), manifest, true);
  new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text,
                           "ober_program_manifest");
}

/// Puts the GPU code's fatbins (the CUDA pipeline's `<module>_binary`
/// globals) in the `.nv_fatbin` section, where NVIDIA's tools (cuobjdump,
/// the profilers) look for device code in a host binary.
void placeFatbins(llvm::Module &module) {
  constexpr char kFatbinMagic[] = {'\x50', '\xed', '\x55', '\xba'};
  for (llvm::GlobalVariable &g : module.globals()) {
    auto *data = g.hasInitializer()
                     ? dyn_cast<llvm::ConstantDataSequential>(g.getInitializer())
                     : nullptr;
    if (!data || !data->isString() ||
        !data->getRawDataValues().starts_with(
            StringRef(kFatbinMagic, sizeof(kFatbinMagic))))
      continue;
    g.setSection(".nv_fatbin");
    g.setAlignment(llvm::Align(8));
  }
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              llvm::OptimizationLevel level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  // Vectorizers only where the code computes (the SLP vectorizer's cost
  // model is quadratic in a block's length: launch glue has long ones).
  bool computes = level == llvm::OptimizationLevel::O3;
  tuning.LoopVectorization = computes;
  tuning.SLPVectorization = computes;
  llvm::PassBuilder pb(&machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(level).run(module, mam);
}

} // namespace

LogicalResult mlir::ober::emitProgram(ModuleOp module,
                                      const ProgramEmission &what,
                                      llvm::raw_pwrite_stream &os) {
  Location loc = module.getLoc();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, ctx);
  if (!llvmModule)
    return emitError(loc) << "cannot translate the lowered module to LLVM IR";
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine = targetMachine(
      what.cpu,
      what.launchesOnly ? llvm::CodeGenOptLevel::None
                        : llvm::CodeGenOptLevel::Aggressive,
      loc);
  if (failed(machine))
    return failure();
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (failed(addEntryPoints(*llvmModule, what.functions, what.numArgs, loc)))
    return failure();
  addManifest(*llvmModule, what.manifest);
  placeFatbins(*llvmModule);
  optimize(*llvmModule, **machine,
           what.launchesOnly ? llvm::OptimizationLevel::O1
                             : llvm::OptimizationLevel::O3);
  if (what.kind == ProgramEmission::LLVMIR) {
    llvmModule->print(os, nullptr);
    return success();
  }
  llvm::legacy::PassManager pm;
  if ((*machine)->addPassesToEmitFile(pm, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return emitError(loc) << "the target cannot emit objects";
  pm.run(*llvmModule);
  return success();
}
