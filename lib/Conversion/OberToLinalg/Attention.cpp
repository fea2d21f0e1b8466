//===- Attention.cpp - attention as memory-efficient loop nests -----------===//
//
// Part of Ober-Train. With `attention=fused`, `ober.attention` and
// `ober.attention_grad` become loop nests that never hold a score matrix
// (FlashAttention's online softmax, one query or key row per iteration):
//
//   forward, parallel over (batch..., i):
//     m = -inf, l = 0, acc = 0                       (acc: a vector of Dv)
//     for j < Lk:  s = q_i . k_j * scale (+ mask);  m' = max(m, s)
//                  l = l e^(m - m') + e^(s - m');  acc = acc e^(m - m')
//                  + e^(s - m') v_j
//     o_i = acc / l
//   backward, parallel over (batch..., i):
//     lse_i = log sum_j e^(s_ij), D_i = dO_i . O_i     (kept per row)
//     dQ_i = scale * sum_j p_ij (dO_i . v_j - D_i) k_j
//   backward, parallel over (batch..., j):
//     dV_j = sum_i p_ij dO_i,  dK_j = scale * sum_i p_ij (dO_i . v_j - D_i) q_i
//
// with p_ij = e^(s_ij - lse_i). The loops are `scf.parallel` on buffers (as
// the kernel calls are, between `bufferization.to_buffer` and `to_tensor`),
// so the CPU pipeline runs them as OpenMP loops and the CUDA pipeline as one
// thread per row; rows are `vector`s of the compute type (registers on the
// GPU). Memory: the operands, the results and two rows of scalars.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Conversion/RuntimeCalls.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

bool lowering::fusableAttention(Operation *op) {
  if (!isa<AttentionOp, AttentionGradOp>(op))
    return false;
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return false;
  auto key = cast<RankedTensorType>(op->getOperand(1).getType());
  auto value = cast<RankedTensorType>(op->getOperand(2).getType());
  int64_t d = key.getShape().back(), dv = value.getShape().back();
  return d >= 1 && dv >= 1 && d <= kMaxFusedAttentionRow &&
         dv <= kMaxFusedAttentionRow;
}

namespace {

/// What the loop bodies share: the operands as dense buffers of the
/// compute type (the mask as it is when `i1`), the shapes and the scale.
struct Rows {
  OpBuilder &b;
  Location loc;
  Type ct;                      // compute type
  Value q = {}, k = {}, v = {}, mask = {}; // buffers
  int64_t batchRank = 0, lq = 0, lk = 0, d = 0, dv = 0;
  ArrayRef<int64_t> maskShape = {}; // broadcasts to [batch..., lq, lk]
  SmallVector<int64_t> scoreShape = {};
  bool causal = false;
  double scale = 1;

  Value index(int64_t i) { return arith::ConstantIndexOp::create(b, loc, i); }
  Value scalar(double x) { return scalarConstant(b, loc, ct, x); }
  VectorType row(int64_t width) { return VectorType::get({width}, ct); }
  Value splat(Value x, int64_t width) {
    return vector::BroadcastOp::create(b, loc, row(width), x);
  }
  /// Indices `[batch..., r, 0]`.
  SmallVector<Value> at(ValueRange batch, Value r) {
    SmallVector<Value> ix(batch);
    ix.push_back(r);
    ix.push_back(index(0));
    return ix;
  }
  /// Indices `[batch..., r]` (a per-row scalar).
  SmallVector<Value> atRow(ValueRange batch, Value r) {
    SmallVector<Value> ix(batch);
    ix.push_back(r);
    return ix;
  }
  Value load(Value buffer, ValueRange batch, Value r, int64_t width) {
    return vector::LoadOp::create(b, loc, row(width), buffer, at(batch, r));
  }
  void store(Value x, Value buffer, ValueRange batch, Value r) {
    vector::StoreOp::create(b, loc, x, buffer, at(batch, r));
  }
  Value dot(Value x, Value y) {
    return vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, arith::MulFOp::create(b, loc, x, y),
        arith::FastMathFlags::reassoc);
  }
  /// `acc + x * y` (x a scalar, y and acc rows).
  Value axpy(Value acc, Value x, Value y) {
    auto width = cast<VectorType>(y.getType()).getDimSize(0);
    return vector::FMAOp::create(b, loc, splat(x, width), y, acc);
  }
  /// The score of query `i` and key `j` given their rows.
  Value score(ValueRange batch, Value i, Value j, Value qRow, Value kRow) {
    Value s = arith::MulFOp::create(b, loc, dot(qRow, kRow), scalar(scale));
    if (!mask)
      return s;
    SmallVector<Value> full(batch);
    full.push_back(i);
    full.push_back(j);
    SmallVector<Value> ix;
    int64_t offset = scoreShape.size() - maskShape.size();
    for (auto [m, size] : llvm::enumerate(maskShape))
      ix.push_back(size == 1 && scoreShape[m + offset] != 1 ? index(0)
                                                            : full[m + offset]);
    Value at = memref::LoadOp::create(b, loc, mask, ix);
    if (at.getType().isInteger(1))
      return arith::SelectOp::create(
          b, loc, at, s, scalar(-std::numeric_limits<double>::infinity()));
    return arith::AddFOp::create(b, loc, s, at);
  }
  /// The keys query `i` sees: `[0, min(i + 1, lk))` when causal.
  Value keyEnd(Value i) {
    if (!causal)
      return index(lk);
    return arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i, index(1)), index(lk));
  }
  /// The first query that sees key `j`: `j` when causal.
  Value queryBegin(Value j) { return causal ? j : index(0); }
  /// `m` where finite, else 0: the shift of a row whose scores so far are
  /// all -inf (masked), so that its exponentials are 0, not NaN.
  Value shift(Value m) {
    Value masked = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, m,
        scalar(-std::numeric_limits<double>::infinity()));
    return arith::SelectOp::create(b, loc, masked, scalar(0), m);
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }

  /// One step of the online softmax over `s`: the new (m, l) and the
  /// factor the old sums scale by, and e^(s - m').
  struct Step {
    Value m, l, rescale, p;
  };
  Step online(Value m, Value l, Value s) {
    Value next = arith::MaximumFOp::create(b, loc, m, s);
    Value base = shift(next);
    Value rescale = exp(arith::SubFOp::create(b, loc, m, base));
    Value p = exp(arith::SubFOp::create(b, loc, s, base));
    Value sum = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, l, rescale), p);
    return {next, sum, rescale, p};
  }
  /// For query `i` and key `j` (their rows, the query's dO row, the key's
  /// value row, log-sum-exp and D = dO . O): the probability p_ij and
  /// p_ij (dO_i . v_j - D_i), the score's gradient over the scale.
  std::pair<Value, Value> probabilityAndGrad(ValueRange batch, Value i,
                                             Value j, Value qRow, Value kRow,
                                             Value gRow, Value vRow,
                                             Value rowLse, Value rowDot) {
    Value p = exp(arith::SubFOp::create(b, loc, score(batch, i, j, qRow, kRow),
                                        rowLse));
    Value dp = dot(gRow, vRow);
    return {p, arith::MulFOp::create(b, loc, p,
                                     arith::SubFOp::create(b, loc, dp, rowDot))};
  }
  /// Stores `row * scale` at row `r` of `buffer`.
  void storeScaled(Value row, Value buffer, ValueRange batch, Value r) {
    auto width = cast<VectorType>(row.getType()).getDimSize(0);
    store(arith::MulFOp::create(b, loc, row, splat(scalar(scale), width)),
          buffer, batch, r);
  }
  /// log sum_j e^(s_ij) over the keys query `i` sees.
  Value logSumExp(ValueRange batch, Value i, Value qRow) {
    Value negInf = scalar(-std::numeric_limits<double>::infinity());
    auto loop = scf::ForOp::create(
        b, loc, index(0), keyEnd(i), index(1), ValueRange{negInf, scalar(0)},
        [&](OpBuilder &, Location, Value j, ValueRange it) {
          Step st = online(it[0], it[1],
                           score(batch, i, j, qRow, load(k, batch, j, d)));
          scf::YieldOp::create(b, loc, ValueRange{st.m, st.l});
        });
    return arith::AddFOp::create(b, loc, shift(loop.getResult(0)),
                                 math::LogOp::create(b, loc, loop.getResult(1)));
  }

  /// A parallel loop over `[batch..., rows)` calling `body(batch, row)`.
  void forEachRow(int64_t rows,
                  function_ref<void(ValueRange batch, Value r)> body) {
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t s : ArrayRef(scoreShape).take_front(batchRank))
      ubs.push_back(index(s));
    ubs.push_back(index(rows));
    lbs.assign(ubs.size(), index(0));
    steps.assign(ubs.size(), index(1));
    auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    // scf.parallel returns its induction variables by value.
    SmallVector<Value> ivs = loop.getInductionVars();
    body(ValueRange(ivs).drop_back(), ivs.back());
  }
};

/// `v` with the compute type's elements, as a dense buffer the loops read
/// (an `i1` mask stays `i1`).
Value readBuffer(OpBuilder &b, Location loc, Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return readOnlyBuffer(b, loc, v, computeType(element));
}

template <typename OpTy>
Rows rowsOf(OpTy op, OpBuilder &b) {
  Location loc = op.getLoc();
  RankedTensorType qt = op.getQuery().getType();
  RankedTensorType kt = op.getKey().getType();
  int64_t rank = qt.getRank();
  Rows r{b, loc, computeType(qt.getElementType())};
  r.q = readBuffer(b, loc, op.getQuery());
  r.k = readBuffer(b, loc, op.getKey());
  r.v = readBuffer(b, loc, op.getValue());
  if (Value mask = op.getMask()) {
    r.mask = readBuffer(b, loc, mask);
    r.maskShape = cast<RankedTensorType>(mask.getType()).getShape();
  }
  r.batchRank = rank - 2;
  r.lq = qt.getDimSize(rank - 2);
  r.lk = kt.getDimSize(rank - 2);
  r.d = qt.getDimSize(rank - 1);
  r.dv = op.getValue().getType().getDimSize(rank - 1);
  r.scoreShape.assign(qt.getShape().begin(), qt.getShape().end() - 1);
  r.scoreShape.push_back(r.lk);
  r.causal = op.getIsCausal();
  r.scale = op.getEffectiveScale();
  return r;
}

/// The shape of `[batch..., rows, width]`.
SmallVector<int64_t> rowsShape(const Rows &r, int64_t rows, int64_t width) {
  SmallVector<int64_t> shape(ArrayRef(r.scoreShape).take_front(r.batchRank));
  shape.push_back(rows);
  if (width)
    shape.push_back(width);
  return shape;
}

struct FusedAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!fusableAttention(op))
      return rewriter.notifyMatchFailure(op, "not fusable");
    Rows r = rowsOf(op, rewriter);
    Location loc = op.getLoc();
    Value out = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lq, r.dv), r.ct);
    r.forEachRow(r.lq, [&](ValueRange batch, Value i) {
      Value qRow = r.load(r.q, batch, i, r.d);
      Value zeros = r.splat(r.scalar(0), r.dv);
      auto loop = scf::ForOp::create(
          rewriter, loc, r.index(0), r.keyEnd(i), r.index(1),
          ValueRange{r.scalar(-std::numeric_limits<double>::infinity()),
                     r.scalar(0), zeros},
          [&](OpBuilder &, Location, Value j, ValueRange it) {
            Rows::Step st = r.online(
                it[0], it[1], r.score(batch, i, j, qRow, r.load(r.k, batch, j, r.d)));
            Value acc = arith::MulFOp::create(rewriter, loc, it[2],
                                              r.splat(st.rescale, r.dv));
            acc = r.axpy(acc, st.p, r.load(r.v, batch, j, r.dv));
            scf::YieldOp::create(rewriter, loc, ValueRange{st.m, st.l, acc});
          });
      Value o = arith::DivFOp::create(rewriter, loc, loop.getResult(2),
                                      r.splat(loop.getResult(1), r.dv));
      r.store(o, out, batch, i);
    });
    rewriter.replaceOp(op, tensorOfBuffer(rewriter, loc, out, op.getType()));
    return success();
  }
};

struct FusedAttentionGrad : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    if (!fusableAttention(op))
      return rewriter.notifyMatchFailure(op, "not fusable");
    Rows r = rowsOf(op, rewriter);
    Location loc = op.getLoc();
    Value o = readBuffer(rewriter, loc, op.getOutput());
    Value dO = readBuffer(rewriter, loc, op.getOutputGrad());
    Value dq = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lq, r.d), r.ct);
    Value dk = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lk, r.d), r.ct);
    Value dv = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lk, r.dv), r.ct);
    Value lse = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lq, 0), r.ct);
    Value delta = newRuntimeBuffer(rewriter, loc, rowsShape(r, r.lq, 0), r.ct);
    // Per query: the row's log-sum-exp and dO . O, then dQ.
    r.forEachRow(r.lq, [&](ValueRange batch, Value i) {
      Value qRow = r.load(r.q, batch, i, r.d);
      Value gRow = r.load(dO, batch, i, r.dv);
      Value rowDot = r.dot(gRow, r.load(o, batch, i, r.dv));
      Value rowLse = r.logSumExp(batch, i, qRow);
      memref::StoreOp::create(rewriter, loc, rowLse, lse, r.atRow(batch, i));
      memref::StoreOp::create(rewriter, loc, rowDot, delta, r.atRow(batch, i));
      auto loop = scf::ForOp::create(
          rewriter, loc, r.index(0), r.keyEnd(i), r.index(1),
          ValueRange{r.splat(r.scalar(0), r.d)},
          [&](OpBuilder &, Location, Value j, ValueRange it) {
            Value kRow = r.load(r.k, batch, j, r.d);
            Value ds = r.probabilityAndGrad(batch, i, j, qRow, kRow, gRow,
                                            r.load(r.v, batch, j, r.dv),
                                            rowLse, rowDot)
                           .second;
            scf::YieldOp::create(rewriter, loc, r.axpy(it[0], ds, kRow));
          });
      r.storeScaled(loop.getResult(0), dq, batch, i);
    });
    // Per key: dK and dV over the queries that see it.
    r.forEachRow(r.lk, [&](ValueRange batch, Value j) {
      Value kRow = r.load(r.k, batch, j, r.d);
      Value vRow = r.load(r.v, batch, j, r.dv);
      auto loop = scf::ForOp::create(
          rewriter, loc, r.queryBegin(j), r.index(r.lq), r.index(1),
          ValueRange{r.splat(r.scalar(0), r.d), r.splat(r.scalar(0), r.dv)},
          [&](OpBuilder &, Location, Value i, ValueRange it) {
            Value qRow = r.load(r.q, batch, i, r.d);
            Value gRow = r.load(dO, batch, i, r.dv);
            Value rowLse =
                memref::LoadOp::create(rewriter, loc, lse, r.atRow(batch, i));
            Value rowDot =
                memref::LoadOp::create(rewriter, loc, delta, r.atRow(batch, i));
            auto [p, ds] = r.probabilityAndGrad(batch, i, j, qRow, kRow, gRow,
                                                vRow, rowLse, rowDot);
            scf::YieldOp::create(
                rewriter, loc,
                ValueRange{r.axpy(it[0], ds, qRow), r.axpy(it[1], p, gRow)});
          });
      r.storeScaled(loop.getResult(0), dk, batch, j);
      r.store(loop.getResult(1), dv, batch, j);
    });
    rewriter.replaceOp(
        op, {tensorOfBuffer(rewriter, loc, dq, op.getQueryGrad().getType()),
             tensorOfBuffer(rewriter, loc, dk, op.getKeyGrad().getType()),
             tensorOfBuffer(rewriter, loc, dv, op.getValueGrad().getType())});
    return success();
  }
};

} // namespace

void lowering::populateFusedAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedAttention, FusedAttentionGrad>(patterns.getContext());
}
