// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @matmul_elements(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) {
  // expected-error @+2 {{'ober.matmul' op lhs and rhs element types differ: 'f32' vs 'f16'}}
  // expected-error @+1 {{'ober.matmul' op failed to infer returned types}}
  %0 = ober.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{'ober.matmul' op operands must have rank >= 1, got lhs scalar and rhs 3x4}}
  // expected-error @+1 {{'ober.matmul' op failed to infer returned types}}
  %0 = ober.matmul %a, %b : (tensor<f32>, tensor<3x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{'ober.matmul' op contracting dimensions differ: lhs 2x3 has 3, rhs 4x5 has 4}}
  // expected-error @+1 {{'ober.matmul' op failed to infer returned types}}
  %0 = ober.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<5x3x5xf32>) {
  // expected-error @+2 {{'ober.matmul' op batch dimensions are not broadcast-compatible: lhs 2x2x3, rhs 5x3x5}}
  // expected-error @+1 {{'ober.matmul' op failed to infer returned types}}
  %0 = ober.matmul %a, %b : (tensor<2x2x3xf32>, tensor<5x3x5xf32>) -> tensor<2x2x5xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op input must be [N, C, D1, ..., Dk] with 1 to 3 spatial dimensions, got 9x9}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<2x4x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op weight must be [O, C/groups, K...] with the input's rank 3, got 8x2x3x3}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 2 : i64} : (tensor<2x4x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op 'strides' must be positive, got 0}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 0, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_strides_size(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op 'strides' has 1 entries, expected 2}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_padding(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op 'padding' must be non-negative, got -1}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, -1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_dilations(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op 'dilations' must be positive, got 0}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 0>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_elements(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xbf16>) {
  // expected-error @+2 {{'ober.conv' op input and weight element types differ: 'f32' vs 'bf16'}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xbf16>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op 'groups' must be positive, got 0}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 0 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op input has 4 channels but weight 8x2x3x3 with 1 group(s) expects 2}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_out_channels(%x: tensor<2x4x9x9xf32>, %w: tensor<7x1x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op output channels 7 are not divisible by 'groups' 4}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<7x1x3x3xf32>) -> tensor<2x7x7x7xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'ober.conv' op bias must be 8x'f32' (one per output channel), got 'tensor<4xf32>'}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<4xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<2x4x2x9xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv' op window of 3 along spatial dimension 0 does not fit the padded input of 2}}
  // expected-error @+1 {{'ober.conv' op failed to infer returned types}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x2x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x0x7xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'ober.max_pool' op 'kernel' must be positive, got 0}}
  // expected-error @+1 {{'ober.max_pool' op failed to infer returned types}}
  %0 = ober.max_pool %x {kernel = array<i64: 0, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_kernel_size(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'ober.max_pool' op 'kernel' has 3 entries, expected 2}}
  // expected-error @+1 {{'ober.max_pool' op failed to infer returned types}}
  %0 = ober.max_pool %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_shape(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'ober.max_pool' op inferred type(s) 'tensor<1x3x4x4xf32>' are incompatible with return type(s) of operation 'tensor<1x3x3x3xf32>'}}
  // expected-error @+1 {{'ober.max_pool' op failed to infer returned types}}
  %0 = ober.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @avg_pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+2 {{'ober.avg_pool' op 'kernel' has 2 entries, expected 1}}
  // expected-error @+1 {{'ober.avg_pool' op failed to infer returned types}}
  %0 = ober.avg_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = false} : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return
}

// -----

func.func @conv_transpose_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv_transpose' op weight input channels 6 are not divisible by 'groups' 4}}
  // expected-error @+1 {{'ober.conv_transpose' op failed to infer returned types}}
  %0 = ober.conv_transpose %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x8x7x7xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv_transpose' op input has 4 channels but weight 6x2x3x3 with 1 group(s) expects 6}}
  // expected-error @+1 {{'ober.conv_transpose' op failed to infer returned types}}
  %0 = ober.conv_transpose %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'ober.conv_transpose' op 'output_padding' 2 must be non-negative and smaller than the stride or the dilation}}
  // expected-error @+1 {{'ober.conv_transpose' op failed to infer returned types}}
  %0 = ober.conv_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 2, 0>, groups = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x13x11xf32>
  return
}

// -----

func.func @conv_transpose_padding(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+2 {{'ober.conv_transpose' op padding leaves no output along spatial dimension 0}}
  // expected-error @+1 {{'ober.conv_transpose' op failed to infer returned types}}
  %0 = ober.conv_transpose %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<8xf32>, %k: tensor<8xf32>, %v: tensor<8xf32>) {
  // expected-error @+2 {{'ober.attention' op query, key and value must have one rank >= 2, got 8, 8 and 8}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @attention_elements(%q: tensor<8x16xf32>, %k: tensor<8x16xf16>, %v: tensor<8x16xf32>) {
  // expected-error @+2 {{'ober.attention' op query, key and value element types differ: 'f32', 'f16', 'f32'}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<8x16xf32>, tensor<8x16xf16>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x8x16xf32>, %k: tensor<3x10x16xf32>, %v: tensor<2x10x32xf32>) {
  // expected-error @+2 {{'ober.attention' op leading dimensions differ: query 2x8x16, key 3x10x16, value 2x10x32}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<3x10x16xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_head(%q: tensor<2x8x16xf32>, %k: tensor<2x10x8xf32>, %v: tensor<2x10x32xf32>) {
  // expected-error @+2 {{'ober.attention' op query and key head sizes differ: 2x8x16 vs 2x10x8}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x8xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_length(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x9x32xf32>) {
  // expected-error @+2 {{'ober.attention' op key and value sequence lengths differ: 2x10x16 vs 2x9x32}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x9x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>) {
  // expected-error @+2 {{'ober.attention' op 'scale' must be finite and non-zero, got 0.000000e+00}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v {scale = 0.0 : f64} : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_dynamic_head(%q: tensor<2x8x?xf32>, %k: tensor<2x10x?xf32>, %v: tensor<2x10x32xf32>) {
  // expected-error @+2 {{'ober.attention' op needs a static head size or an explicit 'scale'}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v : (tensor<2x8x?xf32>, tensor<2x10x?xf32>, tensor<2x10x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>, %m: tensor<8x10xi64>) {
  // expected-error @+2 {{'ober.attention' op mask must be i1 or 'f32', got 'i64'}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v, %m : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>, tensor<8x10xi64>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>, %m: tensor<8x9xi1>) {
  // expected-error @+2 {{'ober.attention' op mask 8x9 does not broadcast to the scores 2x8x10}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v, %m : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>, tensor<8x9xi1>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x32xf32>, %m: tensor<3x2x8x10xi1>) {
  // expected-error @+2 {{'ober.attention' op mask 3x2x8x10 does not broadcast to the scores 2x8x10}}
  // expected-error @+1 {{'ober.attention' op failed to infer returned types}}
  %0 = ober.attention %q, %k, %v, %m : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x32xf32>, tensor<3x2x8x10xi1>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_grad_float_mask(%q: tensor<2x8x16xf32>, %o: tensor<2x8x16xf32>, %m: tensor<8x8xf32>) {
  // expected-error @+2 {{'ober.attention_grad' op mask must be i1 (a float mask's gradient is the decomposition's), got 'f32'}}
  // expected-error @+1 {{'ober.attention_grad' op failed to infer returned types}}
  %0:3 = ober.attention_grad %q, %q, %q, %o, %o, %m : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @attention_grad_output(%q: tensor<2x8x16xf32>, %v: tensor<2x8x32xf32>, %o: tensor<2x8x16xf32>) {
  // expected-error @+2 {{'ober.attention_grad' op output must be the attention's result 2x8x32 of 'f32', got 2x8x16 of 'f32'}}
  // expected-error @+1 {{'ober.attention_grad' op failed to infer returned types}}
  %0:3 = ober.attention_grad %q, %q, %v, %o, %o : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x32xf32>)
  return
}
