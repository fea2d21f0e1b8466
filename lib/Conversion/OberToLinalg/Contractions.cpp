//===- Contractions.cpp - ober.matmul as linalg.matmul --------------------===//
//
// Part of Ober-Train. `matmul` by NumPy's rules: a vector operand gains a
// unit dimension (removed from the result), batch dimensions broadcast. A
// matrix on the right (no batch, or a batch of one) takes the left operand's batch and rows as one
// dimension of rows (one `linalg.matmul`); otherwise both operands are
// broadcast to the result's batch, collapsed to one batch dimension and
// multiplied by `linalg.batch_matmul`. bf16 and f16 accumulate in f32 and
// round once.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

struct MatmulLowering : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto lt = cast<RankedTensorType>(op.getLhs().getType());
    auto rt = cast<RankedTensorType>(op.getRhs().getType());
    auto result = cast<RankedTensorType>(op.getResult().getType());
    if (!lt.hasStaticShape() || !rt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Type element = result.getElementType(), acc = computeType(element);
    Value lhs = op.getLhs(), rhs = op.getRhs();
    // Vectors as matrices.
    SmallVector<int64_t> ls(lt.getShape()), rs(rt.getShape());
    if (ls.size() == 1)
      ls.insert(ls.begin(), 1);
    if (rs.size() == 1)
      rs.push_back(1);
    lhs = reshapeTo(rewriter, loc, lhs, ls);
    rhs = reshapeTo(rewriter, loc, rhs, rs);
    int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
    ArrayRef<int64_t> lb = ArrayRef<int64_t>(ls).drop_back(2),
                      rb = ArrayRef<int64_t>(rs).drop_back(2);
    // The broadcast batch.
    SmallVector<int64_t> batch(std::max(lb.size(), rb.size()), 1);
    for (auto [i, d] : llvm::enumerate(llvm::reverse(lb)))
      batch[batch.size() - 1 - i] = d;
    for (auto [i, d] : llvm::enumerate(llvm::reverse(rb)))
      if (d != 1)
        batch[batch.size() - 1 - i] = d;
    int64_t nb = ShapedType::getNumElements(batch);
    auto zeroFilled = [&](ArrayRef<int64_t> shape) {
      return filled(rewriter, loc, RankedTensorType::get(shape, acc),
                    scalarConstant(rewriter, loc, acc, 0.0));
    };
    Value out;
    if (ShapedType::getNumElements(rb) == 1) { // one matrix on the right: nb == ShapedType::getNumElements(lb)
      Value a = reshapeTo(rewriter, loc, lhs, {ShapedType::getNumElements(lb) * m, k});
      Value w = reshapeTo(rewriter, loc, rhs, {k, n});
      out = linalg::MatmulOp::create(rewriter, loc, ValueRange{a, w},
                                     ValueRange{zeroFilled({nb * m, n})})
                .getResult(0);
    } else {
      auto broadcast = [&](Value v, RankedTensorType type, int64_t rows,
                           int64_t cols) {
        SmallVector<int64_t> shape(batch);
        shape.append({rows, cols});
        if (cast<RankedTensorType>(v.getType()).getShape() != ArrayRef(shape))
          v = mapElements(rewriter, loc,
                          RankedTensorType::get(shape, type.getElementType()), v,
                          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
        return reshapeTo(rewriter, loc, v, {nb, rows, cols});
      };
      Value a = broadcast(lhs, lt, m, k), w = broadcast(rhs, rt, k, n);
      out = linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{a, w},
                                          ValueRange{zeroFilled({nb, m, n})})
                .getResult(0);
    }
    if (acc != element) {
      auto type = cast<RankedTensorType>(out.getType()).clone(element);
      out = mapElements(rewriter, loc, type, out,
                        [&](OpBuilder &b, Location l, ValueRange v) {
                          return narrow(b, l, v[0], element);
                        });
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, out, result.getShape()));
    return success();
  }
};

} // namespace

void lowering::populateContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(patterns.getContext());
}
