// An error on a function names it and stops there: ober-opt does not print
// the whole function after it (MLIR's default), unless asked.
// RUN: not ober-opt %s --ober-partition 2>&1 | FileCheck %s
// RUN: not ober-opt %s --ober-partition --mlir-print-op-on-diagnostic=true 2>&1 | FileCheck %s --check-prefix=ASKED
// CHECK: error: ober-partition: the module has no 'ober.plan'
// CHECK-NOT: see current operation
// CHECK-NOT: return
// ASKED: see current operation
module {
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}
