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

// -----

// The gradients: the probabilities again, then dV = P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(dO * O)) * scale, dQ = dS K, dK = dS^T Q.
// CHECK-LABEL: func @grad
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x8x16xf32>, %[[K:[^:]*]]: tensor<2x10x16xf32>, %[[V:[^:]*]]: tensor<2x10x32xf32>, %[[O:[^:]*]]: tensor<2x8x32xf32>, %[[G:[^:]*]]: tensor<2x8x32xf32>)
func.func @grad(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>, %o: tensor<2x8x32xf32>, %g: tensor<2x8x32xf32>) -> (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>) {
  // CHECK: %[[P:.*]] = ober.softmax %{{.*}} {axis = 2 : i64} : tensor<2x8x10xf32>
  // CHECK: %[[PT:.*]] = ober.transpose %[[P]] {permutation = array<i64: 0, 2, 1>}
  // CHECK: %[[DV:.*]] = ober.matmul %[[PT]], %[[G]] : (tensor<2x10x8xf32>, tensor<2x8x32xf32>) -> tensor<2x10x32xf32>
  // CHECK: %[[VT:.*]] = ober.transpose %[[V]]
  // CHECK: %[[DP:.*]] = ober.matmul %[[G]], %[[VT]] : (tensor<2x8x32xf32>, tensor<2x32x10xf32>) -> tensor<2x8x10xf32>
  // CHECK: %[[GO:.*]] = ober.mul %[[G]], %[[O]]
  // CHECK: %[[ROW:.*]] = ober.reduce_sum %[[GO]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
  // CHECK: %[[D:.*]] = ober.sub %[[DP]], %[[ROW]]
  // CHECK: %[[PD:.*]] = ober.mul %[[P]], %[[D]]
  // CHECK: %[[DS:.*]] = ober.mul %[[PD]], %{{.*}} : (tensor<2x8x10xf32>, tensor<f32>) -> tensor<2x8x10xf32>
  // CHECK: %[[DQ:.*]] = ober.matmul %[[DS]], %[[K]] : (tensor<2x8x10xf32>, tensor<2x10x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: %[[DST:.*]] = ober.transpose %[[DS]]
  // CHECK: %[[DK:.*]] = ober.matmul %[[DST]], %[[Q]] : (tensor<2x10x8xf32>, tensor<2x8x16xf32>) -> tensor<2x10x16xf32>
  // CHECK-NOT: ober.attention_grad
  // CHECK: return %[[DQ]], %[[DK]], %[[DV]]
  %dq, %dk, %dv = ober.attention_grad %q, %k, %v, %o, %g : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>)
  return %dq, %dk, %dv : tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>
}

// -----

func.func @dynamic_causal_grad(%q: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  // expected-error @+1 {{cannot decompose: is_causal needs static sequence lengths, got query 'tensor<2x?x16xf32>' and key 'tensor<2x?x16xf32>'}}
  %0:3 = ober.attention_grad %q, %q, %q, %q, %q {is_causal} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> (tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>)
  return %0#0 : tensor<2x?x16xf32>
}
