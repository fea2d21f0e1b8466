// Data parallelism: batch inputs split, every other argument whole; the
// gradient function inlined on local blocks; a whole tensor next to a split
// one is sliced locally; parameter gradients, partial sums, are reduced in
// one bucket (last parameter first) just before the optimizer needs them;
// the loss is all-reduced at the end.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32" --ober-partition 2>/dev/null | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32" --ober-partition="bucket-mb=0.00001" 2>/dev/null | FileCheck %s --check-prefix=SMALL

func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x4xf32> {ober.param = "w"}, %b: tensor<4xf32> {ober.param = "b"}) -> tensor<4x4xf32> {
  %0 = ober.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = ober.add %0, %b : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// CHECK: shard.grid @devices(shape = 2x1)
// CHECK: func.func @train_step(%arg0: tensor<8x4xf32> {ober.param = "w", ober.split = array<i64: -1, -1>}
// CHECK-SAME: %arg7: tensor<2x8xf32> {ober.batch = "input0", ober.split = array<i64: 0, -1>}
// CHECK-SAME: %arg8: tensor<2xi64> {ober.batch = "target", ober.split = array<i64: 0>}
// CHECK-NOT: call
// CHECK: ober.matmul %arg7, %arg0 {{.*}} -> tensor<2x4xf32>
// CHECK: ober.cross_entropy {{.*}} -> tensor<f32>
// CHECK: %[[SLICE:.*]] = shard.all_slice %{{.*}} on @devices grid_axes = [0] slice_axis = 0 : tensor<4x1xf32> -> tensor<2x1xf32>
// CHECK: ober.mul %{{.*}}, %[[SLICE]]
// CHECK: %[[DB:.*]] = ober.reduce_sum {{.*}} -> tensor<4xf32>
// CHECK: %[[DW:.*]] = ober.matmul {{.*}} -> tensor<8x4xf32>
// CHECK: %[[FLAT:.*]] = ober.reshape %[[DW]] : tensor<8x4xf32> to tensor<32xf32>
// CHECK: %[[BUCKET:.*]] = ober.concat %[[DB]], %[[FLAT]] {axis = 0 : i64}
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[BUCKET]] on @devices grid_axes = [0] : tensor<36xf32> -> tensor<36xf32>
// CHECK: ober.slice %[[SUM]] {limits = array<i64: 4>, starts = array<i64: 0>
// CHECK: ober.slice %[[SUM]] {limits = array<i64: 36>, starts = array<i64: 4>
// CHECK-NOT: shard.all_reduce %{{.*}} : tensor<36xf32>
// CHECK: %[[LOSS:.*]] = shard.all_reduce %{{.*}} on @devices grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK: return {{.*}}, %[[LOSS]] :

// Buckets smaller than one gradient: one all-reduce each.
// SMALL: shard.all_reduce %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// SMALL: shard.all_reduce %{{.*}} : tensor<8x4xf32> -> tensor<8x4xf32>
// SMALL-NOT: ober.concat
