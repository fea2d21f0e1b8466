// RUN: ober-run %s --grad-check --grad-tolerance=1e-6 | FileCheck %s
// Every gradient rule against central finite differences, in f64.
// CHECK: grad-check @neg_: max error {{.*}} OK

// CHECK: grad-check @abs_: max error {{.*}} OK

// CHECK: grad-check @exp_: max error {{.*}} OK

// CHECK: grad-check @log_: max error {{.*}} OK

// CHECK: grad-check @sqrt_: max error {{.*}} OK

// CHECK: grad-check @rsqrt_: max error {{.*}} OK

// CHECK: grad-check @tanh_: max error {{.*}} OK

// CHECK: grad-check @sigmoid_: max error {{.*}} OK

// CHECK: grad-check @relu_: max error {{.*}} OK

// CHECK: grad-check @silu_: max error {{.*}} OK

// CHECK: grad-check @erf_: max error {{.*}} OK

// CHECK: grad-check @reciprocal_: max error {{.*}} OK

// CHECK: grad-check @sin_: max error {{.*}} OK

// CHECK: grad-check @cos_: max error {{.*}} OK

// CHECK: grad-check @tan_: max error {{.*}} OK

// CHECK: grad-check @asin_: max error {{.*}} OK

// CHECK: grad-check @acos_: max error {{.*}} OK

// CHECK: grad-check @atan_: max error {{.*}} OK

// CHECK: grad-check @sinh_: max error {{.*}} OK

// CHECK: grad-check @cosh_: max error {{.*}} OK

// CHECK: grad-check @asinh_: max error {{.*}} OK

// CHECK: grad-check @acosh_: max error {{.*}} OK

// CHECK: grad-check @atanh_: max error {{.*}} OK

// CHECK: grad-check @gelu_none: max error {{.*}} OK

// CHECK: grad-check @gelu_tanh: max error {{.*}} OK

// CHECK: grad-check @add_broadcast: max error {{.*}} OK

// CHECK: grad-check @sub_broadcast: max error {{.*}} OK

// CHECK: grad-check @mul_broadcast: max error {{.*}} OK

// CHECK: grad-check @div_broadcast: max error {{.*}} OK

// CHECK: grad-check @pow_broadcast: max error {{.*}} OK

// CHECK: grad-check @max_broadcast: max error {{.*}} OK

// CHECK: grad-check @min_broadcast: max error {{.*}} OK

// CHECK: grad-check @rem_broadcast: max error {{.*}} OK

// CHECK: grad-check @select_: max error {{.*}} OK


func.func @neg_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.neg %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @abs_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> {
  %y = ober.abs %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @exp_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.exp %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @log_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.log %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @sqrt_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.sqrt %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @rsqrt_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.rsqrt %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @tanh_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.tanh %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @sigmoid_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> {
  %y = ober.sigmoid %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @relu_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.relu %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @silu_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.silu %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @erf_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> {
  %y = ober.erf %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @reciprocal_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.reciprocal %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @sin_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.sin %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cos_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> {
  %y = ober.cos %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @tan_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.tan %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @asin_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = -0.8 : f64, gc_high = 0.8 : f64} {
  %y = ober.asin %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @acos_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> attributes {gc_low = -0.8 : f64, gc_high = 0.8 : f64} {
  %y = ober.acos %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @atan_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.atan %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @sinh_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.sinh %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @cosh_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> {
  %y = ober.cosh %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @asinh_(%x: tensor<2x3x2xf64> {ober.param = "x"}, %c: tensor<2x3x2xf64>) -> tensor<f64> {
  %y = ober.asinh %x : tensor<2x3x2xf64>
  %w = ober.mul %y, %c : tensor<2x3x2xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @acosh_(%x: tensor<3x4xf64> {ober.param = "x"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = 1.2 : f64, gc_high = 2.5 : f64} {
  %y = ober.acosh %x : tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @atanh_(%x: tensor<5xf64> {ober.param = "x"}, %c: tensor<5xf64>) -> tensor<f64> attributes {gc_low = -0.8 : f64, gc_high = 0.8 : f64} {
  %y = ober.atanh %x : tensor<5xf64>
  %w = ober.mul %y, %c : tensor<5xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @gelu_none(%x: tensor<4x3xf64> {ober.param = "x"}, %c: tensor<4x3xf64>) -> tensor<f64> {
  %y = ober.gelu %x {approximate = #ober.gelu_approximation<none>} : tensor<4x3xf64>
  %w = ober.mul %y, %c : tensor<4x3xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @gelu_tanh(%x: tensor<4x3xf64> {ober.param = "x"}, %c: tensor<4x3xf64>) -> tensor<f64> {
  %y = ober.gelu %x {approximate = #ober.gelu_approximation<tanh>} : tensor<4x3xf64>
  %w = ober.mul %y, %c : tensor<4x3xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @add_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.add %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @sub_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.sub %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @mul_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.mul %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @div_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.div %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @pow_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.pow %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @max_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.max %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @min_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %y = ober.min %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @rem_broadcast(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> attributes {gc_low = 0.5 : f64, gc_high = 2.0 : f64} {
  %y = ober.rem %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

func.func @select_(%a: tensor<3x4xf64> {ober.param = "a"}, %b: tensor<4xf64> {ober.param = "b"}, %c: tensor<3x4xf64>) -> tensor<f64> {
  %m = ober.cmp gt, %a, %c : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xi1>
  %y = ober.select %m, %a, %b : (tensor<3x4xi1>, tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %w = ober.mul %y, %c : tensor<3x4xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

