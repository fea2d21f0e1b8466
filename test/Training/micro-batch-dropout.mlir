// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd micro-batches=3" | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd micro-batches=3" -o %t.mlir
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.ones((3, 2, 4), np.float32)); np.save('%t.y.npy', np.zeros((3, 2, 4), np.float32)); np.save('%t.seed.npy', np.array(5))"
// RUN: ober-run %t.mlir --train-steps 1 --lr 0.1 --input %t.x.npy --input %t.seed.npy --input %t.y.npy | FileCheck %s --check-prefix=TRAIN

// The dropout seed is one input for the whole step, not one per
// micro-batch; each micro-batch after the first draws its own stream
// (seed + m * 2^32), so no two drop the same positions of their samples.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<3x2x4xf32> {ober.batch = "input0"}
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: tensor<i64> {ober.input = "input1"}
// CHECK: call @f_loss_grad({{.*}}%[[SEED]]
// CHECK: %[[S1:.*]] = ober.constant dense<4294967296> : tensor<i64>
// CHECK: %[[SEED1:.*]] = ober.add %[[SEED]], %[[S1]]
// CHECK: call @f_loss_grad({{.*}}%[[SEED1]]
// CHECK: %[[S2:.*]] = ober.constant dense<8589934592> : tensor<i64>
// CHECK: %[[SEED2:.*]] = ober.add %[[SEED]], %[[S2]]
// CHECK: call @f_loss_grad({{.*}}%[[SEED2]]
// TRAIN: step 0 loss
func.func @f(%x: tensor<2x4xf32>, %seed: tensor<i64>, %w: tensor<4x4xf32> {ober.param = "w"}) -> tensor<2x4xf32> {
  %y = ober.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %d:2 = ober.dropout %y, %seed {ratio = 0.5 : f64} : (tensor<2x4xf32>, tensor<i64>) -> (tensor<2x4xf32>, tensor<2x4xi1>)
  return %d#0 : tensor<2x4xf32>
}
