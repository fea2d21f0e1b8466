// A training batch norm over split samples normalizes with the whole
// batch's statistics: the per-channel sum, then the sum of squared
// deviations, are all-reduced; the running statistics (buffers) are
// updated from them with the global count and stay whole under ZeRO.
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=adamw" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=1 recompute=none precision=f32" --ober-partition 2>/dev/null | FileCheck %s

func.func @main(%x: tensor<4x2x3x3xf32>, %s: tensor<2xf32> {ober.param = "bn.weight"}, %b: tensor<2xf32> {ober.param = "bn.bias"}, %m: tensor<2xf32> {ober.param = "bn.running_mean"}, %v: tensor<2xf32> {ober.param = "bn.running_var"}) -> tensor<4x2x3x3xf32> {
  %y, %rm, %rv = ober.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
  return %y : tensor<4x2x3x3xf32>
}

// CHECK: func.func @train_step(%arg0: tensor<2xf32> {ober.param = "bn.weight", ober.split = array<i64: -1>}
// CHECK-SAME: %arg2: tensor<2xf32> {ober.param = "bn.running_mean", ober.split = array<i64: -1>}
// CHECK-SAME: {ober.split = array<i64: 0>, ober.state = "bn.weight.exp_avg"}
// CHECK-NOT: ober.batch_norm_training
// CHECK: %[[S1:.*]] = ober.reduce_sum %arg{{[0-9]+}} {axes = array<i64: 0, 2, 3>, keepdims = true} : (tensor<2x2x3x3xf32>) -> tensor<1x2x1x1xf32>
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[S1]] on @devices grid_axes = [0] : tensor<1x2x1x1xf32>
// CHECK: %[[MEAN:.*]] = ober.div %[[SUM]], %{{.*}}
// CHECK: %[[D:.*]] = ober.sub %arg{{[0-9]+}}, %[[MEAN]]
// CHECK: %[[SQ:.*]] = ober.mul %[[D]], %[[D]]
// CHECK: %[[S2:.*]] = ober.reduce_sum %[[SQ]]
// CHECK: shard.all_reduce %[[S2]] on @devices grid_axes = [0] : tensor<1x2x1x1xf32>
// CHECK: ober.rsqrt
// The running variance is unbiased over all 36 values of a channel.
// CHECK: ober.constant dense<0.102857143> : tensor<f32>
