//===- Passes.td - training-step construction -------------*- tablegen -*-===//

#ifndef OBER_TRAINING_PASSES_TD
#define OBER_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"ober-autodiff", "ModuleOp"> {
  let summary = "Build the gradient function of a loss function";
  let description = [{
    Differentiates `function` (by default the module's only public function)
    in reverse mode with respect to its parameters (arguments tagged
    `ober.param`). Adds `<function>_grad`, which takes the same arguments and
    returns the function's results followed by one gradient per parameter.
    The first result must be a scalar float loss. Every differentiable ober op
    has a rule (docs/Training.md); an op on the path from a parameter to the
    loss without one is an error naming it.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Function to differentiate (default: the only public one)">,
  ];
  let dependentDialects = ["::mlir::ober::OberDialect"];
}

def BuildTrainStepPass : Pass<"ober-build-train-step", "ModuleOp"> {
  let summary = "Build train_step: loss, gradients and the optimizer update";
  let description = [{
    From a forward function (an imported model), builds

    ```
    train_step(params..., optimizer_state..., batch..., lr)
        -> (params'..., optimizer_state'..., loss)
    ```

    - `loss`: `cross-entropy` over the last dimension of the first result
      with integer targets (a new batch input) and `label-smoothing`; `mse`
      against a target of the result's type; or `output` when the first
      result already is the scalar loss. The default, `auto`, picks `output`
      for a scalar first result and `cross-entropy` otherwise.
    - `optimizer`: `sgd` (`momentum`, `nesterov`), `adam`, `adamw` (bias
      correction; `weight-decay` decoupled for AdamW, L2 otherwise). Defaults
      equal PyTorch's: betas 0.9/0.999, eps 1e-8, AdamW weight decay 0.01.
    - `clip-norm`: clips the global gradient norm (0 disables it).
    - `grad-norm`: the step also returns the global L2 norm of the
      gradients (unscaled, before clipping; inf or NaN when a gradient
      overflowed) after the loss, an f32 scalar: the `grad_norm` metric of
      the executables (`ober-compile` and `ober.compile` turn it on).
    - `micro-batches`: gradient accumulation; every batch input gains a
      leading dimension of that size, a loop (`scf.for`) runs the gradient
      function on each micro-batch and sums its loss and gradients, which
      are averaged after it. Inputs without samples (a dropout seed) are
      the same for every micro-batch.
    - The learning rate is an input, so schedules live outside the graph.
    - `loss-scale=dynamic`: dynamic loss scaling, as fp16 compute needs
      (PyTorch's `GradScaler`): the backward pass starts from the scale
      instead of 1 (`ober.loss_seed`, an argument of the gradient
      function), gradients are unscaled before clipping and the update, and
      a step whose gradients hold an inf or NaN changes no parameter or
      optimizer state but halves the scale; after `loss-scale-window`
      overflow-free steps the scale doubles, up to 2^15 (the largest power
      of two f16 holds). It starts at `loss-scale-init` (2^15). Its state is
      `ober.state = "loss_scale.log2"` (log2 of the scale relative to the
      first) and `"loss_scale.good_steps"`, both initially zero.

    Arguments are tagged: `ober.param` (the model's weights),
    `ober.state = "<param>.<slot>"` or `"step"` (optimizer state, initially
    zero), `ober.batch = "<name>"` (inputs holding samples: those with the
    leading size of the first input), `ober.input = "<name>"` (other
    inputs, such as a rank-0 dropout seed) and `ober.lr`. The function
    carries `ober.train_step` with the options used and the loss function
    (`loss_function`), so that the step can be built again for another
    batch.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Forward function (default: the only public one)">,
    Option<"loss", "loss", "std::string", /*default=*/"\"auto\"",
           "cross-entropy, mse, output, or auto (output for a scalar first "
           "result, cross-entropy otherwise)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (SGD)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (default: 0.01 for adamw, 0 otherwise)">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "Label smoothing of the cross-entropy loss">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Clip the global gradient norm to this (0: off)">,
    Option<"gradNorm", "grad-norm", "bool", /*default=*/"false",
           "Also return the global gradient norm (after the loss)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per step (gradient accumulation)">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"none\"",
           "none, or dynamic (loss scaling for fp16 compute)">,
    Option<"lossScaleInit", "loss-scale-init", "double",
           /*default=*/"32768.0", "The first loss scale (a power of two)">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t",
           /*default=*/"2000",
           "Overflow-free steps before the loss scale doubles">,
    Option<"fusedAttention", "fused-attention", "bool", /*default=*/"false",
           "Keep ober.attention as one op, differentiated by "
           "ober.attention_grad (else through its decomposition)">,
  ];
  let dependentDialects = ["::mlir::ober::OberDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // OBER_TRAINING_PASSES_TD
