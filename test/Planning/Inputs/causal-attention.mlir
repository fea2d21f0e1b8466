// 16 score matrices of 4096 x 4096 (2^28 elements): ober-block-attention
// cuts them into 4 blocks of 1024 queries, which see 1024, 2048, 3072 and
// 4096 keys when causal: 10/16 of the products.
func.func @full(%q: tensor<16x4096x64xbf16>, %k: tensor<16x4096x64xbf16>, %v: tensor<16x4096x64xbf16>) -> tensor<16x4096x64xbf16> {
  %o = ober.attention %q, %k, %v : (tensor<16x4096x64xbf16>, tensor<16x4096x64xbf16>, tensor<16x4096x64xbf16>) -> tensor<16x4096x64xbf16>
  return %o : tensor<16x4096x64xbf16>
}
func.func @causal(%q: tensor<16x4096x64xbf16>, %k: tensor<16x4096x64xbf16>, %v: tensor<16x4096x64xbf16>) -> tensor<16x4096x64xbf16> {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<16x4096x64xbf16>, tensor<16x4096x64xbf16>, tensor<16x4096x64xbf16>) -> tensor<16x4096x64xbf16>
  return %o : tensor<16x4096x64xbf16>
}
// One block (2^24 scores): a causal attention computes every product.
func.func @small_full(%q: tensor<16x1024x64xbf16>, %k: tensor<16x1024x64xbf16>, %v: tensor<16x1024x64xbf16>) -> tensor<16x1024x64xbf16> {
  %o = ober.attention %q, %k, %v : (tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>) -> tensor<16x1024x64xbf16>
  return %o : tensor<16x1024x64xbf16>
}
func.func @small_causal(%q: tensor<16x1024x64xbf16>, %k: tensor<16x1024x64xbf16>, %v: tensor<16x1024x64xbf16>) -> tensor<16x1024x64xbf16> {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>) -> tensor<16x1024x64xbf16>
  return %o : tensor<16x1024x64xbf16>
}
// Its gradient: the fused loops compute the scores three times, 2 Lq Lk
// (5 D + 3 Dv) FLOPs against the model's 2 Lq Lk (3 D + 2 Dv).
func.func @grad_full(%q: tensor<16x1024x64xbf16>, %k: tensor<16x1024x64xbf16>, %v: tensor<16x1024x64xbf16>, %o: tensor<16x1024x64xbf16>, %do: tensor<16x1024x64xbf16>) -> (tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>) {
  %dq, %dk, %dv = ober.attention_grad %q, %k, %v, %o, %do : (tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>) -> (tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>)
  return %dq, %dk, %dv : tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>, tensor<16x1024x64xbf16>
}
