// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @iota_rank() {
  // expected-error @+1 {{'ober.iota' op result must have rank >= 1}}
  %0 = ober.iota {dimension = 0 : i64} : tensor<i64>
  return
}

// -----

func.func @iota_dimension() {
  // expected-error @+1 {{'ober.iota' op 'dimension' 2 is out of range for rank 2 (expected 0 <= dimension < 2)}}
  %0 = ober.iota {dimension = 2 : i64} : tensor<3x4xi64>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'ober.reshape' op cannot reshape 2x3 (6 elements) to 7 (7 elements)}}
  %0 = ober.reshape %x : tensor<2x3xf32> to tensor<7xf32>
  return
}

// -----

func.func @reshape_element(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'ober.reshape' op element types differ: 'f32' vs 'f16'}}
  %0 = ober.reshape %x : tensor<2x3xf32> to tensor<6xf16>
  return
}

// -----

func.func @broadcast_shape(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'ober.broadcast_to' op cannot broadcast 3x2 to 4x3 (NumPy rules: align trailing dimensions; each input size is 1 or equal)}}
  %0 = ober.broadcast_to %x : tensor<3x2xf32> to tensor<4x3xf32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<2x3x2xf32>) {
  // expected-error @+1 {{'ober.broadcast_to' op cannot broadcast 2x3x2 to 3x2}}
  %0 = ober.broadcast_to %x : tensor<2x3x2xf32> to tensor<3x2xf32>
  return
}

// -----

func.func @broadcast_element(%x: tensor<2xf32>) {
  // expected-error @+1 {{'ober.broadcast_to' op element types differ: 'f32' vs 'i32'}}
  %0 = ober.broadcast_to %x : tensor<2xf32> to tensor<3x2xi32>
  return
}

// -----

func.func @transpose_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'ober.transpose' op 'permutation' has 1 entries, expected 2}}
  // expected-error @+1 {{'ober.transpose' op failed to infer returned types}}
  %0 = ober.transpose %x {permutation = array<i64: 0>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'ober.transpose' op 'permutation' [1, 1] is not a permutation of [0, 2)}}
  // expected-error @+1 {{'ober.transpose' op failed to infer returned types}}
  %0 = ober.transpose %x {permutation = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{'ober.concat' op needs at least one input}}
  // expected-error @+1 {{'ober.concat' op failed to infer returned types}}
  %0 = ober.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'ober.concat' op input #1 'tensor<3xf32>' does not match input #0 'tensor<2x3xf32>' in rank and element type}}
  // expected-error @+1 {{'ober.concat' op failed to infer returned types}}
  %0 = ober.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{'ober.concat' op input #1 2x4 differs from input #0 2x3 in dimension 1 (only 'axis' 0 may differ)}}
  // expected-error @+1 {{'ober.concat' op failed to infer returned types}}
  %0 = ober.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'ober.concat' op 'axis' 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  // expected-error @+1 {{'ober.concat' op failed to infer returned types}}
  %0 = ober.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @split_sum(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'ober.split' op 'sizes' [3, 4] add up to 7 but dimension 1 of 2x8 has 8}}
  // expected-error @+1 {{'ober.split' op failed to infer returned types}}
  %0:2 = ober.split %x {axis = 1 : i64, sizes = array<i64: 3, 4>} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @split_negative(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'ober.split' op 'sizes' must be non-negative, got [9, -1]}}
  // expected-error @+1 {{'ober.split' op failed to infer returned types}}
  %0:2 = ober.split %x {axis = 1 : i64, sizes = array<i64: 9, -1>} : (tensor<2x8xf32>) -> (tensor<2x9xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @split_empty(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'ober.split' op 'sizes' must not be empty}}
  // expected-error @+1 {{'ober.split' op failed to infer returned types}}
  ober.split %x {axis = 1 : i64, sizes = array<i64>} : (tensor<2x8xf32>) -> ()
  return
}

// -----

func.func @slice_stride(%x: tensor<8xf32>) {
  // expected-error @+2 {{'ober.slice' op 'strides' must be non-zero, got [0]}}
  // expected-error @+1 {{'ober.slice' op failed to infer returned types}}
  %0 = ober.slice %x {starts = array<i64: 0>, limits = array<i64: 8>, strides = array<i64: 0>} : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<8xf32>) {
  // expected-error @+2 {{'ober.slice' op dimension 0 of size 8: start 2, limit 9, stride 1 need 0 <= start <= limit <= size}}
  // expected-error @+1 {{'ober.slice' op failed to infer returned types}}
  %0 = ober.slice %x {starts = array<i64: 2>, limits = array<i64: 9>, strides = array<i64: 1>} : tensor<8xf32> -> tensor<7xf32>
  return
}

// -----

func.func @slice_backwards(%x: tensor<8xf32>) {
  // expected-error @+2 {{'ober.slice' op dimension 0 of size 8: start 8, limit 0, stride -1 need -1 <= limit <= start < size}}
  // expected-error @+1 {{'ober.slice' op failed to infer returned types}}
  %0 = ober.slice %x {starts = array<i64: 8>, limits = array<i64: 0>, strides = array<i64: -1>} : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @slice_rank(%x: tensor<8xf32>) {
  // expected-error @+2 {{'ober.slice' op 'starts' has 2 entries, expected 1}}
  // expected-error @+1 {{'ober.slice' op failed to infer returned types}}
  %0 = ober.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 8>, strides = array<i64: 1>} : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<8xf32>) {
  // expected-error @+2 {{'ober.pad' op pads must be non-negative, got low [-1] and high [0]}}
  // expected-error @+1 {{'ober.pad' op failed to infer returned types}}
  %0 = ober.pad %x {low = array<i64: -1>, high = array<i64: 0>, mode = #ober.pad_mode<constant>, value = 0.0 : f64} : tensor<8xf32> -> tensor<7xf32>
  return
}

// -----

func.func @pad_reflect(%x: tensor<3xf32>) {
  // expected-error @+2 {{'ober.pad' op reflect padding of dimension 0 by 3/0 needs pads smaller than its size 3}}
  // expected-error @+1 {{'ober.pad' op failed to infer returned types}}
  %0 = ober.pad %x {low = array<i64: 3>, high = array<i64: 0>, mode = #ober.pad_mode<reflect>, value = 0.0 : f64} : tensor<3xf32> -> tensor<6xf32>
  return
}

// -----

func.func @pad_edge(%x: tensor<0xf32>) {
  // expected-error @+2 {{'ober.pad' op edge padding of empty dimension 0}}
  // expected-error @+1 {{'ober.pad' op failed to infer returned types}}
  %0 = ober.pad %x {low = array<i64: 1>, high = array<i64: 0>, mode = #ober.pad_mode<edge>, value = 0.0 : f64} : tensor<0xf32> -> tensor<1xf32>
  return
}

// -----

func.func @pad_size(%x: tensor<3xf32>) {
  // expected-error @+2 {{'ober.pad' op 'high' has 0 entries, expected 1}}
  // expected-error @+1 {{'ober.pad' op failed to infer returned types}}
  %0 = ober.pad %x {low = array<i64: 1>, high = array<i64>, mode = #ober.pad_mode<constant>, value = 0.0 : f64} : tensor<3xf32> -> tensor<4xf32>
  return
}
