// RUN: ober-opt %s -ober-build-train-step="loss=cross-entropy" -verify-diagnostics

// expected-error @+1 {{ober-build-train-step: cross-entropy needs logits [..., classes], got 'tensor<f32>'}}
func.func @scalar_logits(%w: tensor<f32> {ober.param = "w"}) -> tensor<f32> {
  return %w : tensor<f32>
}
