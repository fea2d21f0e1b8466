// Gradient clipping under ZeRO: the norm sums each gradient's squares, of
// ZeRO shards (partial over the data-parallel replicas) and of a gradient
// ZeRO cannot shard evenly (b1, whole after its all-reduce). The whole one
// joins the running sum as one replica's share (itself on the first, 0 on
// the others), so the sum stays partial and one all-reduce completes it, not
// one per shard. The partitioned step trains like the serial one.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=adamw clip-norm=0.5" -o %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=2 tp=1 pp=1 zero=1 recompute=none precision=f32" --ober-partition -o %t/parts.mlir 2>/dev/null
// RUN: FileCheck %s < %t/parts.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((4, 8)).astype(np.float32)); np.save('%t/y.npy', r.standard_normal((4, 8)).astype(np.float32))"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/serial.txt
// RUN: ober-run %t/parts.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/parts.txt
// RUN: %python -c "a = [float(l.split()[3]) for l in open('%t/serial.txt')]; b = [float(l.split()[3]) for l in open('%t/parts.txt')]; print('losses', 'equal' if len(a) == 3 and len(b) == 3 and all(abs(x - y) <= 1e-5 * abs(x) for x, y in zip(a, b)) else (a, b))" | FileCheck %s --check-prefix=TRAINED

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32> {ober.param = "w1"}, %b1: tensor<3xf32> {ober.param = "b1"}, %w2: tensor<8x8xf32> {ober.param = "w2"}) -> tensor<4x8xf32> {
  %h = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = ober.reduce_sum %b1 {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  %a = ober.add %h, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = ober.matmul %a, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: %[[FIRST:.*]] = ober.constant dense<[true, false]> : tensor<2xi1>
// CHECK: %[[MINE:.*]] = shard.all_slice %[[FIRST]] on @devices grid_axes = [0] slice_axis = 0
// CHECK: %[[ONE:.*]] = ober.reshape %[[MINE]] : tensor<1xi1> to tensor<i1>
// CHECK: %[[SHARE:.*]] = ober.select %[[ONE]], %{{.*}}, %{{.*}} : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: ober.add %{{.*}}, %[[SHARE]] : tensor<f32>
// CHECK-NOT: shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// CHECK: %[[NORM:.*]] = shard.all_reduce %{{.*}} on @devices grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT: ober.sqrt %[[NORM]]

// TRAINED: losses equal
