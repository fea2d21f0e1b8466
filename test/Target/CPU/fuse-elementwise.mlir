// RUN: ober-opt %s --ober-cpu-fuse-elementwise | FileCheck %s

// An optimizer-like update: the new moment is returned and also read by
// the update; one loop computes both (each value once), instead of
// upstream's fused update recomputing the moment beside its own loop.
// CHECK-LABEL: func.func @update
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf32>)
// CHECK-COUNT-1: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#{{[01]}}, %[[R]]#{{[01]}}
#map = affine_map<(d0) -> (d0)>
func.func @update(%m: tensor<64xf32>, %g: tensor<64xf32>, %p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %m2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%m, %g : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %p2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%m2, %p : tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %p2, %m2 : tensor<64xf32>, tensor<64xf32>
}
