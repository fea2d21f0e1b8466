// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @argmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'ober.argmax' op 'axis' 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  // expected-error @+1 {{'ober.argmax' op failed to infer returned types}}
  %0 = ober.argmax %x {axis = 2 : i64, keepdims = false, select_last_index = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'ober.cumsum' op 'axis' 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  %0 = ober.cumsum %x {axis = 2 : i64, exclusive = false, reverse = false} : tensor<2x3xf32>
  return
}

// -----

func.func @gather_elements_rank(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'ober.gather_elements' op indices must have the rank of the input 2x3, got 2}}
  // expected-error @+1 {{'ober.gather_elements' op failed to infer returned types}}
  %0 = ober.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_elements_size(%x: tensor<2x3xf32>, %i: tensor<3x3xi64>) {
  // expected-error @+2 {{'ober.gather_elements' op indices 3x3 exceed the input 2x3 in dimension 0}}
  // expected-error @+1 {{'ober.gather_elements' op failed to infer returned types}}
  %0 = ober.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xi64>) -> tensor<3x3xf32>
  return
}

// -----

func.func @logical_types(%x: tensor<2xf32>) {
  // expected-error @+1 {{'ober.and' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = ober.and %x, %x : tensor<2xf32>
  return
}
