// The CPU pipeline lowers a function of ober ops on tensors to the LLVM
// dialect (memref descriptors at the boundary), and LLVM IR comes out.
// RUN: ober-opt %s --ober-cpu-pipeline | FileCheck %s
// RUN: ober-opt %s --ober-cpu-pipeline | mlir-translate --mlir-to-llvmir 2>&1 | FileCheck %s --check-prefix=IR
// CHECK: llvm.func @dense(
// CHECK-NOT: ober.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor<
// IR: define { ptr, ptr, i64, [2 x i64], [2 x i64] } @dense(
func.func @dense(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = ober.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %2 = ober.gelu %1 {approximate = #ober.gelu_approximation<none>} : tensor<4x5xf32>
  return %2 : tensor<4x5xf32>
}
