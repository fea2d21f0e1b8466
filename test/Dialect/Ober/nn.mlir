// RUN: ober-opt %s | ober-opt | FileCheck %s
// RUN: ober-opt %s -mlir-print-op-generic | ober-opt | FileCheck %s

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<2x5x3x4xf32>, %b: tensor<5x4x6xf32>, %v: tensor<4xf32>, %m: tensor<4x7xf32>) -> tensor<2x5x3x6xf32> {
  // CHECK: ober.matmul %{{.*}}, %{{.*}} : (tensor<2x5x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  %0 = ober.matmul %a, %b : (tensor<2x5x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  // CHECK: (tensor<2x5x3x4xf32>, tensor<4xf32>) -> tensor<2x5x3xf32>
  %1 = ober.matmul %a, %v : (tensor<2x5x3x4xf32>, tensor<4xf32>) -> tensor<2x5x3xf32>
  // CHECK: (tensor<4xf32>, tensor<4x7xf32>) -> tensor<7xf32>
  %2 = ober.matmul %v, %m : (tensor<4xf32>, tensor<4x7xf32>) -> tensor<7xf32>
  // CHECK: (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %3 = ober.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<2x5x3x6xf32>
}

// CHECK-LABEL: func @conv_pool
func.func @conv_pool(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x5x5xf32> {
  // CHECK: ober.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  %0 = ober.conv %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: ober.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>
  %1 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: ober.max_pool %{{.*}} {ceil_mode = true
  %2 = ober.max_pool %0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32>
  // CHECK: ober.max_pool %{{.*}} {ceil_mode = false
  %3 = ober.max_pool %0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<2x8x5x5xf32>) -> tensor<2x8x2x2xf32>
  // CHECK: ober.avg_pool %{{.*}} {ceil_mode = false, count_include_pad = true
  %4 = ober.avg_pool %0 {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = false, count_include_pad = true} : (tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  return %4 : tensor<2x8x5x5xf32>
}

// CHECK-LABEL: func @conv_1d_3d_transpose
func.func @conv_1d_3d_transpose(%x1: tensor<2x4x9xf32>, %w1: tensor<6x4x3xf32>, %x3: tensor<1x2x4x5x6xf32>, %w3: tensor<4x2x2x2x2xf32>, %xt: tensor<1x4x5x5xf32>, %wt: tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32> {
  // CHECK: ober.conv %{{.*}}, %{{.*}} {{.*}} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x4xf32>
  %0 = ober.conv %x1, %w1 {strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x4xf32>
  // CHECK: (tensor<1x2x4x5x6xf32>, tensor<4x2x2x2x2xf32>) -> tensor<1x4x3x4x5xf32>
  %1 = ober.conv %x3, %w3 {strides = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>, groups = 1 : i64} : (tensor<1x2x4x5x6xf32>, tensor<4x2x2x2x2xf32>) -> tensor<1x4x3x4x5xf32>
  // CHECK: ober.max_pool %{{.*}} {{.*}} : (tensor<1x2x4x5x6xf32>) -> tensor<1x2x2x2x3xf32>
  %2 = ober.max_pool %x3 {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>, ceil_mode = false} : (tensor<1x2x4x5x6xf32>) -> tensor<1x2x2x2x3xf32>
  // CHECK: ober.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 2 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32>
  %3 = ober.conv_transpose %xt, %wt {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32>
  // CHECK: (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32>
  %4 = ober.conv_transpose %xt, %wt {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32>
  return %4 : tensor<1x6x11x11xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x32xf32>, %m: tensor<8x10xi1>, %am: tensor<2x1x8x10xf32>) -> tensor<2x4x8x32xf32> {
  // CHECK: ober.attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>) -> tensor<2x4x8x32xf32>
  %0 = ober.attention %q, %k, %v {is_causal} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>) -> tensor<2x4x8x32xf32>
  // CHECK: ober.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64}
  %1 = ober.attention %q, %k, %v, %m {scale = 0.125 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<8x10xi1>) -> tensor<2x4x8x32xf32>
  // CHECK: ober.attention
  %2 = ober.attention %q, %k, %v, %am : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<2x1x8x10xf32>) -> tensor<2x4x8x32xf32>
  return %2 : tensor<2x4x8x32xf32>
}

// CHECK-LABEL: func @attention_grad
func.func @attention_grad(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x32xf32>, %o: tensor<2x4x8x32xf32>, %m: tensor<8x10xi1>) -> tensor<2x4x10x32xf32> {
  // CHECK: ober.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<8x10xi1>) -> (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>)
  %dq, %dk, %dv = ober.attention_grad %q, %k, %v, %o, %o, %m {scale = 0.125 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<8x10xi1>) -> (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>)
  return %dv : tensor<2x4x10x32xf32>
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi64>) -> tensor<2x1x4xf32> {
  // CHECK: ober.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %0 = ober.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: ober.reduce_mean %{{.*}} {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %1 = ober.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK: ober.reduce_max %{{.*}} : (tensor<5x6xi64>) -> tensor<6xi64>
  %2 = ober.reduce_max %i {axes = array<i64: 0>, keepdims = false} : (tensor<5x6xi64>) -> tensor<6xi64>
  // CHECK: ober.reduce_min %{{.*}} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = ober.reduce_min %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: ober.softmax %{{.*}} {axis = 2 : i64} : tensor<2x3x4xf32>
  %4 = ober.softmax %x {axis = 2 : i64} : tensor<2x3x4xf32>
  // CHECK: ober.log_softmax %{{.*}} {axis = 0 : i64} : tensor<2x3x4xf32>
  %5 = ober.log_softmax %4 {axis = 0 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// CHECK-LABEL: func @arg_reduce_cumsum_gather_elements
func.func @arg_reduce_cumsum_gather_elements(%x: tensor<2x3x4xf32>, %i: tensor<2x5x4xi64>) -> tensor<2x4xi64> {
  // CHECK: ober.argmax %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  %0 = ober.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  // CHECK: ober.argmin %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %1 = ober.argmin %x {axis = 2 : i64, keepdims = true, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  // CHECK: ober.cumsum %{{.*}} {axis = 2 : i64, exclusive = true, reverse = false} : tensor<2x3x4xf32>
  %2 = ober.cumsum %x {axis = 2 : i64, exclusive = true, reverse = false} : tensor<2x3x4xf32>
  // CHECK: ober.reduce_prod %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %3 = ober.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: ober.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xi64>) -> tensor<2x5x4xf32>
  %4 = ober.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x4xi64>
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %g2: tensor<16x64xf32>, %img: tensor<4x3x5x5xf32>, %c: tensor<3xf32>) -> tensor<2x16x64xf32> {
  // CHECK: ober.layer_norm %{{.*}} scale %{{.*}} bias %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %0 = ober.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: ober.layer_norm %{{.*}} scale %{{.*}} {axis = 1 : i64
  %1 = ober.layer_norm %0 scale %g2 {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  // CHECK: ober.layer_norm %{{.*}} {axis = 2 : i64
  %2 = ober.layer_norm %1 {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // CHECK: ober.rms_norm %{{.*}} scale %{{.*}} {axis = 2 : i64, epsilon = 9.9999999999999995E-7 : f64}
  %3 = ober.rms_norm %2 scale %g {axis = 2 : i64, epsilon = 1.0e-6 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: ober.rms_norm %{{.*}} {axis = 2 : i64
  %4 = ober.rms_norm %3 {axis = 2 : i64, epsilon = 1.0e-6 : f64} : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // CHECK: ober.batch_norm_inference
  %5 = ober.batch_norm_inference %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f64} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x5x5xf32>
  // CHECK: ober.batch_norm_training {{.*}} {epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %6:3 = ober.batch_norm_training %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %4 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func @indexing
func.func @indexing(%table: tensor<100x32xf32>, %ids: tensor<4x7xi64>, %x: tensor<5x6x7xf32>, %idx: tensor<3xi32>, %seed: tensor<i64>) -> tensor<4x7x32xf32> {
  // CHECK: ober.embedding %{{.*}}, %{{.*}} : (tensor<100x32xf32>, tensor<4x7xi64>) -> tensor<4x7x32xf32>
  %0 = ober.embedding %table, %ids : (tensor<100x32xf32>, tensor<4x7xi64>) -> tensor<4x7x32xf32>
  // CHECK: ober.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<5x6x7xf32>, tensor<3xi32>) -> tensor<5x3x7xf32>
  %1 = ober.gather %x, %idx {axis = 1 : i64} : (tensor<5x6x7xf32>, tensor<3xi32>) -> tensor<5x3x7xf32>
  // CHECK: ober.scatter_add %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<5x6x7xf32>, tensor<3xi32>, tensor<5x3x7xf32>) -> tensor<5x6x7xf32>
  %2 = ober.scatter_add %x, %idx, %1 {axis = 1 : i64} : (tensor<5x6x7xf32>, tensor<3xi32>, tensor<5x3x7xf32>) -> tensor<5x6x7xf32>
  // CHECK: ober.one_hot %{{.*}} {axis = 2 : i64, depth = 10 : i64} : (tensor<4x7xi64>) -> tensor<4x7x10xf32>
  %3 = ober.one_hot %ids {depth = 10 : i64, axis = 2 : i64} : (tensor<4x7xi64>) -> tensor<4x7x10xf32>
  // CHECK: ober.one_hot %{{.*}} {axis = 0 : i64, depth = 3 : i64} : (tensor<4x7xi64>) -> tensor<3x4x7xi1>
  %4 = ober.one_hot %ids {depth = 3 : i64, axis = 0 : i64} : (tensor<4x7xi64>) -> tensor<3x4x7xi1>
  // CHECK: ober.dropout %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f64} : (tensor<4x7x32xf32>, tensor<i64>) -> (tensor<4x7x32xf32>, tensor<4x7x32xi1>)
  %5:2 = ober.dropout %0, %seed {ratio = 0.1 : f64} : (tensor<4x7x32xf32>, tensor<i64>) -> (tensor<4x7x32xf32>, tensor<4x7x32xi1>)
  // A block of an [8, 7, 32] tensor.
  // CHECK: ober.dropout %{{.*}}, %{{.*}} offsets %[[OFF:.*]] {global_shape = array<i64: 8, 7, 32>, ratio = 1.000000e-01 : f64} : (tensor<4x7x32xf32>, tensor<i64>, tensor<3xi64>) -> (tensor<4x7x32xf32>, tensor<4x7x32xi1>)
  %off = ober.constant dense<[4, 0, 0]> : tensor<3xi64>
  %6:2 = ober.dropout %0, %seed offsets %off {ratio = 0.1 : f64, global_shape = array<i64: 8, 7, 32>} : (tensor<4x7x32xf32>, tensor<i64>, tensor<3xi64>) -> (tensor<4x7x32xf32>, tensor<4x7x32xi1>)
  return %5#0 : tensor<4x7x32xf32>
}

// CHECK-LABEL: func @losses
func.func @losses(%logits: tensor<4x7x10xf32>, %t: tensor<4x7xi64>, %p: tensor<4x7x10xf32>) -> tensor<f32> {
  // CHECK: ober.cross_entropy %{{.*}}, %{{.*}} {ignore_index = -100 : i64, label_smoothing = 1.000000e-01 : f64, reduction = #ober.reduction<mean>} : (tensor<4x7x10xf32>, tensor<4x7xi64>) -> tensor<f32>
  %0 = ober.cross_entropy %logits, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.1 : f64, ignore_index = -100 : i64} : (tensor<4x7x10xf32>, tensor<4x7xi64>) -> tensor<f32>
  // CHECK: (tensor<4x7x10xf32>, tensor<4x7xi64>) -> tensor<4x7xf32>
  %1 = ober.cross_entropy %logits, %t {reduction = #ober.reduction<none>, label_smoothing = 0.0 : f64} : (tensor<4x7x10xf32>, tensor<4x7xi64>) -> tensor<4x7xf32>
  // CHECK: (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<f32>
  %2 = ober.cross_entropy %logits, %p {reduction = #ober.reduction<sum>, label_smoothing = 0.0 : f64} : (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<f32>
  // CHECK: ober.mse_loss %{{.*}}, %{{.*}} {reduction = #ober.reduction<mean>} : (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<f32>
  %3 = ober.mse_loss %logits, %p {reduction = #ober.reduction<mean>} : (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<f32>
  // CHECK: (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<4x7x10xf32>
  %4 = ober.mse_loss %logits, %p {reduction = #ober.reduction<none>} : (tensor<4x7x10xf32>, tensor<4x7x10xf32>) -> tensor<4x7x10xf32>
  return %0 : tensor<f32>
}
