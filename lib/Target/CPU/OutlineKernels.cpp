//===- OutlineKernels.cpp - each loop nest on buffers as a function -------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::ober {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// Whether `op` is a kernel: a loop nest on buffers with no results.
bool isKernel(Operation *op) {
  if (op->getNumResults())
    return false;
  if (auto linalg = dyn_cast<linalg::LinalgOp>(op))
    return linalg.hasPureBufferSemantics();
  return isa<scf::ForallOp, scf::ParallelOp>(op);
}

/// Constants and globals' addresses are copied into a kernel, not passed.
bool copiedIn(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         (def->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(def));
}

/// Kernels by their text, their names left out: a loop nest written the
/// same way in every layer of a model is compiled once.
using KernelsByText = llvm::StringMap<func::FuncOp>;

/// `kernel`'s text, printed under one fixed name.
std::string keyOf(func::FuncOp kernel) {
  StringAttr name = kernel.getSymNameAttr();
  kernel.setSymName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().useLocalScope());
  kernel.setSymNameAttr(name);
  return text;
}

void outline(Operation *op, func::FuncOp parent, unsigned index,
             KernelsByText &known) {
  llvm::SetVector<Value> used;
  for (Value v : op->getOperands())
    used.insert(v);
  getUsedValuesDefinedAbove(op->getRegions(), used);
  SmallVector<Value> args, copies;
  for (Value v : used)
    (copiedIn(v) ? copies : args).push_back(v);

  OpBuilder b(parent);
  b.setInsertionPointAfter(parent);
  SmallVector<Type> types;
  for (Value v : args)
    types.push_back(v.getType());
  std::string name =
      (parent.getSymName() + "_kernel" + std::to_string(index)).str();
  auto kernel = func::FuncOp::create(b, op->getLoc(), name,
                                     b.getFunctionType(types, {}));
  kernel.setPrivate();
  // Kept apart from its caller: inlining thousands of kernels back into one
  // function is what makes LLVM slow.
  kernel->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  Block *body = kernel.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(args, body->getArguments()))
    map.map(v, arg);
  for (Value v : copies)
    map.map(v, b.clone(*v.getDefiningOp())->getResult(
                   cast<OpResult>(v).getResultNumber()));
  b.clone(*op, map);
  func::ReturnOp::create(b, op->getLoc());
  auto [it, added] = known.try_emplace(keyOf(kernel), kernel);
  if (!added) {
    kernel.erase();
    kernel = it->second;
  }

  b.setInsertionPoint(op);
  func::CallOp::create(b, op->getLoc(), kernel, args);
  op->erase();
}

struct OutlineKernels
    : public ober::impl::OutlineKernelsPassBase<OutlineKernels> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    KernelsByText known;
    for (func::FuncOp f : funcs) {
      if (f.isExternal())
        continue;
      SmallVector<Operation *> kernels;
      f.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isKernel(op))
          return WalkResult::advance();
        kernels.push_back(op);
        return WalkResult::skip();
      });
      for (auto [i, op] : llvm::enumerate(kernels))
        outline(op, f, i, known);
    }
  }
};

} // namespace
