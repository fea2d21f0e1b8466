//===- RecordShardings.cpp - keep argument and result shardings -----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::ober {
#define GEN_PASS_DEF_RECORDSHARDINGSPASS
#include "ober/Transforms/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {
/// The `ober.split` entries of `op`'s sharding for a rank-`rank` tensor.
FailureOr<SmallVector<int64_t>> splitOf(shard::ShardOp op, int64_t rank) {
  shard::Sharding sharding(op.getSharding());
  if (!sharding.getStaticHaloSizes().empty() ||
      !sharding.getStaticShardedDimsOffsets().empty() ||
      !sharding.getDynamicHaloSizes().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty())
    return op.emitError("halos and uneven splits cannot be recorded as "
                        "'ober.split'");
  SmallVector<int64_t> split(rank, -1);
  for (auto [d, axes] : llvm::enumerate(sharding.getSplitAxes())) {
    if (axes.empty())
      continue;
    if (static_cast<int64_t>(d) >= rank)
      return op.emitError("the sharding splits dimension ")
             << d << " of a rank-" << rank << " tensor";
    if (axes.size() > 1)
      return op.emitError("dimension ")
             << d << " is split over " << axes.size()
             << " grid axes; 'ober.split' records one";
    if (axes.size() == 1)
      split[d] = axes.asArrayRef().front();
  }
  return split;
}

struct RecordShardingsPass
    : mlir::ober::impl::RecordShardingsPassBase<RecordShardingsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Builder b(&getContext());
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      for (Operation *user : arg.getUsers()) {
        auto annotated = dyn_cast<shard::ShardOp>(user);
        if (!annotated || annotated.getAnnotateForUsers())
          continue;
        FailureOr<SmallVector<int64_t>> split =
            splitOf(annotated, type.getRank());
        if (failed(split))
          return signalPassFailure();
        func.setArgAttr(arg.getArgNumber(), "ober.split",
                        b.getDenseI64ArrayAttr(*split));
        break;
      }
    }
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
      auto annotated = v.getDefiningOp<shard::ShardOp>();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!annotated || !annotated.getAnnotateForUsers() || !type)
        continue;
      FailureOr<SmallVector<int64_t>> split = splitOf(annotated, type.getRank());
      if (failed(split))
        return signalPassFailure();
      func.setResultAttr(i, "ober.split", b.getDenseI64ArrayAttr(*split));
    }
  }
};
} // namespace
