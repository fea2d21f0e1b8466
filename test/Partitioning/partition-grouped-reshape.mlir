// A reshape that makes the split samples the minor part of a merged
// dimension ([tokens x batch], as nn.MultiheadAttention's sequence-first
// layout does) keeps them split: each device holds its block of every
// token's samples (a grouped split), and the reshape back makes it a plain
// split again. No collective moves activations; the only ones are the
// gradient's and the loss's all-reduces.
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32" --ober-partition 2>/dev/null | FileCheck %s

func.func @main(%x: tensor<4x8x16xf32>, %w: tensor<16x16xf32> {ober.param = "w"}) -> tensor<4x16xf32> {
  %t = ober.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<4x8x16xf32> -> tensor<8x4x16xf32>
  %r = ober.reshape %t : tensor<8x4x16xf32> to tensor<32x16xf32>
  %m = ober.matmul %r, %w : (tensor<32x16xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
  %b = ober.reshape %m : tensor<32x16xf32> to tensor<8x4x16xf32>
  %e = ober.reduce_mean %b {axes = array<i64: 0>, keepdims = false} : (tensor<8x4x16xf32>) -> tensor<4x16xf32>
  return %e : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: ober.transpose %{{.*}} : tensor<2x8x16xf32> -> tensor<8x2x16xf32>
// CHECK: ober.reshape %{{.*}} : tensor<8x2x16xf32> to tensor<16x16xf32>
// CHECK: ober.matmul %{{.*}} -> tensor<16x16xf32>
// CHECK: ober.reshape %{{.*}} : tensor<16x16xf32> to tensor<8x2x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: shard.all_reduce %{{.*}} : tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: shard.all_reduce %{{.*}} : tensor<f32> -> tensor<f32>
// CHECK-NOT: shard.all_gather
