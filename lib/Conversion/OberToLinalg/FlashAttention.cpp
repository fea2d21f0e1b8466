//===- FlashAttention.cpp - attention as calls to CUDA's flash kernels ----===//
//
// Part of Ober-Train. With `attention=flash` (the CUDA target), an
// `ober.attention` or `ober.attention_grad` the CUDA library's tensor-core
// kernels take (bf16 or f16, static shapes, no mask, heads of at most
// OBER_ATTENTION_MAX_HEAD, at most OBER_ATTENTION_MAX_BATCH batch entries
// and heads) becomes
// a call on dense buffers, written on tensors as the other kernel calls
// are (KernelCalls.cpp):
//
//   func.call @ober_rt_cuda_attention_bf16(%desc, %q, %k, %v, %o)
//   func.call @ober_rt_cuda_attention_grad_bf16(%desc, %q, %k, %v, %o, %do,
//                                               %dq, %dk, %dv)
//
// with the descriptor of CUDAKernels.h (ober_rt_attention_field) as a
// constant global.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "ober/Conversion/RuntimeCalls.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Runtime/CUDAKernels.h"
#include "ober/Runtime/DType.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::lowering;

bool lowering::flashAttention(Operation *op) {
  if (!isa<AttentionOp, AttentionGradOp>(op))
    return false;
  bool masked = isa<AttentionOp>(op) ? bool(cast<AttentionOp>(op).getMask())
                                     : bool(cast<AttentionGradOp>(op).getMask());
  if (masked)
    return false;
  Type element = cast<RankedTensorType>(op->getOperand(0).getType())
                     .getElementType();
  if (!element.isBF16() && !element.isF16())
    return false;
  for (Value v : op->getOperands()) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.hasStaticShape() || type.getElementType() != element ||
        type.getRank() < 2 || type.getNumElements() == 0)
      return false;
  }
  auto q = cast<RankedTensorType>(op->getOperand(0).getType());
  auto v = cast<RankedTensorType>(op->getOperand(2).getType());
  int64_t lq = q.getDimSize(q.getRank() - 2), d = q.getShape().back(),
          dv = v.getShape().back();
  int64_t batch = q.getNumElements() / (lq * d);
  return d <= OBER_ATTENTION_MAX_HEAD && dv <= OBER_ATTENTION_MAX_HEAD &&
         batch <= OBER_ATTENTION_MAX_BATCH;
}

namespace {

/// The descriptor's fields for `op` (an attention or its gradient).
SmallVector<int64_t> attentionFields(Operation *op, bool causal,
                                     double scale) {
  auto q = cast<RankedTensorType>(op->getOperand(0).getType());
  auto k = cast<RankedTensorType>(op->getOperand(1).getType());
  auto v = cast<RankedTensorType>(op->getOperand(2).getType());
  int64_t rank = q.getRank(), lq = q.getDimSize(rank - 2),
          d = q.getShape().back();
  SmallVector<int64_t> fields(OBER_ATTENTION_FIELDS);
  fields[OBER_ATTENTION_BATCH] = q.getNumElements() / (lq * d);
  fields[OBER_ATTENTION_LQ] = lq;
  fields[OBER_ATTENTION_LK] = k.getDimSize(rank - 2);
  fields[OBER_ATTENTION_D] = d;
  fields[OBER_ATTENTION_DV] = v.getShape().back();
  fields[OBER_ATTENTION_CAUSAL] = causal;
  std::memcpy(&fields[OBER_ATTENTION_SCALE_BITS], &scale, sizeof(scale));
  fields[OBER_ATTENTION_DTYPE] = static_cast<int64_t>(
      q.getElementType().isBF16() ? ::ober::rt::DType::BF16
                                  : ::ober::rt::DType::F16);
  return fields;
}

/// Calls `name` with the descriptor of `op`, its operands as read-only
/// buffers and new buffers for its results; replaces it.
void callFlash(PatternRewriter &rewriter, Operation *op, StringRef name,
               ArrayRef<int64_t> fields) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  Type element = cast<RankedTensorType>(op->getOperand(0).getType())
                     .getElementType();
  std::string callee =
      (name + (element.isBF16() ? "_bf16" : "_f16")).str();
  SmallVector<Value> args = {descriptorValue(
      rewriter, loc,
      descriptorGlobal(rewriter, module, "__" + callee + "_desc", fields))};
  for (Value in : op->getOperands())
    args.push_back(
        unrankedBuffer(rewriter, loc, readOnlyBuffer(rewriter, loc, in, element)));
  SmallVector<Value> outs;
  for (Value r : op->getResults()) {
    auto type = cast<RankedTensorType>(r.getType());
    outs.push_back(newRuntimeBuffer(rewriter, loc, type.getShape(), element));
    args.push_back(unrankedBuffer(rewriter, loc, outs.back()));
  }
  func::CallOp::create(
      rewriter, loc,
      runtimeFunction(rewriter, module, callee, ValueRange(args).getTypes(), {}),
      args);
  SmallVector<Value> results;
  for (auto [buffer, r] : llvm::zip(outs, op->getResults()))
    results.push_back(tensorOfBuffer(rewriter, loc, buffer,
                                     cast<RankedTensorType>(r.getType())));
  rewriter.replaceOp(op, results);
}

/// `Op` (ober.attention or ober.attention_grad) as a call to `callee()`.
template <typename Op, const char *(*callee)()>
struct Flash : OpRewritePattern<Op> {
  Flash(MLIRContext *ctx) : OpRewritePattern<Op>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    if (!flashAttention(op))
      return rewriter.notifyMatchFailure(op, "not for the flash kernels");
    callFlash(rewriter, op, callee(),
              attentionFields(op, op.getIsCausal(), op.getEffectiveScale()));
    return success();
  }
};
const char *forwardName() { return OBER_RT_CUDA_ATTENTION; }
const char *backwardName() { return OBER_RT_CUDA_ATTENTION_GRAD; }

} // namespace

void lowering::populateFlashAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<Flash<AttentionOp, forwardName>,
               Flash<AttentionGradOp, backwardName>>(patterns.getContext());
}
