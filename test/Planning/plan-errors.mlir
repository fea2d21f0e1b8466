// RUN: ober-opt %s --ober-plan="cluster=a100-80gb gpus=8" -split-input-file -verify-diagnostics

// expected-error@+1 {{the planner needs a training step, but no function has `ober.train_step`: run --ober-build-train-step first}}
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %y = ober.relu %x : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// expected-error@+1 {{the training step calls no gradient function with a body}}
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> attributes {ober.train_step = {optimizer = "sgd"}} {
  return %x : tensor<4xf32>
}

// -----

func.func private @grad(%x: tensor<?x8xf32>, %w: tensor<8x8xf32> {ober.param = "w"}) -> (tensor<f32>, tensor<8x8xf32>) {
  // expected-error@+1 {{the planner needs static shapes, but this result is 'tensor<?x8xf32>'}}
  %y = ober.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %s = ober.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x8xf32>) -> tensor<f32>
  return %s, %w : tensor<f32>, tensor<8x8xf32>
}
func.func @train_step(%x: tensor<?x8xf32>, %w: tensor<8x8xf32> {ober.param = "w"}) -> tensor<f32> attributes {ober.train_step = {optimizer = "sgd"}} {
  %l, %g = call @grad(%x, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> (tensor<f32>, tensor<8x8xf32>)
  return %l : tensor<f32>
}

// -----

// A type whose element count overflows 64 bits is refused, naming the
// parameter (it used to plan as "params 0 B").
// expected-error@+1 {{parameter 'w' ('tensor<8x4611686018427387904xf32>') has more elements or bytes than 64 bits can count}}
func.func private @grad(%x: tensor<4x8xf32>, %w: tensor<8x4611686018427387904xf32> {ober.param = "w"}) -> tensor<f32> {
  %s = ober.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @train_step(%x: tensor<4x8xf32>, %w: tensor<8x4611686018427387904xf32> {ober.param = "w"}) -> tensor<f32> attributes {ober.train_step = {optimizer = "sgd"}} {
  %l = call @grad(%x, %w) : (tensor<4x8xf32>, tensor<8x4611686018427387904xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @grad(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {ober.param = "w"}) -> tensor<f32> {
  // expected-error@+2 {{result #0 ('tensor<4x8x4611686018427387904xf32>') has more elements or bytes than 64 bits can count}}
  %r = ober.reshape %x : tensor<4x8xf32> to tensor<4x8x1xf32>
  %b = ober.broadcast_to %r : tensor<4x8x1xf32> to tensor<4x8x4611686018427387904xf32>
  %s = ober.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @train_step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {ober.param = "w"}) -> tensor<f32> attributes {ober.train_step = {optimizer = "sgd"}} {
  %l = call @grad(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
