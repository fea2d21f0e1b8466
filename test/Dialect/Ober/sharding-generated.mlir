// RUN: ober-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" -split-input-file | FileCheck %s

// The ShardingInterface models generated from the sharding rule table, on
// ops the hand-written models did not cover.

// Samples split through a CNN: convolution, batch norm, pooling and the
// flattening reshape stay local; the weight gradient of split samples is a
// partial sum, all-reduced.
// CHECK-LABEL: func.func @cnn
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<6x3x3x3xf32>, %[[C:.*]]: tensor<6xf32>, %[[G:.*]]: tensor<2x6x3x3xf32>
// CHECK-NEXT: %[[Y:.*]] = ober.conv %[[X]], %[[W]] {{.*}} -> tensor<2x6x6x6xf32>
// CHECK-NEXT: %[[N:.*]] = ober.batch_norm_inference %[[Y]], {{.*}} -> tensor<2x6x6x6xf32>
// CHECK-NEXT: %[[P:.*]] = ober.max_pool %[[N]] {{.*}} -> tensor<2x6x3x3xf32>
// CHECK-NEXT: %[[F:.*]] = ober.reshape %[[P]] : tensor<2x6x3x3xf32> to tensor<2x54xf32>
// CHECK-NEXT: %[[DW:.*]] = ober.conv_weight_grad %[[X]], %[[G]] {{.*}} -> tensor<6x3x3x3xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[DW]] on @grid grid_axes = [0] : tensor<6x3x3x3xf32> -> tensor<6x3x3x3xf32>
// CHECK-NEXT: return %[[F]], %[[S]]
shard.grid @grid(shape = 2)
func.func @cnn(%x: tensor<4x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %c: tensor<6xf32>, %g: tensor<4x6x3x3xf32>) -> (tensor<4x54xf32>, tensor<6x3x3x3xf32>) {
  %batch = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %batch : tensor<4x3x8x8xf32>
  %ws = shard.shard %w to %rep : tensor<6x3x3x3xf32>
  %cs = shard.shard %c to %rep : tensor<6xf32>
  %gs = shard.shard %g to %batch : tensor<4x6x3x3xf32>
  %y = ober.conv %xs, %ws {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<4x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<4x6x6x6xf32>
  %n = ober.batch_norm_inference %y, %cs, %cs, %cs, %cs {epsilon = 1.0e-5 : f64} : (tensor<4x6x6x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<4x6x6x6xf32>
  %p = ober.max_pool %n {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<4x6x6x6xf32>) -> tensor<4x6x3x3xf32>
  %f = ober.reshape %p : tensor<4x6x3x3xf32> to tensor<4x54xf32>
  %dw = ober.conv_weight_grad %xs, %gs {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<4x3x8x8xf32>, tensor<4x6x3x3xf32>) -> tensor<6x3x3x3xf32>
  %f0 = shard.shard %f to %batch annotate_for_users : tensor<4x54xf32>
  %dw0 = shard.shard %dw to %rep annotate_for_users : tensor<6x3x3x3xf32>
  return %f0, %dw0 : tensor<4x54xf32>, tensor<6x3x3x3xf32>
}

// -----

// Rows split through slices, concat and split along the columns: the local
// slice's limits are its block's; a reduction with kept dimensions.
// CHECK-LABEL: func.func @pieces
// CHECK-NEXT: ober.slice %{{.*}} {limits = array<i64: 4, 4>, starts = array<i64: 0, 1>, strides = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT: ober.concat {{.*}} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: ober.split {{.*}} -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: ober.reduce_sum {{.*}} -> tensor<4x1xf32>
// CHECK-NEXT: return
shard.grid @grid(shape = 2)
func.func @pieces(%x: tensor<8x6xf32>, %y: tensor<8x2xf32>) -> (tensor<8x3xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x1xf32>) {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<8x6xf32>
  %ys = shard.shard %y to %rows : tensor<8x2xf32>
  %s = ober.slice %xs {starts = array<i64: 0, 1>, limits = array<i64: 8, 4>, strides = array<i64: 1, 1>} : tensor<8x6xf32> -> tensor<8x3xf32>
  %c = ober.concat %xs, %ys {axis = 1 : i64} : (tensor<8x6xf32>, tensor<8x2xf32>) -> tensor<8x8xf32>
  %p:2 = ober.split %c {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<8x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  %m = ober.reduce_sum %p#1 {axes = array<i64: 1>, keepdims = true} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %s0 = shard.shard %s to %rows annotate_for_users : tensor<8x3xf32>
  %c0 = shard.shard %c to %rows annotate_for_users : tensor<8x8xf32>
  %p0 = shard.shard %p#0 to %rows annotate_for_users : tensor<8x4xf32>
  %m0 = shard.shard %m to %rows annotate_for_users : tensor<8x1xf32>
  return %s0, %c0, %p0, %m0 : tensor<8x3xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x1xf32>
}

// -----

// A mean with kept dimensions over split columns: all-reduced and halved.
// CHECK-LABEL: func.func @keepdims
// CHECK-NEXT: %[[M:.*]] = ober.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = true} : (tensor<4x4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[M]] on @grid grid_axes = [0] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[H:.*]] = ober.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[R:.*]] = ober.mul %[[S]], %[[H]]
// CHECK-NEXT: return %[[R]]
shard.grid @grid(shape = 2)
func.func @keepdims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %cols : tensor<4x8xf32>
  %m = ober.reduce_mean %xs {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %m0 = shard.shard %m to %rep annotate_for_users : tensor<4x1xf32>
  return %m0 : tensor<4x1xf32>
}

// -----

// Split indices gather whole rows of a whole table; a mean squared error
// over split samples is all-reduced and halved.
// CHECK-LABEL: func.func @indexing
// CHECK-NEXT: %[[G:.*]] = ober.gather {{.*}} : (tensor<10x6xf32>, tensor<2xi64>) -> tensor<2x6xf32>
// CHECK-NEXT: %[[L:.*]] = ober.mse_loss %[[G]], {{.*}} -> tensor<f32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[L]] on @grid grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT: ober.constant dense<5.000000e-01>
// CHECK-NEXT: ober.mul %[[S]]
shard.grid @grid(shape = 2)
func.func @indexing(%x: tensor<10x6xf32>, %i: tensor<4xi64>, %a: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<f32>) {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rep : tensor<10x6xf32>
  %is = shard.shard %i to %rows : tensor<4xi64>
  %as = shard.shard %a to %rows : tensor<4x6xf32>
  %g = ober.gather %xs, %is {axis = 0 : i64} : (tensor<10x6xf32>, tensor<4xi64>) -> tensor<4x6xf32>
  %l = ober.mse_loss %g, %as {reduction = #ober.reduction<mean>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<f32>
  %g0 = shard.shard %g to %rows annotate_for_users : tensor<4x6xf32>
  %l0 = shard.shard %l to %rep annotate_for_users : tensor<f32>
  return %g0, %l0 : tensor<4x6xf32>, tensor<f32>
}

// -----

// A size-1 dimension broadcast against a larger one has a loop of its own
// (the hand-written models indexed the constant 0, which propagation
// rejected): a column of per-row scales stays local.
// CHECK-LABEL: func.func @column
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>, %[[C:.*]]: tensor<2x1xf32>
// CHECK-NEXT: %[[Y:.*]] = ober.mul %[[X]], %[[C]] : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
shard.grid @grid(shape = 2)
func.func @column(%x: tensor<4x8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  %cs = shard.shard %c to %rows : tensor<4x1xf32>
  %y = ober.mul %xs, %cs : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y0 = shard.shard %y to %rows annotate_for_users : tensor<4x8xf32>
  return %y0 : tensor<4x8xf32>
}
