// Seeded dropout on split activations: each device drops its block's
// elements by their index in the whole tensor, so a partitioned step drops
// what the serial one drops. The local op names the whole shape and takes
// its block's offsets, a local slice of a per-device table (no
// communication), added to the serial op's own (its micro-batch's first
// sample, 0 here); the seed, a step input without samples, stays whole.
// The partitioned steps train like the serial one.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=adamw" -o %t/step.mlir
// RUN: FileCheck %s --check-prefix=STEP < %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32" --ober-partition -o %t/dp.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=DP < %t/dp.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-partition -o %t/tp.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=TP < %t/tp.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((8, 8)).astype(np.float32)); np.save('%t/y.npy', r.standard_normal((8, 8)).astype(np.float32)); np.save('%t/seed.npy', np.arange(3, dtype=np.int64) * 11)"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/seed.npy --input %t/y.npy > %t/serial.txt
// RUN: ober-run %t/dp.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/seed.npy --input %t/y.npy > %t/dp.txt
// RUN: ober-run %t/tp.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/seed.npy --input %t/y.npy > %t/tp.txt
// Two micro-batches of 2 samples on each of 2 replicas (the step built
// again for them) draw the masks of the one-batch step.
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=0 recompute=none precision=f32 micro-batch=2" --ober-partition -o %t/micro.mlir 2>/dev/null
// RUN: ober-run %t/micro.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/seed.npy --input %t/y.npy > %t/micro.txt
// RUN: %python -c "a = [float(l.split()[3]) for l in open('%t/serial.txt')]; print('steps', len(a)); [print(n, 'equal' if all(abs(x - y) <= 1e-5 * abs(x) for x, y in zip(a, b)) and len(b) == len(a) else (a, b)) for n, b in (('dp', [float(l.split()[3]) for l in open('%t/dp.txt')]), ('tp', [float(l.split()[3]) for l in open('%t/tp.txt')]), ('micro', [float(l.split()[3]) for l in open('%t/micro.txt')]))]" | FileCheck %s --check-prefix=TRAINED

func.func @main(%x: tensor<8x8xf32>, %seed: tensor<i64>, %w1: tensor<8x8xf32> {ober.param = "w1"}, %w2: tensor<8x8xf32> {ober.param = "w2"}) -> tensor<8x8xf32> {
  %h = ober.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %d:2 = ober.dropout %h, %seed {ratio = 0.5 : f64} : (tensor<8x8xf32>, tensor<i64>) -> (tensor<8x8xf32>, tensor<8x8xi1>)
  %y = ober.matmul %d#0, %w2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// The seed is an input, not a batch of samples.
// STEP: func.func @train_step(
// STEP-SAME: tensor<8x8xf32> {ober.batch = "input0"}
// STEP-SAME: tensor<i64> {ober.input = "input1"}
// STEP-SAME: tensor<8x8xf32> {ober.batch = "target"}

// Rows split over the data-parallel devices: device i's block starts at
// row 4i.
// DP: func.func @train_step(
// DP-SAME: tensor<4x8xf32> {ober.batch = "input0", ober.split = array<i64: 0, -1>}
// DP-SAME: tensor<i64> {ober.input = "input1", ober.split = array<i64>}
// DP: %[[TABLE:.*]] = ober.constant dense<{{\[\[}}0, 0], [4, 0]]> : tensor<2x2xi64>
// DP: %[[ROW:.*]] = shard.all_slice %[[TABLE]] on @devices grid_axes = [0] slice_axis = 0 : tensor<2x2xi64> -> tensor<1x2xi64>
// DP: %[[OFFSETS:.*]] = ober.reshape %[[ROW]] : tensor<1x2xi64> to tensor<2xi64>
// DP: %[[ALL:.*]] = ober.add %{{.*}}, %[[OFFSETS]] : tensor<2xi64>
// DP: ober.dropout %{{.*}}, %{{.*}} offsets %[[ALL]] {global_shape = array<i64: 8, 8>, {{.*}}ratio = 5.000000e-01 : f64} : (tensor<4x8xf32>, tensor<i64>, tensor<2xi64>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
// DP-NOT: shard.all_gather

// Columns split by tensor parallelism: device i's block starts at column 4i.
// TP: %[[TABLE:.*]] = ober.constant dense<{{\[\[}}0, 0], [0, 4]]> : tensor<2x2xi64>
// TP: %[[ROW:.*]] = shard.all_slice %[[TABLE]] on @devices grid_axes = [1] slice_axis = 0
// TP: %[[OFFSETS:.*]] = ober.reshape %[[ROW]]
// TP: %[[ALL:.*]] = ober.add %{{.*}}, %[[OFFSETS]] : tensor<2xi64>
// TP: ober.dropout %{{.*}}, %{{.*}} offsets %[[ALL]] {global_shape = array<i64: 8, 8>, {{.*}}ratio = 5.000000e-01 : f64} : (tensor<8x4xf32>, tensor<i64>, tensor<2xi64>) -> (tensor<8x4xf32>, tensor<8x4xi1>)

// TRAINED: steps 3
// TRAINED: dp equal
// TRAINED: tp equal
// TRAINED: micro equal
