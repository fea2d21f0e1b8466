//===- Passes.h - graph-level transforms -------------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRANSFORMS_PASSES_H
#define OBER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"

#include <functional>

namespace mlir::ober {

#define GEN_PASS_DECL
#include "ober/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ober/Transforms/Passes.h.inc"

/// Splits the attention ops with static shapes under `root` into blocks of
/// `blockQueries` queries (0: chosen from the scores' size), as
/// `ober-block-attention` describes (the blocks: AttentionBlocks.h); those
/// `keep` says to keep (when given) stay whole.
void blockAttention(Operation *root, int64_t blockQueries,
                    std::function<bool(Operation *)> keep = nullptr);

/// Adds the patterns that rewrite ober.attention and ober.attention_grad
/// into primitive ops; those ops `keep` says to keep (when given) stay.
void populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns,
    std::function<bool(Operation *)> keep = nullptr);

/// Rewrites the attention ops under `root` into primitive ops but for
/// those `keep` says to keep; an error on the first one left that could not
/// be (is_causal with a dynamic sequence length).
LogicalResult decomposeAttention(Operation *root,
                                 std::function<bool(Operation *)> keep = nullptr);

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_PASSES_H
