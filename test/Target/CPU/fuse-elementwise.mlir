// RUN: ober-opt %s --ober-cpu-fuse-elementwise --split-input-file | FileCheck %s

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

// -----

// A producer the consumer reads through a broadcast (a per-channel
// statistic) and others read too is not fused as a shared producer: the
// fused loop would write it again at every iteration.
// CHECK-LABEL: func.func @broadcast_read
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x4xf32>)
#id1 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
func.func @broadcast_read(%x: tensor<8x4xf32>, %v: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<1x4xf32>) {
  %e = tensor.empty() : tensor<1x4xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.rsqrt %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [#id1, #row, #id1], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<8x4xf32>, tensor<1x4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %n, %r : tensor<8x4xf32>, tensor<1x4xf32>
}
