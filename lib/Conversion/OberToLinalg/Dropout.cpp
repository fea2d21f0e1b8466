//===- Dropout.cpp - seeded dropout as linalg.generic ----------------------===//
//
// Part of Ober-Train. Each element draws the interpreter's uniform
// (ober/Runtime/Random.h: SplitMix64 of the seed and the element's index
// in the whole tensor, top 53 bits as a double) in i64 arithmetic that
// vectorizes, keeps the element when the draw is at least the ratio and
// scales it by 1 / (1 - ratio). The index counts `major_dim` first; a
// block of a larger tensor adds its offsets.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/Random.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

namespace {

Value i64Const(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(static_cast<int64_t>(v)));
}

/// SplitMix64's finaliser of (seed, counter) in i64 arithmetic.
Value randomBits(OpBuilder &b, Location loc, Value seed, Value counter) {
  using namespace ::ober::rt;
  auto mix = [&](Value z, unsigned shift, uint64_t factor) -> Value {
    Value s = arith::ShRUIOp::create(b, loc, z, i64Const(b, loc, shift));
    Value x = arith::XOrIOp::create(b, loc, z, s);
    return factor ? Value(arith::MulIOp::create(b, loc, x,
                                                i64Const(b, loc, factor)))
                  : x;
  };
  Value z = arith::AddIOp::create(
      b, loc, seed,
      arith::MulIOp::create(
          b, loc, i64Const(b, loc, kRandomStep),
          arith::AddIOp::create(b, loc, counter, i64Const(b, loc, 1))));
  z = mix(z, kRandomShift1, kRandomMix1);
  z = mix(z, kRandomShift2, kRandomMix2);
  return mix(z, kRandomShift3, 0);
}

struct DropoutLowering : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = type.getRank();
    Type element = type.getElementType(), acc = computeType(element);
    double ratio = op.getRatio().convertToDouble();
    SmallVector<int64_t> whole(type.getShape());
    if (std::optional<ArrayRef<int64_t>> g = op.getGlobalShape())
      whole.assign(g->begin(), g->end());
    SmallVector<int64_t> order = op.getIndexOrder();
    Value seed = op.getSeed(), offsets = op.getOffsets();
    auto maskType = type.clone(rewriter.getI1Type());
    Value outInit = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                            element);
    Value maskInit = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                             rewriter.getI1Type());
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   rewriter.getMultiDimIdentityMap(rank),
                                   rewriter.getMultiDimIdentityMap(rank)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type, maskType}, ValueRange{op.getInput()},
        ValueRange{outInit, maskInit}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange v) {
          Value s = tensor::ExtractOp::create(b, l, seed, ValueRange{});
          Value global = i64Const(b, l, 0);
          for (int64_t k : order) {
            Value at = arith::IndexCastOp::create(
                b, l, b.getI64Type(), linalg::IndexOp::create(b, l, k));
            if (offsets)
              at = arith::AddIOp::create(
                  b, l, at,
                  tensor::ExtractOp::create(
                      b, l, offsets,
                      ValueRange{arith::ConstantIndexOp::create(b, l, k)}));
            global = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(b, l, global, i64Const(b, l, whole[k])),
                at);
          }
          Value bits = arith::ShRUIOp::create(
              b, l, randomBits(b, l, s, global),
              i64Const(b, l, ::ober::rt::kUniformShift));
          Value uniform = arith::MulFOp::create(
              b, l, arith::UIToFPOp::create(b, l, b.getF64Type(), bits),
              arith::ConstantOp::create(
                  b, l, b.getF64FloatAttr(::ober::rt::kUniformScale)));
          Value keep = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGE, uniform,
              arith::ConstantOp::create(b, l, b.getF64FloatAttr(ratio)));
          Value scaled = arith::DivFOp::create(
              b, l, widen(b, l, v[0]), scalarConstant(b, l, acc, 1.0 - ratio));
          Value out = arith::SelectOp::create(b, l, keep, scaled,
                                              scalarConstant(b, l, acc, 0.0));
          linalg::YieldOp::create(b, l,
                                  ValueRange{narrow(b, l, out, element), keep});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void lowering::populateDropoutPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}
