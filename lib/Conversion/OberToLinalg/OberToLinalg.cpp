//===- OberToLinalg.cpp - --convert-ober-to-linalg ------------------------===//
//
// Part of Ober-Train. Applies the op families' patterns (one file each)
// and reports the first op left without a lowering, by name.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Conversion/LoweringKinds.h"
#include "ober/Conversion/Passes.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ober {
#define GEN_PASS_DEF_CONVERTOBERTOLINALG
#include "ober/Conversion/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;

namespace {
struct ConvertOberToLinalg
    : public ober::impl::ConvertOberToLinalgBase<ConvertOberToLinalg> {
  using ConvertOberToLinalgBase::ConvertOberToLinalgBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (!isConvolutionKind(convolutions)) {
      getOperation().emitError("convert-ober-to-linalg: convolutions='")
          << convolutions << "' is not one of " << kConvolutionKinds;
      return signalPassFailure();
    }
    if (!isAttentionKind(attention)) {
      getOperation().emitError("convert-ober-to-linalg: attention='")
          << attention << "' is not one of " << kAttentionKinds;
      return signalPassFailure();
    }
    if (attentionBlock < 0) {
      getOperation().emitError("convert-ober-to-linalg: attention-block=")
          << static_cast<int64_t>(attentionBlock)
          << " is negative (0 sizes blocks automatically)";
      return signalPassFailure();
    }
    // flash: the ops the flash kernels take call them, the others are
    // blocked.
    bool fuse = attention == "fused", flash = attention == "flash";
    auto flashed = [&](Operation *op) {
      return flash && lowering::flashAttention(op);
    };
    if (attention == "blocked" || flash)
      blockAttention(getOperation(), attentionBlock, flashed);
    if (failed(decomposeAttention(getOperation(), [&](Operation *op) {
          return flashed(op) || (fuse && lowering::fusableAttention(op));
        })))
      return signalPassFailure();
    RewritePatternSet rewrites(ctx);
    lowering::populateContractionRewrites(rewrites, lowPrecisionProducts);
    if (failed(applyPatternsGreedily(getOperation(), std::move(rewrites))))
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    lowering::populateElementwisePatterns(patterns);
    lowering::populateShapePatterns(patterns);
    lowering::populateReductionPatterns(patterns);
    lowering::populateContractionPatterns(patterns, lowPrecisionProducts);
    lowering::populateNormalizationPatterns(patterns);
    lowering::populateLossPatterns(patterns);
    lowering::populateIndexingPatterns(patterns);
    if (convolutions == kGemmConvolutions)
      lowering::populateConvolutionGemmPatterns(patterns,
                                                lowPrecisionProducts);
    else
      lowering::populateConvolutionPatterns(patterns);
    lowering::populatePoolingPatterns(patterns);
    lowering::populateDropoutPatterns(patterns);
    lowering::populateFusedAttentionPatterns(patterns);
    if (flash)
      lowering::populateFlashAttentionPatterns(patterns);
    // One rewrite per op, each replacing it; what is left has no lowering.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    Operation *first = nullptr;
    getOperation().walk([&](Operation *op) {
      if (!first && isa<OberDialect>(op->getDialect()))
        first = op;
    });
    if (!first)
      return;
    first->emitError("convert-ober-to-linalg: no lowering for '")
          << first->getName()
          << "' (lowered: every op but string_normalize)";
    signalPassFailure();
  }
};
} // namespace
