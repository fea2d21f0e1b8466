// RUN: ober-opt %s -ober-decompose-attention -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x16xf32>, %[[K:.*]]: tensor<2x10x16xf32>, %[[V:.*]]: tensor<2x10x32xf32>)
func.func @plain(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>) -> tensor<2x8x32xf32> {
  // CHECK-DAG: %[[SCALE:.*]] = ober.constant dense<2.500000e-01> : tensor<f32>
  // CHECK-DAG: %[[KT:.*]] = ober.transpose %[[K]] {permutation = array<i64: 0, 2, 1>} : tensor<2x10x16xf32> -> tensor<2x16x10xf32>
  // CHECK: %[[S:.*]] = ober.matmul %[[Q]], %[[KT]] : (tensor<2x8x16xf32>, tensor<2x16x10xf32>) -> tensor<2x8x10xf32>
  // CHECK: %[[SS:.*]] = ober.mul %[[S]], %[[SCALE]] : (tensor<2x8x10xf32>, tensor<f32>) -> tensor<2x8x10xf32>
  // CHECK: %[[P:.*]] = ober.softmax %[[SS]] {axis = 2 : i64} : tensor<2x8x10xf32>
  // CHECK: %[[O:.*]] = ober.matmul %[[P]], %[[V]] : (tensor<2x8x10xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  // CHECK-NOT: ober.attention
  // CHECK: return %[[O]]
  %0 = ober.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func @causal_scaled
func.func @causal_scaled(%q: tensor<4x8x16xbf16>) -> tensor<4x8x16xbf16> {
  // CHECK-DAG: ober.constant dense<5.000000e-01> : tensor<bf16>
  // CHECK-DAG: %[[NEGINF:.*]] = ober.constant dense<0xFF80> : tensor<bf16>
  // CHECK-DAG: %[[ROWS:.*]] = ober.iota {dimension = 0 : i64} : tensor<8x8xi64>
  // CHECK-DAG: %[[COLS:.*]] = ober.iota {dimension = 1 : i64} : tensor<8x8xi64>
  // CHECK: %[[KEEP:.*]] = ober.cmp ge, %[[ROWS]], %[[COLS]] : (tensor<8x8xi64>, tensor<8x8xi64>) -> tensor<8x8xi1>
  // CHECK: ober.select %[[KEEP]], %{{.*}}, %[[NEGINF]] : (tensor<8x8xi1>, tensor<4x8x8xbf16>, tensor<bf16>) -> tensor<4x8x8xbf16>
  // CHECK: ober.softmax
  %0 = ober.attention %q, %q, %q {is_causal, scale = 0.5 : f64} : (tensor<4x8x16xbf16>, tensor<4x8x16xbf16>, tensor<4x8x16xbf16>) -> tensor<4x8x16xbf16>
  return %0 : tensor<4x8x16xbf16>
}

// -----

// CHECK-LABEL: func @masks
// CHECK-SAME: %[[BM:[^:]*]]: tensor<8x10xi1>, %[[FM:[^:]*]]: tensor<2x1x8x10xf32>
func.func @masks(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %bm: tensor<8x10xi1>, %fm: tensor<2x1x8x10xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  // CHECK: ober.select %[[BM]], %{{.*}}, %{{.*}} : (tensor<8x10xi1>, tensor<2x4x8x10xf32>, tensor<f32>) -> tensor<2x4x8x10xf32>
  %0 = ober.attention %q, %k, %v, %bm : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<8x10xi1>) -> tensor<2x4x8x16xf32>
  // CHECK: ober.add %{{.*}}, %[[FM]] : (tensor<2x4x8x10xf32>, tensor<2x1x8x10xf32>) -> tensor<2x4x8x10xf32>
  %1 = ober.attention %q, %k, %v, %fm : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x1x8x10xf32>) -> tensor<2x4x8x16xf32>
  return %0, %1 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

func.func @dynamic_causal(%q: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  // expected-error @+1 {{cannot decompose: is_causal needs static sequence lengths, got query 'tensor<2x?x16xf32>' and key 'tensor<2x?x16xf32>'}}
  %0 = ober.attention %q, %q, %q {is_causal} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf32>
  return %0 : tensor<2x?x16xf32>
}
