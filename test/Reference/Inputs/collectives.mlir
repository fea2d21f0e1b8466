// SPMD programs for a 2x2 grid of simulated devices (test/Reference/devices.test).
shard.grid @grid(shape = 2x2)

// Columns split over grid axis 1; an all-gather along them gives every
// device the whole tensor.
func.func @gather_rows(%x: tensor<4x4xf32> {ober.split = array<i64: -1, 1>})
    -> (tensor<4x8xf32> {ober.split = array<i64: -1, -1>}) {
  %g = shard.all_gather %x on @grid grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// Rows split over grid axis 0 (both devices of a row of the grid hold the
// same block); a reduce-scatter over axis 1 sums the two copies and gives
// each device half of the columns.
func.func @scatter_sum(%x: tensor<2x8xf32> {ober.split = array<i64: 0, -1>})
    -> (tensor<2x4xf32> {ober.split = array<i64: 0, 1>}) {
  %r = shard.reduce_scatter %x on @grid grid_axes = [1] scatter_axis = 1 : tensor<2x8xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
