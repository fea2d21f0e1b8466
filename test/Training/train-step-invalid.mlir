// RUN: not ober-opt %s -ober-build-train-step="loss=hinge" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not ober-opt %s -ober-build-train-step="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not ober-opt %s -ober-build-train-step="micro-batches=0" 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not ober-opt %s -ober-build-train-step="loss=output" 2>&1 | FileCheck %s --check-prefix=OUTPUT
// LOSS: error: ober-build-train-step: unknown loss 'hinge' (cross-entropy, mse, output, auto)
// OPT: error: ober-build-train-step: unknown optimizer 'lamb' (sgd, adam, adamw)
// MICRO: error: ober-build-train-step: micro-batches must be >= 1
// OUTPUT: error: ober-build-train-step: loss=output needs a scalar first result, got 'tensor<4x5xf32>'
func.func @model(%x: tensor<4x3xf32>, %w: tensor<3x5xf32> {ober.param = "w"}) -> tensor<4x5xf32> {
  %y = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
