// RUN: ober-opt %s | ober-opt | FileCheck %s
// RUN: ober-opt %s -mlir-print-op-generic | ober-opt | FileCheck %s

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> tensor<2x3xf32> {
  // CHECK: ober.neg %{{.*}} : tensor<2x3xf32>
  %0 = ober.neg %x : tensor<2x3xf32>
  // CHECK: ober.neg %{{.*}} : tensor<4xi32>
  %n = ober.neg %i : tensor<4xi32>
  // CHECK: ober.abs %{{.*}} : tensor<4xi32>
  %a = ober.abs %i : tensor<4xi32>
  // CHECK: ober.abs
  %1 = ober.abs %0 : tensor<2x3xf32>
  // CHECK: ober.exp
  %2 = ober.exp %1 : tensor<2x3xf32>
  // CHECK: ober.log
  %3 = ober.log %2 : tensor<2x3xf32>
  // CHECK: ober.sqrt
  %4 = ober.sqrt %3 : tensor<2x3xf32>
  // CHECK: ober.rsqrt
  %5 = ober.rsqrt %4 : tensor<2x3xf32>
  // CHECK: ober.tanh
  %6 = ober.tanh %5 : tensor<2x3xf32>
  // CHECK: ober.sigmoid
  %7 = ober.sigmoid %6 : tensor<2x3xf32>
  // CHECK: ober.relu
  %8 = ober.relu %7 : tensor<2x3xf32>
  // CHECK: ober.gelu %{{.*}} {approximate = #ober.gelu_approximation<none>} : tensor<2x3xf32>
  %9 = ober.gelu %8 {approximate = #ober.gelu_approximation<none>} : tensor<2x3xf32>
  // CHECK: ober.gelu %{{.*}} {approximate = #ober.gelu_approximation<tanh>} : tensor<2x3xf32>
  %10 = ober.gelu %9 {approximate = #ober.gelu_approximation<tanh>} : tensor<2x3xf32>
  // CHECK: ober.silu
  %11 = ober.silu %10 : tensor<2x3xf32>
  // CHECK: ober.erf
  %12 = ober.erf %11 : tensor<2x3xf32>
  // CHECK: ober.reciprocal
  %13 = ober.reciprocal %12 : tensor<2x3xf32>
  // CHECK: ober.sin
  %14 = ober.sin %13 : tensor<2x3xf32>
  // CHECK: ober.cos %{{.*}} : tensor<2x3xf32>
  %15 = ober.cos %14 : tensor<2x3xf32>
  return %15 : tensor<2x3xf32>
}

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<4x1x8xbf16>, %b: tensor<3x1xbf16>, %c: tensor<4x3x8xbf16>) -> tensor<4x3x8xbf16> {
  // CHECK: ober.add %{{.*}}, %{{.*}} : (tensor<4x1x8xbf16>, tensor<3x1xbf16>) -> tensor<4x3x8xbf16>
  %0 = ober.add %a, %b : (tensor<4x1x8xbf16>, tensor<3x1xbf16>) -> tensor<4x3x8xbf16>
  // CHECK: ober.sub %{{.*}}, %{{.*}} : tensor<4x3x8xbf16>
  %1 = ober.sub %0, %c : tensor<4x3x8xbf16>
  // CHECK: ober.mul
  %2 = ober.mul %1, %c : tensor<4x3x8xbf16>
  // CHECK: ober.div
  %3 = ober.div %2, %c : tensor<4x3x8xbf16>
  // CHECK: ober.pow
  %4 = ober.pow %3, %c : tensor<4x3x8xbf16>
  // CHECK: ober.max
  %5 = ober.max %4, %c : tensor<4x3x8xbf16>
  // CHECK: ober.min
  %6 = ober.min %5, %a : (tensor<4x3x8xbf16>, tensor<4x1x8xbf16>) -> tensor<4x3x8xbf16>
  return %6 : tensor<4x3x8xbf16>
}

// CHECK-LABEL: func @dynamic_broadcast
func.func @dynamic_broadcast(%a: tensor<?x8xf32>, %b: tensor<8xf32>, %c: tensor<1x?xf32>) -> tensor<?x8xf32> {
  // CHECK: ober.add %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %0 = ober.add %a, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // CHECK: (tensor<?x8xf32>, tensor<1x?xf32>) -> tensor<?x8xf32>
  %1 = ober.mul %0, %c : (tensor<?x8xf32>, tensor<1x?xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// CHECK-LABEL: func @compare_select_cast
func.func @compare_select_cast(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x8xi64>) -> tensor<4x8xf16> {
  // CHECK: ober.cmp eq,
  %e = ober.cmp eq, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ober.cmp ne,
  %n = ober.cmp ne, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ober.cmp le,
  %l = ober.cmp le, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ober.cmp gt,
  %g = ober.cmp gt, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ober.cmp ge, %{{.*}}, %{{.*}} : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
  %ge = ober.cmp ge, %i, %i : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
  // CHECK: %[[M:.*]] = ober.cmp lt, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %m = ober.cmp lt, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ober.select %[[M]], %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = ober.select %m, %a, %b : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: ober.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xf16>
  %c = ober.cast %s : tensor<4x8xf32> to tensor<4x8xf16>
  // CHECK: ober.cast %{{.*}} : tensor<4x8xi1> to tensor<4x8xi32>
  %ci = ober.cast %e : tensor<4x8xi1> to tensor<4x8xi32>
  return %c : tensor<4x8xf16>
}

// CHECK-LABEL: func @more_unary
func.func @more_unary(%x: tensor<3xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>) -> tensor<3xf32> {
  // CHECK: ober.tan
  %0 = ober.tan %x : tensor<3xf32>
  // CHECK: ober.asin
  %1 = ober.asin %0 : tensor<3xf32>
  // CHECK: ober.acos
  %2 = ober.acos %1 : tensor<3xf32>
  // CHECK: ober.atan
  %3 = ober.atan %2 : tensor<3xf32>
  // CHECK: ober.sinh
  %4 = ober.sinh %3 : tensor<3xf32>
  // CHECK: ober.cosh
  %5 = ober.cosh %4 : tensor<3xf32>
  // CHECK: ober.asinh
  %6 = ober.asinh %5 : tensor<3xf32>
  // CHECK: ober.acosh
  %7 = ober.acosh %6 : tensor<3xf32>
  // CHECK: ober.atanh
  %8 = ober.atanh %7 : tensor<3xf32>
  // CHECK: ober.floor
  %9 = ober.floor %8 : tensor<3xf32>
  // CHECK: ober.ceil
  %10 = ober.ceil %9 : tensor<3xf32>
  // CHECK: ober.round
  %11 = ober.round %10 : tensor<3xf32>
  // CHECK: ober.sign %{{.*}} : tensor<3xf32>
  %12 = ober.sign %11 : tensor<3xf32>
  // CHECK: ober.sign %{{.*}} : tensor<3xi32>
  %13 = ober.sign %i : tensor<3xi32>
  // CHECK: ober.not %{{.*}} : tensor<3xi1>
  %14 = ober.not %b : tensor<3xi1>
  // CHECK: ober.and
  %15 = ober.and %14, %b : tensor<3xi1>
  // CHECK: ober.or
  %16 = ober.or %15, %b : tensor<3xi1>
  // CHECK: ober.xor
  %17 = ober.xor %16, %b : tensor<3xi1>
  // CHECK: ober.rem %{{.*}}, %{{.*}} : tensor<3xi32>
  %18 = ober.rem %i, %i : tensor<3xi32>
  // CHECK: ober.rem %{{.*}}, %{{.*}} : tensor<3xf32>
  %19 = ober.rem %12, %x : tensor<3xf32>
  return %19 : tensor<3xf32>
}
