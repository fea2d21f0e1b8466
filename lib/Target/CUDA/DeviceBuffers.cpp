//===- DeviceBuffers.cpp - constants and library calls on the device ------===//
//
// Part of Ober-Train. See the descriptions of ober-cuda-constants-on-device
// and ober-cuda-kernel-calls in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "ober/Conversion/Passes.h"
#include "ober/Runtime/CPUKernels.h"
#include "ober/Runtime/Collectives.h"
#include "ober/Runtime/CUDAKernels.h"

namespace mlir::ober {
#define GEN_PASS_DEF_CONSTANTSONDEVICEPASS
#define GEN_PASS_DEF_KERNELCALLSPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// Whether `use` is a runtime library call's descriptor (its first
/// operand), which the library reads on the host.
bool descriptorUse(OpOperand &use) {
  auto call = dyn_cast<func::CallOp>(use.getOwner());
  return call && use.getOperandNumber() == 0 &&
         call.getCallee().starts_with("ober_rt_") &&
         !call.getCallee().starts_with(OBER_RT_CUDA_UPLOAD);
}

/// Whether every use of `v` (through casts) is a library descriptor.
bool onlyCalls(Value v) {
  return llvm::all_of(v.getUses(), [](OpOperand &use) {
    if (auto cast = dyn_cast<memref::CastOp>(use.getOwner()))
      return onlyCalls(cast.getResult());
    return descriptorUse(use);
  });
}

/// The `ober_rt_cuda_upload` declaration (dst, src: unranked memrefs of
/// `element`), made on first use.
func::FuncOp uploadFunction(ModuleOp module, Type element) {
  std::string name =
      std::string(OBER_RT_CUDA_UPLOAD) + "_" +
      std::to_string(element.getIntOrFloatBitWidth()) + "bit";
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto unranked = UnrankedMemRefType::get(element, 0);
  auto f = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType({unranked, unranked}, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

LogicalResult moveToDevice(memref::GetGlobalOp get, ModuleOp module) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  auto type = get.getType();
  if (!global || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return get.emitOpError("the CUDA target needs a statically shaped, "
                           "row-major constant");
  auto value = dyn_cast_or_null<DenseElementsAttr>(
      global.getInitialValue().value_or(Attribute()));
  if (!value)
    return get.emitOpError("the CUDA target needs a dense initial value");
  OpBuilder b(get);
  b.setInsertionPointAfter(get);
  Location loc = get.getLoc();
  Value buffer = memref::AllocOp::create(b, loc, type);
  Type element = type.getElementType();
  Operation *source = nullptr; // the upload's view of the constant
  if (value.isSplat()) {
    auto scalar = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(value.getSplatValue<Attribute>()));
    linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{buffer});
  } else {
    if (!element.isIntOrFloat())
      return get.emitOpError("constants of ")
             << element << " cannot be copied to the device";
    auto unranked = UnrankedMemRefType::get(element, 0);
    Value dst = memref::CastOp::create(b, loc, unranked, buffer);
    Value src = memref::CastOp::create(b, loc, unranked, get.getResult());
    source = src.getDefiningOp();
    func::CallOp::create(b, loc, uploadFunction(module, element),
                         ValueRange{dst, src});
  }
  get.getResult().replaceUsesWithIf(buffer, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (user == source)
      return false;
    if (auto cast = dyn_cast<memref::CastOp>(user))
      return !onlyCalls(cast.getResult());
    return !descriptorUse(use);
  });
  return success();
}

struct ConstantsOnDevice
    : public mlir::ober::impl::ConstantsOnDevicePassBase<ConstantsOnDevice> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::GetGlobalOp> gets;
    module.walk([&](memref::GetGlobalOp get) {
      if (!onlyCalls(get.getResult()))
        gets.push_back(get);
    });
    for (memref::GetGlobalOp get : gets)
      if (failed(moveToDevice(get, module)))
        return signalPassFailure();
  }
};

/// The CPU library's matrix products (f32, bf16, f16) and CUDA's.
constexpr std::pair<const char *, const char *> kMatmuls[] = {
    {OBER_RT_CPU_MATMUL, OBER_RT_CUDA_MATMUL},
    {OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_BF16,
     OBER_RT_CUDA_MATMUL OBER_RT_MATMUL_SUFFIX_BF16},
    {OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_F16,
     OBER_RT_CUDA_MATMUL OBER_RT_MATMUL_SUFFIX_F16}};

struct KernelCalls : public mlir::ober::impl::KernelCallsPassBase<KernelCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    WalkResult result = module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      for (auto [cpu, cuda] : kMatmuls)
        if (callee == cpu) {
          call.setCalleeAttr(FlatSymbolRefAttr::get(ctx, cuda));
          return WalkResult::advance();
        }
      // Collectives and pipeline transfers run on device buffers through
      // the executable's NCCL channel.
      if (callee.starts_with(OBER_RT_COLL_START) ||
          callee.starts_with(OBER_RT_COLL_WAIT))
        return WalkResult::advance();
      if (callee.starts_with("ober_rt_cpu_")) {
        call.emitOpError("'")
            << callee
            << "' has no CUDA kernel (the CUDA target runs matrix products "
               "through cuBLASLt and lowers convolutions with "
               "convolutions=gemm)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The CPU library's kernels to create ahead of the first step: none
    // here (cuBLASLt picks and caches an algorithm per shape).
    module->removeAttr(mlir::ober::kKernelsAttrName);
    for (auto [cpu, cuda] : kMatmuls)
      if (auto decl = module.lookupSymbol<func::FuncOp>(cpu)) {
        if (module.lookupSymbol(cuda))
          decl.erase();
        else
          decl.setSymNameAttr(StringAttr::get(ctx, cuda));
      }
  }
};

} // namespace
