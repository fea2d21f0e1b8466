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
// the result narrowed after. The descriptor is a constant global of i64.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

/// The buffer alignment of kernel operands and results (a cache line).
static constexpr int64_t kKernelAlignment = 64;

/// The constant global holding `fields` for kernel `name`
/// (`@__<name>_desc<n>`), shared by calls with equal fields; a new one is
/// listed in the module's kKernelsAttrName.
static memref::GlobalOp descriptorGlobal(OpBuilder &b, ModuleOp module,
                                         StringRef name,
                                         ArrayRef<int64_t> fields) {
  auto type = MemRefType::get({static_cast<int64_t>(fields.size())},
                              b.getI64Type());
  auto value = DenseIntElementsAttr::get(
      RankedTensorType::get(type.getShape(), b.getI64Type()), fields);
  std::string prefix = ("__" + name + "_desc").str();
  unsigned count = 0;
  for (auto global : module.getOps<memref::GlobalOp>()) {
    if (!global.getSymName().starts_with(prefix))
      continue;
    if (global.getInitialValueAttr() == value)
      return global;
    ++count;
  }
  SmallVector<Attribute> kernels;
  if (auto listed = module->getAttrOfType<ArrayAttr>(kKernelsAttrName))
    kernels.assign(listed.begin(), listed.end());
  kernels.push_back(b.getDictionaryAttr(
      {b.getNamedAttr("name", b.getStringAttr(name)),
       b.getNamedAttr("desc", b.getDenseI64ArrayAttr(fields))}));
  module->setAttr(kKernelsAttrName, b.getArrayAttr(kernels));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  std::string symbol = prefix + std::to_string(count);
  while (module.lookupSymbol(symbol))
    symbol = prefix + std::to_string(++count);
  return memref::GlobalOp::create(
      b, module.getLoc(), symbol, b.getStringAttr("private"), type, value,
      /*constant=*/true, /*alignment=*/IntegerAttr());
}

/// The declaration of kernel `name` taking `arity` unranked buffers (the
/// descriptor first), with MLIR's C interface.
static func::FuncOp kernelDeclaration(OpBuilder &b, ModuleOp module,
                                      StringRef name, unsigned arity) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  SmallVector<Type> inputs = {UnrankedMemRefType::get(b.getI64Type(), 0)};
  inputs.append(arity - 1, UnrankedMemRefType::get(b.getF32Type(), 0));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

static Value unranked(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), memref);
}

Value lowering::asF32(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  return mapElements(b, loc, type.clone(b.getF32Type()), v,
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return arith::ExtFOp::create(nb, l, nb.getF32Type(),
                                                    a[0]);
                     });
}

Value lowering::callKernel(OpBuilder &b, Location loc, StringRef name,
                           ArrayRef<int64_t> fields, ValueRange inputs,
                           RankedTensorType result) {
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Type f32 = b.getF32Type();
  memref::GlobalOp desc = descriptorGlobal(b, module, name, fields);
  SmallVector<Value> args = {unranked(
      b, loc,
      memref::GetGlobalOp::create(b, loc, desc.getType(), desc.getSymName()))};
  for (Value in : inputs) {
    Value dense = asF32(b, loc, in);
    auto type = cast<RankedTensorType>(dense.getType());
    Value buffer = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), f32), dense,
        /*read_only=*/true);
    args.push_back(unranked(b, loc, buffer));
  }
  auto outType = MemRefType::get(result.getShape(), f32);
  Value out = memref::AllocOp::create(b, loc, outType,
                                      b.getI64IntegerAttr(kKernelAlignment));
  args.push_back(unranked(b, loc, out));
  func::CallOp::create(b, loc,
                       kernelDeclaration(b, module, name, args.size()),
                       args);
  Value tensor = bufferization::ToTensorOp::create(
      b, loc, result.clone(f32), out, /*restrict=*/true, /*writable=*/true);
  if (result.getElementType() == f32)
    return tensor;
  return mapElements(b, loc, result, tensor,
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return narrow(nb, l, a[0], result.getElementType());
                     });
}
