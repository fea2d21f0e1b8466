// Without a pipeline the partitioned step keeps the micro-batch loop: its
// body, built once, takes each replica's samples of the micro-batch,
// gathers the ZeRO-3 parameters for the forward pass (and w2 again for the
// backward pass) and adds the micro-batch's gradients to sums that stay
// partial over the replicas; the gradients are reduce-scattered once,
// after the loop, and the loss all-reduced once. With a pipeline the
// schedule interleaves the micro-batches, in loops too.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=3 recompute=none precision=f32 micro-batch=2" --ober-partition 2>/dev/null | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=adamw micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 schedule=1f1b" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=PIPE

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x6xf32> {ober.param = "w2"}) -> tensor<4x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = ober.relu %0 : tensor<4x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<4x4xf32> {ober.param = "w1", ober.split = array<i64: 0, -1>}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<2x6xf32> {ober.param = "w2", ober.split = array<i64: 0, -1>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x2x8xf32> {ober.batch = "input0", ober.split = array<i64: -1, 0, -1>}
// CHECK: %[[SUMS:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[I:[a-z0-9]+]] = %{{.*}}, {{.*}}) -> (tensor<i64>, tensor<f32>, tensor<8x4xf32>, tensor<4x6xf32>)
// CHECK: ober.gather %[[X]], %[[I]] {axis = 0 : i64} : (tensor<2x2x8xf32>, tensor<i64>) -> tensor<2x8xf32>
// CHECK: shard.all_gather %[[W1]] on @devices grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK: shard.all_gather %[[W2]] on @devices grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK: ober.cross_entropy
// CHECK-NOT: shard.reduce_scatter
// CHECK-NOT: shard.all_reduce
// CHECK: shard.all_gather %[[W2]] on @devices grid_axes = [0] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK-NOT: shard.reduce_scatter
// CHECK-NOT: shard.all_reduce
// CHECK: scf.yield
// CHECK-DAG: ober.div %[[SUMS]]#2
// CHECK-DAG: ober.div %[[SUMS]]#3
// CHECK: shard.reduce_scatter %{{.*}} on @devices grid_axes = [0] scatter_axis = 0 : tensor<2x28xf32> -> tensor<1x28xf32>
// CHECK-NOT: scf.for

// The pipeline's first stage runs its 4 micro-batches (of 2 samples) as
// three loops of two iterations (warm-up forwards, one backward and one
// forward, the last backwards), each taking its micro-batches' samples by
// index; what a backward pass reads of its forward waits in a ring of two
// slots (two micro-batches in flight).
// PIPE-LABEL: func.func @train_step(
// PIPE: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[M:[a-z0-9]+]] = %{{[a-z0-9_]+}}, %[[RING:[a-z0-9]+]] = %{{[a-z0-9_]+}}) -> (tensor<i64>, tensor<2x2x4xf32>)
// PIPE: ober.gather %arg7, %[[M]] {axis = 0 : i64} : (tensor<4x2x8xf32>, tensor<i64>) -> tensor<2x8xf32>
// PIPE: ober.scatter %[[RING]]
// PIPE: scf.for
// PIPE-COUNT-2: ober.gather %arg7
// PIPE: scf.for
// PIPE: ober.gather %arg7
// PIPE-NOT: scf.for
// PIPE-LABEL: func.func private @train_step.stage1
