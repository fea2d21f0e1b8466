// Each collective becomes a start where it was and a wait just before the
// first later use of its result or input; the descriptor names the kind,
// element type (rt::DType), reduction, axes, tag, group, shape, grid axes
// and peer; the groups and the grid shape become module attributes.
// RUN: ober-opt %s --convert-shard-to-runtime | FileCheck %s

shard.grid @devices(shape = 2x2)

// CHECK: module attributes {ober_rt.grid = array<i64: 2, 2>, ober_rt.groups = [array<i64: 0>, array<i64: 1>, array<i64: 0, 1>]}
// CHECK-NOT: shard.grid
// CHECK-DAG: memref.global "private" constant @__ober_coll_desc{{[0-9]+}} : memref<13xi64> = dense<[0, 2, 0, 0, 0, 0, 0, 2, 1, 4, 8, 0, 0]>
// CHECK-DAG: memref.global "private" constant @__ober_coll_desc{{[0-9]+}} : memref<13xi64> = dense<[1, 2, 0, 1, 0, 0, 1, 2, 1, 4, 8, 1, 0]>
// CHECK-DAG: memref.global "private" constant @__ober_coll_desc{{[0-9]+}} : memref<15xi64> = dense<[0, 2, 1, 0, 0, 0, 2, 2, 2, 4, 8, 0, 1, 0, 0]>
// CHECK-DAG: dense<[6, 9, 0, 0, 0, 3, 1, 2, 1, 2, 3, 1, 1]>
// CHECK-DAG: dense<[7, 9, 0, 0, 0, 4, 1, 2, 1, 2, 3, 1, 0]>
// CHECK-DAG: func.func private @ober_rt_coll_start_float32(memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @ober_rt_coll_wait_float32(i64, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @overlap
func.func @overlap(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  // CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only
  // CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  // CHECK: %[[H:.*]] = call @ober_rt_coll_start_float32
  // CHECK: call @ober_rt_coll_start_float32
  // CHECK: ober.exp %arg2
  // CHECK: call @ober_rt_coll_wait_float32(%[[H]],
  // CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
  // CHECK: ober.tanh %[[R]]
  // CHECK: call @ober_rt_coll_wait_float32
  // CHECK: return
  %0 = shard.all_reduce %x on @devices grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = shard.all_gather %y on @devices grid_axes = [1] gather_axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  %2 = ober.exp %z : tensor<4x8xf32>
  %3 = ober.tanh %0 : tensor<4x8xf32>
  %4 = ober.add %3, %2 : tensor<4x8xf32>
  return %4, %1 : tensor<4x8xf32>, tensor<4x16xf32>
}

// A later use of the input ends the overlap there: nothing may write over
// the buffer the runtime reads.
// CHECK-LABEL: func.func @input_used_later
func.func @input_used_later(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: call @ober_rt_coll_start_float32
  // CHECK-NEXT: call @ober_rt_coll_wait_float32
  // CHECK: ober.neg %arg0
  %0 = shard.all_reduce %x on @devices grid_axes = [0, 1] reduction = max : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = ober.neg %x : tensor<4x8xf32>
  %2 = ober.add %0, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// Transfers: a send's wait at the block's end (a receive does not read
// its operand), a receive's output a new buffer; the tag and peer coordinates are in the descriptor.
// CHECK-LABEL: func.func @transfers
func.func @transfers(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  // CHECK: call @ober_rt_coll_start_int64
  // CHECK: call @ober_rt_coll_start_int64
  // CHECK: call @ober_rt_coll_wait_int64
  // CHECK-NEXT: call @ober_rt_coll_wait_int64
  // CHECK-NEXT: bufferization.to_tensor
  // CHECK-NEXT: return
  %0 = shard.send %x on @devices grid_axes = [1] destination = [1] {ober.tag = 3 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  %1 = shard.recv %x on @devices grid_axes = [1] source = [0] {ober.tag = 4 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %1 : tensor<2x3xi64>
}
