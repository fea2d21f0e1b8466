//===- OberReductionOps.td - reductions and softmax --------*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERREDUCTIONOPS_TD
#define OBER_DIALECT_OBER_IR_OBERREDUCTIONOPS_TD

class Ober_ReduceOp<string mnemonic, Type tensorType, string what>
    : Ober_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "reduces with " # what # " over axes";
  let description = "Reduces `input` with " # what # " over `axes` "
      # "(strictly increasing, each in `[0, rank)`). With `keepdims`, the "
      # "reduced dimensions stay as size 1; otherwise they are removed. "
      # "Empty `axes` is the identity.";
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Ober_ReduceSumOp : Ober_ReduceOp<"reduce_sum", Ober_NumericTensor, "a sum">;
def Ober_ReduceMeanOp : Ober_ReduceOp<"reduce_mean", Ober_FloatTensor, "a mean">;
def Ober_ReduceMaxOp : Ober_ReduceOp<"reduce_max", Ober_NumericTensor, "a maximum">;
def Ober_ReduceMinOp : Ober_ReduceOp<"reduce_min", Ober_NumericTensor, "a minimum">;
def Ober_ReduceProdOp : Ober_ReduceOp<"reduce_prod", Ober_NumericTensor, "a product">;

class Ober_ArgReduceOp<string mnemonic, string what>
    : Ober_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "index of the " # what # " along one axis";
  let description = "The `i64` index of the " # what # " of `input` along "
      # "`axis` (the first occurrence, or the last with "
      # "`select_last_index`; NaN counts as the " # what # "). With "
      # "`keepdims` the axis stays as size 1.";
  let arguments = (ins Ober_NumericTensor:$input, I64Attr:$axis,
                       BoolAttr:$keepdims, BoolAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Ober_ArgMaxOp : Ober_ArgReduceOp<"argmax", "maximum">;
def Ober_ArgMinOp : Ober_ArgReduceOp<"argmin", "minimum">;

def Ober_CumSumOp : Ober_Op<"cumsum", [Pure, SameOperandsAndResultType,
                                       InferTypeOpInterface]> {
  let summary = "cumulative sum along one axis";
  let description = [{
    `result[..., i, ...] = sum of input[..., j, ...]` for `j <= i` (`j < i`
    with `exclusive`; from the end with `reverse`).
  }];
  let arguments = (ins Ober_NumericTensor:$input, I64Attr:$axis,
                       BoolAttr:$exclusive, BoolAttr:$reverse);
  let results = (outs Ober_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Ober_SoftmaxLikeOp<string mnemonic, string formula>
    : Ober_Op<mnemonic, [Pure, SameOperandsAndResultType,
                         InferTypeOpInterface]> {
  let summary = mnemonic # " along one axis";
  let description = "Computes `" # formula # "` along `axis`.";
  let arguments = (ins Ober_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ober_SoftmaxOp : Ober_SoftmaxLikeOp<"softmax",
    "exp(x - max(x)) / sum(exp(x - max(x)))">;
def Ober_LogSoftmaxOp : Ober_SoftmaxLikeOp<"log_softmax",
    "x - max(x) - log(sum(exp(x - max(x))))">;

#endif // OBER_DIALECT_OBER_IR_OBERREDUCTIONOPS_TD
