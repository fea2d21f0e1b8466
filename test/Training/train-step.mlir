// RUN: ober-opt %s -ober-build-train-step="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW
// RUN: ober-opt %s -ober-build-train-step="optimizer=sgd momentum=0.9 nesterov=true loss=cross-entropy clip-norm=1.0 micro-batches=2" | FileCheck %s --check-prefix=SGD
// RUN: ober-opt %s -ober-build-train-step="optimizer=sgd grad-norm=true" | FileCheck %s --check-prefix=NORM

func.func @model(%x: tensor<4x3xf32>, %w: tensor<3x5xf32> {ober.param = "fc.weight"}, %b: tensor<5xf32> {ober.param = "fc.bias"}) -> tensor<4x5xf32> {
  %y = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %z = ober.add %y, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %z : tensor<4x5xf32>
}

// ADAMW: func.func private @model_loss({{.*}}, %{{.*}}: tensor<4xi64>) -> tensor<f32>
// ADAMW: ober.cross_entropy
// ADAMW: func.func private @model_loss_grad(
// ADAMW-LABEL: func.func @train_step(
// ADAMW-SAME: {ober.param = "fc.weight"}
// ADAMW-SAME: {ober.param = "fc.bias"}
// ADAMW-SAME: {ober.state = "fc.weight.exp_avg"}
// ADAMW-SAME: {ober.state = "fc.bias.exp_avg"}
// ADAMW-SAME: {ober.state = "fc.weight.exp_avg_sq"}
// ADAMW-SAME: {ober.state = "fc.bias.exp_avg_sq"}
// ADAMW-SAME: %{{.*}}: tensor<f32> {ober.state = "step"}
// ADAMW-SAME: %{{.*}}: tensor<4x3xf32> {ober.batch = "input0"}
// ADAMW-SAME: %{{.*}}: tensor<4xi64> {ober.batch = "target"}
// ADAMW-SAME: %{{.*}}: tensor<f32> {ober.lr}
// ADAMW-SAME: -> (tensor<3x5xf32>, tensor<5xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>)
// ADAMW-SAME: attributes {ober.train_step = {{{.*}}optimizer = "adamw"{{.*}}weight_decay = 1.000000e-02 : f64}}
// ADAMW: call @model_loss_grad
// ADAMW: ober.pow
// ADAMW: ober.sqrt

// SGD-LABEL: func.func @train_step(
// SGD-SAME: {ober.state = "fc.weight.momentum_buffer"}
// SGD-SAME: %{{.*}}: tensor<2x4x3xf32> {ober.batch = "input0"}
// SGD-SAME: %{{.*}}: tensor<2x4xi64> {ober.batch = "target"}
// The micro-batches are a loop: one call, the sums carried.
// SGD: scf.for
// SGD: ober.gather
// SGD: call @model_loss_grad
// SGD-NOT: call @model_loss_grad
// SGD: scf.yield
// SGD: ober.sqrt
// SGD: ober.min

// The gradient norm (no clipping): the sum of every gradient's squares, its
// square root returned after the loss.
// NORM-LABEL: func.func @train_step(
// NORM-SAME: -> (tensor<3x5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>)
// NORM-SAME: grad_norm = true
// NORM: %[[G:.*]]:3 = call @model_loss_grad
// NORM-DAG: %[[SQ0:.*]] = ober.mul %[[G]]#1, %[[G]]#1
// NORM-DAG: %[[SQ1:.*]] = ober.mul %[[G]]#2, %[[G]]#2
// NORM: %[[NORM:.*]] = ober.sqrt
// NORM-NOT: ober.min
// NORM: return {{.*}}, %[[G]]#0, %[[NORM]] : tensor<3x5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>
