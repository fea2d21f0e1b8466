// RUN: ober-opt %s --ober-build-train-step="loss=mse optimizer=sgd" --ober-partition -verify-diagnostics

// A model that folds its batch into its features cannot take another
// batch: the partitioner names the batch input, its shape and the plan's
// batch, and the op whose shapes no longer agree.
module attributes {ober.plan = #ober.plan<tp = 1, pp = 1, dp = 1, micro_batch = 16, num_micro_batches = 1, global_batch = 16, schedule = "1f1b", chunks = 1, recompute = none, sequence_parallel = false, zero_stage = 0, precision = f32, function = "folded_grad">} {
  // expected-error@+1 {{ober-partition: the plan trains a global batch of 16 samples in 1 micro-batch(es) of 16, the step 8 in 1: batch input 'input0' ('tensor<8x4xf32>') cannot take 16 samples per micro-batch: the model's shapes do not follow the batch}}
  func.func @folded(%x: tensor<8x4xf32>, %w: tensor<32x3xf32> {ober.param = "w"}) -> tensor<1x3xf32> {
    %0 = ober.reshape %x : tensor<8x4xf32> to tensor<1x32xf32>
    // expected-note@+1 {{'ober.matmul' op}}
    %1 = ober.matmul %0, %w : (tensor<1x32xf32>, tensor<32x3xf32>) -> tensor<1x3xf32>
    return %1 : tensor<1x3xf32>
  }
}
