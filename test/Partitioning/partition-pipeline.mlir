// Pipeline stages: one function per stage (the first lists them), the
// boundary activation sent forward and its gradient sent back per
// micro-batch (matched by ober.tag, in the order sent), each stage's
// passes in the schedule's order as loops over the micro-batches (the
// program does not grow with their number), and each result taken from
// the stage that computes it. Four micro-batches of 2 samples.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 global-batch=8 schedule=1f1b" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ONEF
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 global-batch=8 schedule=gpipe" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd micro-batches=2" --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 global-batch=8 schedule=zero-bubble" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=ZB

func.func @main(%x: tensor<2x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x6xf32> {ober.param = "w2"}) -> tensor<2x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = ober.tanh %0 : tensor<2x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  return %2 : tensor<2x6xf32>
}

// ONEF: shard.grid @devices(shape = 1x1x2)
// ONEF: func.func @train_step({{.*}}) -> (tensor<8x4xf32> {ober.split = array<i64: -1, -1>, ober.stage = 0 : i64}, tensor<4x6xf32> {ober.split = array<i64: -1, -1>, ober.stage = 1 : i64}, tensor<f32> {ober.split = array<i64>, ober.stage = 1 : i64}) attributes {ober.pipeline_axis = 2 : i64, ober.stage_functions = [@train_step, @train_step.stage1]
// Stage 0: two forwards (one the warm-up), then one backward and one
// forward twice, then two backwards; each loop takes its micro-batch's
// samples by its index, and the weight gradient's sum is carried.
// ONEF: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[I:.*]] = %{{.*}}) -> (tensor<i64>)
// ONEF: ober.gather %arg2, %[[I]] {axis = 0 : i64} : (tensor<4x2x8xf32>, tensor<i64>)
// ONEF: shard.send %{{.*}} on @devices grid_axes = [2] destination = [1] {ober.tag = 0 : i64} : (tensor<2x4xf32>)
// ONEF: scf.for {{.*}} -> (tensor<i64>, tensor<8x4xf32>)
// ONEF: shard.recv %{{.*}} on @devices grid_axes = [2] source = [1] {ober.tag = 1 : i64} : (tensor<2x4xf32>)
// ONEF: shard.send %{{.*}} destination = [1] {ober.tag = 0 : i64}
// ONEF: scf.for {{.*}} -> (tensor<i64>, tensor<8x4xf32>)
// ONEF: shard.recv %{{.*}} source = [1] {ober.tag = 1 : i64}
// ONEF-NOT: scf.for
// ONEF: return %{{.*}}, %arg1, %cst{{.*}} :
// Stage 1 (the last): forward and backward in one loop of four.
// ONEF: func.func private @train_step.stage1
// ONEF: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args({{.*}}) -> (tensor<i64>, tensor<f32>, tensor<4x6xf32>)
// ONEF: shard.recv %{{.*}} source = [0] {ober.tag = 0 : i64}
// ONEF: shard.send %{{.*}} destination = [0] {ober.tag = 1 : i64}
// ONEF-NOT: scf.for
// ONEF: return %arg0,

// GPipe: the last stage's four forwards, then its four backwards; what a
// backward pass reads of its forward waits in a ring of four slots, one
// per micro-batch.
// GPIPE: func.func private @train_step.stage1
// GPIPE: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[M:[a-z0-9]+]] = %{{[a-z0-9_]+}}, %[[RING:[a-z0-9]+]] = %{{[a-z0-9_]+}}, {{.*}}) -> (tensor<i64>, tensor<4x2x6xf32>,
// GPIPE: shard.recv %{{.*}} source = [0] {ober.tag = 0 : i64}
// GPIPE: %[[LOGITS:.*]] = ober.matmul
// GPIPE: ober.scatter %[[RING]], %[[M]], %[[LOGITS]] {axis = 0 : i64} : (tensor<4x2x6xf32>, tensor<i64>, tensor<2x6xf32>) -> tensor<4x2x6xf32>
// GPIPE-NOT: shard.send
// GPIPE: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(%[[M2:[a-z0-9]+]] = %{{[a-z0-9_]+}}, %[[RING2:[a-z0-9]+]] = %{{[0-9]+}}#1,
// GPIPE: ober.gather %[[RING2]], %[[M2]] {axis = 0 : i64} : (tensor<4x2x6xf32>, tensor<i64>) -> tensor<2x6xf32>
// GPIPE: shard.send %{{.*}} destination = [0] {ober.tag = 1 : i64}
// GPIPE-NOT: scf.for

// Zero bubble: each backward pass is split into what the transfer to the
// previous stage needs and the weight gradients, which may wait. The first
// stage sends nothing back, so its backward passes are all weight
// gradients and keep their order.
// ZB: func.func @train_step
// ZB: scf.for
// ZB: scf.for
// ZB: shard.recv %{{.*}} source = [1] {ober.tag = 1 : i64}
// ZB-NEXT: ober.matmul {{.*}} -> tensor<8x4xf32>
// ZB: scf.for
// ZB: shard.recv %{{.*}} source = [1] {ober.tag = 1 : i64}
// ZB-NEXT: ober.matmul {{.*}} -> tensor<8x4xf32>
// ZB-NOT: scf.for
// ZB: func.func private @train_step.stage1
