//===- OberLossOps.td - losses -----------------------------*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERLOSSOPS_TD
#define OBER_DIALECT_OBER_IR_OBERLOSSOPS_TD

def Ober_CrossEntropyOp : Ober_Op<"cross_entropy", [Pure, InferTypeOpAdaptor]> {
  let summary = "softmax cross-entropy over the last dimension";
  let description = [{
    `logits` is `[..., C]`. `targets` is either integer class indices of
    shape `[...]` or float probabilities of the shape of `logits`. Computes
    `-sum(q * log_softmax(logits))` per sample, where `q` is the target
    distribution mixed with `label_smoothing`:
    `q = (1 - label_smoothing) * target + label_smoothing / C`. With integer
    targets, samples equal to `ignore_index` contribute nothing and are not
    counted by `mean`. `reduction` is `none` (per-sample losses), `mean`
    or `sum` (0-D results).
  }];
  let arguments = (ins Ober_FloatTensor:$logits, Ober_NumericTensor:$targets,
                       Ober_LossReductionAttr:$reduction,
                       F64Attr:$label_smoothing,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_MSELossOp : Ober_Op<"mse_loss", [Pure, InferTypeOpAdaptor]> {
  let summary = "mean squared error";
  let description = [{
    `(input - target)^2` elementwise, reduced by `reduction` (`none` keeps
    the shape, `mean` and `sum` give 0-D results). Both operands have the
    same type.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$target,
                       Ober_LossReductionAttr:$reduction);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

#endif // OBER_DIALECT_OBER_IR_OBERLOSSOPS_TD
