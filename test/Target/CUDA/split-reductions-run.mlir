// The split reductions run on the host (upstream's lowering to loops)
// against the same ops unsplit: integer-valued sums (exact in any order),
// a max over all elements and one over a tensor holding a NaN (it must
// stay NaN across the partials). Small options make every op split, the
// combinations again.
// RUN: ober-opt %s --convert-ober-to-linalg --ober-cpu-fuse-elementwise --canonicalize --ober-cuda-split-reductions="min-extent=64 min-chunk=4 target-threads=256 coalesce-min-extent=32" --canonicalize -o %t.split.mlir
// RUN: FileCheck %s --check-prefix=SPLIT < %t.split.mlir
// RUN: mlir-opt %t.split.mlir --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --expand-strided-metadata --lower-affine --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s
// RUN: ober-opt %s --convert-ober-to-linalg --ober-cpu-fuse-elementwise --canonicalize \
// RUN:   | mlir-opt --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --expand-strided-metadata --lower-affine --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// Each of the five reductions split: the whole-tensor ones in three
// rounds (19200 = 75 x 256, then 4 x 64, then 4 x 16), the column sums once
// (by 4), the row sums by 32 (a warp along each row). A one-hot pick fused
// into its sum reads its indices (linalg.index): left whole.
// SPLIT-COUNT-11: tensor.expand_shape
// SPLIT-NOT: tensor.expand_shape

// CHECK: data =
// CHECK-NEXT: [303098]
// CHECK: data =
// CHECK-NEXT: [-1800,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -6,  -1800,
// CHECK: data =
// CHECK-NEXT: [-384,  -6,  -5,  -4,  -3,  -2,  -1,  0,  1,  2,  3,  4,  5,  -384,
// CHECK: data =
// CHECK-NEXT: [3,  101,  513,  260]
// CHECK: data =
// CHECK-NEXT: [6]
// CHECK: data =
// CHECK-NEXT: [nan]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @values(%salt: index) -> tensor<300x64xf32> {
  %e = tensor.empty() : tensor<300x64xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<300x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %j : index
    %k2 = arith.addi %k, %salt : index
    %c = arith.constant 13 : index
    %m = arith.remui %k2, %c : index
    %n = arith.index_cast %m : index to i64
    %f = arith.sitofp %n : i64 to f32
    %six = arith.constant 6.0 : f32
    %x = arith.subf %f, %six : f32
    linalg.yield %x : f32
  } -> tensor<300x64xf32>
  return %v : tensor<300x64xf32>
}

// [i + j] over 4 x 512.
func.func @wide() -> tensor<4x512xf32> {
  %e = tensor.empty() : tensor<4x512xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x512xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %n = arith.index_cast %k : index to i64
    %f = arith.sitofp %n : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x512xf32>
  return %v : tensor<4x512xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %x = call @values(%c0) : (index) -> tensor<300x64xf32>
  %sq = ober.mul %x, %x : (tensor<300x64xf32>, tensor<300x64xf32>) -> tensor<300x64xf32>
  %all = ober.reduce_sum %sq {axes = array<i64: 0, 1>, keepdims = false} : (tensor<300x64xf32>) -> tensor<f32>
  %cols = ober.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<300x64xf32>) -> tensor<64xf32>
  %rows = ober.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<300x64xf32>) -> tensor<300xf32>
  %big = ober.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<300x64xf32>) -> tensor<f32>
  %nan = arith.constant 0x7FC00000 : f32
  %c7 = arith.constant 7 : index
  %c5 = arith.constant 5 : index
  %xn = tensor.insert %nan into %x[%c7, %c5] : tensor<300x64xf32>
  %bign = ober.reduce_max %xn {axes = array<i64: 0, 1>, keepdims = false} : (tensor<300x64xf32>) -> tensor<f32>
  %u0 = tensor.cast %all : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %cols : tensor<64xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %u4 = tensor.cast %rows : tensor<300xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  %wide = call @wide() : () -> tensor<4x512xf32>
  %lab = arith.constant dense<[3, 100, 511, 257]> : tensor<4xi64>
  %oh = ober.one_hot %lab {axis = 1 : i64, depth = 512 : i64} : (tensor<4xi64>) -> tensor<4x512xf32>
  %picked = ober.mul %oh, %wide : (tensor<4x512xf32>, tensor<4x512xf32>) -> tensor<4x512xf32>
  %pick = ober.reduce_sum %picked {axes = array<i64: 1>, keepdims = false} : (tensor<4x512xf32>) -> tensor<4xf32>
  %u5 = tensor.cast %pick : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  %u2 = tensor.cast %big : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  %u3 = tensor.cast %bign : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  return
}
