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

def Ober_ConvOp : Ober_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "1-, 2- or 3-D convolution (channels first)";
  let description = [{
    `input` is `[N, C, D1, ..., Dk]` with k in {1, 2, 3}, `weight` is
    `[O, C / groups, K1, ..., Kk]`, the optional `bias` is `[O]`. `strides`
    and `dilations` have k entries; `padding` has 2k: the k leading pads then
    the k trailing pads (ONNX's order; `[top, left, bottom, right]` in 2-D).
    Output size per spatial dimension:
    `floor((D + pad_begin + pad_end - dilation * (K - 1) - 1) / stride) + 1`.

    ```mlir
    %y = ober.conv %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,
                                dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x16x16xf32>
    ```
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

def Ober_ConvTransposeOp : Ober_Op<"conv_transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "transposed convolution (the adjoint of ober.conv)";
  let description = [{
    `input` is `[N, C, D1, ..., Dk]`, `weight` is `[C, O / groups, K1, ...,
    Kk]` (PyTorch's and ONNX's layout), the optional `bias` is `[O]`. Each
    input element scatters `input * weight` into the output at
    `position * stride - pad_begin + kernel_offset * dilation`. Output size:
    `(D - 1) * stride - pad_begin - pad_end + dilation * (K - 1) +
    output_padding + 1`. With the same attributes it is the gradient of
    `ober.conv` with respect to its input.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$weight,
                       Optional<Ober_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$groups);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_MaxPoolOp : Ober_Op<"max_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "1-, 2- or 3-D max pooling (channels first)";
  let description = [{
    Pools `[N, C, D1, ..., Dk]` with windows `kernel` (k entries), `strides`,
    `padding` (2k: leading pads then trailing pads; padded elements never
    win) and `dilations`. With `ceil_mode`, output sizes round up, but a
    window must start inside the input or its leading padding (PyTorch's
    rule).
  }];
  let arguments = (ins Ober_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Ober_AvgPoolOp : Ober_Op<"avg_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "1-, 2- or 3-D average pooling (channels first)";
  let description = [{
    Averages `[N, C, D1, ..., Dk]` over windows `kernel` with `strides` and
    `padding` (2k entries). With `count_include_pad`, the divisor counts the
    padded positions a window covers (clipped to the padded input);
    otherwise only real elements. `ceil_mode` follows `ober.max_pool`.
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
