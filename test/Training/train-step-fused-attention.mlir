// With fused-attention, the train step keeps ober.attention as one op and
// its gradient is ober.attention_grad (the scores computed again: nothing
// of the forward pass but its output is kept), for no mask, a causal one
// and an i1 mask; an attention with a float mask (whose gradient that op
// does not give) is still differentiated through its decomposition. The
// option is recorded in ober.train_step (a rebuilt step keeps it); by
// default attention is decomposed.
// RUN: ober-opt %s -ober-build-train-step="optimizer=sgd fused-attention=true" | FileCheck %s
// RUN: ober-opt %s -ober-build-train-step="optimizer=sgd" | FileCheck %s --check-prefix=DEFAULT

func.func @model(%x: tensor<2x2x4x8xf32>, %w: tensor<8x8xf32> {ober.param = "w"}, %bm: tensor<4x4xi1>, %fm: tensor<4x4xf32>) -> tensor<2x2x4x8xf32> {
  %q = ober.matmul %x, %w : (tensor<2x2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x2x4x8xf32>
  %a = ober.attention %q, %q, %q {is_causal} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %b = ober.attention %a, %q, %q, %bm : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x2x4x8xf32>
  %c = ober.attention %b, %q, %a, %fm {scale = 0.5 : f64} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x2x4x8xf32>
  return %c : tensor<2x2x4x8xf32>
}

// CHECK-LABEL: func.func private @model_loss_grad(
// CHECK: %[[A:.*]] = ober.attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal}
// CHECK: %[[B:.*]] = ober.attention %[[A]], %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: ober.softmax
// CHECK: ober.attention_grad %[[A]], %{{.*}}, %{{.*}}, %[[B]], %{{.*}}, %{{.*}} : ({{.*}}, tensor<4x4xi1>) -> (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>)
// CHECK: ober.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[A]], %{{.*}} {is_causal}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: fused_attention = true

// DEFAULT-LABEL: func.func private @model_loss_grad(
// DEFAULT-NOT: ober.attention
// DEFAULT-LABEL: func.func @train_step(
// DEFAULT-SAME: fused_attention = false
