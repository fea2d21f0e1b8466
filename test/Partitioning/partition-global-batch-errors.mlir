// RUN: ober-opt %s --split-input-file --ober-build-train-step="loss=mse optimizer=sgd" --ober-partition -verify-diagnostics

// A model that folds its batch into its features cannot take another
// batch: the partitioner names the batch input, its shape and the plan's
// batch, and the op whose shapes no longer agree.
module attributes {ober.plan = {tp = 1 : i64, pp = 1 : i64, dp = 1 : i64, zero_stage = 0 : i64, num_micro_batches = 1 : i64, global_batch = 16 : i64, recompute = "none", precision = "f32"}} {
  // expected-error@+1 {{ober-partition: the plan trains a global batch of 16 samples in 1 micro-batch(es) of 16, the step 8 in 1: batch input 'input0' ('tensor<8x4xf32>') cannot take 16 samples per micro-batch: the model's shapes do not follow the batch}}
  func.func @folded(%x: tensor<8x4xf32>, %w: tensor<32x3xf32> {ober.param = "w"}) -> tensor<1x3xf32> {
    %0 = ober.reshape %x : tensor<8x4xf32> to tensor<1x32xf32>
    // expected-note@+1 {{'ober.matmul' op}}
    %1 = ober.matmul %0, %w : (tensor<1x32xf32>, tensor<32x3xf32>) -> tensor<1x3xf32>
    return %1 : tensor<1x3xf32>
  }
}

// -----

// The plan's micro-batches must divide its global batch.
module attributes {ober.plan = {tp = 1 : i64, pp = 1 : i64, dp = 1 : i64, zero_stage = 0 : i64, num_micro_batches = 3 : i64, global_batch = 8 : i64, recompute = "none", precision = "f32"}} {
  // expected-error@+1 {{ober-partition: the plan's global batch of 8 samples does not divide into its 3 micro-batch(es)}}
  func.func @mlp(%x: tensor<8x4xf32>, %w: tensor<4x3xf32> {ober.param = "w"}) -> tensor<8x3xf32> {
    %0 = ober.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
    return %0 : tensor<8x3xf32>
  }
}
