// RUN: ober-opt %s --ober-cpu-return-in-place | FileCheck %s

// A public function returning argument buffers it updated stops returning
// them; the attribute says which argument holds each dropped result.
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> memref<f32>
// CHECK-SAME: ober_cpu.results_in_place = [array<i64: 0, 1>, array<i64: 2, 0>]
// CHECK: return %{{.*}} : memref<f32>
func.func @step(%p: memref<8xf32>, %m: memref<8xf32>) -> (memref<8xf32>, memref<f32>, memref<8xf32>) {
  %loss = memref.alloc() : memref<f32>
  return %m, %loss, %p : memref<8xf32>, memref<f32>, memref<8xf32>
}

// Private functions keep their results.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: -> memref<8xf32>
func.func private @helper(%p: memref<8xf32>) -> memref<8xf32> {
  return %p : memref<8xf32>
}
