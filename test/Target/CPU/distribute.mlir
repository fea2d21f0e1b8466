// RUN: ober-opt %s --ober-cpu-distribute --split-input-file | FileCheck %s
// RUN: ober-opt %s "--ober-cpu-distribute=min-iterations=1000000" --split-input-file | FileCheck %s --check-prefix=SMALL

// A row reduction over 1024 x 256 splits its 1024 rows into 64 chunks of
// 16 (the reduction dimension stays whole, so results do not depend on
// the threads).
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (16) shared_outs
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16x256xf32>) outs(%{{.*}} : tensor<16xf32>)
// SMALL-LABEL: func.func @rows
// SMALL-NOT: scf.forall
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: tensor<1024x256xf32>, %init: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<1024x256xf32>) outs(%init : tensor<1024xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %0 : tensor<1024xf32>
}

// -----

// Under 32768 iterations, nothing to share.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
#id = affine_map<(d0) -> (d0)>
func.func @small(%x: tensor<1000xf32>, %init: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1000xf32>) outs(%init : tensor<1000xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

// -----

// One dimension: chunks of it (64 of 1024).
// CHECK-LABEL: func.func @flat
// CHECK: scf.forall (%{{.*}}) = (0) to (65536) step (1024)
#id = affine_map<(d0) -> (d0)>
func.func @flat(%x: tensor<65536xf32>, %init: tensor<65536xf32>) -> tensor<65536xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<65536xf32>) outs(%init : tensor<65536xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  return %0 : tensor<65536xf32>
}

// -----

// An output a dimension does not index (a per-column statistic beside the
// elementwise result) keeps that dimension whole: tiles would all write it.
// CHECK-LABEL: func.func @statistic
// CHECK: scf.forall (%{{.*}}) = (0) to (512) step (8)
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<1x8xf32>, tensor<256x8xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (0, d1)>
func.func @statistic(%x: tensor<256x512xf32>, %e0: tensor<1x512xf32>, %e1: tensor<256x512xf32>) -> (tensor<1x512xf32>, tensor<256x512xf32>) {
  %0:2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<256x512xf32>) outs(%e0, %e1 : tensor<1x512xf32>, tensor<256x512xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %a, %s : f32, f32
  } -> (tensor<1x512xf32>, tensor<256x512xf32>)
  return %0#0, %0#1 : tensor<1x512xf32>, tensor<256x512xf32>
}
