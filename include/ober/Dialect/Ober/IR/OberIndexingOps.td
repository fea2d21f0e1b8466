//===- OberIndexingOps.td - gather, scatter, embedding -----*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERINDEXINGOPS_TD
#define OBER_DIALECT_OBER_IR_OBERINDEXINGOPS_TD

def Ober_EmbeddingOp : Ober_Op<"embedding", [Pure, InferTypeOpAdaptor]> {
  let summary = "embedding lookup";
  let description = [{
    `table` is `[V, D]`; the result has shape `indices.shape + [D]` and row
    `table[indices[i]]` at position `i`. Indices outside `[0, V)` are an error
    at run time.
  }];
  let arguments = (ins Ober_FloatTensor:$table, Ober_IndexTensor:$indices);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_GatherOp : Ober_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "gather slices along one axis (numpy.take)";
  let description = [{
    The result has shape `input.shape[:axis] + indices.shape +
    input.shape[axis+1:]`. Negative indices count from the end of the axis.
  }];
  let arguments = (ins Ober_Tensor:$input, Ober_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_GatherElementsOp : Ober_Op<"gather_elements", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gather single elements along one axis (torch.gather)";
  let description = [{
    `indices` has the rank of `input` and sizes no larger than it except
    along `axis`; the result has the shape of `indices` and
    `result[i0, .., ik, ..] = input[i0, .., indices[i0, .., ik, ..], ..]`
    with `ik` the position along `axis`. Negative indices count from the end.
  }];
  let arguments = (ins Ober_Tensor:$input, Ober_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_ScatterAddOp : Ober_Op<"scatter_add", [Pure, InferTypeOpAdaptor]> {
  let summary = "accumulate slices along one axis (the adjoint of gather)";
  let description = [{
    Starts from `input` and adds each slice of `updates` into the slice of
    the result that `ober.gather` with the same `indices` and `axis` would
    have read: `updates` has shape `input.shape[:axis] + indices.shape +
    input.shape[axis+1:]`. Repeated indices accumulate.
  }];
  let arguments = (ins Ober_NumericTensor:$input, Ober_IndexTensor:$indices,
                       Ober_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `,` $updates attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_ScatterOp : Ober_Op<"scatter", [Pure, InferTypeOpAdaptor]> {
  let summary = "replace slices along one axis (the inverse of gather)";
  let description = [{
    The result is `input` with the slices `ober.gather` with the same
    `indices` and `axis` would read replaced by those of `updates`, which
    has shape `input.shape[:axis] + indices.shape + input.shape[axis+1:]`.
    With repeated indices the last update in row-major order wins.
    `combine` (default `replace`) may instead multiply the element by the
    update or keep the larger (`max`) or smaller (`min`) of the two, in
    row-major order of the updates (ONNX's ScatterND and ScatterElements
    reductions; `ober.scatter_add` adds). The
    partitioner stores the activations a pipeline stage keeps between a
    micro-batch's forward and backward passes this way (a ring indexed by
    the micro-batch); it has no gradient rule.
  }];
  let arguments = (ins Ober_Tensor:$input, Ober_IndexTensor:$indices,
                       Ober_Tensor:$updates, I64Attr:$axis,
                       DefaultValuedAttr<Ober_ScatterCombineAttr,
                                         "ScatterCombine::replace">:$combine);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `,` $updates attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_OneHotOp : Ober_Op<"one_hot", [Pure]> {
  let summary = "one-hot encoding";
  let description = [{
    Inserts a dimension of size `depth` at `axis` (in `[0, rank(indices)]`):
    the result is 1 where the position along it equals the index and 0
    elsewhere. Negative indices count from `depth`; indices outside
    `[-depth, depth)` give an all-zero row. The result element type is any
    ober element type.
  }];
  let arguments = (ins Ober_IndexTensor:$indices, I64Attr:$depth,
                       I64Attr:$axis);
  let results = (outs Ober_Tensor:$result);
  let assemblyFormat = "$indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ober_StringNormalizeOp : Ober_Op<"string_normalize", [Pure]> {
  let summary = "normalise words: drop stopwords, change case";
  let description = [{
    ONNX's `StringNormalizer` on `[C]` or `[1, C]` strings: removes the
    `stopwords` (compared case-insensitively unless `case_sensitive`), then
    applies `case_change` (`LOWER`, `UPPER` or `NONE`; ASCII letters). When
    every word is removed the result holds one empty string. The number of
    remaining words depends on the values, so the result type is fixed when
    the op is built from known inputs, and a run with other values is an
    error.
  }];
  let arguments = (ins Ober_StringTensor:$input, StrAttr:$case_change,
                       BoolAttr:$case_sensitive, StrArrayAttr:$stopwords);
  let results = (outs Ober_StringTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Ober_DropoutOp : Ober_Op<"dropout", [Pure, InferTypeOpAdaptor]> {
  let summary = "seeded dropout";
  let description = [{
    Zeroes each element with probability `ratio` and scales the kept ones by
    `1 / (1 - ratio)`. The keep mask is a pure function of `seed` (a 0-D
    `i64` tensor) and the element's row-major index in the whole tensor, so
    the same seed gives the same mask on every device and in the backward
    pass (which reuses the mask). Returns the result and the `i1` keep mask.

    A block of a larger tensor (one device's share of a partitioned one)
    names the whole tensor's shape in `global_shape` and the block's first
    element in `offsets` (a 1-D `i64` tensor, one offset per dimension, so
    that it can differ between devices running the same program): the
    element at local index `i` draws as the one at `offsets + i` of a
    tensor of `global_shape`, row-major (the leading size never enters, so
    a leading offset may pass it: a micro-batch's rows in the step's whole
    batch). The two come together; without them the input is the whole
    tensor.

    `major_dim` (0 without it) is the dimension the row-major index counts
    first, the others following in order: a tensor whose samples are not
    its leading dimension (`[tokens, samples, width]`, `major_dim = 1`)
    draws as the one with its samples first, so that a micro-batch's
    samples (an offset along that dimension) draw as they do in the step's
    whole batch.

    ```mlir
    %y, %keep = ober.dropout %x, %seed {ratio = 1.0e-01 : f64}
        : (tensor<8x16xf32>, tensor<i64>) -> (tensor<8x16xf32>, tensor<8x16xi1>)
    // Rows 4-7 of a 16x16 tensor when %offsets holds [4, 0] and
    // global_shape = array<i64: 16, 16>.
    %z, %m = ober.dropout %x, %seed offsets %offsets {ratio = 1.0e-01 : f64,
        global_shape = array<i64: 16, 16>}
        : (tensor<4x16xf32>, tensor<i64>, tensor<2xi64>)
        -> (tensor<4x16xf32>, tensor<4x16xi1>)
    ```
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_SeedTensor:$seed,
                       Optional<1DTensorOf<[I64]>>:$offsets, F64Attr:$ratio,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                       OptionalAttr<I64Attr>:$major_dim);
  let results = (outs Ober_FloatTensor:$result, Ober_BoolTensor:$mask);
  let assemblyFormat = [{
    $input `,` $seed (`offsets` $offsets^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "Value":$input, "Value":$seed, "FloatAttr":$ratio), [{
      build($_builder, $_state, input, seed, /*offsets=*/Value(), ratio,
            /*global_shape=*/DenseI64ArrayAttr(), /*major_dim=*/IntegerAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The shape of the whole tensor the input is a block of.
    SmallVector<int64_t> getWholeShape();
    /// The dimensions in the order the element's index counts them.
    SmallVector<int64_t> getIndexOrder();
  }];
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

#endif // OBER_DIALECT_OBER_IR_OBERINDEXINGOPS_TD
