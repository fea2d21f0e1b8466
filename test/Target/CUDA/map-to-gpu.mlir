// Loop nests become one-dimensional grids: one thread per iteration of the
// outermost parallel loop (any rank), the body's reduction loops
// sequential in each thread; a host loop over memory runs in one thread.
// RUN: ober-opt %s --split-input-file --ober-cuda-map-to-gpu="threads-per-block=128" --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.if
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]]
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %[[C128]],
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[ID]], %[[TOTAL]]
// CHECK: arith.remui %[[ID]]
// CHECK: arith.divui %[[ID]]
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @rows(%x: memref<4x5x8xf32>, %y: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c5) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %x[%i, %j, %k] : memref<4x5x8xf32>
      %b = memref.load %y[%i, %j] : memref<4x5xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i, %j] : memref<4x5xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A reduction over every dimension has no parallel loop: one thread.
// CHECK-LABEL: func.func @total
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
// CHECK: gpu.terminator
func.func @total(%x: memref<8xf32>, %y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %x[%k] : memref<8xf32>
    %b = memref.load %y[] : memref<f32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %y[] : memref<f32>
  }
  return
}

// -----

// A value the host needs from a buffer cannot be had.
func.func @host_read(%x: memref<4xindex>, %y: memref<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @below {{reads or writes device memory on the host}}
  %n = memref.load %x[%c0] : memref<4xindex>
  return %n : index
}

// -----

// CHECK-LABEL: func.func @empty_space
// Zero iterations launch nothing.
// CHECK: %[[ANY:.*]] = arith.cmpi ugt
// CHECK: scf.if %[[ANY]]
func.func @empty_space(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %z, %y[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// What rank-0 ops leave outside any loop runs in one thread, in order: the
// second load sees the first store (a step counter, then what it scales).
// CHECK-LABEL: func.func @scalars
// CHECK: gpu.launch
// CHECK: %[[T:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[T1:.*]] = arith.addf %[[T]]
// CHECK: memref.store %[[T1]], %[[STEP:.*]][] : memref<f32>
// CHECK: %[[AGAIN:.*]] = memref.load %[[STEP]][] : memref<f32>
// CHECK: arith.mulf %[[AGAIN]]
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: memref.load
func.func @scalars(%step: memref<f32>, %scale: memref<f32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.load %step[] : memref<f32>
  %t1 = arith.addf %t, %one : f32
  memref.store %t1, %step[] : memref<f32>
  %again = memref.load %step[] : memref<f32>
  %s = arith.mulf %again, %again : f32
  memref.store %s, %scale[] : memref<f32>
  return
}

// -----

// A reduction dimension outside a parallel one (a bias gradient: the sum
// over rows of each column): one launch over the columns, each thread
// summing its column.
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: scf.for
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @column_sums(%x: memref<4x8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %r = %c0 to %c4 step %c1 {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %a = memref.load %x[%r, %j] : memref<4x8xf32>
      %b = memref.load %y[%j] : memref<8xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%j] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A scatter's loop over indices (an embedding gradient): each iteration
// reads an index and adds a row of updates into the row it names. Each
// column's thread owns that column in every row, so the loop runs inside
// one launch over the columns, each thread reading the indices itself.
// CHECK-LABEL: func.func @scatter_rows
// CHECK-NOT: scf.for
// CHECK: gpu.launch
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%[[J]]] : memref<16xindex>
// CHECK: %[[ROW:.*]] = memref.subview %{{.*}}[%[[ID]], 0] [1, 8]
// CHECK: memref.load %[[ROW]]
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @scatter_rows(%table: memref<100x8xf32>, %ids: memref<16xindex>, %g: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %id = memref.load %ids[%j] : memref<16xindex>
    %src = memref.subview %g[%j, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %dst = memref.subview %table[%id, 0] [1, 8] [1, 1] : memref<100x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c1, %c8) step (%c1, %c1) {
      %x = memref.load %dst[%a, %b] : memref<1x8xf32, strided<[8, 1], offset: ?>>
      %y = memref.load %src[%a, %b] : memref<1x8xf32, strided<[8, 1], offset: ?>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %dst[%a, %b] : memref<1x8xf32, strided<[8, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// Not provably each point's own elements: the loop stays sequential, in
// one thread. A row whose offset moves along the parallel dimension (point
// b of iteration j and point b - 1 of iteration j + 1 meet) ...
// CHECK-LABEL: func.func @sliding_window
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
func.func @sliding_window(%x: memref<24xf32>, %ids: memref<16xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %at = memref.load %ids[%j] : memref<16xindex>
    %w = memref.subview %x[%at] [8] [1] : memref<24xf32> to memref<8xf32, strided<[1], offset: ?>>
    scf.parallel (%b) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %w[%b] : memref<8xf32, strided<[1], offset: ?>>
      %s = arith.addf %v, %v : f32
      memref.store %s, %w[%b] : memref<8xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// ... an index read from the buffer the loop writes ...
// CHECK-LABEL: func.func @reads_what_it_writes
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
func.func @reads_what_it_writes(%t: memref<100x8xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %id = memref.load %t[%j, %c0] : memref<100x8xindex>
    %row = memref.subview %t[%id, 0] [1, 8] [1, 1] : memref<100x8xindex> to memref<1x8xindex, strided<[8, 1], offset: ?>>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c1, %c8) step (%c1, %c1) {
      memref.store %j, %row[%a, %b] : memref<1x8xindex, strided<[8, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// ... and points that read each other's elements (a transposed access).
// CHECK-LABEL: func.func @transposed
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
func.func @transposed(%t: memref<8x8xf32>, %ids: memref<16xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %id = memref.load %ids[%j] : memref<16xindex>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
      %v = memref.load %t[%b, %a] : memref<8x8xf32>
      memref.store %v, %t[%a, %b] : memref<8x8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// ... and a write seen through an alias of unknown origin (a transpose of
// the buffer read by other points) ...
// CHECK-LABEL: func.func @through_transpose
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
func.func @through_transpose(%t: memref<8x8xf32>, %out: memref<8x8xf32>, %ids: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %tt = memref.transpose %t (i, j) -> (j, i) : memref<8x8xf32> to memref<8x8xf32, strided<[1, 8]>>
  scf.for %j = %c0 to %c2 step %c1 {
    %id = memref.load %ids[%j] : memref<2xindex>
    %first = arith.cmpi eq, %id, %c0 : index
    scf.parallel (%a, %b) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
      scf.if %first {
        %ai = arith.index_cast %a : index to i32
        %f = arith.sitofp %ai : i32 to f32
        memref.store %f, %t[%a, %b] : memref<8x8xf32>
      } else {
        %v = memref.load %tt[%a, %b] : memref<8x8xf32, strided<[1, 8]>>
        memref.store %v, %out[%a, %b] : memref<8x8xf32>
      }
      scf.reduce
    }
  }
  return
}

// -----

// ... and a layout that puts several indices on one element (stride 0).
// CHECK-LABEL: func.func @overlapping_layout
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.for
func.func @overlapping_layout(%a: memref<8xf32>, %ids: memref<8xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %b = memref.reinterpret_cast %a to offset: [0], sizes: [8], strides: [0] : memref<8xf32> to memref<8xf32, strided<[0]>>
  scf.for %j = %c0 to %c8 step %c1 {
    %id = memref.load %ids[%j] : memref<8xindex>
    scf.parallel (%p) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %b[%p] : memref<8xf32, strided<[0]>>
      %w = arith.addf %v, %v : f32
      memref.store %w, %b[%p] : memref<8xf32, strided<[0]>>
      scf.reduce
    }
  }
  return
}

// -----

// Without work before the parallel loop the proof holds all the same: a
// transposed access keeps the host loop, a launch per iteration (each
// sees the last one's writes).
// CHECK-LABEL: func.func @transposed_in_place
// CHECK: scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %c128,
// CHECK: gpu.terminator
// CHECK: return
func.func @transposed_in_place(%t: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    scf.parallel (%a, %b) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
      %v = memref.load %t[%b, %a] : memref<8x8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %t[%a, %b] : memref<8x8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Host memory (an alloca, as bufferization's pointer lists) stays on the
// host: no launch.
// CHECK-LABEL: func.func @host_list
// CHECK-NOT: gpu.launch
// CHECK: scf.for
// CHECK: memref.store
func.func @host_list(%p: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %list = memref.alloca() : memref<4xindex>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %p, %list[%i] : memref<4xindex>
  }
  return
}

// -----

// The general deallocation's lists (allocated for its helper's call, which
// the host fills and reads) become host stack buffers, their frees go.
// CHECK-LABEL: func.func @dealloc_lists
// CHECK-NOT: gpu.launch
// CHECK: %[[LIST:.*]] = memref.alloca() : memref<2xindex>
// CHECK: memref.store %{{.*}}, %[[LIST]]
// CHECK: call @dealloc_helper(%{{.*}})
// CHECK: memref.load %[[LIST]]
// CHECK-NOT: memref.dealloc %[[LIST]]
// CHECK: return
func.func private @dealloc_helper(memref<?xindex>)
func.func @dealloc_lists(%p: index) -> index {
  %c0 = arith.constant 0 : index
  %list = memref.alloc() : memref<2xindex>
  memref.store %p, %list[%c0] : memref<2xindex>
  %cast = memref.cast %list : memref<2xindex> to memref<?xindex>
  call @dealloc_helper(%cast) : (memref<?xindex>) -> ()
  %r = memref.load %list[%c0] : memref<2xindex>
  memref.dealloc %list : memref<2xindex>
  return %r : index
}

// -----

func.func @yields(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{reads device memory and yields values the host uses}}
  %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %a = memref.load %x[%k] : memref<8xf32>
    %t = arith.addf %acc, %a : f32
    scf.yield %t : f32
  }
  return %s : f32
}

// -----

// A host loop that calls the runtime (a loop over micro-batches: the
// kernel library, collectives) stays on the host: its parallel loops become
// launches inside it, its scalar work (a loss summed over micro-batches) a
// one-thread launch after the call.
// CHECK-LABEL: func.func @micro_batches
// CHECK: scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: memref.store {{.*}} : memref<8xf32>
// CHECK: call @ober_rt_cuda_matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}) threads
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func private @ober_rt_cuda_matmul(memref<*xf32>)
func.func @micro_batches(%x: memref<8xf32>, %loss: memref<f32>, %u: memref<*xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.for %m = %c0 to %c2 step %c1 {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
      scf.reduce
    }
    func.call @ober_rt_cuda_matmul(%u) : (memref<*xf32>) -> ()
    %a = memref.load %loss[] : memref<f32>
    %b = arith.addf %a, %a : f32
    memref.store %b, %loss[] : memref<f32>
  }
  return
}

// -----

// A one-element integer buffer stays on the device where the host cannot
// compute it: its value comes from device memory (a step count read from
// an argument). Viewing a buffer at such an index on the host is then an
// error.
func.func @device_scalar(%step: memref<i64>, %ring: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %slot = memref.alloc() : memref<i64>
  %s = memref.load %step[] : memref<i64>
  memref.store %s, %slot[] : memref<i64>
  // expected-error @below {{reads or writes device memory on the host}}
  %t = memref.load %slot[] : memref<i64>
  %i = arith.index_cast %t : i64 to index
  %row = memref.subview %ring[%i, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %row[%c0, %j] : memref<1x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  memref.dealloc %slot : memref<i64>
  return
}

// -----

// Nor where something else takes the buffer (a call, which may write it).
func.func private @ober_rt_cuda_take(memref<i64>)
func.func @taken_scalar(%ring: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %slot = memref.alloc() : memref<i64>
  memref.store %one, %slot[] : memref<i64>
  func.call @ober_rt_cuda_take(%slot) : (memref<i64>) -> ()
  // expected-error @below {{reads or writes device memory on the host}}
  %t = memref.load %slot[] : memref<i64>
  %i = arith.index_cast %t : i64 to index
  %row = memref.subview %ring[%i, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %row[%c0, %j] : memref<1x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  memref.dealloc %slot : memref<i64>
  return
}

// -----

// Nor where a kernel writes it.
func.func @kernel_written_scalar(%ring: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %slot = memref.alloc() : memref<i64>
  scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
    memref.store %one, %slot[] : memref<i64>
    scf.reduce
  }
  // expected-error @below {{reads or writes device memory on the host}}
  %t = memref.load %slot[] : memref<i64>
  %i = arith.index_cast %t : i64 to index
  %row = memref.subview %ring[%i, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %row[%c0, %j] : memref<1x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  memref.dealloc %slot : memref<i64>
  return
}

// -----

// Nor where it is computed from a buffer that stays on the device: the
// first stays (a one-thread launch writes it from the argument), so the
// second does (another reads the first and writes it), and the host's
// view at the second is the error.
func.func @chained_scalars(%step: memref<i64>, %ring: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %first = memref.alloc() : memref<i64>
  %second = memref.alloc() : memref<i64>
  %s = memref.load %step[] : memref<i64>
  memref.store %s, %first[] : memref<i64>
  %f = memref.load %first[] : memref<i64>
  %n = arith.addi %f, %one : i64
  memref.store %n, %second[] : memref<i64>
  func.call @ober_rt_cuda_matmul_bf16() : () -> ()
  // expected-error @below {{reads or writes device memory on the host}}
  %t = memref.load %second[] : memref<i64>
  %i = arith.index_cast %t : i64 to index
  %row = memref.subview %ring[%i, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %row[%c0, %j] : memref<1x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  memref.dealloc %first : memref<i64>
  memref.dealloc %second : memref<i64>
  return
}
func.func private @ober_rt_cuda_matmul_bf16()
