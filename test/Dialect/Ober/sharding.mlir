// RUN: ober-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" -split-input-file | FileCheck %s

// Megatron's MLP from the ShardingInterface models: the first weight split by
// columns (and its bias with it), the second by rows; propagation carries the
// split through the bias add and relu, and partitioning leaves local shapes
// and one all-reduce of the partial sums.
shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @megatron_mlp
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[W1:.*]]: tensor<8x8xf32>, %[[B1:.*]]: tensor<8xf32>, %[[W2:.*]]: tensor<8x8xf32>
// CHECK-NEXT: %[[H:.*]] = ober.matmul %[[X]], %[[W1]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[HB:.*]] = ober.add %[[H]], %[[B1]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = ober.relu %[[HB]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = ober.matmul %[[R]], %[[W2]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[Y]] on @grid grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[S]] : tensor<4x8xf32>
func.func @megatron_mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %rep : tensor<4x8xf32>
  %w1s = shard.shard %w1 to %col : tensor<8x16xf32>
  %b1s = shard.shard %b1 to %row : tensor<16xf32>
  %w2s = shard.shard %w2 to %row : tensor<16x8xf32>
  %h = ober.matmul %x0, %w1s : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %hb = ober.add %h, %b1s : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = ober.relu %hb : tensor<4x16xf32>
  %y = ober.matmul %r, %w2s : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %y0 = shard.shard %y to %rep annotate_for_users : tensor<4x8xf32>
  return %y0 : tensor<4x8xf32>
}

// -----

// Data parallelism: the batch split flows through matmul (a parallel loop),
// the broadcast bias and the activation; no communication.
shard.grid @grid(shape = 4)

// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>
// CHECK-NEXT: %[[H:.*]] = ober.matmul %[[X]], %[[W]] : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[HB:.*]] = ober.add %[[H]], %[[B]] : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[T:.*]] = ober.tanh %[[HB]] : tensor<2x16xf32>
// CHECK-NEXT: return %[[T]] : tensor<2x16xf32>
func.func @data_parallel(%x: tensor<8x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %batch = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %batch : tensor<8x8xf32>
  %ws = shard.shard %w to %rep : tensor<8x16xf32>
  %bs = shard.shard %b to %rep : tensor<16xf32>
  %h = ober.matmul %xs, %ws : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %hb = ober.add %h, %bs : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %t = ober.tanh %hb : tensor<8x16xf32>
  %t0 = shard.shard %t to %batch annotate_for_users : tensor<8x16xf32>
  return %t0 : tensor<8x16xf32>
}

// -----

// Attention-style batched matmuls split over heads (a batch loop of both
// operands): scores and weighted values stay local.
shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @heads
// CHECK-SAME: %[[Q:.*]]: tensor<2x2x8x4xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x8x4xf32>
// CHECK-NEXT: %[[S:.*]] = ober.matmul %[[Q]], %[[K]] : (tensor<2x2x8x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK-NEXT: %[[E:.*]] = ober.exp %[[S]] : tensor<2x2x8x8xf32>
// CHECK-NEXT: %[[O:.*]] = ober.matmul %[[E]], %[[V]] : (tensor<2x2x8x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x8x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @heads(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x4x8xf32>, %v: tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32> {
  %heads = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %heads : tensor<2x4x8x4xf32>
  %ks = shard.shard %k to %heads : tensor<2x4x4x8xf32>
  %vs = shard.shard %v to %heads : tensor<2x4x8x4xf32>
  %s = ober.matmul %qs, %ks : (tensor<2x4x8x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x8x8xf32>
  %e = ober.exp %s : tensor<2x4x8x8xf32>
  %o = ober.matmul %e, %vs : (tensor<2x4x8x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %o0 = shard.shard %o to %heads annotate_for_users : tensor<2x4x8x4xf32>
  return %o0 : tensor<2x4x8x4xf32>
}

// -----

// Reductions over a split dimension: partial results and an all-reduce of
// the matching kind (a mean divides by the parts); a transpose moves the
// split to the other dimension.
shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @row_stats
// CHECK-SAME: %[[X:.*]]: tensor<4x4xf32>
// CHECK-NEXT: %[[M:.*]] = ober.reduce_mean %[[X]] {axes = array<i64: 1>, keepdims = false} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[MS:.*]] = shard.all_reduce %[[M]] on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[HALF:.*]] = ober.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[MEAN:.*]] = ober.mul %[[MS]], %[[HALF]]
// CHECK-NEXT: %[[MX:.*]] = ober.reduce_max %[[X]]
// CHECK-NEXT: %[[MXS:.*]] = shard.all_reduce %[[MX]] on @grid grid_axes = [0] reduction = max
// CHECK-NEXT: %[[T:.*]] = ober.transpose %[[X]] {permutation = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[MEAN]], %[[MXS]], %[[T]]
func.func @row_stats(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>) {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %cols : tensor<4x8xf32>
  %m = ober.reduce_mean %xs {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %mx = ober.reduce_max %xs {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %t = ober.transpose %xs {permutation = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %m0 = shard.shard %m to %rep annotate_for_users : tensor<4xf32>
  %mx0 = shard.shard %mx to %rep annotate_for_users : tensor<4xf32>
  %t0 = shard.shard %t to %rows annotate_for_users : tensor<8x4xf32>
  return %m0, %mx0, %t0 : tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>
}

// -----

// Softmax along a split axis (vocabulary-parallel): the maximum and the sum
// of exponentials are all-reduced; the result stays split.
shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @vocab
// CHECK-SAME: %[[X:.*]]: tensor<4x4xf32>
// CHECK-NEXT: %[[M:.*]] = ober.reduce_max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[MS:.*]] = shard.all_reduce %[[M]] on @grid grid_axes = [0] reduction = max
// CHECK-NEXT: %[[D:.*]] = ober.sub %[[X]], %[[MS]]
// CHECK-NEXT: %[[E:.*]] = ober.exp %[[D]]
// CHECK-NEXT: %[[S:.*]] = ober.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT: %[[SS:.*]] = shard.all_reduce %[[S]] on @grid grid_axes = [0] :
// CHECK-NEXT: %[[P:.*]] = ober.div %[[E]], %[[SS]]
// CHECK: %[[LOG:.*]] = ober.log
// CHECK-NEXT: %[[LS:.*]] = ober.sub {{.*}}, %[[LOG]]
// CHECK-NEXT: return %[[P]], %[[LS]]
func.func @vocab(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %cols : tensor<4x8xf32>
  %s = ober.softmax %xs {axis = 1 : i64} : tensor<4x8xf32>
  %l = ober.log_softmax %xs {axis = 1 : i64} : tensor<4x8xf32>
  %s0 = shard.shard %s to %cols annotate_for_users : tensor<4x8xf32>
  %l0 = shard.shard %l to %cols annotate_for_users : tensor<4x8xf32>
  return %s0, %l0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Layer and RMS normalization over a split dimension: the statistics are
// all-reduced (two sums for layer norm, one for RMS norm).
// CHECK-LABEL: func.func @norms
// CHECK-COUNT-3: shard.all_reduce {{.*}} on @grid grid_axes = [0] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: return
shard.grid @grid(shape = 2)
func.func @norms(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %vec = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %cols : tensor<4x8xf32>
  %gs = shard.shard %g to %vec : tensor<8xf32>
  %bs = shard.shard %b to %vec : tensor<8xf32>
  %y = ober.layer_norm %xs scale %gs bias %bs {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = ober.rms_norm %xs scale %gs {axis = 1 : i64, epsilon = 1.0e-06 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y0 = shard.shard %y to %cols annotate_for_users : tensor<4x8xf32>
  %z0 = shard.shard %z to %cols annotate_for_users : tensor<4x8xf32>
  return %y0, %z0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A data-parallel loss: the mean cross-entropy of split samples is all-reduced
// and divided by the parts; one_hot, broadcast_to and a per-sample loss stay
// local.
// CHECK-LABEL: func.func @loss
// CHECK: %[[L:.*]] = ober.cross_entropy {{.*}} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[L]] on @grid grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT: ober.constant dense<2.500000e-01>
// CHECK-NEXT: ober.mul %[[S]]
// CHECK-NEXT: ober.one_hot {{.*}} -> tensor<2x5xf32>
// CHECK: ober.broadcast_to {{.*}} to tensor<2xf32>
// CHECK-NEXT: ober.cross_entropy {{.*}} -> tensor<2xf32>
// CHECK-NOT: shard.all_reduce
shard.grid @grid(shape = 4)
func.func @loss(%logits: tensor<8x5xf32>, %labels: tensor<8xi64>) -> (tensor<f32>, tensor<8x5xf32>, tensor<8xf32>) {
  %batch = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ls = shard.shard %logits to %batch : tensor<8x5xf32>
  %ys = shard.shard %labels to %batch : tensor<8xi64>
  %l = ober.cross_entropy %ls, %ys {label_smoothing = 0.1 : f64, reduction = #ober.reduction<mean>} : (tensor<8x5xf32>, tensor<8xi64>) -> tensor<f32>
  %oh = ober.one_hot %ys {axis = 1 : i64, depth = 5 : i64} : (tensor<8xi64>) -> tensor<8x5xf32>
  %one = ober.constant dense<2.0> : tensor<f32>
  %w = ober.broadcast_to %one : tensor<f32> to tensor<8xf32>
  %per = ober.cross_entropy %ls, %ys {label_smoothing = 0.0 : f64, reduction = #ober.reduction<none>} : (tensor<8x5xf32>, tensor<8xi64>) -> tensor<8xf32>
  %wp = ober.mul %per, %w : tensor<8xf32>
  %l0 = shard.shard %l to %rep annotate_for_users : tensor<f32>
  %oh0 = shard.shard %oh to %batch annotate_for_users : tensor<8x5xf32>
  %wp0 = shard.shard %wp to %batch annotate_for_users : tensor<8xf32>
  return %l0, %oh0, %wp0 : tensor<f32>, tensor<8x5xf32>, tensor<8xf32>
}

// -----

// An embedding of split token ids with the whole table: a local lookup.
// CHECK-LABEL: func.func @embed
// CHECK-NEXT: ober.embedding {{.*}} : (tensor<10x6xf32>, tensor<2x3xi64>) -> tensor<2x3x6xf32>
// CHECK-NEXT: return
shard.grid @grid(shape = 2)
func.func @embed(%table: tensor<10x6xf32>, %ids: tensor<4x3xi64>) -> tensor<4x3x6xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %batch = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %t = shard.shard %table to %rep : tensor<10x6xf32>
  %i = shard.shard %ids to %batch : tensor<4x3xi64>
  %e = ober.embedding %t, %i : (tensor<10x6xf32>, tensor<4x3xi64>) -> tensor<4x3x6xf32>
  %e0 = shard.shard %e to %batch annotate_for_users : tensor<4x3x6xf32>
  return %e0 : tensor<4x3x6xf32>
}
