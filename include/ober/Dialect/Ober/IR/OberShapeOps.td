//===- OberShapeOps.td - shape ops and constants -----------*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERSHAPEOPS_TD
#define OBER_DIALECT_OBER_IR_OBERSHAPEOPS_TD

def Ober_ConstantOp : Ober_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "tensor constant";
  let description = [{
    A small constant tensor. Model weights are never constants: they are
    parameters (function arguments) backed by the external weights file.

    ```mlir
    %c = ober.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def Ober_IotaOp : Ober_Op<"iota", [Pure]> {
  let summary = "indices along one dimension";
  let description = [{
    Each element is its own index along `dimension`.
  }];
  let arguments = (ins I64Attr:$dimension);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ober_ReshapeOp : Ober_Op<"reshape", [Pure]> {
  let summary = "reshape preserving row-major element order";
  let description = [{
    The result type gives the new shape; both shapes hold the same number
    of elements (checked when both are static).
  }];
  let arguments = (ins Ober_Tensor:$input);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ober_TransposeOp : Ober_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.
  }];
  let arguments = (ins Ober_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Ober_BroadcastToOp : Ober_Op<"broadcast_to", [Pure]> {
  let summary = "broadcast to a shape with NumPy rules";
  let description = [{
    Aligns the input's dimensions with the trailing dimensions of the
    result; each input dimension is 1 or equal to the result's.
  }];
  let arguments = (ins Ober_Tensor:$input);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ober_ConcatOp : Ober_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "concatenate along one axis";
  let description = [{
    All inputs have the same rank, element type and sizes except along
    `axis`.
  }];
  let arguments = (ins Variadic<Ober_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Ober_SliceOp : Ober_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice";
  let description = [{
    Per dimension, takes the elements at `start, start + stride, ...` before
    reaching `limit` (NumPy semantics with normalised bounds). A positive
    stride needs `0 <= start <= limit <= size`; a negative stride walks
    backwards and needs `-1 <= limit <= start < size` (a `limit` of -1 runs
    to the first element). The result size is
    `max(0, ceil((limit - start) / stride))`.
  }];
  let arguments = (ins Ober_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Ober_SplitOp : Ober_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "split along one axis";
  let description = [{
    Splits `input` along `axis` into consecutive pieces of `sizes` (which sum
    to the size of the axis), one result each.
  }];
  let arguments = (ins Ober_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Ober_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Ober_PadOp : Ober_Op<"pad", [Pure, InferTypeOpAdaptor]> {
  let summary = "pad each dimension";
  let description = [{
    Adds `low[i]` elements before and `high[i]` after dimension `i` (both
    non-negative). `constant` mode fills with `value`; `reflect` mirrors
    without repeating the edge (needs pads smaller than the size); `edge`
    repeats the edge element.
  }];
  let arguments = (ins Ober_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, Ober_PadModeAttr:$mode,
                       F64Attr:$value);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

#endif // OBER_DIALECT_OBER_IR_OBERSHAPEOPS_TD
