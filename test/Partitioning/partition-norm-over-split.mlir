// The planner places ops by the partitioner's rules: an RMS norm over the
// hidden dimension a column-parallel matmul split runs on whole rows, so
// both gather that dimension first (an all-gather, not the norm's
// statistics over split rows); the second matmul then splits its weight by
// columns. The backward pass runs the norm's gradient on the split rows the
// forward pass saved: two all-reduces of row sums, and the scale's
// gradient, split, gathered for its whole parameter; the planner walks the
// backward ops by the same rules. The partitioned step trains like the
// serial one on two simulated devices and moves exactly the bytes of each
// kind the report lists.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd" -o %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-plan-report=%t/plan.json --ober-plan-explain --ober-partition -o %t/parts.mlir 2> %t/explain.txt
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t/explain.txt
// RUN: FileCheck %s < %t/parts.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((8, 8)).astype(np.float32)); np.save('%t/y.npy', r.standard_normal((8, 8)).astype(np.float32))"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/serial.txt
// RUN: ober-run %t/parts.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/x.npy --input %t/y.npy --run-stats > %t/parts.txt 2> %t/stats.txt
// RUN: %python %S/../Planning/Inputs/compare_bytes.py %t/serial.txt %t/parts.txt %t/plan.json %t/stats.txt | FileCheck %s --check-prefix=TRAINED

func.func @main(%x: tensor<8x8xf32>, %w1: tensor<8x16xf32> {ober.param = "w1"}, %g: tensor<16xf32> {ober.param = "g"}, %w2: tensor<16x8xf32> {ober.param = "w2"}) -> tensor<8x8xf32> {
  %h = ober.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %n = ober.rms_norm %h scale %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = ober.matmul %n, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// EXPLAIN: tensor-parallel all-gather over 2 ranks{{.*}}gather dimension 1 for ober.rms_norm
// EXPLAIN-NOT: statistics over the split axis
// CHECK: shard.all_gather %{{.*}} on @devices grid_axes = [1] gather_axis = 1 : tensor<8x8xf32> -> tensor<8x16xf32>
// CHECK: ober.rms_norm
// TRAINED: losses equal
// TRAINED: bytes equal
