// A dropout of a block of a tensor (`global_shape` and the block's
// `offsets`) drops exactly what the whole tensor's dropout drops there:
// each element draws by its index in the whole tensor. Without them the
// op draws as before (the whole tensor).
// RUN: ober-run %s --print | FileCheck %s

func.func @main() -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %x = ober.constant dense<1.0> : tensor<6x8xf32>
  %seed = ober.constant dense<42> : tensor<i64>
  %whole:2 = ober.dropout %x, %seed {ratio = 0.5 : f64} : (tensor<6x8xf32>, tensor<i64>) -> (tensor<6x8xf32>, tensor<6x8xi1>)
  %expected = ober.slice %whole#0 {starts = array<i64: 2, 4>, limits = array<i64: 5, 8>, strides = array<i64: 1, 1>} : tensor<6x8xf32> -> tensor<3x4xf32>
  %block = ober.slice %x {starts = array<i64: 2, 4>, limits = array<i64: 5, 8>, strides = array<i64: 1, 1>} : tensor<6x8xf32> -> tensor<3x4xf32>
  %offsets = ober.constant dense<[2, 4]> : tensor<2xi64>
  %local:2 = ober.dropout %block, %seed offsets %offsets {ratio = 0.5 : f64, global_shape = array<i64: 6, 8>} : (tensor<3x4xf32>, tensor<i64>, tensor<2xi64>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  %diff = ober.sub %expected, %local#0 : tensor<3x4xf32>
  %abs = ober.abs %diff : tensor<3x4xf32>
  %max = ober.reduce_max %abs {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  // The block's own draws (no offsets) differ: the first 12 of the stream.
  %own:2 = ober.dropout %block, %seed {ratio = 0.5 : f64} : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  %odiff = ober.sub %own#0, %local#0 : tensor<3x4xf32>
  %oabs = ober.abs %odiff : tensor<3x4xf32>
  %omax = ober.reduce_max %oabs {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  // Some elements dropped, some kept (each kept one is 2).
  %kept = ober.reduce_sum %local#0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  return %max, %omax, %kept : tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK: result #0: tensor<f32> = 0
// CHECK: result #1: tensor<f32> = 2
// CHECK: result #2: tensor<f32> = {{[1-9][02468]?}}
