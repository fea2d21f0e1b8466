//===- OberGradientOps.td - adjoint ops for training ----------*- tablegen -*-===//
//
// Ops that exist for the backward pass: the adjoints of convolution weights,
// pooling and gather_elements, which have no cheaper expression in other ops.
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

#endif // OBER_DIALECT_OBER_IR_OBERGRADIENTOPS_TD
