//===- AttentionBlocks.h - attention computed a block of queries at a time ===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//
//
// How `ober-block-attention` cuts an attention op into blocks of queries,
// each seeing only the keys `is_causal` lets it see.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRANSFORMS_ATTENTIONBLOCKS_H
#define OBER_TRANSFORMS_ATTENTIONBLOCKS_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::ober {

/// Score elements a block of the automatic size holds at most (over all
/// batch entries and heads): 256 MiB of f32 scores.
constexpr int64_t kAttentionBlockScores = int64_t(1) << 26;

/// Queries [offset, offset + queries) against keys [0, keys).
struct AttentionBlock {
  int64_t offset = 0, queries = 0, keys = 0;
};

/// The blocks of an attention over `batch` independent [lq, lk] score
/// matrices (batch entries times heads), all sizes static and positive.
/// `blockQueries` queries a block (the last may have fewer); 0 picks the
/// size: one block when all the scores fit in kAttentionBlockScores, else
/// the most queries that fit (a multiple of 64 from 64 up). With `causal`
/// (top-left aligned) a block sees keys up to its last query's position.
llvm::SmallVector<AttentionBlock> attentionBlocks(int64_t batch, int64_t lq,
                                                  int64_t lk, bool causal,
                                                  int64_t blockQueries = 0);

/// The causal rule of queries [offset, offset + queries) against keys
/// [0, keys): an `i1` [queries, keys] tensor, true where query offset + i
/// may see key j (j <= offset + i; `is_causal` is offset 0).
Value causalKeep(OpBuilder &b, Location loc, int64_t queries, int64_t keys,
                 int64_t offset = 0);

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_ATTENTIONBLOCKS_H
