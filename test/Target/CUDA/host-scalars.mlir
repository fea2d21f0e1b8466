// A pipeline stage's loop over micro-batches as bufferization leaves it:
// the micro-batch counter and a stash's slot in one-element buffers, the
// stash viewed at the slot on the host. They stay on the host (stack
// buffers): the loop stays there, kernels take the slot as an argument,
// and the rank-0 loss sum runs in one thread with its host work before
// the launch. The same program then runs on the CPU before the pass and
// after it (each launch's threads as loops): same results.
// RUN: ober-opt %s --ober-cuda-map-to-gpu | FileCheck %s --check-prefix=MAP
// RUN: ober-opt %s --ober-cuda-map-to-gpu | FileCheck %s --check-prefix=STACK
// RUN: ober-opt %s --ober-cuda-map-to-gpu --test-ober-cuda-launches-on-host \
// RUN:   | mlir-opt --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s
// RUN: mlir-opt %s --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so,%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// No one-element integer buffer is left on the device (and no kernel
// reads the host's stack: the pass checks that).
// STACK-NOT: memref.alloc() : memref<i64>
// STACK: func.func @library
// MAP-LABEL: func.func @stage
// MAP-COUNT-2: memref.alloca() : memref<i64>
// MAP-NOT: memref.alloc() : memref<i64>
// MAP: memref.store %c0_i64, %[[COUNT:.*]][]
// MAP: gpu.launch
// MAP: scf.for
// MAP: %[[M:.*]] = memref.load %[[COUNT]][]
// MAP: arith.remsi %[[M]]
// MAP: memref.store %{{.*}}, %[[SLOT:.*]][]
// MAP: memref.load %{{.*}}[%{{.*}}] : memref<1xi64>
// MAP: memref.subview %{{.*}}[%{{.*}}, 0] [1, 3]
// The kernel's read of the slot, before its launch.
// MAP: memref.load %[[SLOT]][]
// MAP: gpu.launch
// MAP: gpu.terminator
// MAP: gpu.launch
// MAP: gpu.terminator
// The loss: the counter's update on the host, the sum in one thread.
// MAP: arith.addi %[[M]]
// MAP: memref.store %{{.*}}, %[[COUNT]][]
// MAP: gpu.launch
// MAP: memref.load %arg2[]
// MAP: arith.addf
// MAP: memref.store %{{.*}}, %arg2[]
// MAP-NOT: memref.dealloc %[[SLOT]]
// MAP: return

// Each micro-batch i stashes 2 x[i] in slot i mod 2 and reads the other
// slot (the previous micro-batch's, zeros at first) into out[i]; the loss
// sums the first element of each stash.
// CHECK: [0,   0,   0],
// CHECK-NEXT: [2,   4,   6],
// CHECK-NEXT: [8,   10,   12],
// CHECK-NEXT: [14,   16,   18]
// CHECK: [44]
func.func @stage(%x: memref<4x3xf32>, %out: memref<4x3xf32>,
                 %loss: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c2_i64 = arith.constant 2 : i64
  %zero = arith.constant 0.0 : f32
  %count = memref.alloc() : memref<i64>
  memref.store %c0_i64, %count[] : memref<i64>
  %ring = memref.alloc() : memref<2x3xf32>
  scf.parallel (%s, %j) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    memref.store %zero, %ring[%s, %j] : memref<2x3xf32>
    scf.reduce
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %m = memref.load %count[] : memref<i64>
    %slot = memref.alloc() : memref<i64>
    %r = arith.remsi %m, %c2_i64 : i64
    memref.store %r, %slot[] : memref<i64>
    %view = memref.expand_shape %slot [] output_shape [1] : memref<i64> into memref<1xi64>
    %s = memref.load %view[%c0] : memref<1xi64>
    %si = arith.index_cast %s : i64 to index
    %dst = memref.subview %ring[%si, 0] [1, 3] [1, 1] : memref<2x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    // The other slot, read in the kernel (as a gather reads its index).
    scf.parallel (%j) = (%c0) to (%c3) step (%c1) {
      %t = memref.load %slot[] : memref<i64>
      %u = arith.subi %c1_i64, %t : i64
      %ui = arith.index_cast %u : i64 to index
      %v = memref.load %ring[%ui, %j] : memref<2x3xf32>
      memref.store %v, %out[%i, %j] : memref<4x3xf32>
      scf.reduce
    }
    scf.parallel (%j) = (%c0) to (%c3) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<4x3xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %dst[%c0, %j] : memref<1x3xf32, strided<[3, 1], offset: ?>>
      scf.reduce
    }
    %l = memref.load %loss[] : memref<f32>
    %e = memref.load %ring[%si, %c0] : memref<2x3xf32>
    %sum = arith.addf %l, %e : f32
    %next = arith.addi %m, %c1_i64 : i64
    memref.store %next, %count[] : memref<i64>
    memref.store %sum, %loss[] : memref<f32>
    memref.dealloc %slot : memref<i64>
    func.call @library(%i) : (index) -> ()
  }
  memref.dealloc %ring : memref<2x3xf32>
  memref.dealloc %count : memref<i64>
  return
}

// The runtime's calls (products, transfers) keep a stage's loop on the
// host.
func.func @library(%i: index) {
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<4x3xf32>
  %out = memref.alloc() : memref<4x3xf32>
  %loss = memref.alloc() : memref<f32>
  memref.store %zero, %loss[] : memref<f32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c3) step (%c1, %c1) {
    %k = arith.muli %i, %c3 : index
    %n = arith.addi %k, %j : index
    %n1 = arith.addi %n, %c1 : index
    %ni = arith.index_cast %n1 : index to i64
    %f = arith.sitofp %ni : i64 to f32
    memref.store %f, %x[%i, %j] : memref<4x3xf32>
    scf.reduce
  }
  call @stage(%x, %out, %loss) : (memref<4x3xf32>, memref<4x3xf32>, memref<f32>) -> ()
  %o = memref.cast %out : memref<4x3xf32> to memref<*xf32>
  call @printMemrefF32(%o) : (memref<*xf32>) -> ()
  %lo = memref.cast %loss : memref<f32> to memref<*xf32>
  call @printMemrefF32(%lo) : (memref<*xf32>) -> ()
  memref.dealloc %x : memref<4x3xf32>
  memref.dealloc %out : memref<4x3xf32>
  memref.dealloc %loss : memref<f32>
  return
}
