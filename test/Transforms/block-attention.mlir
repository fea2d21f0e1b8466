// RUN: ober-opt %s -ober-block-attention=block=3 -split-input-file | FileCheck %s
// RUN: ober-opt %s -ober-block-attention -split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: not ober-opt %s -ober-block-attention=block=-1 -split-input-file 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: ober-block-attention: block=-1 is negative (0 sizes blocks automatically)

// Causal: each block reads the keys up to its last query; the first stays
// is_causal, the others get the rule shifted by their offset as a mask.
// CHECK-LABEL: func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<2x8x4xf32>, %[[V:.*]]: tensor<2x8x3xf32>)
// CHECK: %[[Q0:.*]] = ober.slice %[[Q]] {limits = array<i64: 2, 3, 4>, starts = array<i64: 0, 0, 0>
// CHECK: %[[K0:.*]] = ober.slice %[[K]] {limits = array<i64: 2, 3, 4>, starts = array<i64: 0, 0, 0>
// CHECK: %[[V0:.*]] = ober.slice %[[V]] {limits = array<i64: 2, 3, 3>
// CHECK: %[[O0:.*]] = ober.attention %[[Q0]], %[[K0]], %[[V0]] {is_causal} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
// CHECK: %[[Q1:.*]] = ober.slice %[[Q]] {limits = array<i64: 2, 6, 4>, starts = array<i64: 0, 3, 0>
// CHECK: %[[K1:.*]] = ober.slice %[[K]] {limits = array<i64: 2, 6, 4>
// CHECK: %[[V1:.*]] = ober.slice %[[V]] {limits = array<i64: 2, 6, 3>
// CHECK: %[[ROWS:.*]] = ober.iota {dimension = 0 : i64} : tensor<3x6xi64>
// CHECK: %[[OFF:.*]] = ober.constant dense<3> : tensor<i64>
// CHECK: %[[SHIFTED:.*]] = ober.add %[[ROWS]], %[[OFF]]
// CHECK: %[[COLS:.*]] = ober.iota {dimension = 1 : i64} : tensor<3x6xi64>
// CHECK: %[[KEEP:.*]] = ober.cmp ge, %[[SHIFTED]], %[[COLS]]
// CHECK: %[[O1:.*]] = ober.attention %[[Q1]], %[[K1]], %[[V1]], %[[KEEP]] : (tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<3x6xi1>) -> tensor<2x3x3xf32>
// The last block (2 queries) sees every key.
// CHECK: %[[Q2:.*]] = ober.slice %[[Q]] {limits = array<i64: 2, 8, 4>, starts = array<i64: 0, 6, 0>
// CHECK: %[[O2:.*]] = ober.attention %[[Q2]], %[[K]], %[[V]], %{{.*}} : (tensor<2x2x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<2x8xi1>) -> tensor<2x2x3xf32>
// CHECK: %[[OUT:.*]] = ober.concat %[[O0]], %[[O1]], %[[O2]] {axis = 1 : i64}
// CHECK: return %[[OUT]]
// AUTO-LABEL: func @causal
// AUTO-NOT: ober.slice
// AUTO: ober.attention %arg0, %arg1, %arg2 {is_causal}
func.func @causal(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

// -----

// The gradient: the mask's rows and keys cut to the block, joined with
// the shifted causal rule; dQ concatenated, dK and dV summed over the
// blocks with zeros for keys a block does not read, and zeros for the
// keys no query sees (5 queries, 7 keys).
// CHECK-LABEL: func @gradient
// CHECK-SAME: %[[M:[^:]*]]: tensor<5x7xi1>)
// CHECK: %[[M0:.*]] = ober.slice %[[M]] {limits = array<i64: 3, 7>, starts = array<i64: 0, 0>
// CHECK: %[[M00:.*]] = ober.slice %[[M0]] {limits = array<i64: 3, 3>
// CHECK: %[[DQ0:.*]], %[[DK0:.*]], %[[DV0:.*]] = ober.attention_grad {{.*}}, %[[M00]] {is_causal} : ({{.*}}) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>)
// CHECK: %[[M1:.*]] = ober.slice %[[M]] {limits = array<i64: 5, 7>, starts = array<i64: 3, 0>
// CHECK: %[[M11:.*]] = ober.slice %[[M1]] {limits = array<i64: 2, 5>
// CHECK: %[[KEEP:.*]] = ober.cmp ge
// CHECK: %[[JOINED:.*]] = ober.and %[[M11]], %[[KEEP]] : tensor<2x5xi1>
// CHECK: %[[DQ1:.*]], %[[DK1:.*]], %[[DV1:.*]] = ober.attention_grad {{.*}}, %[[JOINED]] : ({{.*}}) -> (tensor<2x2x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>)
// CHECK: %[[PK:.*]] = ober.pad %[[DK0]] {high = array<i64: 0, 2, 0>, low = array<i64: 0, 0, 0>
// CHECK: %[[SK:.*]] = ober.add %[[DK1]], %[[PK]] : tensor<2x5x4xf32>
// CHECK: %[[PV:.*]] = ober.pad %[[DV0]]
// CHECK: %[[SV:.*]] = ober.add %[[DV1]], %[[PV]] : tensor<2x5x3xf32>
// CHECK: %[[DQ:.*]] = ober.concat %[[DQ0]], %[[DQ1]] {axis = 1 : i64}
// CHECK: %[[DK:.*]] = ober.pad %[[SK]] {high = array<i64: 0, 2, 0>{{.*}} -> tensor<2x7x4xf32>
// CHECK: %[[DV:.*]] = ober.pad %[[SV]] {high = array<i64: 0, 2, 0>{{.*}} -> tensor<2x7x3xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @gradient(%q: tensor<2x5x4xf32>, %k: tensor<2x7x4xf32>, %v: tensor<2x7x3xf32>, %o: tensor<2x5x3xf32>, %g: tensor<2x5x3xf32>, %m: tensor<5x7xi1>) -> (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>) {
  %r:3 = ober.attention_grad %q, %k, %v, %o, %g, %m {is_causal} : (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<5x7xi1>) -> (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>
}

// -----

// A float mask that broadcasts over queries keeps its shape; the causal
// rule hides positions with -inf. Not causal: every block reads every key,
// and the scale stays.
// CHECK-LABEL: func @float_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x1x1x6xf32>)
// CHECK-NOT: ober.slice %[[M]]
// CHECK: ober.attention %{{.*}}, %arg1, %arg2, %[[M]] {scale = 3.000000e-01 : f64}
// CHECK: ober.attention %{{.*}}, %arg1, %arg2, %[[M]] {scale = 3.000000e-01 : f64}
// CHECK: ober.concat
func.func @float_mask(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x6x4xf32>, %v: tensor<2x3x6x4xf32>, %m: tensor<2x1x1x6xf32>) -> tensor<2x3x5x4xf32> {
  %o = ober.attention %q, %k, %v, %m {scale = 0.3 : f64} : (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>, tensor<2x1x1x6xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// CHECK-LABEL: func @float_mask_causal
// CHECK: ober.attention {{.*}} {is_causal}
// CHECK: %[[KEEP:.*]] = ober.cmp ge
// CHECK: %[[HIDE:.*]] = ober.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[JOINED:.*]] = ober.select %[[KEEP]], %{{.*}}, %[[HIDE]] : (tensor<2x5xi1>, tensor<2x1x1x5xf32>, tensor<f32>) -> tensor<2x1x2x5xf32>
// CHECK: ober.attention %{{.*}}, %[[JOINED]] :
func.func @float_mask_causal(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x6x4xf32>, %v: tensor<2x3x6x4xf32>, %m: tensor<2x1x1x6xf32>) -> tensor<2x3x5x4xf32> {
  %o = ober.attention %q, %k, %v, %m {is_causal} : (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>, tensor<2x1x1x6xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// Dynamic shapes are left alone.
// CHECK-LABEL: func @dynamic
// CHECK-NOT: ober.slice
// CHECK: ober.attention %arg0, %arg1, %arg2 {is_causal}
func.func @dynamic(%q: tensor<?x8x4xf32>, %k: tensor<?x8x4xf32>, %v: tensor<?x8x4xf32>) -> tensor<?x8x4xf32> {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<?x8x4xf32>, tensor<?x8x4xf32>, tensor<?x8x4xf32>) -> tensor<?x8x4xf32>
  return %o : tensor<?x8x4xf32>
}

// -----

// bf16: dK and dV are summed over the blocks in f32 and rounded once.
// CHECK-LABEL: func @bf16_gradient
// CHECK: %[[DQ0:.*]], %[[DK0:.*]], %[[DV0:.*]] = ober.attention_grad
// CHECK: %[[K0:.*]] = ober.cast %[[DK0]] : tensor<2x5x4xbf16> to tensor<2x5x4xf32>
// CHECK: ober.cast %[[DV0]] : tensor<2x5x4xbf16> to tensor<2x5x4xf32>
// CHECK: %[[DQ1:.*]], %[[DK1:.*]], %[[DV1:.*]] = ober.attention_grad
// CHECK: %[[K1:.*]] = ober.cast %[[DK1]] : tensor<2x5x4xbf16> to tensor<2x5x4xf32>
// CHECK: %[[SK:.*]] = ober.add %[[K1]], %[[K0]] : tensor<2x5x4xf32>
// CHECK: %[[DK:.*]] = ober.cast %[[SK]] : tensor<2x5x4xf32> to tensor<2x5x4xbf16>
// CHECK: return %{{.*}}, %[[DK]], %{{.*}} :
func.func @bf16_gradient(%q: tensor<2x5x4xbf16>, %k: tensor<2x5x4xbf16>, %v: tensor<2x5x4xbf16>, %o: tensor<2x5x4xbf16>, %g: tensor<2x5x4xbf16>) -> (tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>) {
  %r:3 = ober.attention_grad %q, %k, %v, %o, %g : (tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>) -> (tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>)
  return %r#0, %r#1, %r#2 : tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>
}
