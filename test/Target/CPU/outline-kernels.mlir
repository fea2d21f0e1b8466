// RUN: ober-opt %s --ober-cpu-outline-kernels | FileCheck %s

// Each loop nest on buffers becomes a function of its own, called where it
// was; the two adds written alike share one; the constant is copied in.
// CHECK-LABEL: func.func @step(
// CHECK: call @step_kernel0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
// CHECK: call @step_kernel0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
// CHECK: call @step_kernel2(%{{.*}}) : (memref<64xf32>) -> ()
// CHECK-NOT: linalg.
// CHECK: return
// CHECK: func.func private @step_kernel2(%{{.*}}: memref<64xf32>) attributes {passthrough = ["noinline"]}
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: linalg.fill
// CHECK: func.func private @step_kernel0(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: linalg.generic
// CHECK-NOT: func.func private @step_kernel1
#map = affine_map<(d0) -> (d0)>
func.func @step(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : memref<64xf32>, memref<64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%c, %b : memref<64xf32>, memref<64xf32>) outs(%d : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%two : f32) outs(%a : memref<64xf32>)
  return
}
