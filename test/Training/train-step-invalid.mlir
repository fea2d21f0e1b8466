// RUN: not ober-opt %s -ober-build-train-step="loss=hinge" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not ober-opt %s -ober-build-train-step="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not ober-opt %s -ober-build-train-step="micro-batches=0" 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not ober-opt %s -ober-build-train-step="loss=output" 2>&1 | FileCheck %s --check-prefix=OUTPUT
// Hyperparameters outside PyTorch's ranges, one line naming the option,
// no crash (a label smoothing past 1 once failed the loss op's verifier
// with LLVM ERROR).
// RUN: not ober-opt %s -ober-build-train-step="label-smoothing=2" 2>&1 | FileCheck %s --check-prefix=SMOOTH
// RUN: not ober-opt %s -ober-build-train-step="label-smoothing=nan" 2>&1 | FileCheck %s --check-prefix=SMOOTH-NAN
// RUN: not ober-opt %s -ober-build-train-step="beta1=1.5" 2>&1 | FileCheck %s --check-prefix=BETA1
// RUN: not ober-opt %s -ober-build-train-step="beta2=-1" 2>&1 | FileCheck %s --check-prefix=BETA2
// RUN: not ober-opt %s -ober-build-train-step="eps=-1" 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not ober-opt %s -ober-build-train-step="optimizer=sgd momentum=-1" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not ober-opt %s -ober-build-train-step="clip-norm=nan" 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not ober-opt %s -ober-build-train-step="weight-decay=-3" 2>&1 | FileCheck %s --check-prefix=WD
// RUN: ober-opt %s -ober-build-train-step="label-smoothing=1 beta2=0 eps=0 weight-decay=0 clip-norm=0" -o /dev/null
// SMOOTH: error: ober-build-train-step: label-smoothing=2 must be in [0, 1]
// SMOOTH-NOT: LLVM ERROR
// SMOOTH-NAN: error: ober-build-train-step: label-smoothing=nan must be in [0, 1]
// BETA1: error: ober-build-train-step: beta1=1.5 must be in [0, 1)
// BETA2: error: ober-build-train-step: beta2=-1 must be in [0, 1)
// EPS: error: ober-build-train-step: eps=-1 must be in [0, inf)
// MOMENTUM: error: ober-build-train-step: momentum=-1 must be in [0, inf)
// CLIP: error: ober-build-train-step: clip-norm=nan must be in [0, inf)
// WD: error: ober-build-train-step: weight-decay=-3 must be >= 0 (leave it out for the optimizer's default)
// LOSS: error: ober-build-train-step: unknown loss 'hinge' (cross-entropy, mse, output, auto)
// OPT: error: ober-build-train-step: unknown optimizer 'lamb' (sgd, adam, adamw)
// MICRO: error: ober-build-train-step: micro-batches must be >= 1
// OUTPUT: error: ober-build-train-step: loss=output needs a scalar first result, got 'tensor<4x5xf32>'
func.func @model(%x: tensor<4x3xf32>, %w: tensor<3x5xf32> {ober.param = "w"}) -> tensor<4x5xf32> {
  %y = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
