//===- Distribute.cpp - loop nests in chunks for threads -------------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::ober {
#define GEN_PASS_DEF_DISTRIBUTEPASS
#include "ober/Target/CPU/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// Tile sizes that split `op`'s outer parallel dimensions into about
/// `chunks` tiles (0: not split); empty when it is not worth it.
SmallVector<int64_t> chunkSizes(linalg::LinalgOp op, int64_t minIterations,
                                int64_t chunks) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      ShapedType::getNumElements(ranges) < minIterations)
    return {};
  int64_t rank = ranges.size(), tiles = 1;
  // A dimension some output does not index would have tiles write the same
  // elements: it is not split.
  auto everyOutputIndexes = [&](int64_t d) {
    return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      return op.getMatchingIndexingMap(&init).isFunctionOfDim(d);
    });
  };
  SmallVector<int64_t> sizes(rank, 0);
  for (int64_t d = 0; d < rank && tiles < chunks; ++d) {
    if (iterators[d] != utils::IteratorType::parallel || ranges[d] == 1 ||
        !everyOutputIndexes(d))
      continue;
    // The innermost dimension stays whole when outer ones gave tiles.
    if (d == rank - 1 && tiles > 1)
      break;
    int64_t wanted = llvm::divideCeil(chunks, tiles);
    sizes[d] = ranges[d] <= wanted ? 1 : llvm::divideCeil(ranges[d], wanted);
    tiles *= llvm::divideCeil(ranges[d], sizes[d]);
  }
  if (tiles < 2)
    return {};
  return sizes;
}

/// Inside `forall`, a tile of `tiled` that reads the tensor its output
/// starts from (ober-cpu-reuse-dead-inputs made them one) reads it through
/// the output's slice of the shared tensor, not the tensor from outside:
/// bufferization then sees one buffer read and written in place by each
/// tile, instead of a read of the old tensor after writes (and a copy).
void tieInputsToOutputs(scf::ForallOp forall, linalg::LinalgOp tiled) {
  for (OpOperand &init : tiled.getDpsInitsMutable()) {
    auto outSlice = init.get().getDefiningOp<tensor::ExtractSliceOp>();
    auto shared = outSlice ? dyn_cast<BlockArgument>(outSlice.getSource())
                           : BlockArgument();
    if (!shared || shared.getOwner()->getParentOp() != forall)
      continue;
    Value outer = forall.getTiedOpOperand(shared)->get();
    for (OpOperand *in : tiled.getDpsInputOperands()) {
      auto inSlice = in->get().getDefiningOp<tensor::ExtractSliceOp>();
      if (inSlice && inSlice.getSource() == outer &&
          inSlice.getMixedOffsets() == outSlice.getMixedOffsets() &&
          inSlice.getMixedSizes() == outSlice.getMixedSizes() &&
          inSlice.getMixedStrides() == outSlice.getMixedStrides() &&
          tiled.getMatchingIndexingMap(in) ==
              tiled.getMatchingIndexingMap(&init))
        in->set(init.get());
    }
  }
}

struct Distribute : public ober::impl::DistributePassBase<Distribute> {
  using DistributePassBase::DistributePassBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && !op->getParentOfType<scf::ForallOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      auto tileable = dyn_cast<TilingInterface>(op.getOperation());
      SmallVector<int64_t> sizes = chunkSizes(op, minIterations, chunks);
      if (!tileable || sizes.empty())
        continue;
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, tileable, options);
      if (failed(tiled))
        continue; // left whole: correct, one thread
      auto forall = dyn_cast<scf::ForallOp>(tiled->loops.front().getOperation());
      auto tiledOp = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.front());
      if (forall && tiledOp)
        tieInputsToOutputs(forall, tiledOp);
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
