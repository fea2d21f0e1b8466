// A reported gradient norm (grad-norm=true, no clipping) across two
// pipeline stages: stage 0 sends its share of the sum of squares to stage 1
// once, stage 1 takes the square root and returns the norm (its result's
// `ober.stage` is 1), and nothing is sent back, since no update needs it.
// The plan report counts exactly that. The partitioned step trains like
// the serial one.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd grad-norm=true" -o %t/step.mlir
// RUN: ober-opt %t/step.mlir --ober-plan="cluster=cpu gpus=2 dp=1 tp=1 pp=2 zero=0 recompute=none precision=f32 micro-batch=2 schedule=1f1b" --ober-plan-report=%t/report.json --ober-partition -o %t/parts.mlir 2>/dev/null
// RUN: FileCheck %s < %t/parts.mlir
// RUN: %python -c "import json; [print(c['scope'], c['bytes'], c['per_step'], c['reason']) for c in json.load(open('%t/report.json'))['collectives'] if 'norm' in c['reason']]" | FileCheck %s --check-prefix=REPORT
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((4, 8)).astype(np.float32)); np.save('%t/y.npy', r.standard_normal((4, 8)).astype(np.float32))"
// RUN: ober-run %t/step.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/serial.txt
// RUN: ober-run %t/parts.mlir --train-steps 3 --lr 0.01 --init-seed 1 --input %t/x.npy --input %t/y.npy > %t/parts.txt
// RUN: %python -c "a = [float(l.split()[3]) for l in open('%t/serial.txt')]; b = [float(l.split()[3]) for l in open('%t/parts.txt')]; print('losses', 'equal' if len(a) == 3 and len(b) == 3 and all(abs(x - y) <= 1e-5 * abs(x) for x, y in zip(a, b)) else (a, b))" | FileCheck %s --check-prefix=TRAINED

func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32> {ober.param = "w1"}, %w2: tensor<8x8xf32> {ober.param = "w2"}) -> tensor<4x8xf32> {
  %h = ober.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = ober.matmul %h, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: -> (tensor<8x8xf32> {{{.*}}ober.stage = 0 : i64}, tensor<8x8xf32> {{{.*}}ober.stage = 1 : i64}, tensor<f32> {{{.*}}ober.stage = 1 : i64}, tensor<f32> {{{.*}}ober.stage = 1 : i64})
// CHECK: shard.send %{{.*}} destination = [1] {{.*}} : (tensor<1xf32>) -> tensor<1xf32>
// CHECK-NOT: ober.sqrt
// CHECK: return
// CHECK-LABEL: func.func private @train_step.stage1(
// CHECK: %[[SUM:.*]] = shard.recv {{.*}} source = [0] {{.*}} : (tensor<1xf32>) -> tensor<1xf32>
// CHECK: %[[NORM:.*]] = ober.sqrt
// CHECK-NOT: shard.send
// CHECK: return {{.*}}, %[[NORM]] : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>, tensor<f32>

// REPORT: pipeline 4 1 the gradient norm: the running sum (f32)
// REPORT-NOT: norm

// TRAINED: losses equal
