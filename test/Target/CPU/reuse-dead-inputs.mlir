// RUN: ober-opt %s --ober-cpu-reuse-dead-inputs --split-input-file | FileCheck %s

// An elementwise result takes the tensor of an input it reads last.
// CHECK-LABEL: func.func @last_reader
// CHECK: linalg.generic {{.*}} ins(%[[A:.*]], %{{.*}} : tensor<64xf32>, tensor<64xf32>) outs(%[[A]] : tensor<64xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @last_reader(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Inputs read again later (here returned), or handed to a kernel call as a
// buffer, keep their tensors: the output stays empty.
// CHECK-LABEL: func.func @read_later
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<64xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @read_later(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, memref<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %m = bufferization.to_buffer %b read_only : tensor<64xf32> to memref<64xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0, %a, %m : tensor<64xf32>, tensor<64xf32>, memref<64xf32>
}

// -----

// An output a broadcast map writes (every iteration of a channel writes
// its element) never takes an input: later iterations still read it.
// CHECK-LABEL: func.func @broadcast_output
// CHECK: outs(%{{[0-9]+}}, %arg0 : tensor<1x4xf32>, tensor<8x4xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
func.func @broadcast_output(%x: tensor<8x4xf32>, %mean: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<8x4xf32>) {
  %e0 = tensor.empty() : tensor<1x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %0:2 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<8x4xf32>, tensor<1x4xf32>) outs(%e0, %e1 : tensor<1x4xf32>, tensor<8x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o0: f32, %o1: f32):
    %r = arith.mulf %m, %m : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %r, %s : f32, f32
  } -> (tensor<1x4xf32>, tensor<8x4xf32>)
  return %0#0, %0#1 : tensor<1x4xf32>, tensor<8x4xf32>
}
