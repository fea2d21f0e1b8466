// Local SGD: the data-parallel replicas reduce nothing in the step; each
// partial sum over them completes as this replica's share times dp (its
// gradients and loss are the means over its own samples), and the step
// says how many steps pass between averages and along which grid axis.
// The report prices one all-reduce of the parameters every 4 steps.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32 local-steps=4" --ober-partition 2>/dev/null | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32 local-steps=4" --ober-plan-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x6xf32> {ober.param = "w2"}) -> tensor<4x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = ober.tanh %0 : tensor<4x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// CHECK: local_steps = 4>
// CHECK: func.func @train_step
// CHECK-SAME: ober.local_steps = 4 : i64, ober.replica_axis = 0 : i64
// CHECK-NOT: shard.all_reduce
// CHECK: %[[DP:.*]] = ober.constant dense<2.000000e+00> : tensor<f32>
// CHECK: ober.mul %{{.*}}, %[[DP]]
// CHECK-NOT: shard.all_reduce
// CHECK: return

// REPORT: local SGD: 4 steps between averages
// REPORT: data-parallel all-reduce over 2 ranks, 224 B x 1 every 4 steps, between steps, every 4 steps: average the replicas' parameter deltas (local SGD's outer step, f32)
// REPORT-NOT: the step's loss
