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
  SmallVector<int64_t> sizes(rank, 0);
  for (int64_t d = 0; d < rank && tiles < chunks; ++d) {
    if (iterators[d] != utils::IteratorType::parallel || ranges[d] == 1)
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
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
