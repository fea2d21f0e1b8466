// ZeRO: gradients are reduce-scattered (one bucket of [devices, n] rows,
// each parameter cut along dimension 0) onto the optimizer state's shard.
// ZeRO 1/2 keep whole parameters (a local slice for the update, then an
// all-gather of the new values); ZeRO 3 keeps them sharded and gathers
// them before the forward pass, and again before the backward pass for
// those it reads (w2: the gradient of the hidden activations).
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=1 recompute=none precision=f32" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ZERO1
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=3 recompute=none precision=f32" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ZERO3

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x6xf32> {ober.param = "w2"}) -> tensor<4x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = ober.relu %0 : tensor<4x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// ZERO1: func.func @train_step(%arg0: tensor<8x4xf32> {ober.param = "w1", ober.split = array<i64: -1, -1>}, %arg1: tensor<4x6xf32> {ober.param = "w2", ober.split = array<i64: -1, -1>}, %arg2: tensor<4x4xf32> {ober.split = array<i64: 0, -1>, ober.state = "w1.exp_avg"}, %arg3: tensor<2x6xf32> {ober.split = array<i64: 0, -1>, ober.state = "w2.exp_avg"}
// ZERO1: %[[ROWS:.*]] = ober.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x16xf32>) -> tensor<2x28xf32>
// ZERO1: %[[SHARD:.*]] = shard.reduce_scatter %[[ROWS]] on @devices grid_axes = [0] scatter_axis = 0 : tensor<2x28xf32> -> tensor<1x28xf32>
// ZERO1: ober.slice %[[SHARD]] {limits = array<i64: 1, 12>, starts = array<i64: 0, 0>
// ZERO1: ober.slice %[[SHARD]] {limits = array<i64: 1, 28>, starts = array<i64: 0, 12>
// ZERO1: shard.all_slice %{{.*}} on @devices grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// ZERO1: %[[W1:.*]] = shard.all_gather %{{.*}} on @devices grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// ZERO1: %[[W2:.*]] = shard.all_gather %{{.*}} on @devices grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// ZERO1: return %[[W1]], %[[W2]],

// ZERO3: func.func @train_step(%arg0: tensor<4x4xf32> {ober.param = "w1", ober.split = array<i64: 0, -1>}, %arg1: tensor<2x6xf32> {ober.param = "w2", ober.split = array<i64: 0, -1>}
// ZERO3: shard.all_gather %arg0 on @devices grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// ZERO3: shard.all_gather %arg1 on @devices grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// ZERO3: ober.cross_entropy
// ZERO3: %[[AGAIN:.*]] = shard.all_gather %arg1 on @devices grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// ZERO3: ober.transpose %[[AGAIN]]
// ZERO3-NOT: shard.all_gather %arg0
// ZERO3: shard.reduce_scatter
// ZERO3-NOT: shard.all_gather
// ZERO3: return
