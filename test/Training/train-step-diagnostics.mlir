// RUN: ober-opt %s -split-input-file -ober-build-train-step -verify-diagnostics

// expected-error @+1 {{ober-build-train-step: the model has no parameters (arguments tagged ober.param)}}
func.func @no_params(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{ober-build-train-step: the first result must be a static float tensor, got 'tensor<4xi64>'}}
func.func @int_result(%w: tensor<4xi64> {ober.param = "w"}) -> tensor<4xi64> {
  return %w : tensor<4xi64>
}

// -----

// expected-error @+1 {{ober-build-train-step: the function has no result to train}}
func.func @no_result(%w: tensor<3xf32> {ober.param = "w"}) {
  return
}
