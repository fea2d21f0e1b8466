//===- RuntimeCalls.h - generated code calling the runtime ---*- C++ -*-===//
//
// Part of Ober-Train. The conversions that call the runtime's C ABI (the
// kernel library, the collectives) build the calls the same way: a
// constant i64 descriptor as a global, buffers passed as unranked memrefs
// with MLIR's C interface, results in cache-line aligned buffers.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_CONVERSION_RUNTIMECALLS_H
#define OBER_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ober {

/// The alignment of buffers the runtime writes (a cache line).
constexpr int64_t kRuntimeBufferAlignment = 64;

/// The constant global `@<prefix><n>` holding `fields` (shared by uses
/// with equal fields); `created` says whether it is new.
memref::GlobalOp descriptorGlobal(OpBuilder &b, ModuleOp module,
                                  StringRef prefix, ArrayRef<int64_t> fields,
                                  bool *created = nullptr);
/// `global`'s buffer as an unranked memref, at the builder's position.
Value descriptorValue(OpBuilder &b, Location loc, memref::GlobalOp global);
/// `memref` as an unranked memref.
Value unrankedBuffer(OpBuilder &b, Location loc, Value memref);
/// The private declaration of runtime function `name` (with MLIR's C
/// interface), made once.
func::FuncOp runtimeFunction(OpBuilder &b, ModuleOp module, StringRef name,
                             TypeRange inputs, TypeRange results);

} // namespace mlir::ober

#endif // OBER_CONVERSION_RUNTIMECALLS_H
