//===- OberContractionOps.td - matmul, conv, pool, attention -*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERCONTRACTIONOPS_TD
#define OBER_DIALECT_OBER_IR_OBERCONTRACTIONOPS_TD

def Ober_MatmulOp : Ober_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "batched matrix product with broadcasting (numpy.matmul)";
  let description = [{
    Follows `numpy.matmul`: a 1-D `lhs` is a row vector and a 1-D `rhs` a
    column vector (the added dimension is removed from the result); leading
    batch dimensions broadcast with NumPy rules.

    ```mlir
    %y = ober.matmul %x, %w : (tensor<8x128x64xf32>, tensor<64x256xf32>) -> tensor<8x128x256xf32>
    ```
  }];
  let arguments = (ins Ober_NumericTensor:$lhs, Ober_NumericTensor:$rhs);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_Conv2DOp : Ober_Op<"conv2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D convolution (NCHW input, OIHW weight)";
  let description = [{
    `input` is `[N, C, H, W]`, `weight` is `[O, C / groups, KH, KW]`, the
    optional `bias` is `[O]`. `padding` is `[top, left, bottom, right]`.
    Output spatial size is `floor((H + top + bottom - dh * (KH - 1) - 1) / sh) + 1`.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$weight,
                       Optional<Ober_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_MaxPool2DOp : Ober_Op<"max_pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D max pooling (NCHW)";
  let description = [{
    Pools `[N, C, H, W]` with windows `kernel` (`[KH, KW]`), `strides`,
    `padding` (`[top, left, bottom, right]`, padded elements never win) and
    `dilations`. With `ceil_mode`, output sizes round up, but a window must
    start inside the input or its top/left padding (PyTorch's rule).
  }];
  let arguments = (ins Ober_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Ober_AvgPool2DOp : Ober_Op<"avg_pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D average pooling (NCHW)";
  let description = [{
    Averages `[N, C, H, W]` over windows `kernel` with `strides` and `padding`
    (`[top, left, bottom, right]`). With `count_include_pad`, the divisor
    counts padded elements inside the padded input; otherwise only real ones.
    `ceil_mode` follows the same rule as `ober.max_pool2d`.
  }];
  let arguments = (ins Ober_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Ober_AttentionOp : Ober_Op<"attention", [Pure, InferTypeOpAdaptor]> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    `softmax(q @ k^T * scale + mask) @ v` over the last two dimensions.
    `query` is `[..., Lq, D]`, `key` is `[..., Lk, D]`, `value` is
    `[..., Lk, Dv]` with the same leading dimensions; the result is
    `[..., Lq, Dv]`. `scale` defaults to `1 / sqrt(D)`. The optional `mask`
    broadcasts to `[..., Lq, Lk]`: a float mask is added to the scores, an
    `i1` mask keeps the scores where it is true (PyTorch's convention).
    `is_causal` masks key positions after the query position (top-left
    aligned, as in PyTorch). `ober-decompose-attention` rewrites the op
    into primitive ops.
  }];
  let arguments = (ins Ober_FloatTensor:$query, Ober_FloatTensor:$key,
                       Ober_FloatTensor:$value, Optional<Ober_Tensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$is_causal);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:`
      functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
  }];
}

#endif // OBER_DIALECT_OBER_IR_OBERCONTRACTIONOPS_TD
