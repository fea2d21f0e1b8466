// Recomputation: forward ops the plan marks `ober.recompute` run again
// right before the backward pass needs them, from the kept values they
// read; the backward pass reads the copies. Full recomputation keeps the
// output of each group of segments (every segment by default: the op that
// makes it is not marked) and the input of the last segment, which is not
// recomputed; with `recompute-every=2` the first two layers here form one
// group and the first tanh is rebuilt.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=full precision=f32 recompute-every=2" --ober-partition 2>/dev/null | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=full precision=f32" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=KEEP
// With `recompute-groups=1` (Megatron's block method) only the first group
// of the stage is rebuilt; the second layer keeps what its backward pass
// reads, the first layer's output among it.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=full precision=f32 recompute-groups=1" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=BLOCK
// RUN: not ober-opt %s --ober-build-train-step --ober-plan="cluster=cpu gpus=2 recompute=selective recompute-every=2" 2>&1 | FileCheck %s --check-prefix=PIN
// RUN: not ober-opt %s --ober-build-train-step --ober-plan="cluster=cpu gpus=2 recompute=none recompute-groups=2" 2>&1 | FileCheck %s --check-prefix=PINGROUPS
// RUN: not ober-opt %s --ober-build-train-step --ober-plan="cluster=cpu gpus=2 recompute=full recompute-groups=-1" 2>&1 | FileCheck %s --check-prefix=NEGGROUPS

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x4xf32> {ober.param = "w1"}, %w2: tensor<4x4xf32> {ober.param = "w2"}, %w3: tensor<4x6xf32> {ober.param = "w3"}) -> tensor<4x6xf32> {
  %0 = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = ober.tanh %0 : tensor<4x4xf32>
  %2 = ober.matmul %1, %w2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = ober.tanh %2 : tensor<4x4xf32>
  %4 = ober.matmul %3, %w3 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %4 : tensor<4x6xf32>
}

// CHECK: func.func @train_step
// CHECK: %[[H:.*]] = ober.matmul %arg{{[0-9]+}}, %arg0 {ober.recompute, ober.stage = 0 : i64}
// CHECK: %[[T:.*]] = ober.tanh %[[H]] {ober.recompute, ober.stage = 0 : i64}
// CHECK: %[[H1:.*]] = ober.matmul %[[T]], %arg1 {ober.recompute, ober.stage = 0 : i64}
// CHECK: %[[T1:.*]] = ober.tanh %[[H1]] {ober.stage = 0 : i64}
// CHECK: ober.cross_entropy
// CHECK: ober.transpose %[[T1]]
// CHECK: %[[H2:.*]] = ober.matmul %arg{{[0-9]+}}, %arg0 {ober.recompute, ober.stage = 0 : i64}
// CHECK: %[[T2:.*]] = ober.tanh %[[H2]] {ober.recompute, ober.stage = 0 : i64}
// CHECK-NOT: ober.transpose %[[T]]
// CHECK: ober.transpose %[[T2]]

// KEEP: func.func @train_step
// KEEP: %[[H:.*]] = ober.matmul %arg{{[0-9]+}}, %arg0 {ober.recompute, ober.stage = 0 : i64}
// KEEP: %[[T:.*]] = ober.tanh %[[H]] {ober.stage = 0 : i64}
// KEEP: ober.cross_entropy
// KEEP-NOT: ober.tanh
// KEEP: ober.transpose %[[T]]

// PIN: error: --ober-plan: recompute-every=2 needs recompute=full

// BLOCK: func.func @train_step
// BLOCK: %[[H:.*]] = ober.matmul %arg{{[0-9]+}}, %arg0 {ober.recompute, ober.stage = 0 : i64}
// BLOCK: %[[T:.*]] = ober.tanh %[[H]] {ober.stage = 0 : i64}
// BLOCK: %[[H1:.*]] = ober.matmul %[[T]], %arg1 {ober.stage = 0 : i64}
// BLOCK: %[[T1:.*]] = ober.tanh %[[H1]] {ober.stage = 0 : i64}
// BLOCK: ober.cross_entropy
// BLOCK-NOT: ober.tanh
// BLOCK: ober.transpose %[[T1]]
// BLOCK: ober.transpose %[[T]]

// PINGROUPS: error: --ober-plan: recompute-groups=2 needs recompute=full
// NEGGROUPS: error: --ober-plan: recompute-groups=-1 must be 0 (every group) or more
