// RUN: ober-opt %s -split-input-file -verify-diagnostics

func.func @embedding_table(%t: tensor<100xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{'ober.embedding' op table must be 2-D [vocabulary, features], got 100}}
  // expected-error @+1 {{'ober.embedding' op failed to infer returned types}}
  %0 = ober.embedding %t, %i : (tensor<100xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @embedding_indices(%t: tensor<100x8xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'ober.embedding' op operand #1 must be ranked tensor of index integer (i32, i64) values, but got 'tensor<4xf32>'}}
  %0 = ober.embedding %t, %i : (tensor<100x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<5x6xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{'ober.gather' op 'axis' 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  // expected-error @+1 {{'ober.gather' op failed to infer returned types}}
  %0 = ober.gather %x, %i {axis = 2 : i64} : (tensor<5x6xf32>, tensor<3xi64>) -> tensor<5x6xf32>
  return
}

// -----

func.func @scatter_elements(%x: tensor<5x6xf32>, %i: tensor<3xi64>, %u: tensor<3x6xf16>) {
  // expected-error @+2 {{'ober.scatter_add' op input and updates element types differ: 'f32' vs 'f16'}}
  // expected-error @+1 {{'ober.scatter_add' op failed to infer returned types}}
  %0 = ober.scatter_add %x, %i, %u {axis = 0 : i64} : (tensor<5x6xf32>, tensor<3xi64>, tensor<3x6xf16>) -> tensor<5x6xf32>
  return
}

// -----

func.func @scatter_shape(%x: tensor<5x6xf32>, %i: tensor<3xi64>, %u: tensor<3x5xf32>) {
  // expected-error @+2 {{'ober.scatter_add' op updates must have shape 3x6 (what gather with these indices reads), got 3x5}}
  // expected-error @+1 {{'ober.scatter_add' op failed to infer returned types}}
  %0 = ober.scatter_add %x, %i, %u {axis = 0 : i64} : (tensor<5x6xf32>, tensor<3xi64>, tensor<3x5xf32>) -> tensor<5x6xf32>
  return
}

// -----

func.func @scatter_replace_shape(%x: tensor<4x2xi1>, %i: tensor<i64>, %u: tensor<4xi1>) {
  // expected-error @+2 {{'ober.scatter' op updates must have shape 2 (what gather with these indices reads), got 4}}
  // expected-error @+1 {{'ober.scatter' op failed to infer returned types}}
  %0 = ober.scatter %x, %i, %u {axis = 0 : i64} : (tensor<4x2xi1>, tensor<i64>, tensor<4xi1>) -> tensor<4x2xi1>
  return
}

// -----

func.func @scatter_axis(%x: tensor<5x6xf32>, %i: tensor<3xi64>, %u: tensor<3x6xf32>) {
  // expected-error @+2 {{'ober.scatter_add' op 'axis' -1 is out of range for rank 2 (expected 0 <= axis < 2)}}
  // expected-error @+1 {{'ober.scatter_add' op failed to infer returned types}}
  %0 = ober.scatter_add %x, %i, %u {axis = -1 : i64} : (tensor<5x6xf32>, tensor<3xi64>, tensor<3x6xf32>) -> tensor<5x6xf32>
  return
}

// -----

func.func @one_hot_depth(%i: tensor<4xi64>) {
  // expected-error @+1 {{'ober.one_hot' op 'depth' must be positive, got 0}}
  %0 = ober.one_hot %i {depth = 0 : i64, axis = 1 : i64} : (tensor<4xi64>) -> tensor<4x0xf32>
  return
}

// -----

func.func @one_hot_axis(%i: tensor<4xi64>) {
  // expected-error @+1 {{'ober.one_hot' op 'axis' 2 must be in [0, 1]}}
  %0 = ober.one_hot %i {depth = 3 : i64, axis = 2 : i64} : (tensor<4xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @one_hot_shape(%i: tensor<4xi64>) {
  // expected-error @+1 {{'ober.one_hot' op result must have shape 3x4, got 4x3}}
  %0 = ober.one_hot %i {depth = 3 : i64, axis = 0 : i64} : (tensor<4xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+2 {{'ober.dropout' op 'ratio' must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'ober.dropout' op failed to infer returned types}}
  %0:2 = ober.dropout %x, %s {ratio = 1.0 : f64} : (tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_seed(%x: tensor<4xf32>, %s: tensor<1xi64>) {
  // expected-error @+1 {{'ober.dropout' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<1xi64>'}}
  %0:2 = ober.dropout %x, %s {ratio = 0.5 : f64} : (tensor<4xf32>, tensor<1xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_offsets_alone(%x: tensor<4xf32>, %s: tensor<i64>, %o: tensor<1xi64>) {
  // expected-error @+1 {{'ober.dropout' op 'global_shape' and 'offsets' come together (a block of a larger tensor), got only 'offsets'}}
  %0:2 = ober.dropout %x, %s offsets %o {ratio = 0.5 : f64} : (tensor<4xf32>, tensor<i64>, tensor<1xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_global_shape_alone(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'ober.dropout' op 'global_shape' and 'offsets' come together (a block of a larger tensor), got only 'global_shape'}}
  %0:2 = ober.dropout %x, %s {ratio = 0.5 : f64, global_shape = array<i64: 8>} : (tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_major_dim(%x: tensor<4x2xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'ober.dropout' op 'major_dim' (2) must be a dimension of the input (rank 2)}}
  %0:2 = ober.dropout %x, %s {ratio = 0.5 : f64, major_dim = 2 : i64} : (tensor<4x2xf32>, tensor<i64>) -> (tensor<4x2xf32>, tensor<4x2xi1>)
  return
}

// -----

func.func @dropout_global_rank(%x: tensor<4xf32>, %s: tensor<i64>, %o: tensor<1xi64>) {
  // expected-error @+1 {{'ober.dropout' op 'global_shape' must have one size per input dimension (1), got 8x2}}
  %0:2 = ober.dropout %x, %s offsets %o {ratio = 0.5 : f64, global_shape = array<i64: 8, 2>} : (tensor<4xf32>, tensor<i64>, tensor<1xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_offsets_rank(%x: tensor<4xf32>, %s: tensor<i64>, %o: tensor<2xi64>) {
  // expected-error @+1 {{'ober.dropout' op 'offsets' must have one entry per input dimension (1), got 2}}
  %0:2 = ober.dropout %x, %s offsets %o {ratio = 0.5 : f64, global_shape = array<i64: 8>} : (tensor<4xf32>, tensor<i64>, tensor<2xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_block_too_large(%x: tensor<4xf32>, %s: tensor<i64>, %o: tensor<1xi64>) {
  // expected-error @+1 {{'ober.dropout' op the input (4) must be a block of 'global_shape' (2)}}
  %0:2 = ober.dropout %x, %s offsets %o {ratio = 0.5 : f64, global_shape = array<i64: 2>} : (tensor<4xf32>, tensor<i64>, tensor<1xi64>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @ce_rank(%l: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'ober.cross_entropy' op logits must have rank >= 1 ([..., classes]), got a scalar}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64} : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @ce_smoothing(%l: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{'ober.cross_entropy' op 'label_smoothing' must be in [0, 1], got 1.500000e+00}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 1.5 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @ce_targets_shape(%l: tensor<4x10xf32>, %t: tensor<5xi64>) {
  // expected-error @+2 {{'ober.cross_entropy' op class targets must have shape 4 (the logits without the class dimension), got 5}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @ce_targets_type(%l: tensor<4x10xf32>, %t: tensor<4xi8>) {
  // expected-error @+2 {{'ober.cross_entropy' op class targets must be i32 or i64, got 'i8'}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xi8>) -> tensor<f32>
  return
}

// -----

func.func @ce_probabilities(%l: tensor<4x10xf32>, %t: tensor<4x10xf16>) {
  // expected-error @+2 {{'ober.cross_entropy' op probability targets must have the type of the logits 'tensor<4x10xf32>', got 'tensor<4x10xf16>'}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4x10xf16>) -> tensor<f32>
  return
}

// -----

func.func @ce_ignore_probabilities(%l: tensor<4x10xf32>, %t: tensor<4x10xf32>) {
  // expected-error @+2 {{'ober.cross_entropy' op 'ignore_index' needs integer class targets}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64, ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
  return
}

// -----

func.func @ce_reduction_result(%l: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{'ober.cross_entropy' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'ober.cross_entropy' op failed to infer returned types}}
  %0 = ober.cross_entropy %l, %t {reduction = #ober.reduction<none>, label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @mse_types(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{'ober.mse_loss' op input and target types differ: 'tensor<4xf32>' vs 'tensor<5xf32>'}}
  // expected-error @+1 {{'ober.mse_loss' op failed to infer returned types}}
  %0 = ober.mse_loss %a, %b {reduction = #ober.reduction<mean>} : (tensor<4xf32>, tensor<5xf32>) -> tensor<f32>
  return
}
