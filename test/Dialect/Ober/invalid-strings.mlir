// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @strings_layout(%s: tensor<2x3x!ober.string>) {
  // expected-error @+1 {{'ober.string_normalize' op input must be [C] or [1, C], got 2x3}}
  %0 = ober.string_normalize %s {case_change = "NONE", case_sensitive = false, stopwords = []} : tensor<2x3x!ober.string> -> tensor<2x3x!ober.string>
  return
}

// -----

func.func @strings_result(%s: tensor<1x3x!ober.string>) {
  // expected-error @+1 {{'ober.string_normalize' op result must have the input's layout, got 3}}
  %0 = ober.string_normalize %s {case_change = "NONE", case_sensitive = false, stopwords = []} : tensor<1x3x!ober.string> -> tensor<3x!ober.string>
  return
}

// -----

func.func @strings_case(%s: tensor<3x!ober.string>) {
  // expected-error @+1 {{'ober.string_normalize' op 'case_change' must be LOWER, UPPER or NONE, got 'TITLE'}}
  %0 = ober.string_normalize %s {case_change = "TITLE", case_sensitive = false, stopwords = []} : tensor<3x!ober.string> -> tensor<3x!ober.string>
  return
}

// -----

func.func @strings_numeric(%s: tensor<3x!ober.string>) {
  // expected-error @+1 {{'ober.exp' op operand #0 must be ranked tensor of floating-point (f16, bf16, f32, f64) values, but got 'tensor<3x!ober.string>'}}
  %0 = ober.exp %s : tensor<3x!ober.string>
  return
}
