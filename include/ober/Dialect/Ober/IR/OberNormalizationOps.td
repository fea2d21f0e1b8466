//===- OberNormalizationOps.td - normalisation ops ---------*- tablegen -*-===//

#ifndef OBER_DIALECT_OBER_IR_OBERNORMALIZATIONOPS_TD
#define OBER_DIALECT_OBER_IR_OBERNORMALIZATIONOPS_TD

def Ober_LayerNormOp : Ober_Op<"layer_norm", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor]> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises `input` over the dimensions `[axis, rank)` with the biased
    variance: `(x - mean) / sqrt(var + epsilon) * scale + bias`. The optional
    `scale` and `bias` have the shape of those normalised dimensions.

    ```mlir
    %y = ober.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Ober_FloatTensor:$input,
                       Optional<Ober_FloatTensor>:$scale,
                       Optional<Ober_FloatTensor>:$bias,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_RMSNormOp : Ober_Op<"rms_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "root-mean-square normalisation over the trailing dimensions";
  let description = [{
    `x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale`, as in Llama.
    The optional `scale` has the shape of the normalised dimensions.
  }];
  let arguments = (ins Ober_FloatTensor:$input,
                       Optional<Ober_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Ober_BatchNormInferenceOp : Ober_Op<"batch_norm_inference", [Pure, InferTypeOpAdaptor]> {
  let summary = "batch normalisation with fixed statistics";
  let description = [{
    `input` is `[N, C, ...]`; `scale`, `bias`, `mean` and `variance` are `[C]`.
    Computes `(x - mean) / sqrt(variance + epsilon) * scale + bias` per channel.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$scale,
                       Ober_FloatTensor:$bias, Ober_FloatTensor:$mean,
                       Ober_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Ober_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
      functional-type(operands, results)
  }];
}

def Ober_BatchNormTrainingOp : Ober_Op<"batch_norm_training", [Pure, InferTypeOpAdaptor]> {
  let summary = "batch normalisation with batch statistics";
  let description = [{
    `input` is `[N, C, ...]`; the other operands are `[C]`. Normalises each
    channel with the mean and biased variance of the batch (all dimensions
    but 1), then applies `scale` and `bias`. Also returns the updated running
    statistics, as PyTorch does:
    `running_mean' = (1 - momentum) * running_mean + momentum * batch_mean` and
    `running_var' = (1 - momentum) * running_var + momentum * unbiased_batch_var`.
  }];
  let arguments = (ins Ober_FloatTensor:$input, Ober_FloatTensor:$scale,
                       Ober_FloatTensor:$bias, Ober_FloatTensor:$running_mean,
                       Ober_FloatTensor:$running_var, F64Attr:$epsilon,
                       F64Attr:$momentum);
  let results = (outs Ober_FloatTensor:$result,
                      Ober_FloatTensor:$new_running_mean,
                      Ober_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $running_mean `,` $running_var attr-dict `:`
      functional-type(operands, results)
  }];
}

#endif // OBER_DIALECT_OBER_IR_OBERNORMALIZATIONOPS_TD
