//===- MapToGPU.cpp - loop nests as one-dimensional grids -----------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
// Upstream's `gpu-map-parallel-loops` + `convert-parallel-loops-to-gpu`
// map each loop dimension to a grid dimension: a rank-4 loop does not fit,
// an extent over 65535 in y or z fails at launch, and a dynamic tile bound
// is refused. A linearized grid has none of these limits; the division
// that recovers the indices costs a few instructions per thread.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "HostCode.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::ober {
#define GEN_PASS_DEF_MAPTOGPUPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober::cuda;

namespace {

/// Builds `gpu.launch` of `blocks` x `threads` (x dimensions) before `at`,
/// and returns a builder inside its body with the thread's linear id.
std::pair<gpu::LaunchOp, Value> createLaunch(OpBuilder &b, Location loc,
                                             Value blocks, Value threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  Value id = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  return {launch, id};
}

/// A launch of one block of one thread before `at`; returns its body's
/// terminator (what goes in the launch goes before it).
Operation *oneThreadLaunch(Operation *at) {
  OpBuilder b(at);
  Value one = arith::ConstantIndexOp::create(b, at->getLoc(), 1);
  gpu::LaunchOp launch = createLaunch(b, at->getLoc(), one, one).first;
  return launch.getBody().front().getTerminator();
}

/// Runs `loop` (a host loop that touches memory) in a one-thread launch.
void runInOneThread(Operation *loop) {
  loop->moveBefore(oneThreadLaunch(loop));
}

/// Whether `op` may move into a kernel with the store it feeds: a load or
/// side-effect-free scalar arithmetic of the host's block.
bool scalarWork(Operation *op) {
  if (isa<memref::LoadOp>(op))
    return deviceAccess(op);
  return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
         op->getResult(0).getType().isIntOrIndexOrFloat() &&
         isMemoryEffectFree(op) && !isa<arith::ConstantOp>(op);
}

/// A load or store of host memory (a stack buffer).
bool hostAccess(Operation *op) {
  return accessedBuffer(op) && !deviceAccess(op);
}

/// Runs a stretch of a host block's scalar work (what rank-0 linalg ops
/// leave: loads, arithmetic, stores) in a one-thread launch, in its order:
/// a load after a store of the same buffer must see the stored value.
/// The stretch's host work (loads and stores of host memory, and what the
/// stored values are computed from: the host's own, see HostScalars.cpp)
/// goes before the launch, in its order; the launch takes the values it
/// needs. What later host ops use stays on the host too (arithmetic is
/// cloned; a load then remains, and is reported).
void runStretchInOneThread(ArrayRef<Operation *> stretch) {
  llvm::SmallPtrSet<Operation *, 8> host;
  for (Operation *op : llvm::reverse(stretch))
    if (hostAccess(op) || llvm::any_of(op->getUsers(), [&](Operation *user) {
          return host.contains(user);
        }))
      host.insert(op);
  SmallVector<Operation *> device;
  for (Operation *op : stretch)
    if (!host.contains(op))
      device.push_back(op);
  // Host work computed from device memory stays, and is reported.
  if (llvm::any_of(host, [](Operation *op) { return deviceAccess(op); }))
    return;
  for (Operation *op : stretch)
    if (host.contains(op))
      op->moveBefore(device.front());
  OpBuilder b(oneThreadLaunch(device.front()));
  IRMapping map;
  for (Operation *op : device)
    b.clone(*op, map);
  for (Operation *op : llvm::reverse(device))
    if (op->use_empty())
      op->erase();
}

/// The stretches of host blocks (outside loops and launches) that store.
SmallVector<SmallVector<Operation *>> scalarStretches(func::FuncOp func) {
  SmallVector<SmallVector<Operation *>> stretches;
  func.walk([&](Block *block) {
    Operation *parent = block->getParentOp();
    // Host code: the function's body and the bodies of the loops that stay
    // on the host (the others run in one thread by now).
    if (insideDeviceCode(parent) || isa<scf::ParallelOp, gpu::LaunchOp>(parent) ||
        parent->getParentOfType<scf::ParallelOp>() ||
        parent->getParentOfType<gpu::LaunchOp>())
      return;
    SmallVector<Operation *> stretch;
    bool stores = false;
    auto flush = [&] {
      if (stores)
        stretches.push_back(stretch);
      stretch.clear();
      stores = false;
    };
    for (Operation &op : *block) {
      bool store = isa<memref::StoreOp>(op) && deviceAccess(&op);
      if (store || scalarWork(&op) || hostAccess(&op) ||
          isa<arith::ConstantOp>(op)) {
        stretch.push_back(&op);
        stores |= store;
      } else {
        flush();
      }
    }
    flush();
  });
  return stretches;
}

/// Whether distinct indices of `type` are distinct elements: static,
/// non-zero strides, each dimension's extent inside the next larger stride.
bool injectiveLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)))
    return false;
  SmallVector<std::pair<int64_t, int64_t>> dims; // stride, size
  for (auto [stride, size] : llvm::zip(strides, type.getShape())) {
    if (size == 1)
      continue; // one index: no stride needed
    if (ShapedType::isDynamic(stride) || stride <= 0)
      return false;
    dims.push_back({stride, size});
  }
  llvm::sort(dims);
  for (size_t d = 1; d < dims.size(); ++d)
    if (dims[d].first < dims[d - 1].first * dims[d - 1].second)
      return false;
  return true;
}

/// The buffers `loop` writes, or nullopt when something in it has effects
/// other than loads and stores (a call, an allocation, a copy) or stores
/// through a memref of unknown origin.
std::optional<llvm::SmallPtrSet<Value, 4>> writtenBuffers(scf::ForOp loop) {
  llvm::SmallPtrSet<Value, 4> written;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value root = rootOf(store.getMemRef());
      if (!root)
        return WalkResult::interrupt();
      written.insert(root);
      return WalkResult::advance();
    }
    if (isa<memref::LoadOp>(op) || isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return written;
}

/// Whether a read of `root` may see what `loop` writes (`written`). Two
/// roots are two buffers: allocations are their own, and the executables
/// give each argument its own buffer (as bufferization's results written
/// into arguments already assume).
bool readsWritten(Value root, const llvm::SmallPtrSet<Value, 4> &written) {
  return !root || written.contains(root);
}

/// How a point of a parallel loop inside `loop` reaches a buffer `loop`
/// writes: the memref it indexes (defined outside `loop`) and, where that
/// is a subview made in `loop`, its offsets, null in the dimensions where
/// they vary with the iteration (which must then have size 1); and which
/// induction variable indexes each dimension.
struct Reach {
  Value source;
  SmallVector<OpFoldResult> offsets;
  SmallVector<unsigned> ivs;
  bool operator==(const Reach &o) const {
    return source == o.source && offsets == o.offsets && ivs == o.ivs;
  }
};

std::optional<Reach> reachOf(scf::ForOp loop, scf::ParallelOp inner,
                             Value memref, ValueRange indices) {
  Reach reach;
  // Each induction variable once, nothing else: distinct points, distinct
  // indices.
  SmallVector<Value> ivs = inner.getInductionVars(); // (a copy each call)
  llvm::SmallBitVector seen(ivs.size());
  for (Value index : indices) {
    auto *iv = llvm::find(ivs, index);
    if (iv == ivs.end() || seen.test(iv - ivs.begin()))
      return std::nullopt;
    seen.set(iv - ivs.begin());
    reach.ivs.push_back(iv - ivs.begin());
  }
  if (!seen.all())
    return std::nullopt;
  if (loop.isDefinedOutsideOfLoop(memref)) {
    reach.source = memref;
    return injectiveLayout(cast<MemRefType>(memref.getType()))
               ? std::optional(reach)
               : std::nullopt;
  }
  auto view = memref.getDefiningOp<memref::SubViewOp>();
  if (!view || view->getBlock() != loop.getBody() ||
      !loop.isDefinedOutsideOfLoop(view.getSource()) ||
      view.getSourceType().getRank() != view.getType().getRank() ||
      !view.hasUnitStride() || !injectiveLayout(view.getSourceType()))
    return std::nullopt;
  reach.source = view.getSource();
  for (auto [offset, size] :
       llvm::zip(view.getMixedOffsets(), view.getMixedSizes())) {
    auto value = dyn_cast<Value>(offset);
    if (!value || loop.isDefinedOutsideOfLoop(value)) {
      reach.offsets.push_back(offset);
      continue;
    }
    if (getConstantIntValue(size) != 1)
      return std::nullopt;
    reach.offsets.push_back(OpFoldResult());
  }
  return reach;
}

/// Whether each point of `inner` touches only elements of the buffers
/// `loop` writes that no other point touches, in any iteration of `loop`:
/// every load and store of such a buffer indexes, with `inner`'s induction
/// variables (each once, in one order for the buffer), the same memref of
/// an injective layout (or subviews of one at the same offsets, except in
/// size-1 dimensions, where the offsets may vary with the iteration: a
/// scatter's row). Two points then differ in a dimension whose offset is
/// fixed, so their elements differ. No other access may reach a written
/// buffer (through an alias of unknown origin).
bool pointsOwnTheirElements(scf::ForOp loop, scf::ParallelOp inner,
                            const llvm::SmallPtrSet<Value, 4> &written) {
  llvm::DenseMap<Value, Reach> reaches;
  WalkResult walk = inner.getBody()->walk([&](Operation *op) {
    Value memref;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef(), indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef(), indices = store.getIndices();
    if (!memref)
      return WalkResult::advance();
    Value root = rootOf(memref);
    if (!root)
      return WalkResult::interrupt(); // an alias of unknown origin
    if (!written.contains(root))
      return WalkResult::advance();
    std::optional<Reach> reach = reachOf(loop, inner, memref, indices);
    if (!reach)
      return WalkResult::interrupt();
    auto [known, inserted] = reaches.try_emplace(root, *reach);
    return inserted || known->second == *reach ? WalkResult::advance()
                                               : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

/// Moves a host `scf.for` around one `scf.parallel` inside it: one launch
/// whose threads each run the loop, instead of a launch per iteration (or
/// one thread for all). The loop may hold, before the parallel loop,
/// scalar work, loads of buffers it does not write and subviews: a
/// scatter's loop over indices reads the index and views the row it adds
/// into. That work moves inside too (each thread redoes it). The swap
/// needs each parallel point to keep to its own elements across
/// iterations (pointsOwnTheirElements): a reduction dimension outside
/// parallel ones (a bias gradient summed over tokens) does, as linalg's
/// outputs are indexed by parallel dimensions only.
bool sinkSequentialLoop(scf::ForOp loop) {
  Block *body = loop.getBody();
  if (!loop.getInitArgs().empty() || body->without_terminator().empty())
    return false;
  auto inner = dyn_cast<scf::ParallelOp>(&*std::prev(body->end(), 2));
  if (!inner || !inner.getInitVals().empty())
    return false;
  for (Value bound : llvm::concat<Value>(inner.getLowerBound(),
                                          inner.getUpperBound(),
                                          inner.getStep()))
    if (!loop.isDefinedOutsideOfLoop(bound))
      return false;
  SmallVector<Operation *> prefix;
  for (Operation &op : body->without_terminator())
    if (&op != inner.getOperation())
      prefix.push_back(&op);
  std::optional<llvm::SmallPtrSet<Value, 4>> written = writtenBuffers(loop);
  if (!written || !pointsOwnTheirElements(loop, inner, *written))
    return false;
  for (Operation *op : prefix) {
    // What moves into the kernel: device loads of what the loop does not
    // write, views, scalar arithmetic.
    auto load = dyn_cast<memref::LoadOp>(op);
    bool fine = load ? deviceAccess(load) &&
                           !readsWritten(rootOf(load.getMemRef()), *written)
                     : isa<memref::SubViewOp>(op) ||
                           (op->getNumRegions() == 0 && isMemoryEffectFree(op));
    if (!fine)
      return false;
  }
  // The parallel loop takes the for's place; the for wraps its body.
  inner->moveBefore(loop);
  Block *work = inner.getBody();
  OpBuilder b(work->getTerminator());
  auto seq = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                loop.getUpperBound(), loop.getStep());
  seq.setUnsignedCmp(loop.getUnsignedCmp());
  Block *seqBody = seq.getBody();
  for (Operation *op : prefix)
    op->moveBefore(seqBody->getTerminator());
  for (Operation &op :
       llvm::make_early_inc_range(work->without_terminator()))
    if (&op != seq.getOperation())
      op.moveBefore(seqBody->getTerminator());
  loop.getInductionVar().replaceAllUsesWith(seq.getInductionVar());
  loop.erase();
  return true;
}

/// Replaces `loop` by a launch with one thread per iteration.
LogicalResult mapParallelLoop(scf::ParallelOp loop, int64_t threadsPerBlock) {
  if (!loop.getInitVals().empty())
    return loop.emitOpError(
        "reduces across iterations (init values): the CUDA target maps "
        "only loops whose iterations are independent");
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> counts;
  for (auto [lb, ub, step] : llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    // An empty range (ub <= lb) has no iterations, not 2^64 - k.
    Value extent = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, ub, lb),
        arith::ConstantIndexOp::create(b, loc, 0));
    counts.push_back(arith::CeilDivUIOp::create(b, loc, extent, step));
  }
  Value total = counts.front();
  for (Value c : ArrayRef(counts).drop_front())
    total = arith::MulIOp::create(b, loc, total, c);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value threads = arith::ConstantIndexOp::create(b, loc, threadsPerBlock);
  // No launch for no work (a grid of no blocks is an error).
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, total,
                                    zero);
  auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifAny.thenBlock());
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  auto [launch, id] = createLaunch(b, loc, blocks, threads);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  // The innermost dimension varies fastest (adjacent threads touch
  // adjacent elements of row-major buffers).
  IRMapping map;
  Value rest = id;
  for (int64_t i = static_cast<int64_t>(counts.size()) - 1; i >= 0; --i) {
    Value index = rest;
    if (i > 0) {
      index = arith::RemUIOp::create(b, loc, rest, counts[i]);
      rest = arith::DivUIOp::create(b, loc, rest, counts[i]);
    }
    Value scaled = arith::MulIOp::create(b, loc, index, loop.getStep()[i]);
    map.map(loop.getInductionVars()[i],
            arith::AddIOp::create(b, loc, loop.getLowerBound()[i], scaled));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  loop.erase();
  return success();
}

/// Bufferization's general deallocation calls its `dealloc_helper` with
/// lists of pointers and flags in buffers allocated for the call, which the
/// host fills and reads: they become the host's stack buffers (their
/// deallocations go).
void keepHelperListsOnHost(func::FuncOp func) {
  llvm::SetVector<memref::AllocOp> lists;
  func.walk([&](func::CallOp call) {
    if (!call.getCallee().starts_with("dealloc_helper"))
      return;
    for (Value arg : call.getOperands()) {
      while (auto cast = arg.getDefiningOp<memref::CastOp>())
        arg = cast.getSource();
      if (auto alloc = arg.getDefiningOp<memref::AllocOp>())
        lists.insert(alloc);
    }
  });
  for (memref::AllocOp alloc : lists) {
    OpBuilder b(alloc);
    auto alloca = memref::AllocaOp::create(
        b, alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(),
        alloc.getSymbolOperands(), alloc.getAlignmentAttr());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
}

struct MapToGPU : public ober::impl::MapToGPUPassBase<MapToGPU> {
  using MapToGPUPassBase::MapToGPUPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Bufferization's helper that compares pointers on the host.
    if (func.getSymName().starts_with("dealloc_helper"))
      return;
    if (threadsPerBlock < 32 || threadsPerBlock > 1024 ||
        threadsPerBlock % 32) {
      func.emitError("threads-per-block=")
          << static_cast<int64_t>(threadsPerBlock) << " must be a multiple of 32 in [32, 1024]";
      return signalPassFailure();
    }
    keepHelperListsOnHost(func);
    // Reduction loops around parallel ones go inside them (innermost
    // first: post-order, so that nests of them sink all the way).
    SmallVector<scf::ForOp> fors;
    func.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      if (!insideDeviceCode(loop))
        fors.push_back(loop);
    });
    for (scf::ForOp loop : fors)
      sinkSequentialLoop(loop);
    // Small integer buffers the host computes (a micro-batch counter, a
    // ring's slot) stay on the host, so that the loops that index with
    // them stay there too.
    ober::cuda::keepScalarsOnHost(func);
    // Sequential host loops over memory first (their parallel loops then
    // run inside the one thread).
    SmallVector<Operation *> serial = ober::cuda::serialLoops(func);
    for (Operation *op : serial) {
      if (!op->use_empty()) {
        op->emitOpError("reads device memory and yields values the host "
                        "uses: not supported by the CUDA target");
        return signalPassFailure();
      }
      runInOneThread(op);
    }
    // Stores left outside any loop (rank-0 results).
    for (ArrayRef<Operation *> stretch : scalarStretches(func))
      runStretchInOneThread(stretch);
    SmallVector<scf::ParallelOp> loops;
    func.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<gpu::LaunchOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      if (failed(mapParallelLoop(loop, threadsPerBlock)))
        return signalPassFailure();
    // What is left on the host must not touch the buffers, nor kernels the
    // host's stack.
    WalkResult left = func.walk([&](Operation *op) {
      Value buffer = accessedBuffer(op);
      if (!buffer)
        return WalkResult::advance();
      bool device = insideDeviceCode(op);
      Value root = rootOf(buffer);
      if (device && root && root.getDefiningOp<memref::AllocaOp>()) {
        op->emitOpError("ober-cuda-map-to-gpu: internal error: a kernel "
                        "reads or writes the host's stack");
        return WalkResult::interrupt();
      }
      if (device || isHostMemory(root))
        return WalkResult::advance();
      op->emitOpError("reads or writes device memory on the host: the CUDA "
                      "target keeps every buffer on the device");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
