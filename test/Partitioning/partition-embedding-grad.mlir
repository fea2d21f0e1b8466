// A vocabulary-parallel embedding's gradient is formed split like its
// table (Megatron's): each tensor-parallel device scatter-adds only the ids
// in its block of rows (shifted into it, the others masked to zeros), so no
// device forms the whole table's gradient and the data-parallel reduction
// moves each device's block. The step trains like the serial one on four
// simulated devices (tp 2 x dp 2).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd" -o %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=4 dp=2 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-partition -o %t/parts.mlir 2>/dev/null
// RUN: FileCheck %s < %t/parts.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/ids.npy', r.integers(0, 8, (4, 3))); np.save('%t/y.npy', r.standard_normal((4, 3, 6)).astype(np.float32))"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/ids.npy --input %t/y.npy --save-params %t/serial > %t/serial.txt
// RUN: ober-run %t/parts.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/ids.npy --input %t/y.npy --save-params %t/parts > %t/parts.txt
// RUN: %python -c "import numpy as np; a = [float(l.split()[3]) for l in open('%t/serial.txt')]; b = [float(l.split()[3]) for l in open('%t/parts.txt')]; print('losses', 'equal' if all(abs(x - y) <= 1e-5 * abs(x) for x, y in zip(a, b)) and len(a) == 3 else (a, b)); t = np.abs(np.load('%t/serial/table.npy') - np.load('%t/parts/table.npy')).max(); print('table', 'equal' if t <= 1e-6 else t)" | FileCheck %s --check-prefix=TRAINED

func.func @main(%ids: tensor<4x3xi64>, %table: tensor<8x4xf32> {ober.param = "table"}, %pos: tensor<3x4xf32> {ober.param = "pos"}, %w: tensor<4x6xf32> {ober.param = "w"}) -> tensor<4x3x6xf32> {
  %e = ober.embedding %table, %ids : (tensor<8x4xf32>, tensor<4x3xi64>) -> tensor<4x3x4xf32>
  %p = ober.add %e, %pos : (tensor<4x3x4xf32>, tensor<3x4xf32>) -> tensor<4x3x4xf32>
  %y = ober.matmul %p, %w : (tensor<4x3x4xf32>, tensor<4x6xf32>) -> tensor<4x3x6xf32>
  return %y : tensor<4x3x6xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<4x4xf32> {ober.param = "table", ober.split = array<i64: 1, -1>}
// CHECK: ober.embedding
// CHECK: %[[IN:.*]] = ober.and
// CHECK: %[[COLUMN:.*]] = ober.reshape %[[IN]] : tensor<2x3xi1> to tensor<2x3x1xi1>
// CHECK: %[[MASKED:.*]] = ober.select %[[COLUMN]], %{{.*}}, %{{.*}} : (tensor<2x3x1xi1>, tensor<2x3x4xf32>, tensor<f32>)
// CHECK: ober.scatter_add %{{.*}}, %{{.*}}, %[[MASKED]] {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<4x4xf32>
// CHECK-NOT: shard.all_slice {{.*}} tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: return

// TRAINED: losses equal
// TRAINED: table equal
