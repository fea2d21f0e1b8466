//===- BlockAttention.cpp - attention a block of queries at a time --------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//
//
// Rewrites an ober.attention or ober.attention_grad whose scores are large
// into the same op on blocks of queries (AttentionBlocks.h): a block's
// scores are all that is live at once when each is then decomposed, and a
// causal block skips the keys its queries cannot see. The forward results
// are concatenated; dQ likewise, dK and dV summed over the blocks.
//
//===----------------------------------------------------------------------===//

#include "ober/Transforms/AttentionBlocks.h"

#include "ober/Dialect/Ober/IR/OberShapeBuilder.h"
#include "ober/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <limits>

namespace mlir::ober {
#define GEN_PASS_DEF_BLOCKATTENTIONPASS
#include "ober/Transforms/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;

SmallVector<AttentionBlock> mlir::ober::attentionBlocks(int64_t batch,
                                                        int64_t lq, int64_t lk,
                                                        bool causal,
                                                        int64_t blockQueries) {
  int64_t size = blockQueries;
  if (size <= 0) {
    size = lq;
    // The most queries that fit, a multiple of 64 and at least 64 (more
    // blocks of fewer queries would only add kernels).
    if (batch * lq * lk > kAttentionBlockScores) {
      size = kAttentionBlockScores / (batch * lk);
      size = std::max<int64_t>(64, size - size % 64);
    }
  }
  SmallVector<AttentionBlock> blocks;
  for (int64_t offset = 0; offset < lq; offset += size) {
    int64_t queries = std::min(size, lq - offset);
    int64_t keys = causal ? std::min(lk, offset + queries) : lk;
    blocks.push_back({offset, queries, keys});
  }
  return blocks;
}

Value mlir::ober::causalKeep(OpBuilder &b, Location loc, int64_t queries,
                             int64_t keys, int64_t offset) {
  Type i64 = b.getI64Type();
  auto indexType = RankedTensorType::get({queries, keys}, i64);
  Value rows = IotaOp::create(b, loc, indexType, 0);
  if (offset != 0)
    rows =
        AddOp::create(b, loc, rows, createScalarConstant(b, loc, i64, offset));
  return CompareOp::create(b, loc, CompareDirection::ge, rows,
                           IotaOp::create(b, loc, indexType, 1));
}

namespace {

/// The ops the blocks are made of, at one location.
struct Builder : OberShapeBuilder<Builder> {
  Builder(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  OpBuilder &b;
  Location loc;
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    return OpTy::create(b, loc, std::forward<Args>(args)...)->getResult(0);
  }
  /// `v`'s entries [begin, end) along `axis` (`v` itself when that is all).
  Value slice(Value v, int64_t axis, int64_t begin, int64_t end) {
    if (begin == 0 &&
        end == llvm::cast<RankedTensorType>(v.getType()).getDimSize(axis))
      return v;
    return sliceAlong(v, axis, begin, end);
  }
  /// `v` with `extra` zeros after its entries along `axis`.
  Value padEnd(Value v, int64_t axis, int64_t extra) {
    if (extra == 0)
      return v;
    SmallVector<int64_t> low(
        llvm::cast<RankedTensorType>(v.getType()).getRank(), 0),
        high = low;
    high[axis] = extra;
    return padWithZeros(v, low, high);
  }
};

/// What one block of an attention op reads, and how it masks.
struct BlockOperands {
  Value query, key, value, mask;
  UnitAttr causal;
};

/// The operands of `op` (an AttentionOp or AttentionGradOp) for `block`.
/// A causal block that starts at query 0 is causal itself; a later one
/// gets the causal rule as an `i1` mask shifted by its offset, joined with
/// the op's own mask.
template <typename OpTy>
BlockOperands blockOperands(Builder &sb, OpTy op, const AttentionBlock &block,
                            int64_t lq, int64_t lk) {
  int64_t axis = op.getQuery().getType().getRank() - 2;
  int64_t end = block.offset + block.queries;
  BlockOperands o;
  o.query = sb.slice(op.getQuery(), axis, block.offset, end);
  o.key = sb.slice(op.getKey(), axis, 0, block.keys);
  o.value = sb.slice(op.getValue(), axis, 0, block.keys);
  // The mask's query and key axes, where it does not broadcast along them.
  if (Value mask = op.getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    int64_t rank = type.getRank();
    if (rank >= 2 && type.getDimSize(rank - 2) == lq)
      mask = sb.slice(mask, rank - 2, block.offset, end);
    if (rank >= 1 && type.getDimSize(rank - 1) == lk)
      mask = sb.slice(mask, rank - 1, 0, block.keys);
    o.mask = mask;
  }
  if (!op.getIsCausal())
    return o;
  if (block.offset == 0) {
    o.causal = sb.b.getUnitAttr();
    return o;
  }
  Value keep =
      causalKeep(sb.b, sb.loc, block.queries, block.keys, block.offset);
  if (!o.mask) {
    o.mask = keep;
  } else if (getElementTypeOrSelf(o.mask.getType()).isInteger(1)) {
    o.mask = sb.create<AndOp>(o.mask, keep);
  } else {
    Type element = getElementTypeOrSelf(o.mask.getType());
    o.mask = sb.create<SelectOp>(
        keep, o.mask,
        sb.scalar(element, -std::numeric_limits<double>::infinity()));
  }
  return o;
}

/// `sum` (over keys [0, its length)) plus `piece` (over at least as many
/// keys): their sum over `piece`'s keys, in f32 where `piece` is narrower
/// (bf16, f16: one rounding at the end, not one per block).
Value addKeys(Builder &sb, Value sum, Value piece, int64_t axis) {
  if (getElementTypeOrSelf(piece.getType()).getIntOrFloatBitWidth() < 32)
    piece = sb.cast(piece, sb.b.getF32Type());
  if (!sum)
    return piece;
  int64_t have = cast<RankedTensorType>(sum.getType()).getDimSize(axis);
  int64_t want = cast<RankedTensorType>(piece.getType()).getDimSize(axis);
  return sb.create<AddOp>(piece, sb.padEnd(sum, axis, want - have));
}

Value concatQueries(Builder &sb, Type type, ArrayRef<Value> pieces,
                    int64_t axis) {
  if (pieces.size() == 1)
    return pieces.front();
  return sb.create<ConcatOp>(type, pieces, sb.b.getI64IntegerAttr(axis));
}

void blockForward(AttentionOp op, ArrayRef<AttentionBlock> blocks, int64_t lq,
                  int64_t lk) {
  OpBuilder b(op);
  Builder sb(b, op.getLoc());
  SmallVector<Value> outputs;
  for (const AttentionBlock &block : blocks) {
    BlockOperands o = blockOperands(sb, op, block, lq, lk);
    outputs.push_back(sb.create<AttentionOp>(o.query, o.key, o.value, o.mask,
                                             op.getScaleAttr(), o.causal));
  }
  int64_t axis = op.getQuery().getType().getRank() - 2;
  op.replaceAllUsesWith(concatQueries(sb, op.getType(), outputs, axis));
  op.erase();
}

void blockGradient(AttentionGradOp op, ArrayRef<AttentionBlock> blocks,
                   int64_t lq, int64_t lk) {
  OpBuilder b(op);
  Builder sb(b, op.getLoc());
  int64_t axis = op.getQuery().getType().getRank() - 2;
  SmallVector<Value> dq;
  Value dk, dv;
  for (const AttentionBlock &block : blocks) {
    BlockOperands o = blockOperands(sb, op, block, lq, lk);
    int64_t end = block.offset + block.queries;
    auto grads = AttentionGradOp::create(
        b, sb.loc, o.query, o.key, o.value,
        sb.slice(op.getOutput(), axis, block.offset, end),
        sb.slice(op.getOutputGrad(), axis, block.offset, end), o.mask,
        op.getScaleAttr(), o.causal);
    dq.push_back(grads.getQueryGrad());
    dk = addKeys(sb, dk, grads.getKeyGrad(), axis);
    dv = addKeys(sb, dv, grads.getValueGrad(), axis);
  }
  // Keys no query sees (causal, fewer queries than keys) get no gradient.
  int64_t seen = blocks.back().keys;
  auto finish = [&](Value sum, Value result) {
    Value whole = sb.padEnd(sum, axis, lk - seen);
    result.replaceAllUsesWith(
        sb.cast(whole, getElementTypeOrSelf(result.getType())));
  };
  op.getQueryGrad().replaceAllUsesWith(
      concatQueries(sb, op.getQueryGrad().getType(), dq, axis));
  finish(dk, op.getKeyGrad());
  finish(dv, op.getValueGrad());
  op.erase();
}

struct BlockAttentionPass
    : mlir::ober::impl::BlockAttentionPassBase<BlockAttentionPass> {
  using BlockAttentionPassBase::BlockAttentionPassBase;
  void runOnOperation() override {
    if (block < 0) {
      getOperation().emitError("ober-block-attention: block=")
          << static_cast<int64_t>(block)
          << " is negative (0 sizes blocks automatically)";
      return signalPassFailure();
    }
    blockAttention(getOperation(), block);
  }
};

} // namespace

void mlir::ober::blockAttention(Operation *root, int64_t blockQueries,
                                std::function<bool(Operation *)> keep) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<AttentionOp, AttentionGradOp>(op) && !(keep && keep(op)) &&
        llvm::all_of(op->getOperandTypes(), [](Type t) {
          return cast<RankedTensorType>(t).hasStaticShape();
        }))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto query = cast<RankedTensorType>(op->getOperand(0).getType());
    auto key = cast<RankedTensorType>(op->getOperand(1).getType());
    int64_t rank = query.getRank();
    int64_t lq = query.getDimSize(rank - 2), lk = key.getDimSize(rank - 2);
    if (query.getNumElements() == 0 || key.getNumElements() == 0)
      continue;
    int64_t batch = query.getNumElements() / (lq * query.getShape().back());
    bool causal = isa<AttentionOp>(op)
                      ? cast<AttentionOp>(op).getIsCausal()
                      : cast<AttentionGradOp>(op).getIsCausal();
    SmallVector<AttentionBlock> blocks =
        attentionBlocks(batch, lq, lk, causal, blockQueries);
    // One block that sees every key: the op as it is.
    if (blocks.size() == 1 && blocks.front().keys == lk)
      continue;
    if (auto forward = dyn_cast<AttentionOp>(op))
      blockForward(forward, blocks, lq, lk);
    else
      blockGradient(cast<AttentionGradOp>(op), blocks, lq, lk);
  }
}
