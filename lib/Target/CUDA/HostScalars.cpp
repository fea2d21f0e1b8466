//===- HostScalars.cpp - integer scalars the host computes ----------------===//
//
// Part of Ober-Train. See HostCode.h.
//
// A pipeline stage's loop over micro-batches counts them in a rank-0
// integer tensor and picks the slot of a stash of activations from it; the
// bufferized program keeps both in one-element buffers, on the device like
// every buffer, and views the stash at that slot on the host, which cannot
// read device memory. A one-element integer buffer that only the host
// writes, with values it computes (constants, loop indices, arithmetic of
// such buffers), becomes a stack buffer instead: the host then knows the
// slot, the loop stays on the host, and a kernel that reads the buffer
// takes its value as a launch argument (loaded before the launch, which
// nothing in between can change: only the host writes it). No one-thread
// launch is made for its arithmetic either.
//
//===----------------------------------------------------------------------===//

#include "HostCode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::ober::cuda;

namespace {

/// A one-element integer allocation of host code and its accesses, all
/// loads, stores into it and deallocations (through views).
struct Scalar {
  memref::AllocOp alloc;
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  SmallVector<Operation *> deallocs;
  Value buffer() const { return alloc->getResult(0); }
};

std::optional<Scalar> scalarOf(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || type.getNumElements() != 1 ||
      !type.getElementType().isIntOrIndex() || insideDeviceCode(alloc))
    return std::nullopt;
  Scalar scalar{alloc, {}, {}, {}};
  SmallVector<Value> views = {alloc.getResult()};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (auto load = dyn_cast<memref::LoadOp>(user))
        scalar.loads.push_back(load);
      else if (auto store = dyn_cast<memref::StoreOp>(user);
               store && store.getMemRef() == v)
        scalar.stores.push_back(store);
      else if (isa<memref::DeallocOp>(user))
        scalar.deallocs.push_back(user);
      else if (view && view.getViewSource() == v)
        llvm::append_range(views, user->getResults());
      else
        return std::nullopt; // a call, a copy: device memory
    }
  }
  return scalar;
}

/// The outermost launch or parallel loop around `op` (null: none).
Operation *deviceCodeAround(Operation *op) {
  Operation *top = nullptr;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<scf::ParallelOp, gpu::LaunchOp>(p))
      top = p;
  return top;
}

/// Whether the host computes `v` without reading device memory: from
/// the function's scalar arguments, the induction variables of host loops,
/// what calls return and side-effect-free arithmetic of those, constants
/// and loads of `host` buffers. (A loop's other block arguments are not
/// followed to what initializes and yields them: refused.)
bool hostComputed(Value v, HostRoots host, DenseMap<Value, bool> &known) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  bool result;
  Operation *def = v.getDefiningOp();
  if (!def) {
    Operation *owner = v.getParentBlock()->getParentOp();
    auto loop = dyn_cast<scf::ForOp>(owner);
    result = isa<func::FuncOp>(owner) ||
             (loop && v == loop.getInductionVar() && !insideDeviceCode(loop));
  } else if (auto load = dyn_cast<memref::LoadOp>(def))
    result = host(rootOf(load.getMemRef()));
  else if (isa<CallOpInterface>(def))
    result = true;
  else
    result = def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
             llvm::all_of(def->getOperands(), [&](Value o) {
               return hostComputed(o, host, known);
             });
  return known[v] = result;
}

/// Whether `scalar` can live on the host, the buffers in `promoted` with
/// it, given the accesses in host loops that run on the device (`serial`).
bool staysOnHost(const Scalar &scalar, HostRoots host,
                 const llvm::SmallPtrSetImpl<Operation *> &serial,
                 DenseMap<Value, bool> &known) {
  for (memref::StoreOp store : scalar.stores)
    if (insideDeviceCode(store) || serial.contains(store) ||
        !hostComputed(store.getValue(), host, known))
      return false;
  for (memref::LoadOp load : scalar.loads) {
    if (serial.contains(load))
      return false;
    // A kernel's read moves before its launch: its view must be there.
    Operation *top = deviceCodeAround(load);
    if (top && top->isAncestor(load.getMemRef().getParentBlock()->getParentOp()))
      return false;
  }
  return true;
}

/// The stack buffer in `scalar`'s place: at the function's start (a loop
/// reuses it; nothing outlives an iteration, as its only uses are loads
/// and stores). Kernels' loads become loads before their launches.
void moveToHost(const Scalar &scalar, func::FuncOp func) {
  memref::AllocOp alloc = scalar.alloc;
  OpBuilder b(&func.front(), func.front().begin());
  auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                         ValueRange(), ValueRange(),
                                         alloc.getAlignmentAttr());
  for (Operation *dealloc : scalar.deallocs)
    dealloc->erase();
  for (memref::LoadOp load : scalar.loads) {
    Operation *top = deviceCodeAround(load);
    if (!top)
      continue;
    // One element: every index in bounds is 0.
    b.setInsertionPoint(top);
    Value zero = arith::ConstantIndexOp::create(b, load.getLoc(), 0);
    SmallVector<Value> at(load.getIndices().size(), zero);
    Value before =
        memref::LoadOp::create(b, load.getLoc(), load.getMemRef(), at);
    load.replaceAllUsesWith(before);
    load.erase();
  }
  alloc.replaceAllUsesWith(alloca.getResult());
  alloc.erase();
}

} // namespace

void ober::cuda::keepScalarsOnHost(func::FuncOp func) {
  SmallVector<Scalar> scalars;
  func.walk([&](memref::AllocOp alloc) {
    if (std::optional<Scalar> s = scalarOf(alloc))
      scalars.push_back(std::move(*s));
  });
  if (scalars.empty())
    return;
  // The largest set that holds: each buffer computed from the others, none
  // accessed in device code that stays there.
  llvm::SmallPtrSet<Value, 8> promoted;
  for (const Scalar &s : scalars)
    promoted.insert(s.buffer());
  auto host = [&](Value root) {
    return isHostMemory(root) || promoted.contains(root);
  };
  for (bool changed = true; changed;) {
    changed = false;
    llvm::SmallPtrSet<Operation *, 16> serial;
    for (Operation *loop : serialLoops(func, host))
      loop->walk([&](Operation *op) {
        if (isa<memref::LoadOp, memref::StoreOp>(op))
          serial.insert(op);
      });
    DenseMap<Value, bool> known;
    for (const Scalar &s : scalars)
      if (promoted.contains(s.buffer()) &&
          !staysOnHost(s, host, serial, known)) {
        promoted.erase(s.buffer());
        changed = true;
      }
  }
  for (const Scalar &s : scalars)
    if (promoted.contains(s.buffer()))
      moveToHost(s, func);
}
