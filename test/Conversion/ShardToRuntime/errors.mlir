// RUN: ober-opt %s --convert-shard-to-runtime -split-input-file -verify-diagnostics

shard.grid @devices(shape = 2)
func.func @shift(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.shift' op has no runtime lowering; executables run all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, all_slice, send and recv}}
  %0 = shard.shift %x on @devices grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @devices(shape = 2)
func.func @dynamic_source(%x: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.recv' op has a dynamic source; executables need it known at compile time}}
  %0 = shard.recv %x on @devices grid_axes = [0] source = [%i] : (tensor<4xf32>, index) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @devices(shape = 2)
func.func @bitwise(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'shard.all_reduce' op reduces with 'bitwise_or'; the runtime reduces with sum, max, min and product}}
  %0 = shard.all_reduce %x on @devices grid_axes = [0] reduction = bitwise_or : tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

shard.grid @devices(shape = 2)
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'shard.all_reduce' op moves 'tensor<?xf32>'; the collectives runtime moves tensors of static shape with float, integer or i1 elements}}
  %0 = shard.all_reduce %x on @devices grid_axes = [0] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
