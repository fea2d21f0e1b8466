// Pipeline stages: one function per stage (the first lists them), the
// boundary activation sent forward and its gradient sent back per
// micro-batch (matched by ober.tag), each stage's passes in the schedule's
// order, and each result taken from the stage that computes it.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 schedule=1f1b" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ONEF
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 schedule=gpipe" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 schedule=zero-bubble" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ZB

func.func @main(%x: tensor<2x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x6xf32> {ober.param = "w2"}) -> tensor<2x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = ober.tanh %0 : tensor<2x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  return %2 : tensor<2x6xf32>
}

// ONEF: shard.grid @devices(shape = 1x1x2)
// ONEF: func.func @train_step({{.*}}) -> (tensor<8x4xf32> {ober.split = array<i64: -1, -1>, ober.stage = 0 : i64}, tensor<4x6xf32> {ober.split = array<i64: -1, -1>, ober.stage = 1 : i64}, tensor<f32> {ober.split = array<i64>, ober.stage = 1 : i64}) attributes {ober.pipeline_axis = 2 : i64, ober.stage_functions = [@train_step, @train_step.stage1]
// Stage 0: both forwards (one warm-up), then both backwards.
// ONEF: shard.send %{{.*}} on @devices grid_axes = [2] destination = [1] {ober.tag = 0 : i64} : (tensor<2x4xf32>)
// ONEF: shard.send %{{.*}} destination = [1] {ober.tag = 2 : i64}
// ONEF: shard.recv %{{.*}} on @devices grid_axes = [2] source = [1] {ober.tag = 1 : i64} : (tensor<2x4xf32>)
// ONEF: shard.recv %{{.*}} source = [1] {ober.tag = 3 : i64}
// ONEF: return %{{.*}}, %arg1, %cst{{.*}} :
// Stage 1 (the last): forward, backward, forward, backward.
// ONEF: func.func private @train_step.stage1
// ONEF: shard.recv %{{.*}} source = [0] {ober.tag = 0 : i64}
// ONEF: shard.send %{{.*}} destination = [0] {ober.tag = 1 : i64}
// ONEF: shard.recv %{{.*}} source = [0] {ober.tag = 2 : i64}
// ONEF: shard.send %{{.*}} destination = [0] {ober.tag = 3 : i64}
// ONEF: return %arg0,

// GPIPE: func.func private @train_step.stage1
// GPIPE: shard.recv %{{.*}} source = [0] {ober.tag = 0 : i64}
// GPIPE: shard.recv %{{.*}} source = [0] {ober.tag = 2 : i64}
// GPIPE: shard.send %{{.*}} destination = [0] {ober.tag = 1 : i64}
// GPIPE: shard.send %{{.*}} destination = [0] {ober.tag = 3 : i64}

// Zero bubble: each backward pass is split into what the transfer to the
// previous stage needs and the weight gradients, which may wait. The first
// stage sends nothing back, so its backward passes are all weight
// gradients and keep their order.
// ZB: func.func @train_step
// ZB: shard.recv %{{.*}} source = [1] {ober.tag = 1 : i64}
// ZB-NEXT: ober.matmul {{.*}} -> tensor<8x4xf32>
// ZB: shard.recv %{{.*}} source = [1] {ober.tag = 3 : i64}
// ZB-NEXT: ober.matmul {{.*}} -> tensor<8x4xf32>
// ZB: func.func private @train_step.stage1
