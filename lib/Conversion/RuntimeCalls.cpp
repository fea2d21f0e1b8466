//===- RuntimeCalls.cpp - calls from generated code into the runtime ------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Conversion/RuntimeCalls.h"

using namespace mlir;
using namespace mlir::ober;

memref::GlobalOp mlir::ober::descriptorGlobal(OpBuilder &b, ModuleOp module,
                                              StringRef prefix,
                                              ArrayRef<int64_t> fields,
                                              bool *created) {
  auto type =
      MemRefType::get({static_cast<int64_t>(fields.size())}, b.getI64Type());
  auto value = DenseIntElementsAttr::get(
      RankedTensorType::get(type.getShape(), b.getI64Type()), fields);
  unsigned count = 0;
  for (auto global : module.getOps<memref::GlobalOp>()) {
    if (!global.getSymName().starts_with(prefix))
      continue;
    if (global.getInitialValueAttr() == value) {
      if (created)
        *created = false;
      return global;
    }
    ++count;
  }
  if (created)
    *created = true;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  std::string symbol = (prefix + Twine(count)).str();
  while (module.lookupSymbol(symbol))
    symbol = (prefix + Twine(++count)).str();
  return memref::GlobalOp::create(
      b, module.getLoc(), symbol, b.getStringAttr("private"), type, value,
      /*constant=*/true, /*alignment=*/IntegerAttr());
}

Value mlir::ober::descriptorValue(OpBuilder &b, Location loc,
                                  memref::GlobalOp global) {
  return unrankedBuffer(b, loc,
                        memref::GetGlobalOp::create(b, loc, global.getType(),
                                                    global.getSymName()));
}

Value mlir::ober::unrankedBuffer(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), memref);
}

func::FuncOp mlir::ober::runtimeFunction(OpBuilder &b, ModuleOp module,
                                         StringRef name, TypeRange inputs,
                                         TypeRange results) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, results));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}
