//===- Fatbin.cpp - one fatbin per GPU binary, every chip in it -----------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
// Upstream `gpu-module-to-binary` makes one object per target and the host
// code embeds one of them (`#gpu.select_object`): code for sm_90 does not
// run on an A100, and code for sm_80 runs on an H100 without Hopper's
// instructions. NVIDIA's fatbin holds machine code for each chip and PTX
// for later ones; the driver picks what fits the GPU it finds.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"
#include "ober/Target/CUDA/Pipeline.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace mlir::ober {
#define GEN_PASS_DEF_FATBINPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// Temporary files removed when the pass is done with a binary.
struct TempFiles {
  SmallVector<std::string> paths;
  ~TempFiles() {
    for (const std::string &p : paths)
      llvm::sys::fs::remove(p);
  }
  FailureOr<std::string> make(StringRef prefix, StringRef suffix) {
    SmallString<128> path;
    if (llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return failure();
    paths.push_back(std::string(path));
    return paths.back();
  }
};

/// Runs `args` (args[0] the program); on failure reports its output.
LogicalResult runTool(Operation *at, ArrayRef<std::string> args,
                      TempFiles &temps) {
  FailureOr<std::string> log = temps.make("ober-cuda-tool", "log");
  if (failed(log))
    return at->emitError("cannot create a temporary file for ") << args[0];
  SmallVector<StringRef> argv(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(*log),
                                          StringRef(*log)};
  std::string error;
  int code = llvm::sys::ExecuteAndWait(args[0], argv, std::nullopt,
                                       redirects, 0, 0, &error);
  if (code == 0)
    return success();
  std::string output;
  if (auto buffer = llvm::MemoryBuffer::getFile(*log))
    output = (*buffer)->getBuffer().str();
  return at->emitError() << llvm::sys::path::filename(args[0]) << " failed ("
                         << (error.empty() ? "exit " + std::to_string(code)
                                           : error)
                         << "): " << StringRef(output).trim();
}

LogicalResult writeFile(StringRef path, StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return failure();
  os << data;
  os.close();
  return failure(os.has_error());
}

/// The SM number of `chip` ("sm_90a" -> "90a").
StringRef smOf(StringRef chip) { return chip.drop_front(3); }

/// Replaces the PTX objects of `binary` by one fatbin.
LogicalResult packBinary(gpu::BinaryOp binary, StringRef ptxas,
                         StringRef fatbinary, bool embedPTX) {
  TempFiles temps;
  SmallVector<std::string> pack = {fatbinary.str(), "-64"};
  std::string newestPTX;
  StringRef newestChip;
  Attribute firstTarget;
  for (Attribute a : binary.getObjects()) {
    auto object = cast<gpu::ObjectAttr>(a);
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError("ober-cuda-fatbin: expects PTX objects for "
                              "#nvvm.target chips (gpu-module-to-binary "
                              "format=isa), got ")
             << object;
    StringRef chip = target.getChip();
    if (!chip.starts_with("sm_"))
      return binary.emitError("ober-cuda-fatbin: chip '")
             << chip << "' is not an sm_NN name";
    FailureOr<std::string> ptx = temps.make("ober-" + chip.str(), "ptx");
    FailureOr<std::string> cubin = temps.make("ober-" + chip.str(), "cubin");
    if (failed(ptx) || failed(cubin) ||
        failed(writeFile(*ptx, object.getObject().getValue())))
      return binary.emitError("ober-cuda-fatbin: cannot write temporary "
                              "files for ")
             << chip;
    std::string arch = "-arch=" + chip.str();
    if (failed(runTool(binary, {ptxas.str(), arch, "-O3", *ptx, "-o", *cubin},
                       temps)))
      return failure();
    pack.push_back("--image3=kind=elf,sm=" + smOf(chip).str() +
                   ",file=" + *cubin);
    if (!firstTarget)
      firstTarget = target;
    // The newest chip's PTX (by SM number) is the one later GPUs compile;
    // an arch-specific one (sm_90a) runs on its own chip only.
    int sm = 0, newest = 0;
    smOf(chip).take_while(llvm::isDigit).getAsInteger(10, sm);
    if (!newestChip.empty())
      smOf(newestChip).take_while(llvm::isDigit).getAsInteger(10, newest);
    bool portable = llvm::isDigit(chip.back());
    if (portable && (newestChip.empty() || sm > newest)) {
      newestChip = chip;
      newestPTX = *ptx;
    }
  }
  if (!firstTarget)
    return binary.emitError("ober-cuda-fatbin: the binary has no objects");
  if (embedPTX && !newestChip.empty())
    pack.push_back("--image3=kind=ptx,sm=" + smOf(newestChip).str() +
                   ",file=" + newestPTX);
  FailureOr<std::string> out = temps.make("ober", "fatbin");
  if (failed(out))
    return binary.emitError("ober-cuda-fatbin: cannot create the fatbin file");
  pack.push_back("--create=" + *out);
  if (failed(runTool(binary, pack, temps)))
    return failure();
  auto image = llvm::MemoryBuffer::getFile(*out, /*IsText=*/false);
  if (!image)
    return binary.emitError("ober-cuda-fatbin: cannot read ") << *out;
  MLIRContext *ctx = binary.getContext();
  auto object = gpu::ObjectAttr::get(
      ctx, firstTarget, gpu::CompilationTarget::Fatbin,
      StringAttr::get(ctx, (*image)->getBuffer()), DictionaryAttr(), nullptr);
  binary.setObjectsAttr(ArrayAttr::get(ctx, {object}));
  return success();
}

struct Fatbin : public ober::impl::FatbinPassBase<Fatbin> {
  using FatbinPassBase::FatbinPassBase;

  void runOnOperation() override {
    SmallVector<gpu::BinaryOp> binaries(
        getOperation().getOps<gpu::BinaryOp>());
    if (binaries.empty())
      return;
    std::string root = ober::findCUDAToolkit(toolkit);
    auto inBin = [&](StringRef name) -> std::string {
      if (root.empty())
        return "";
      SmallString<128> path(root);
      llvm::sys::path::append(path, "bin", name);
      return std::string(path);
    };
    std::string ptxas = inBin("ptxas"), fatbinary = inBin("fatbinary");
    for (auto [tool, path] : {std::pair("ptxas", &ptxas),
                              std::pair("fatbinary", &fatbinary)})
      if (path->empty()) {
        binaries.front().emitError("ober-cuda-fatbin: no ")
            << tool
            << " (a CUDA toolkit root with bin/ptxas and bin/fatbinary: "
               "toolkit=, CUDA_ROOT, CUDA_HOME, CUDA_PATH, PATH or "
               "/usr/local/cuda): install the CUDA toolkit";
        return signalPassFailure();
      }
    for (gpu::BinaryOp binary : binaries)
      if (failed(packBinary(binary, ptxas, fatbinary, embedPTX)))
        return signalPassFailure();
  }
};

} // namespace
