//===- ShardToRuntime.cpp - collectives as calls into the runtime ---------===//
//
// Part of Ober-Train. Each collective becomes a start (where the op was)
// and a wait (as late as its block allows), on tensors, so that one-shot
// bufferization places the buffers:
//
//   %in  = bufferization.to_buffer %x read_only
//   %out = memref.alloc()
//   %h   = call @ober_rt_coll_start_<type>(%desc, %in, %out)
//   ...   (no use of %x or of the result)
//   call @ober_rt_coll_wait_<type>(%h, %in, %out)
//   %r   = bufferization.to_tensor %out restrict writable
//
// No tensor use of %x lies between start and wait, so no op bufferizes in
// place over the buffer the runtime reads; the wait's use of %in keeps the
// buffer allocated until then.
//
//===----------------------------------------------------------------------===//

#include "ober/Conversion/Passes.h"
#include "ober/Conversion/RuntimeCalls.h"
#include "ober/Reference/TensorIO.h"
#include "ober/Runtime/Comm.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::ober {
#define GEN_PASS_DEF_CONVERTSHARDTORUNTIME
#include "ober/Conversion/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;
namespace rt = ::ober::rt;

namespace {

/// The runtime's reduction for shard's `kind`, if it runs it.
std::optional<int64_t> reductionOf(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return OBER_REDUCE_SUM;
  case shard::ReductionKind::Max:
    return OBER_REDUCE_MAX;
  case shard::ReductionKind::Min:
    return OBER_REDUCE_MIN;
  case shard::ReductionKind::Product:
    return OBER_REDUCE_PRODUCT;
  default:
    return std::nullopt;
  }
}

class Lowering {
public:
  explicit Lowering(ModuleOp module) : module(module), b(module.getContext()) {
    if (auto listed = module->getAttrOfType<ArrayAttr>(kGroupsAttrName))
      for (auto axes : listed.getAsRange<DenseI64ArrayAttr>())
        groups.push_back(SmallVector<int64_t>(axes.asArrayRef()));
  }

  LogicalResult lower(Operation *op);
  void finish();

private:
  FailureOr<rt::CollectiveDesc> describe(Operation *op);
  int64_t groupOf(ArrayRef<int16_t> axes);
  /// Where the wait of `op` goes: before the first later op of its block
  /// that uses its input or its result (a receive's operand is not read),
  /// else before the block's end.
  Operation *waitPoint(Operation *op);

  ModuleOp module;
  OpBuilder b;
  SmallVector<SmallVector<int64_t>> groups;
};

int64_t Lowering::groupOf(ArrayRef<int16_t> axes) {
  SmallVector<int64_t> wanted(axes.begin(), axes.end());
  for (auto [i, g] : llvm::enumerate(groups))
    if (g == wanted)
      return static_cast<int64_t>(i);
  groups.push_back(wanted);
  return static_cast<int64_t>(groups.size() - 1);
}

FailureOr<rt::CollectiveDesc> Lowering::describe(Operation *op) {
  rt::CollectiveDesc d;
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<rt::DType> dtype = reference::dtypeOf(input.getElementType());
  if (!input.hasStaticShape() || !dtype || *dtype == rt::DType::Unicode)
    return op->emitOpError("moves ")
           << input << "; the collectives runtime moves tensors of static "
           << "shape with float, integer or i1 elements";
  d.dtype = *dtype;
  d.shape.assign(input.getShape().begin(), input.getShape().end());
  auto reduction = [&](shard::ReductionKind kind) -> LogicalResult {
    std::optional<int64_t> r = reductionOf(kind);
    if (!r)
      return op->emitOpError("reduces with '")
             << shard::stringifyReductionKind(kind)
             << "'; the runtime reduces with sum, max, min and product";
    d.reduction = *r;
    return success();
  };
  auto staticPeer = [&](std::optional<ArrayRef<int64_t>> peer,
                        ValueRange dynamic, StringRef what) -> LogicalResult {
    if (!peer || !dynamic.empty())
      return op->emitOpError("has a dynamic ")
             << what << "; executables need it known at compile time";
    d.peer.assign(peer->begin(), peer->end());
    return success();
  };
  auto axesOf = [&](ArrayRef<int16_t> axes) {
    d.gridAxes.assign(axes.begin(), axes.end());
    d.group = groupOf(axes);
  };
  auto tag = op->getAttrOfType<IntegerAttr>("ober.tag");
  d.tag = tag ? tag.getInt() : 0;
  LogicalResult ok =
      TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](shard::AllReduceOp o) -> LogicalResult {
            d.kind = OBER_COLL_ALL_REDUCE;
            axesOf(o.getGridAxes());
            if (getElementTypeOrSelf(o.getResult().getType()) !=
                input.getElementType())
              return o.emitOpError("reduces into another element type; the "
                                   "runtime reduces in the input's");
            return reduction(o.getReduction());
          })
          .Case([&](shard::AllGatherOp o) {
            d.kind = OBER_COLL_ALL_GATHER;
            d.axis = o.getGatherAxis().getSExtValue();
            axesOf(o.getGridAxes());
            return success();
          })
          .Case([&](shard::ReduceScatterOp o) {
            d.kind = OBER_COLL_REDUCE_SCATTER;
            d.axis = o.getScatterAxis().getSExtValue();
            axesOf(o.getGridAxes());
            return reduction(o.getReduction());
          })
          .Case([&](shard::AllToAllOp o) {
            d.kind = OBER_COLL_ALL_TO_ALL;
            d.axis = o.getSplitAxis().getSExtValue();
            d.concatAxis = o.getConcatAxis().getSExtValue();
            axesOf(o.getGridAxes());
            return success();
          })
          .Case([&](shard::AllSliceOp o) {
            d.kind = OBER_COLL_ALL_SLICE;
            d.axis = o.getSliceAxis().getSExtValue();
            axesOf(o.getGridAxes());
            return success();
          })
          .Case([&](shard::BroadcastOp o) {
            d.kind = OBER_COLL_BROADCAST;
            axesOf(o.getGridAxes());
            return staticPeer(o.getRoot(), o.getRootDynamic(), "root");
          })
          .Case([&](shard::SendOp o) {
            d.kind = OBER_COLL_SEND;
            axesOf(o.getGridAxes());
            return staticPeer(o.getDestination(), o.getDestinationDynamic(),
                              "destination");
          })
          .Case([&](shard::RecvOp o) {
            d.kind = OBER_COLL_RECV;
            axesOf(o.getGridAxes());
            return staticPeer(o.getSource(), o.getSourceDynamic(), "source");
          })
          .Default([&](Operation *) {
            return op->emitOpError(
                "has no runtime lowering; executables run all_reduce, "
                "all_gather, reduce_scatter, all_to_all, broadcast, "
                "all_slice, send and recv");
          });
  if (failed(ok))
    return failure();
  return d;
}

Operation *Lowering::waitPoint(Operation *op) {
  Block *block = op->getBlock();
  Operation *first = block->getTerminator();
  for (Value v : {op->getOperand(0), Value(op->getResult(0))})
    for (Operation *user : v.getUsers()) {
      if (isa<shard::RecvOp>(user) && v == op->getOperand(0))
        continue; // a receive does not read its operand
      Operation *at = block->findAncestorOpInBlock(*user);
      if (at && at != op && op->isBeforeInBlock(at) &&
          at->isBeforeInBlock(first))
        first = at;
    }
  return first;
}

LogicalResult Lowering::lower(Operation *op) {
  FailureOr<rt::CollectiveDesc> desc = describe(op);
  if (failed(desc))
    return failure();
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  auto inType = cast<RankedTensorType>(input.getType());
  Type element = inType.getElementType();
  bool sends = desc->kind == OBER_COLL_SEND,
       receives = desc->kind == OBER_COLL_RECV;
  auto inMemref = MemRefType::get(inType.getShape(), element);
  std::string suffix = std::string("_") + rt::dtypeName(desc->dtype);

  b.setInsertionPoint(op);
  memref::GlobalOp global =
      descriptorGlobal(b, module, "__ober_coll_desc", desc->fields());
  Value descValue = descriptorValue(b, loc, global);
  Value inBuffer, outBuffer;
  if (!receives)
    inBuffer = bufferization::ToBufferOp::create(b, loc, inMemref, input,
                                                 /*read_only=*/true);
  RankedTensorType outType;
  if (!sends) {
    outType = cast<RankedTensorType>(op->getResult(0).getType());
    outBuffer = memref::AllocOp::create(
        b, loc, MemRefType::get(outType.getShape(), element),
        b.getI64IntegerAttr(kRuntimeBufferAlignment));
  }
  Value in = unrankedBuffer(b, loc, inBuffer ? inBuffer : outBuffer);
  Value out = unrankedBuffer(b, loc, outBuffer ? outBuffer : inBuffer);
  SmallVector<Value> startArgs = {descValue, in, out};
  func::FuncOp start =
      runtimeFunction(b, module, (OBER_RT_COLL_START + suffix),
                      ValueRange(startArgs).getTypes(), {b.getI64Type()});
  Value handle = func::CallOp::create(b, loc, start, startArgs).getResult(0);

  b.setInsertionPoint(waitPoint(op));
  SmallVector<Value> waitArgs = {handle, in, out};
  func::FuncOp wait = runtimeFunction(b, module, (OBER_RT_COLL_WAIT + suffix),
                                      ValueRange(waitArgs).getTypes(), {});
  func::CallOp::create(b, loc, wait, waitArgs);
  if (sends) {
    // A send's result is its input (the interpreter's meaning).
    op->getResult(0).replaceAllUsesWith(input);
  } else {
    Value tensor = bufferization::ToTensorOp::create(
        b, loc, outType, outBuffer, /*restrict=*/true, /*writable=*/true);
    op->getResult(0).replaceAllUsesWith(tensor);
  }
  op->erase();
  return success();
}

void Lowering::finish() {
  SmallVector<Attribute> listed;
  for (const SmallVector<int64_t> &g : groups)
    listed.push_back(b.getDenseI64ArrayAttr(g));
  module->setAttr(kGroupsAttrName, b.getArrayAttr(listed));
  for (auto grid : llvm::to_vector(module.getOps<shard::GridOp>())) {
    module->setAttr(kGridAttrName, b.getDenseI64ArrayAttr(grid.getShape()));
    grid.erase();
  }
}

struct ConvertShardToRuntime
    : public mlir::ober::impl::ConvertShardToRuntimeBase<
          ConvertShardToRuntime> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (op->getDialect() &&
          op->getDialect()->getNamespace() ==
              shard::ShardDialect::getDialectNamespace() &&
          !isa<shard::GridOp>(op))
        ops.push_back(op);
    });
    if (ops.empty() && !module->hasAttr(kGroupsAttrName) &&
        module.getOps<shard::GridOp>().empty())
      return;
    Lowering lowering(module);
    for (Operation *op : ops)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
    lowering.finish();
  }
};
} // namespace
