// RUN: ober-opt %s --split-input-file --convert-ober-to-linalg --ober-cpu-fuse-elementwise --canonicalize --ober-cuda-split-reductions --canonicalize | FileCheck %s
// RUN: not ober-opt %s --split-input-file --ober-cuda-split-reductions="min-extent=1" 2>&1 | FileCheck %s --check-prefix=OPTIONS

// OPTIONS: min-chunk and target-threads must be positive, min-extent at least 2

// A gradient norm's sum of squares over a whole tensor: the two reduction
// dimensions collapse into one; 65536 threads of 64 squares each (adjacent
// threads, adjacent elements: the partials' reduction dimension
// innermost), then 1024 threads of 64 partials, then 32 of 32 (a warp
// along the 1024), then one thread over 32.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: tensor.collapse_shape {{.*}} : tensor<1024x4096xf32> into tensor<4194304xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [64, 65536]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<65536xf64>)
// CHECK: arith.mulf
// CHECK: tensor.expand_shape %{{.*}} output_shape [64, 1024]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1024xf64>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [32, 32]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<32xf64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} outs(%{{.*}} : tensor<f64>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @sum_of_squares(%x: tensor<1024x4096xf32>) -> tensor<f32> {
  %s = ober.mul %x, %x : (tensor<1024x4096xf32>, tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  %r = ober.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<1024x4096xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A bias gradient: 512 features summed over 8192 tokens. 128 partials per
// feature (512 x 128 = 65536 threads, 64 tokens each), combined by 512
// threads over 128 (below min-extent: not split again).
// CHECK-LABEL: func.func @bias_gradient
// CHECK: tensor.expand_shape {{.*}} output_shape [64, 128, 512]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<512x128xf64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<512xf64>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @bias_gradient(%g: tensor<8192x512xf32>) -> tensor<512xf32> {
  %r = ober.reduce_sum %g {axes = array<i64: 0>, keepdims = false} : (tensor<8192x512xf32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

// Enough rows for the device (a softmax's or a norm's), each along the
// input's innermost dimension: split by 32, so that a warp reads 32
// adjacent elements of one row (a thread per row and lane, the lane
// fastest), then one thread per row over its 32 partials.
// CHECK-LABEL: func.func @many_rows
// CHECK: tensor.expand_shape %{{.*}} output_shape [32768, 16, 32]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<32768x32xf64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<32768xf64>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @many_rows(%x: tensor<32768x512xf32>) -> tensor<32768xf32> {
  %r = ober.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<32768x512xf32>) -> tensor<32768xf32>
  return %r : tensor<32768xf32>
}

// -----

// A prime extent has no ratio; a short reduction is not worth a launch
// (fewer than 4096 iterations, and below 256 for a warp along it).
// CHECK-LABEL: func.func @unsplittable
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @unsplittable(%p: tensor<65537xf32>, %q: tensor<224xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = ober.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<65537xf32>) -> tensor<f32>
  %b = ober.reduce_sum %q {axes = array<i64: 0>, keepdims = false} : (tensor<224xf32>) -> tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}

// -----

// A max splits too (arith.maximumf: NaN propagates through the partials);
// 100000 = 80 x 1250: the largest divisor within 100000 / 64.
// CHECK-LABEL: func.func @max
// CHECK: tensor.expand_shape %{{.*}} output_shape [80, 1250]
// CHECK: arith.maximumf
// CHECK: return
func.func @max(%x: tensor<100000xf32>) -> tensor<f32> {
  %r = ober.reduce_max %x {axes = array<i64: 0>, keepdims = false} : (tensor<100000xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Dynamic extents: no ratio known at compile time, left alone.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @dynamic(%x: tensor<?x4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x4096xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// No iterations in a parallel dimension: nothing to spread (and no
// division by the empty output's size).
// CHECK-LABEL: func.func @empty
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @empty(%x: tensor<0x8192xf32>, %init: tensor<0xf32>) -> tensor<0xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<0x8192xf32>) outs(%init : tensor<0xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<0xf32>
  func.return %r : tensor<0xf32>
}

// -----

// A pooling window (an operand indexed by `2 * d2 + d4`): neither
// collapsed nor split.
// CHECK-LABEL: func.func @window
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @window(%x: tensor<4x64x25x25xf32>, %w: tensor<3x3xf32>, %init: tensor<4x64x12x12xf32>) -> tensor<4x64x12x12xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<4x64x25x25xf32>, tensor<3x3xf32>) outs(%init : tensor<4x64x12x12xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<4x64x12x12xf32>
  func.return %r : tensor<4x64x12x12xf32>
}
