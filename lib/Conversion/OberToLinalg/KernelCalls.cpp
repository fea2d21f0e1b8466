//===- KernelCalls.cpp - calls into the CPU kernel library -----------------===//
//
// Part of Ober-Train. Matrix products and convolutions go to the kernel
// library (ober/Runtime/CPUKernels.h) as calls on buffers, written on
// tensors so that one-shot bufferization places them:
//
//   %a = bufferization.to_buffer %x read_only : tensor<..> to memref<..>
//   %y = memref.alloc() : memref<..>
//   func.call @ober_rt_cpu_matmul(%desc, %a, ..., %y)   (unranked memrefs)
//   %r = bufferization.to_tensor %y restrict writable
//
// Operands are dense row-major f32 buffers (to_buffer with the identity
// layout copies a strided view); other float types are widened first and
// the result narrowed after, except for matrix products kept in bf16 or
// f16 (low-precision-products: the CUDA target's, for its tensor cores).
// The descriptor is a
// constant global of i64.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Conversion/Passes.h"
#include "ober/Conversion/RuntimeCalls.h"
#include "ober/Runtime/CPUKernels.h"
#include "ober/Runtime/DType.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

/// The constant global holding `fields` for kernel `name`
/// (`@__<name>_desc<n>`); a new one is listed in the module's
/// kKernelsAttrName.
static memref::GlobalOp kernelDescriptor(OpBuilder &b, ModuleOp module,
                                         StringRef name,
                                         ArrayRef<int64_t> fields) {
  bool created = false;
  memref::GlobalOp global = descriptorGlobal(
      b, module, ("__" + name + "_desc").str(), fields, &created);
  if (!created)
    return global;
  SmallVector<Attribute> kernels;
  if (auto listed = module->getAttrOfType<ArrayAttr>(kKernelsAttrName))
    kernels.assign(listed.begin(), listed.end());
  kernels.push_back(b.getDictionaryAttr(
      {b.getNamedAttr("name", b.getStringAttr(name)),
       b.getNamedAttr("desc", b.getDenseI64ArrayAttr(fields))}));
  module->setAttr(kKernelsAttrName, b.getArrayAttr(kernels));
  return global;
}

Value lowering::widenTo(OpBuilder &b, Location loc, Value v, Type element) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == element)
    return v;
  return mapElements(b, loc, type.clone(element), v,
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return arith::ExtFOp::create(nb, l, element, a[0]);
                     });
}

Value lowering::asF32(OpBuilder &b, Location loc, Value v) {
  return widenTo(b, loc, v, b.getF32Type());
}

Value lowering::readOnlyBuffer(OpBuilder &b, Location loc, Value v,
                               Type element) {
  Value dense = widenTo(b, loc, v, element);
  auto type = cast<RankedTensorType>(dense.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), element), dense,
      /*read_only=*/true);
}

Value lowering::newRuntimeBuffer(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> shape, Type element) {
  return memref::AllocOp::create(b, loc, MemRefType::get(shape, element),
                                 b.getI64IntegerAttr(kRuntimeBufferAlignment));
}

Value lowering::tensorOfBuffer(OpBuilder &b, Location loc, Value buffer,
                               RankedTensorType result) {
  Type stored = cast<MemRefType>(buffer.getType()).getElementType();
  Value tensor = bufferization::ToTensorOp::create(
      b, loc, result.clone(stored), buffer, /*restrict=*/true,
      /*writable=*/true);
  if (result.getElementType() == stored)
    return tensor;
  return mapElements(b, loc, result, tensor,
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return narrow(nb, l, a[0], result.getElementType());
                     });
}

Type lowering::libraryMatmulType(Type result, bool lowPrecision) {
  if (lowPrecision && (result.isBF16() || result.isF16()))
    return result;
  return Float32Type::get(result.getContext());
}

int64_t lowering::matmulDTypeField(Type element) {
  using ::ober::rt::DType;
  DType type = element.isBF16()  ? DType::BF16
                   : element.isF16() ? DType::F16
                                     : DType::F32;
  return static_cast<int64_t>(type);
}

std::string lowering::matmulKernelName(Type element) {
  std::string name = OBER_RT_CPU_MATMUL;
  if (element.isBF16())
    name += OBER_RT_MATMUL_SUFFIX_BF16;
  else if (element.isF16())
    name += OBER_RT_MATMUL_SUFFIX_F16;
  return name;
}

Value lowering::callKernel(OpBuilder &b, Location loc, StringRef name,
                           ArrayRef<int64_t> fields, ValueRange inputs,
                           RankedTensorType result, Type element) {
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  SmallVector<Value> args = {
      descriptorValue(b, loc, kernelDescriptor(b, module, name, fields))};
  for (Value in : inputs)
    args.push_back(
        unrankedBuffer(b, loc, readOnlyBuffer(b, loc, in, element)));
  Value out = newRuntimeBuffer(b, loc, result.getShape(), element);
  args.push_back(unrankedBuffer(b, loc, out));
  func::CallOp::create(
      b, loc, runtimeFunction(b, module, name, ValueRange(args).getTypes(), {}),
      args);
  return tensorOfBuffer(b, loc, out, result);
}
