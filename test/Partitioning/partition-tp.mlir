// Tensor parallelism (tp2): a vocabulary-parallel tied embedding (each
// device looks up its block of rows, masked, then an all-reduce), a
// column-parallel then a row-parallel matmul (one all-reduce of the row
// matmul's partial sums forward, one of the column matmul's input gradient
// backward), the head on the table's rows, and a vocabulary-parallel
// cross-entropy (all-reduces of the largest logit, the sum of
// exponentials and the target's logit; the backward softmax reuses them).
// With sequence parallelism the completions become a reduce-scatter of the
// tokens, gathered again by the next column-parallel matmul.
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-partition 2>/dev/null | FileCheck %s
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=1" --ober-partition 2>/dev/null | FileCheck %s --check-prefix=SP
// The report's collectives (the cost model's) are what the program moves.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=cross-entropy optimizer=sgd" --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-plan-explain --ober-plan-report=%t/plan.json --ober-partition -o %t/parts.mlir 2> %t/explain.txt
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t/explain.txt
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/ids.npy', r.integers(0, 16, (2, 4))); np.save('%t/targets.npy', r.integers(0, 16, (2, 4)))"
// RUN: ober-run %t/parts.mlir --train-steps 1 --input %t/ids.npy --input %t/targets.npy --run-stats 2> %t/stats.txt
// RUN: %python -c "import json, re; r = json.load(open('%t/plan.json')); moved = int(re.search(r'collective bytes in each step: (\d+)', open('%t/stats.txt').read()).group(1)); listed = sum(c['bytes'] * c['per_step'] for c in r['collectives']); print('bytes', 'equal' if moved == listed else (moved, listed))" | FileCheck %s --check-prefix=BYTES

func.func @main(%ids: tensor<2x4xi64>, %table: tensor<16x8xf32> {ober.param = "wte"}, %w1: tensor<8x16xf32> {ober.param = "w1"}, %w2: tensor<16x8xf32> {ober.param = "w2"}) -> tensor<2x4x16xf32> {
  %x = ober.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %h = ober.matmul %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %g = ober.tanh %h : tensor<2x4x16xf32>
  %y = ober.matmul %g, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  %r = ober.add %x, %y : tensor<2x4x8xf32>
  %t = ober.transpose %table {permutation = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %logits = ober.matmul %r, %t : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %logits : tensor<2x4x16xf32>
}

// CHECK: shard.grid @devices(shape = 1x2)
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<8x8xf32> {ober.param = "wte", ober.split = array<i64: 1, -1>}
// CHECK-SAME: tensor<8x8xf32> {ober.param = "w1", ober.split = array<i64: -1, 1>}
// CHECK-SAME: tensor<8x8xf32> {ober.param = "w2", ober.split = array<i64: 1, -1>}
// The embedding: this device's first row, the masked lookup, the sum.
// CHECK: %[[STARTS:.*]] = shard.all_slice %{{.*}} on @devices grid_axes = [1] slice_axis = 0 : tensor<2xi64> -> tensor<1xi64>
// CHECK: ober.embedding {{.*}} : (tensor<8x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK: shard.all_reduce {{.*}} grid_axes = [1] : tensor<2x4x8xf32>
// The row-parallel matmul's partial sums.
// CHECK: ober.matmul {{.*}} : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
// CHECK: shard.all_reduce {{.*}} grid_axes = [1] : tensor<2x4x8xf32>
// Cross-entropy over the split vocabulary: three statistics per token.
// CHECK: ober.reduce_max {{.*}} -> tensor<2x4x1xf32>
// CHECK: shard.all_reduce {{.*}} grid_axes = [1] reduction = max : tensor<2x4x1xf32>
// CHECK: shard.all_reduce {{.*}} grid_axes = [1] : tensor<2x4x1xf32>
// CHECK: ober.one_hot
// CHECK: shard.all_reduce {{.*}} grid_axes = [1] : tensor<2x4x1xf32>
// CHECK-NOT: shard.all_gather
// CHECK: return

// SP: shard.reduce_scatter {{.*}} grid_axes = [1] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// SP: shard.all_gather {{.*}} grid_axes = [1] gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>

// EXPLAIN: collectives (bytes of the full buffer x times per step, on each device of the stage):
// EXPLAIN: cross-entropy statistics over the split classes
// EXPLAIN-NEXT: complete the partial sums of ober.matmul (backward)
// EXPLAIN-NEXT: per step: all-reduce 1.09 KiB
// BYTES: bytes equal
