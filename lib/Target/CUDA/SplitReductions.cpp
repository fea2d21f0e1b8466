//===- SplitReductions.cpp - large reductions over many threads ------------===//
//
// Part of Ober-Train. See the pass description in Passes.td.
//
// MapToGPU gives each output element of a loop nest one thread, which runs
// the reduction dimensions sequentially. Splitting a reduction into partial
// results along a new parallel dimension (linalg::splitReduction) and their
// combination turns one long thread into `ratio` short ones.
//
//===----------------------------------------------------------------------===//

#include "ober/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ober {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "ober/Target/CUDA/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;

namespace {

/// The extents of `op`'s iteration space, if every one is static and
/// none is empty.
std::optional<SmallVector<int64_t>> staticRanges(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges,
                   [](int64_t r) { return ShapedType::isDynamic(r) || r < 1; }))
    return std::nullopt;
  return ranges;
}

/// Output elements (parallel iterations) and reduction iterations of `op`.
std::pair<int64_t, int64_t> workOf(linalg::LinalgOp op,
                                   ArrayRef<int64_t> ranges) {
  int64_t outputs = 1, reduced = 1;
  for (auto [range, kind] : llvm::zip(ranges, op.getIteratorTypesArray()))
    (kind == utils::IteratorType::reduction ? reduced : outputs) *= range;
  return {outputs, reduced};
}

/// The largest divisor of `n` that is at most `limit` (1 if none is above).
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  int64_t best = 1;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d)
      continue;
    if (d <= limit)
      best = std::max(best, d);
    if (n / d <= limit)
      best = std::max(best, n / d);
  }
  return best;
}

/// Collapses consecutive reduction dimensions of `op` into one where every
/// indexing map keeps them in order; returns the op to split (`op` itself
/// when there is nothing to collapse or it cannot be).
linalg::LinalgOp collapseReductions(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  ReassociationIndices run;
  SmallVector<ReassociationIndices> runs;
  for (int64_t d = 0, e = kinds.size(); d <= e; ++d) {
    if (d < e && kinds[d] == utils::IteratorType::reduction) {
      run.push_back(d);
      continue;
    }
    if (run.size() > 1)
      runs.push_back(run);
    run.clear();
  }
  // One run of reduction dimensions (split reduction takes one).
  if (runs.size() != 1 || op.getNumReductionLoops() != runs.front().size() ||
      !isa<linalg::GenericOp>(op) ||
      !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), runs))
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, runs, rewriter);
  if (failed(collapsed))
    return op;
  rewriter.replaceOp(op, collapsed->results);
  return collapsed->collapsedOp;
}

/// Threads that load together (a warp).
constexpr int64_t kWarp = 32;

/// Whether an input of `op` has its (one) reduction dimension innermost:
/// a thread per output would read one row, its neighbours other rows.
bool readsAlongInnermost(linalg::LinalgOp op) {
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    AffineMap map = op.getMatchingIndexingMap(in);
    return map.getNumResults() &&
           map.getResults().back() ==
               getAffineDimExpr(reductions.front(), op->getContext());
  });
}

/// Puts `op`'s reduction dimensions innermost, its parallel ones in their
/// order: convert-linalg-to-parallel-loops then gives one parallel loop
/// over them all, and MapToGPU a thread per point with the innermost
/// (a split's new dimension, adjacent elements) fastest.
void reductionsInnermost(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return;
  SmallVector<unsigned> order;
  SmallVector<utils::IteratorType> kinds = generic.getIteratorTypesArray();
  for (auto want : {utils::IteratorType::parallel,
                    utils::IteratorType::reduction})
    for (unsigned d = 0; d < kinds.size(); ++d)
      if (kinds[d] == want)
        order.push_back(d);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return;
  rewriter.setInsertionPoint(generic);
  (void)linalg::interchangeGenericOp(rewriter, generic, order);
}

struct SplitReductions
    : public ober::impl::SplitReductionsPassBase<SplitReductions> {
  using SplitReductionsPassBase::SplitReductionsPassBase;

  /// The ratio to split `op` by (1: leave it).
  int64_t ratioFor(linalg::LinalgOp op) const {
    std::optional<SmallVector<int64_t>> ranges = staticRanges(op);
    if (!ranges || op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1)
      return 1;
    auto [outputs, reduced] = workOf(op, *ranges);
    if (outputs < minThreads && reduced >= minExtent) {
      // Each partial at least two iterations: every combination is shorter
      // than what it combines, so the splitting ends.
      int64_t limit =
          std::min<int64_t>(llvm::divideCeil(targetThreads, outputs),
                            reduced / std::max<int64_t>(minChunk, 2));
      if (int64_t ratio = largestDivisorAtMost(reduced, limit); ratio > 1)
        return ratio;
    }
    // Rows: a warp's threads read adjacent elements of one row, not one
    // element each of 32 rows.
    if (coalesceMinExtent > 0 && reduced >= coalesceMinExtent &&
        reduced >= 2 * kWarp && reduced % kWarp == 0 &&
        readsAlongInnermost(op))
      return kWarp;
    return 1;
  }

  void runOnOperation() override {
    if (minChunk < 1 || targetThreads < 1 || minExtent < 2) {
      getOperation().emitError(
          "min-chunk and target-threads must be positive, min-extent at "
          "least 2");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      // linalg's split leaves linalg.index the chunk's index, not the
      // element's, and takes (as the collapse does) operands indexed by
      // plain dimensions: ops that read their indices, or a window (a
      // pooling's `2 * d2 + d4`), stay whole.
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          !op.hasIndexSemantics() && op.hasOnlyProjectedPermutations())
        work.push_back(op);
    });
    // Each split's combination is tried again (a whole-tensor sum of a
    // billion elements takes three rounds).
    while (!work.empty()) {
      linalg::LinalgOp op = work.pop_back_val();
      if (!staticRanges(op))
        continue;
      op = collapseReductions(rewriter, op);
      int64_t ratio = ratioFor(op);
      if (ratio < 2)
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::SplitReductionResult> split = linalg::splitReduction(
          rewriter, op, [&](linalg::LinalgOp) {
            // The partials' new dimension innermost (coalesced reads);
            // their tensor has it after the output's dimensions.
            return linalg::SplitReductionOptions{
                ratio, static_cast<unsigned>(op.getRank(op.getDpsInitOperand(0))),
                /*innerParallel=*/true};
          });
      if (failed(split))
        continue; // a combiner linalg does not know: left whole, correct
      reductionsInnermost(rewriter, split->splitLinalgOp);
      work.push_back(split->resultCombiningLinalgOp);
    }
  }
};

} // namespace
