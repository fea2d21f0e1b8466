// RUN: ober-run %s --grad-check --grad-tolerance=1e-6 | FileCheck %s
// Gradient rules of contractions, normalisation, indexing, losses and shape
// ops against central finite differences, in f64.
// CHECK: grad-check @matmul_batched: max error {{.*}} OK
// CHECK: grad-check @matmul_broadcast_batch: max error {{.*}} OK
// CHECK: grad-check @matmul_vectors: max error {{.*}} OK
// CHECK: grad-check @matmul_matrix_vector: max error {{.*}} OK
// CHECK: grad-check @conv2d_groups_stride_pad: max error {{.*}} OK
// CHECK: grad-check @conv1d: max error {{.*}} OK
// CHECK: grad-check @conv_transpose2d: max error {{.*}} OK
// CHECK: grad-check @max_pool: max error {{.*}} OK
// CHECK: grad-check @avg_pool_include_true: max error {{.*}} OK
// CHECK: grad-check @avg_pool_include_false: max error {{.*}} OK
// CHECK: grad-check @reduce_sum_: max error {{.*}} OK
// CHECK: grad-check @reduce_mean_: max error {{.*}} OK
// CHECK: grad-check @reduce_max_: max error {{.*}} OK
// CHECK: grad-check @reduce_min_: max error {{.*}} OK
// CHECK: grad-check @reduce_prod_: max error {{.*}} OK
// CHECK: grad-check @softmax_: max error {{.*}} OK
// CHECK: grad-check @log_softmax_: max error {{.*}} OK
// CHECK: grad-check @layer_norm_: max error {{.*}} OK
// CHECK: grad-check @rms_norm_: max error {{.*}} OK
// CHECK: grad-check @batch_norm_inference_: max error {{.*}} OK
// CHECK: grad-check @batch_norm_training_: max error {{.*}} OK
// CHECK: grad-check @embedding_: max error {{.*}} OK
// CHECK: grad-check @gather_: max error {{.*}} OK
// CHECK: grad-check @gather_elements_: max error {{.*}} OK
// CHECK: grad-check @scatter_add_: max error {{.*}} OK
// CHECK: grad-check @dropout_: max error {{.*}} OK
// CHECK: grad-check @cumsum_: max error {{.*}} OK
// CHECK: grad-check @cross_entropy_ignore: max error {{.*}} OK
// CHECK: grad-check @cross_entropy_soft: max error {{.*}} OK
// CHECK: grad-check @cross_entropy_none: max error {{.*}} OK
// CHECK: grad-check @mse_: max error {{.*}} OK
// CHECK: grad-check @attention_causal_masked: max error {{.*}} OK
// CHECK: grad-check @reshape_transpose_broadcast: max error {{.*}} OK
// CHECK: grad-check @concat_split: max error {{.*}} OK
// CHECK: grad-check @slice_strided: max error {{.*}} OK
// CHECK: grad-check @pad_constant: max error {{.*}} OK
// CHECK: grad-check @pad_reflect: max error {{.*}} OK
// CHECK: grad-check @pad_edge: max error {{.*}} OK

func.func @matmul_batched(%a: tensor<2x3x4xf64> {ober.param = "a"}, %b: tensor<4x5xf64> {ober.param = "b"}, %c: tensor<2x3x5xf64>) -> tensor<f64> {
  %y = ober.matmul %a, %b : (tensor<2x3x4xf64>, tensor<4x5xf64>) -> tensor<2x3x5xf64>
  %cw = ober.mul %y, %c : tensor<2x3x5xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @matmul_broadcast_batch(%a: tensor<2x1x3x4xf64> {ober.param = "a"}, %b: tensor<3x4x2xf64> {ober.param = "b"}, %c: tensor<2x3x3x2xf64>) -> tensor<f64> {
  %y = ober.matmul %a, %b : (tensor<2x1x3x4xf64>, tensor<3x4x2xf64>) -> tensor<2x3x3x2xf64>
  %cw = ober.mul %y, %c : tensor<2x3x3x2xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @matmul_vectors(%a: tensor<4xf64> {ober.param = "a"}, %b: tensor<4x3xf64> {ober.param = "b"}, %c: tensor<3xf64>) -> tensor<f64> {
  %y = ober.matmul %a, %b : (tensor<4xf64>, tensor<4x3xf64>) -> tensor<3xf64>
  %cw = ober.mul %y, %c : tensor<3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @matmul_matrix_vector(%a: tensor<2x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<2xf64>) -> tensor<f64> {
  %y = ober.matmul %a, %b : (tensor<2x4xf64>, tensor<4xf64>) -> tensor<2xf64>
  %cw = ober.mul %y, %c : tensor<2xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @conv2d_groups_stride_pad(%x: tensor<2x4x6x5xf64> {ober.param = "x"}, %w: tensor<6x2x3x2xf64> {ober.param = "w"}, %b: tensor<6xf64> {ober.param = "b"}, %c: tensor<2x6x3x4xf64>) -> tensor<f64> {
  %y = ober.conv %x, %w, %b {strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x6x5xf64>, tensor<6x2x3x2xf64>, tensor<6xf64>) -> tensor<2x6x3x4xf64>
  %cw = ober.mul %y, %c : tensor<2x6x3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x6x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @conv1d(%x: tensor<2x3x7xf64> {ober.param = "x"}, %w: tensor<4x3x3xf64> {ober.param = "w"}, %c: tensor<2x4x4xf64>) -> tensor<f64> {
  %y = ober.conv %x, %w {strides = array<i64: 2>, padding = array<i64: 1, 1>, dilations = array<i64: 1>, groups = 1 : i64} : (tensor<2x3x7xf64>, tensor<4x3x3xf64>) -> tensor<2x4x4xf64>
  %cw = ober.mul %y, %c : tensor<2x4x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x4x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @conv_transpose2d(%x: tensor<1x4x3x3xf64> {ober.param = "x"}, %w: tensor<4x3x3x2xf64> {ober.param = "w"}, %b: tensor<6xf64> {ober.param = "b"}, %c: tensor<1x6x7x6xf64>) -> tensor<f64> {
  %y = ober.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x3x3xf64>, tensor<4x3x3x2xf64>, tensor<6xf64>) -> tensor<1x6x7x6xf64>
  %cw = ober.mul %y, %c : tensor<1x6x7x6xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x6x7x6xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @max_pool(%x: tensor<2x2x5x5xf64> {ober.param = "x"}, %c: tensor<2x2x3x3xf64>) -> tensor<f64> {
  %y = ober.max_pool %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<2x2x5x5xf64>) -> tensor<2x2x3x3xf64>
  %cw = ober.mul %y, %c : tensor<2x2x3x3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x2x3x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @avg_pool_include_true(%x: tensor<1x2x5x4xf64> {ober.param = "x"}, %c: tensor<1x2x3x4xf64>) -> tensor<f64> {
  %y = ober.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = false, count_include_pad = true} : (tensor<1x2x5x4xf64>) -> tensor<1x2x3x4xf64>
  %cw = ober.mul %y, %c : tensor<1x2x3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @avg_pool_include_false(%x: tensor<1x2x5x4xf64> {ober.param = "x"}, %c: tensor<1x2x3x4xf64>) -> tensor<f64> {
  %y = ober.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<1x2x5x4xf64>) -> tensor<1x2x3x4xf64>
  %cw = ober.mul %y, %c : tensor<1x2x3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reduce_sum_(%x: tensor<3x4x2xf64> {ober.param = "x"}, %c: tensor<4xf64>) -> tensor<f64> {
  %y = ober.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<3x4x2xf64>) -> tensor<4xf64>
  %cw = ober.mul %y, %c : tensor<4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reduce_mean_(%x: tensor<3x4x2xf64> {ober.param = "x"}, %c: tensor<4xf64>) -> tensor<f64> {
  %y = ober.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<3x4x2xf64>) -> tensor<4xf64>
  %cw = ober.mul %y, %c : tensor<4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reduce_max_(%x: tensor<3x4x2xf64> {ober.param = "x"}, %c: tensor<4xf64>) -> tensor<f64> {
  %y = ober.reduce_max %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<3x4x2xf64>) -> tensor<4xf64>
  %cw = ober.mul %y, %c : tensor<4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reduce_min_(%x: tensor<3x4x2xf64> {ober.param = "x"}, %c: tensor<4xf64>) -> tensor<f64> {
  %y = ober.reduce_min %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<3x4x2xf64>) -> tensor<4xf64>
  %cw = ober.mul %y, %c : tensor<4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reduce_prod_(%x: tensor<3x4x2xf64> {ober.param = "x"}, %c: tensor<4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 1.5 : f64} {
  %y = ober.reduce_prod %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<3x4x2xf64>) -> tensor<4xf64>
  %cw = ober.mul %y, %c : tensor<4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @softmax_(%x: tensor<3x5xf64> {ober.param = "x"}, %c: tensor<3x5xf64>) -> tensor<f64> {
  %y = ober.softmax %x {axis = 1 : i64} : tensor<3x5xf64>
  %cw = ober.mul %y, %c : tensor<3x5xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @log_softmax_(%x: tensor<3x5xf64> {ober.param = "x"}, %c: tensor<3x5xf64>) -> tensor<f64> {
  %y = ober.log_softmax %x {axis = 1 : i64} : tensor<3x5xf64>
  %cw = ober.mul %y, %c : tensor<3x5xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @layer_norm_(%x: tensor<2x3x4xf64> {ober.param = "x"}, %g: tensor<3x4xf64> {ober.param = "g"}, %b: tensor<3x4xf64> {ober.param = "b"}, %c: tensor<2x3x4xf64>) -> tensor<f64> {
  %y = ober.layer_norm %x scale %g bias %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<2x3x4xf64>
  %cw = ober.mul %y, %c : tensor<2x3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @rms_norm_(%x: tensor<3x5xf64> {ober.param = "x"}, %g: tensor<5xf64> {ober.param = "g"}, %c: tensor<3x5xf64>) -> tensor<f64> {
  %y = ober.rms_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-6 : f64} : (tensor<3x5xf64>, tensor<5xf64>) -> tensor<3x5xf64>
  %cw = ober.mul %y, %c : tensor<3x5xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @batch_norm_inference_(%x: tensor<2x3x4xf64> {ober.param = "x"}, %s: tensor<3xf64> {ober.param = "s"}, %b: tensor<3xf64> {ober.param = "b"}, %m: tensor<3xf64>, %v: tensor<3xf64>, %c: tensor<2x3x4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 1.5 : f64} {
  %y = ober.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64} : (tensor<2x3x4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x4xf64>
  %cw = ober.mul %y, %c : tensor<2x3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @batch_norm_training_(%x: tensor<3x2x2x2xf64> {ober.param = "x"}, %s: tensor<2xf64> {ober.param = "s"}, %b: tensor<2xf64> {ober.param = "b"}, %m: tensor<2xf64>, %v: tensor<2xf64>, %c: tensor<3x2x2x2xf64>) -> tensor<f64> {
  %y, %rm, %rv = ober.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<3x2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<3x2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)
  %cw = ober.mul %y, %c : tensor<3x2x2x2xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<3x2x2x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @embedding_(%t: tensor<4x3xf64> {ober.param = "t"}, %i: tensor<2x5xi64>, %c: tensor<2x5x3xf64>) -> tensor<f64> {
  %y = ober.embedding %t, %i : (tensor<4x3xf64>, tensor<2x5xi64>) -> tensor<2x5x3xf64>
  %cw = ober.mul %y, %c : tensor<2x5x3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x5x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @gather_(%x: tensor<3x4xf64> {ober.param = "x"}, %i: tensor<5xi64>, %c: tensor<3x5xf64>) -> tensor<f64> {
  %y = ober.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf64>, tensor<5xi64>) -> tensor<3x5xf64>
  %cw = ober.mul %y, %c : tensor<3x5xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @gather_elements_(%x: tensor<3x4xf64> {ober.param = "x"}, %i: tensor<2x4xi64>, %c: tensor<2x4xf64>) -> tensor<f64> {
  %y = ober.gather_elements %x, %i {axis = 0 : i64} : (tensor<3x4xf64>, tensor<2x4xi64>) -> tensor<2x4xf64>
  %cw = ober.mul %y, %c : tensor<2x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @scatter_add_(%x: tensor<3x4xf64> {ober.param = "x"}, %u: tensor<3x5xf64> {ober.param = "u"}, %i: tensor<5xi64>, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.scatter_add %x, %i, %u {axis = 1 : i64} : (tensor<3x4xf64>, tensor<5xi64>, tensor<3x5xf64>) -> tensor<3x4xf64>
  %cw = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @dropout_(%x: tensor<4x6xf64> {ober.param = "x"}, %s: tensor<i64>, %c: tensor<4x6xf64>) -> tensor<f64> {
  %y, %mask = ober.dropout %x, %s {ratio = 0.3 : f64} : (tensor<4x6xf64>, tensor<i64>) -> (tensor<4x6xf64>, tensor<4x6xi1>)
  %cw = ober.mul %y, %c : tensor<4x6xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x6xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cumsum_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x4xf64>
  %cw = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cross_entropy_ignore(%z: tensor<2x3x4xf64> {ober.param = "z"}, %t: tensor<2x3xi64>) -> tensor<f64> {
  %l = ober.cross_entropy %z, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.2 : f64, ignore_index = 1 : i64} : (tensor<2x3x4xf64>, tensor<2x3xi64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cross_entropy_soft(%z: tensor<3x4xf64> {ober.param = "z"}, %q: tensor<3x4xf64> {ober.param = "q"}) -> tensor<f64> {
  %l = ober.cross_entropy %z, %q {reduction = #ober.reduction<sum>, label_smoothing = 0.1 : f64} : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cross_entropy_none(%z: tensor<3x4xf64> {ober.param = "z"}, %t: tensor<3xi64>, %c: tensor<3xf64>) -> tensor<f64> {
  %y = ober.cross_entropy %z, %t {reduction = #ober.reduction<none>, label_smoothing = 0.0 : f64} : (tensor<3x4xf64>, tensor<3xi64>) -> tensor<3xf64>
  %cw = ober.mul %y, %c : tensor<3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0>, keepdims = false} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @mse_(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<3x4xf64> {ober.param = "b"}) -> tensor<f64> {
  %l = ober.mse_loss %a, %b {reduction = #ober.reduction<mean>} : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @attention_causal_masked(%q: tensor<2x3x4xf64> {ober.param = "q"}, %k: tensor<2x3x4xf64> {ober.param = "k"}, %v: tensor<2x3x2xf64> {ober.param = "v"}, %m: tensor<3x3xf64> {ober.param = "m"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.attention %q, %k, %v, %m {is_causal} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x2xf64>, tensor<3x3xf64>) -> tensor<2x3x2xf64>
  %cw = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reshape_transpose_broadcast(%x: tensor<2x3xf64> {ober.param = "x"}, %c: tensor<4x2x3xf64>) -> tensor<f64> {
  %r = ober.reshape %x : tensor<2x3xf64> to tensor<3x2xf64>
  %t = ober.transpose %r {permutation = array<i64: 1, 0>} : tensor<3x2xf64> -> tensor<2x3xf64>
  %y = ober.broadcast_to %t : tensor<2x3xf64> to tensor<4x2x3xf64>
  %cw = ober.mul %y, %c : tensor<4x2x3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<4x2x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @concat_split(%a: tensor<2x3xf64> {ober.param = "a"}, %b: tensor<2x2xf64> {ober.param = "b"}, %c: tensor<2x4xf64>) -> tensor<f64> {
  %cat = ober.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x5xf64>
  %s:2 = ober.split %cat {axis = 1 : i64, sizes = array<i64: 1, 4>} : (tensor<2x5xf64>) -> (tensor<2x1xf64>, tensor<2x4xf64>)
  %y = ober.mul %s#1, %s#1 : tensor<2x4xf64>
  %cw = ober.mul %y, %c : tensor<2x4xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @slice_strided(%x: tensor<5x6xf64> {ober.param = "x"}, %c: tensor<3x3xf64>) -> tensor<f64> {
  %y = ober.slice %x {starts = array<i64: 4, 1>, limits = array<i64: -1, 6>, strides = array<i64: -2, 2>} : tensor<5x6xf64> -> tensor<3x3xf64>
  %cw = ober.mul %y, %c : tensor<3x3xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @pad_constant(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<4x7xf64>) -> tensor<f64> {
  %y = ober.pad %x {low = array<i64: 1, 2>, high = array<i64: 0, 1>, mode = #ober.pad_mode<constant>, value = 0.5 : f64} : tensor<3x4xf64> -> tensor<4x7xf64>
  %cw = ober.mul %y, %c : tensor<4x7xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x7xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @pad_reflect(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<4x7xf64>) -> tensor<f64> {
  %y = ober.pad %x {low = array<i64: 1, 2>, high = array<i64: 0, 1>, mode = #ober.pad_mode<reflect>, value = 0.5 : f64} : tensor<3x4xf64> -> tensor<4x7xf64>
  %cw = ober.mul %y, %c : tensor<4x7xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x7xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @pad_edge(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<4x7xf64>) -> tensor<f64> {
  %y = ober.pad %x {low = array<i64: 1, 2>, high = array<i64: 0, 1>, mode = #ober.pad_mode<edge>, value = 0.5 : f64} : tensor<3x4xf64> -> tensor<4x7xf64>
  %cw = ober.mul %y, %c : tensor<4x7xf64>
  %l = ober.reduce_sum %cw {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x7xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
