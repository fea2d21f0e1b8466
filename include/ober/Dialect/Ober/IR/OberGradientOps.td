//===- OberGradientOps.td - adjoint ops for training ----------*- tablegen -*-===//
//
// Ops that exist for the backward pass: the adjoints of convolution weights,
// pooling, gather_elements and attention, which have no cheaper expression
// in other ops.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_OBERGRADIENTOPS_TD
#define OBER_DIALECT_OBER_IR_OBERGRADIENTOPS_TD

def Ober_ConvWeightGradOp : Ober_Op<"conv_weight_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of ober.conv with respect to its weight";
  let description = [{
    For `y = ober.conv(input, w)` with the same attributes, returns
    `dL/dw` given `output_grad = dL/dy`: `[O, C / groups, K1..Kk]` where
    `kernel` gives `K1..Kk`. With `input` and `output_grad` swapped it is
    also the weight gradient of `ober.conv_transpose`.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilations,
                       I64Attr:$groups);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_MaxPoolGradOp : Ober_Op<"max_pool_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of ober.max_pool with respect to its input";
  let description = [{
    Routes each element of `output_grad` to the position of its window's
    maximum in `input` (the first one on ties, as PyTorch does); the
    attributes are those of the forward `ober.max_pool`.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilations,
                       BoolAttr:$ceil_mode);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_AvgPoolGradOp : Ober_Op<"avg_pool_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of ober.avg_pool with respect to its input";
  let description = [{
    Spreads each element of `output_grad` evenly over its window with the
    forward op's divisor; `input` gives the shape (its values are unused).
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_ScatterElementsAddOp : Ober_Op<"scatter_elements_add", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "accumulate single elements along one axis (the adjoint of gather_elements)";
  let description = [{
    Starts from `input` and adds each element of `updates` (shaped like
    `indices`) at the position `ober.gather_elements` with the same
    `indices` and `axis` would have read.
  }];
  let arguments = (ins Ober_NumericTensor:$input, Ober_IndexTensor:$indices,
                       Ober_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `,` $updates attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_AttentionGradOp : Ober_Op<"attention_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradients of ober.attention with respect to query, key and value";
  let description = [{
    For `output = ober.attention(query, key, value, mask)` with the same
    `scale` and `is_causal`, returns `dL/dquery`, `dL/dkey` and
    `dL/dvalue` (shaped like them) given `output` and `output_grad =
    dL/doutput`. With `P` the attention probabilities (the scores computed
    again: nothing of the forward pass but its output is kept, so a fused
    kernel needs no score matrix), `dV = P^T dO`, `dS = P * (dO V^T -
    rowsum(dO * O))`, `dQ = scale * dS K`, `dK = scale * dS^T Q`. The mask,
    if any, is `i1` (a float mask's gradient is not computed here; autodiff
    differentiates such an attention through its decomposition).
    `ober-decompose-attention` rewrites the op into primitive ops.
  }];
  let arguments = (ins Ober_FloatTensor:$query, Ober_FloatTensor:$key,
                       Ober_FloatTensor:$value, Ober_FloatTensor:$output,
                       Ober_FloatTensor:$output_grad,
                       Optional<Ober_Tensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$is_causal);
  let results = (outs Ober_FloatTensor:$query_grad, Ober_FloatTensor:$key_grad,
                      Ober_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $output_grad (`,` $mask^)?
      attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
  }];
}

#endif // OBER_DIALECT_OBER_IR_OBERGRADIENTOPS_TD
