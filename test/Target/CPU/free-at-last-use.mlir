// RUN: ober-opt %s --ober-cpu-free-at-last-use --split-input-file | FileCheck %s

// A buffer is freed after the last op that reads it or a view of it (here
// a reshape read by a call), not at the end of the function; a buffer
// returned is never freed here.
// CHECK-LABEL: func.func @step(
// CHECK: %[[A:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK: call @use(%[[V]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: call @use(%[[B]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK: %[[C:.*]] = memref.alloc() : memref<64xf32>
// CHECK: call @use(%[[C]], %[[C]])
// CHECK-NEXT: return %[[C]]
func.func private @use(memref<64xf32>, memref<64xf32>)
func.func @step() -> memref<64xf32> {
  %a = memref.alloc() : memref<8x8xf32>
  %b = memref.alloc() : memref<64xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  call @use(%v, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @use(%b, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  %c = memref.alloc() : memref<64xf32>
  call @use(%c, %c) : (memref<64xf32>, memref<64xf32>) -> ()
  memref.dealloc %a : memref<8x8xf32>
  memref.dealloc %b : memref<64xf32>
  return %c : memref<64xf32>
}

// -----

// A use inside a loop counts as the loop's.
// CHECK-LABEL: func.func @loop(
// CHECK: scf.for
// CHECK: call @use
// CHECK: }
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func private @use(memref<64xf32>, memref<64xf32>)
func.func @loop(%n: index) {
  %a = memref.alloc() : memref<64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    func.call @use(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  }
  memref.dealloc %a : memref<64xf32>
  return
}
