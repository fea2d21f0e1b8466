// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// A binary op broadcasts by NumPy rules: the bias's row index is the
// result's column, a size-1 dimension reads index 0.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @add_bias
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK: arith.mulf
// CHECK-NOT: ober.
func.func @add_bias(%x: tensor<4x3xf32>, %b: tensor<3xf32>, %s: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %0 = ober.add %x, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = ober.mul %0, %s : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// bf16 computes in f32 and rounds once; relu keeps NaN (unordered
// greater); gelu's exact form uses erf.
// CHECK-LABEL: func.func @bf16_gelu
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK: math.erf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.cmpf ugt
// CHECK: arith.select
func.func @bf16_gelu(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = ober.gelu %x {approximate = #ober.gelu_approximation<none>} : tensor<8xbf16>
  %1 = ober.relu %0 : tensor<8xbf16>
  return %1 : tensor<8xbf16>
}

// -----

// Comparisons are ordered except ne; select reads a broadcast condition;
// a float cast to an integer saturates and maps NaN to 0.
// CHECK-LABEL: func.func @compare_select_cast
// CHECK: arith.cmpf une
// CHECK: arith.select
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.cmpf uno
func.func @compare_select_cast(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %0 = ober.cmp ne, %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %1 = ober.select %0, %x, %z : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = ober.cast %1 : tensor<2x3xf32> to tensor<2x3xi64>
  return %1, %2 : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// Integer division never traps: by zero it gives 0, by -1 it negates.
// CHECK-LABEL: func.func @int_div
// CHECK: arith.divsi
// CHECK: arith.select
func.func @int_div(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %0 = ober.div %x, %y : tensor<4xi64>
  return %0 : tensor<4xi64>
}
