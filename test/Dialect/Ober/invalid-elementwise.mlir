// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{'ober.add' op operands are not broadcast-compatible: lhs 4x3, rhs 5}}
  // expected-error @+1 {{'ober.add' op failed to infer returned types}}
  %0 = ober.add %a, %b : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @element_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{'ober.mul' op lhs and rhs element types differ: 'f32' vs 'f16'}}
  // expected-error @+1 {{'ober.mul' op failed to infer returned types}}
  %0 = ober.mul %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'ober.sub' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  // expected-error @+1 {{'ober.sub' op failed to infer returned types}}
  %0 = ober.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @float_only(%a: tensor<4xi32>) {
  // expected-error @+1 {{'ober.exp' op operand #0 must be ranked tensor of floating-point (f16, bf16, f32, f64) values, but got 'tensor<4xi32>'}}
  %0 = ober.exp %a : tensor<4xi32>
  return
}

// -----

func.func @pow_ints(%a: tensor<4xi32>) {
  // expected-error @+1 {{'ober.pow' op operand #0 must be ranked tensor of floating-point}}
  %0 = ober.pow %a, %a : tensor<4xi32>
  return
}

// -----

func.func @unsupported_element(%a: tensor<4xui8>) {
  // expected-error @+1 {{'ober.add' op operand #0 must be ranked tensor of numeric values, but got 'tensor<4xui8>'}}
  %0 = ober.add %a, %a : tensor<4xui8>
  return
}

// -----

func.func @bad_functional_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected a function type with two inputs and one result, got '(tensor<4xf32>) -> tensor<4xf32>'}}
  %0 = ober.add %a, %a : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unknown_compare(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown comparison 'less' (expected eq, ne, lt, le, gt or ge)}}
  %0 = ober.cmp less, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_mismatch(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'ober.cmp' op lhs and rhs element types differ: 'f32' vs 'i64'}}
  // expected-error @+1 {{'ober.cmp' op failed to infer returned types}}
  %0 = ober.cmp lt, %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @select_mismatch(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+2 {{'ober.select' op on_true and on_false element types differ: 'f32' vs 'bf16'}}
  // expected-error @+1 {{'ober.select' op failed to infer returned types}}
  %0 = ober.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @select_shapes(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'ober.select' op operands are not broadcast-compatible: condition 3, on_true 4, on_false 4}}
  // expected-error @+1 {{'ober.select' op failed to infer returned types}}
  %0 = ober.select %c, %a, %b : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ober.cast' op requires the same shape for all operands and results}}
  %0 = ober.cast %a : tensor<4xf32> to tensor<5xf16>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'ober.neg' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = ober.neg %a : tensor<*xf32>
  return
}
