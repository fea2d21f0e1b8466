// RUN: ober-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" -split-input-file -verify-diagnostics

// Splits the generated models refuse to rebuild locally, each named by the
// kind of its factor in the rule table.

// A convolution's positions need a halo.
shard.grid @grid(shape = 2)
func.func @halo(%x: tensor<2x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32> {
  %rows = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<2x3x8x8xf32>
  %ws = shard.shard %w to %rep : tensor<6x3x3x3xf32>
  // expected-error @+1 {{a split of factor 3 (size 8) needs elements of neighbouring blocks}}
  %y = ober.conv %xs, %ws {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32>
  return %y : tensor<2x6x6x6xf32>
}

// -----

// Split indices would add scatter_add's whole input once per device.
shard.grid @grid(shape = 2)
func.func @scatter(%x: tensor<10x6xf32>, %i: tensor<4xi64>, %u: tensor<4x6xf32>) -> tensor<10x6xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rep : tensor<10x6xf32>
  %is = shard.shard %i to %rows : tensor<4xi64>
  %us = shard.shard %u to %rows : tensor<4x6xf32>
  // expected-error @+1 {{a split reduction would add operand 0 once per device}}
  %s = ober.scatter_add %xs, %is, %us {axis = 0 : i64} : (tensor<10x6xf32>, tensor<4xi64>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %s0 = shard.shard %s to %rep annotate_for_users : tensor<10x6xf32>
  return %s0 : tensor<10x6xf32>
}

// -----

// A table split by rows needs its ids shifted and masked.
shard.grid @grid(shape = 2)
func.func @vocabulary(%t: tensor<10x6xf32>, %i: tensor<4xi64>) -> tensor<4x6xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ts = shard.shard %t to %rows : tensor<10x6xf32>
  %is = shard.shard %i to %rep : tensor<4xi64>
  // expected-error @+1 {{a split of factor 1 (size 10) needs its indices shifted and masked}}
  %e = ober.embedding %ts, %is : (tensor<10x6xf32>, tensor<4xi64>) -> tensor<4x6xf32>
  %e0 = shard.shard %e to %rep annotate_for_users : tensor<4x6xf32>
  return %e0 : tensor<4x6xf32>
}

// -----

// Dropout's mask depends on global positions.
shard.grid @grid(shape = 2)
func.func @dropout(%x: tensor<4x8xf32>, %seed: tensor<i64>) -> tensor<4x8xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  // expected-error @+1 {{a split of factor 0 (size 4) needs the whole factor}}
  %d:2 = ober.dropout %xs, %seed {ratio = 0.5 : f64} : (tensor<4x8xf32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  return %d#0 : tensor<4x8xf32>
}

// -----

// A split of a merged dimension's minor factor is not a block of it.
shard.grid @grid(shape = 2)
func.func @minor(%x: tensor<3x4xf32>) -> tensor<12xf32> {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %cols : tensor<3x4xf32>
  // expected-error @+1 {{a split of factor 1 (size 4) is not a block of its dimension}}
  %r = ober.reshape %xs : tensor<3x4xf32> to tensor<12xf32>
  return %r : tensor<12xf32>
}
