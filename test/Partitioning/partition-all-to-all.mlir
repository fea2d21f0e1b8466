// A split moving to another dimension is one all-to-all: each device sends
// the blocks of the new dimension the others keep (here the transpose of a
// column-parallel result added to it), forward and again for the gradient
// of the transpose backward. The sum stays split into the second matmul
// (row-parallel). The partitioned step trains like the serial one on two
// simulated devices, and the report counts the all-to-alls the program
// runs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd" -o %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=1 tp=2 pp=1 zero=0 recompute=none precision=f32 sequence-parallel=0" --ober-plan-report=%t/plan.json --ober-partition -o %t/parts.mlir 2>/dev/null
// RUN: FileCheck %s < %t/parts.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((8, 8)).astype(np.float32)); np.save('%t/y.npy', r.standard_normal((8, 8)).astype(np.float32))"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/serial.txt
// RUN: ober-run %t/parts.mlir --train-steps 3 --lr 0.1 --init-seed 1 --input %t/x.npy --input %t/y.npy --run-stats > %t/parts.txt 2> %t/stats.txt
// RUN: %python -c "import json; a = [float(l.split()[3]) for l in open('%t/serial.txt')]; b = [float(l.split()[3]) for l in open('%t/parts.txt')]; print('losses', 'equal' if all(abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a, b)) and len(a) == 3 else (a, b)); r = json.load(open('%t/plan.json')); print('reported', sum(c['bytes'] * c['per_step'] for c in r['collectives'] if c['kind'] == 'all-to-all'))" | FileCheck %s --check-prefix=TRAINED
// RUN: FileCheck %s --check-prefix=STATS < %t/stats.txt

func.func @main(%x: tensor<8x8xf32>, %w1: tensor<8x8xf32> {ober.param = "w1"}, %w2: tensor<8x8xf32> {ober.param = "w2"}) -> tensor<8x8xf32> {
  %h = ober.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = ober.transpose %h {permutation = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %s = ober.add %h, %t : tensor<8x8xf32>
  %y = ober.matmul %s, %w2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// CHECK: shard.all_to_all %{{.*}} on @devices grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
// TRAINED: losses equal
// TRAINED: reported 512
// STATS: all-to-all over 2 devices, 256 bytes
