// A GPT-style decoder block with a tied language-model head and its loss:
// batch 2, sequence 8, vocabulary 64, hidden 32, 4 heads. Parameters are the
// function arguments tagged `ober.param`; tokens and targets are the inputs.
func.func @forward(
    %tokens: tensor<2x8xi64>, %targets: tensor<2x8xi64>,
    %wte: tensor<64x32xf32> {ober.param = "wte.weight"},
    %wpe: tensor<8x32xf32> {ober.param = "wpe.weight"},
    %ln1_g: tensor<32xf32> {ober.param = "h.0.ln_1.weight"},
    %ln1_b: tensor<32xf32> {ober.param = "h.0.ln_1.bias"},
    %w_qkv: tensor<32x96xf32> {ober.param = "h.0.attn.c_attn.weight"},
    %b_qkv: tensor<96xf32> {ober.param = "h.0.attn.c_attn.bias"},
    %w_o: tensor<32x32xf32> {ober.param = "h.0.attn.c_proj.weight"},
    %b_o: tensor<32xf32> {ober.param = "h.0.attn.c_proj.bias"},
    %ln2_g: tensor<32xf32> {ober.param = "h.0.ln_2.weight"},
    %ln2_b: tensor<32xf32> {ober.param = "h.0.ln_2.bias"},
    %w_fc: tensor<32x128xf32> {ober.param = "h.0.mlp.c_fc.weight"},
    %b_fc: tensor<128xf32> {ober.param = "h.0.mlp.c_fc.bias"},
    %w_proj: tensor<128x32xf32> {ober.param = "h.0.mlp.c_proj.weight"},
    %b_proj: tensor<32xf32> {ober.param = "h.0.mlp.c_proj.bias"},
    %lnf_g: tensor<32xf32> {ober.param = "ln_f.weight"},
    %lnf_b: tensor<32xf32> {ober.param = "ln_f.bias"}) -> tensor<f32> {
  // Embeddings.
  %tok = ober.embedding %wte, %tokens : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
  %h0 = ober.add %tok, %wpe : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>

  // Causal self-attention.
  %x1 = ober.layer_norm %h0 scale %ln1_g bias %ln1_b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %qkv0 = ober.matmul %x1, %w_qkv : (tensor<2x8x32xf32>, tensor<32x96xf32>) -> tensor<2x8x96xf32>
  %qkv = ober.add %qkv0, %b_qkv : (tensor<2x8x96xf32>, tensor<96xf32>) -> tensor<2x8x96xf32>
  %q, %k, %v = ober.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : (tensor<2x8x96xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>)
  %q4 = ober.reshape %q : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %k4 = ober.reshape %k : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %v4 = ober.reshape %v : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %qh = ober.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %kh = ober.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %vh = ober.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %att = ober.attention %qh, %kh, %vh {is_causal} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %att_t = ober.transpose %att {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %att_m = ober.reshape %att_t : tensor<2x8x4x8xf32> to tensor<2x8x32xf32>
  %o0 = ober.matmul %att_m, %w_o : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %o = ober.add %o0, %b_o : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %h1 = ober.add %h0, %o : tensor<2x8x32xf32>

  // MLP.
  %x2 = ober.layer_norm %h1 scale %ln2_g bias %ln2_b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %f0 = ober.matmul %x2, %w_fc : (tensor<2x8x32xf32>, tensor<32x128xf32>) -> tensor<2x8x128xf32>
  %f1 = ober.add %f0, %b_fc : (tensor<2x8x128xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
  %f2 = ober.gelu %f1 {approximate = #ober.gelu_approximation<tanh>} : tensor<2x8x128xf32>
  %f3 = ober.matmul %f2, %w_proj : (tensor<2x8x128xf32>, tensor<128x32xf32>) -> tensor<2x8x32xf32>
  %f4 = ober.add %f3, %b_proj : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %h2 = ober.add %h1, %f4 : tensor<2x8x32xf32>

  // Tied language-model head and loss.
  %hf = ober.layer_norm %h2 scale %lnf_g bias %lnf_b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %wte_t = ober.transpose %wte {permutation = array<i64: 1, 0>} : tensor<64x32xf32> -> tensor<32x64xf32>
  %logits = ober.matmul %hf, %wte_t : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
  %loss = ober.cross_entropy %logits, %targets {reduction = #ober.reduction<mean>, label_smoothing = 0.0 : f64} : (tensor<2x8x64xf32>, tensor<2x8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
