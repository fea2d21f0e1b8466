// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @reduce_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.reduce_sum' op 'axes' 3 is out of range for rank 3 (expected 0 <= axes < 3)}}
  // expected-error @+1 {{'ober.reduce_sum' op failed to infer returned types}}
  %0 = ober.reduce_sum %x {axes = array<i64: 3>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @reduce_order(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.reduce_mean' op 'axes' must be strictly increasing, got [2, 0]}}
  // expected-error @+1 {{'ober.reduce_mean' op failed to infer returned types}}
  %0 = ober.reduce_mean %x {axes = array<i64: 2, 0>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @reduce_repeat(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.reduce_max' op 'axes' must be strictly increasing, got [1, 1]}}
  // expected-error @+1 {{'ober.reduce_max' op failed to infer returned types}}
  %0 = ober.reduce_max %x {axes = array<i64: 1, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @reduce_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.reduce_min' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x1x4xf32>'}}
  // expected-error @+1 {{'ober.reduce_min' op failed to infer returned types}}
  %0 = ober.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'ober.softmax' op 'axis' -1 is out of range for rank 3 (expected 0 <= axis < 3)}}
  %0 = ober.softmax %x {axis = -1 : i64} : tensor<2x3x4xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'ober.log_softmax' op 'axis' 3 is out of range for rank 3 (expected 0 <= axis < 3)}}
  %0 = ober.log_softmax %x {axis = 3 : i64} : tensor<2x3x4xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.layer_norm' op 'axis' 3 is out of range for rank 3 (expected 0 <= axis < 3)}}
  // expected-error @+1 {{'ober.layer_norm' op failed to infer returned types}}
  %0 = ober.layer_norm %x {axis = 3 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.layer_norm' op 'epsilon' must be non-negative, got -1.000000e+00}}
  // expected-error @+1 {{'ober.layer_norm' op failed to infer returned types}}
  %0 = ober.layer_norm %x {axis = 2 : i64, epsilon = -1.0 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>) {
  // expected-error @+2 {{'ober.layer_norm' op scale must be 4x'f32' (the normalised dimensions), got 'tensor<3x4xf32>'}}
  // expected-error @+1 {{'ober.layer_norm' op failed to infer returned types}}
  %0 = ober.layer_norm %x scale %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x3x4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{'ober.layer_norm' op bias must be 4x'f32' (the normalised dimensions), got 'tensor<4xf16>'}}
  // expected-error @+1 {{'ober.layer_norm' op failed to infer returned types}}
  %0 = ober.layer_norm %x bias %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<4xf16>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @rms_norm_scale(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>) {
  // expected-error @+2 {{'ober.rms_norm' op scale must be 3x4x'f32' (the normalised dimensions), got 'tensor<3xf32>'}}
  // expected-error @+1 {{'ober.rms_norm' op failed to infer returned types}}
  %0 = ober.rms_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @rms_norm_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'ober.rms_norm' op 'axis' 5 is out of range for rank 3 (expected 0 <= axis < 3)}}
  // expected-error @+1 {{'ober.rms_norm' op failed to infer returned types}}
  %0 = ober.rms_norm %x {axis = 5 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+2 {{'ober.batch_norm_inference' op input must be [N, C, ...] with rank >= 2, got 4}}
  // expected-error @+1 {{'ober.batch_norm_inference' op failed to infer returned types}}
  %0 = ober.batch_norm_inference %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %d: tensor<4xf32>) {
  // expected-error @+2 {{'ober.batch_norm_inference' op mean must be 3x'f32' (one per channel), got 'tensor<4xf32>'}}
  // expected-error @+1 {{'ober.batch_norm_inference' op failed to infer returned types}}
  %0 = ober.batch_norm_inference %x, %c, %c, %d, %c {epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+2 {{'ober.batch_norm_inference' op 'epsilon' must be non-negative, got -1.000000e+00}}
  // expected-error @+1 {{'ober.batch_norm_inference' op failed to infer returned types}}
  %0 = ober.batch_norm_inference %x, %c, %c, %c, %c {epsilon = -1.0 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+2 {{'ober.batch_norm_training' op 'momentum' must be in [0, 1], got 1.500000e+00}}
  // expected-error @+1 {{'ober.batch_norm_training' op failed to infer returned types}}
  %0:3 = ober.batch_norm_training %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 1.5 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_running(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %r: tensor<2xf32>) {
  // expected-error @+2 {{'ober.batch_norm_training' op running_var must be 3x'f32' (one per channel), got 'tensor<2xf32>'}}
  // expected-error @+1 {{'ober.batch_norm_training' op failed to infer returned types}}
  %0:3 = ober.batch_norm_training %x, %c, %c, %c, %r {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<2xf32>)
  return
}
