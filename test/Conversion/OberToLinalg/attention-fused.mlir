// RUN: ober-opt %s --convert-ober-to-linalg="attention=fused" --split-input-file | FileCheck %s
// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s --check-prefix=DECOMPOSED

// Causal attention as one parallel loop over (batch, head, query): the
// query row is one vector, the keys it sees (j <= i) run through the online
// softmax (running max, sum and output row), and no score matrix exists.
// CHECK-LABEL: func.func @forward
// CHECK-DAG: %[[Q:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x4x16x32xf32> to memref<2x4x16x32xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x16x32xf32>
// CHECK-NOT: 16x16
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]]) =
// CHECK: %[[QROW:.*]] = vector.load %[[Q]][%[[B]], %[[H]], %[[I]], %{{.*}}] : memref<2x4x16x32xf32>, vector<32xf32>
// CHECK: %[[END:.*]] = arith.minsi
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] {{.*}} -> (f32, f32, vector<32xf32>)
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc>
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: vector.fma
// CHECK: arith.divf %{{.*}} : vector<32xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[I]], %{{.*}}]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// DECOMPOSED-LABEL: func.func @forward
// DECOMPOSED: ober_rt_cpu_matmul
// DECOMPOSED-NOT: scf.parallel
func.func @forward(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %0 = ober.attention %q, %k, %v {is_causal} : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// -----

// The gradient: per query the log-sum-exp and dO . O (kept, one scalar per
// row) and dQ; per key dK and dV over the queries that see it (i >= j).
// bf16 operands compute in f32 and round once.
// CHECK-LABEL: func.func @backward
// CHECK-DAG: %[[LSE:.*]] = memref.alloc() {{.*}} : memref<3x8xf32>
// CHECK-DAG: %[[DELTA:.*]] = memref.alloc() {{.*}} : memref<3x8xf32>
// CHECK: scf.parallel (%[[B:.*]], %[[I:.*]]) =
// CHECK: memref.store %{{.*}}, %[[LSE]][%[[B]], %[[I]]]
// CHECK: memref.store %{{.*}}, %[[DELTA]][%[[B]], %[[I]]]
// CHECK: scf.parallel (%[[B2:.*]], %[[J:.*]]) =
// CHECK: scf.for %[[I2:.*]] = %[[J]] to
// CHECK: memref.load %[[LSE]][%[[B2]], %[[I2]]]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// DECOMPOSED-LABEL: func.func @backward
// DECOMPOSED: ober_rt_cpu_matmul
func.func @backward(%q: tensor<3x8x16xbf16>, %k: tensor<3x10x16xbf16>, %v: tensor<3x10x8xbf16>, %o: tensor<3x8x8xbf16>, %g: tensor<3x8x8xbf16>) -> (tensor<3x8x16xbf16>, tensor<3x10x16xbf16>, tensor<3x10x8xbf16>) {
  %0:3 = ober.attention_grad %q, %k, %v, %o, %g {is_causal} : (tensor<3x8x16xbf16>, tensor<3x10x16xbf16>, tensor<3x10x8xbf16>, tensor<3x8x8xbf16>, tensor<3x8x8xbf16>) -> (tensor<3x8x16xbf16>, tensor<3x10x16xbf16>, tensor<3x10x8xbf16>)
  return %0#0, %0#1, %0#2 : tensor<3x8x16xbf16>, tensor<3x10x16xbf16>, tensor<3x10x8xbf16>
}

// -----

// Rows longer than the fused loops hold (D > 256) are decomposed.
// CHECK-LABEL: func.func @long_rows
// CHECK: ober_rt_cpu_matmul
// CHECK-NOT: scf.parallel
func.func @long_rows(%q: tensor<1x4x512xf32>, %k: tensor<1x4x512xf32>, %v: tensor<1x4x512xf32>) -> tensor<1x4x512xf32> {
  %0 = ober.attention %q, %k, %v : (tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>) -> tensor<1x4x512xf32>
  return %0 : tensor<1x4x512xf32>
}
