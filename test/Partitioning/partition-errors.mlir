// RUN: ober-opt %s --split-input-file --ober-partition -verify-diagnostics

// expected-error@+1 {{ober-partition: the module has no 'ober.plan'; plan it first with --ober-plan}}
module {
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}

// -----

module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 1, num_micro_batches = 2, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
  // expected-error@+1 {{the step records no loss function ('loss_function' in 'ober.train_step'): build it with --ober-build-train-step}}
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}

// -----

// expected-error@+1 {{ober-partition: expected one train step (a function with 'ober.train_step'), found 0}}
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 1, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    return %x : tensor<4x8xf32>
  }
}

// -----

module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 1, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    // expected-error@+1 {{ober-partition: cannot inline 'missing': the step's calls must all reach one gradient function with a body in the module}}
    %0 = func.call @missing(%x) : (tensor<4x8xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @missing(tensor<4x8xf32>) -> tensor<f32>
}

// -----

module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 1, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f16, function = "loss_grad">} {
  // expected-error@+1 {{ober-partition: the plan's precision = f16 needs a step built with dynamic loss scaling (--ober-build-train-step="loss-scale=dynamic ...")}}
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}

// -----

module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 1, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
  // expected-error@+1 {{ober-partition: the step calls no gradient function}}
  func.func @train_step(%x: tensor<4x8xf32> {ober.batch = "input0"}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}

// -----

module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 2, micro_batch = 2, num_micro_batches = 1, global_batch = 4, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "loss_grad">} {
  // expected-error@+1 {{ober-partition: the step is already partitioned (its arguments carry 'ober.split')}}
  func.func @train_step(%x: tensor<2x8xf32> {ober.batch = "input0", ober.split = array<i64: 0, -1>}, %lr: tensor<f32> {ober.lr}) -> tensor<f32> attributes {ober.train_step = {micro_batches = 1 : i64}} {
    return %lr : tensor<f32>
  }
}

