//===- Passes.td - graph-level transforms ------------------*- tablegen -*-===//

#ifndef OBER_TRANSFORMS_PASSES_TD
#define OBER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposeAttentionPass
    : Pass<"ober-decompose-attention", "func::FuncOp"> {
  let summary = "Rewrite ober.attention and ober.attention_grad into primitive ober ops";
  let description = [{
    Replaces every `ober.attention` with its definition in primitive ops:
    a transpose of the key, a matmul for the scores, the scale, the mask
    (added when it is a float tensor, applied with `ober.select` and `-inf`
    when it is `i1`, and built from `ober.iota` and `ober.cmp` for
    `is_causal`), `ober.softmax` over the key dimension and a matmul with the
    value. `ober.attention_grad` becomes the same probabilities computed
    again and the gradients' matmuls (`dV = P^T dO`, `dP = dO V^T`,
    `dS = P * (dP - rowsum(dO * O)) * scale`, `dQ = dS K`, `dK = dS^T Q`).
    Later stages that have no fused attention kernel, and autodiff
    rules that want primitive ops, run this first.

    ```mlir
    // Before
    %o = ober.attention %q, %k, %v {is_causal}
        : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
        -> tensor<2x4x8x16xf32>
    // After: transpose, matmul, mul, iota, cmp, select, softmax, matmul.
    ```
  }];
  let dependentDialects = ["::mlir::ober::OberDialect"];
}

def BlockAttentionPass : Pass<"ober-block-attention", "func::FuncOp"> {
  let summary = "Split ober.attention and ober.attention_grad into blocks of queries";
  let description = [{
    Rewrites each `ober.attention` and `ober.attention_grad` with static
    shapes into the same op on blocks of `block` consecutive queries (the
    last block may have fewer), so that once each block is decomposed
    (`ober-decompose-attention`) only one block's scores are live at a
    time. With `block=0` the size is chosen: an op whose scores (batch x
    heads x Lq x Lk elements) fit in 2^26 elements stays one block, a
    larger one gets the most queries that fit, a multiple of 64 from 64 up.

    A block sees the value and mask rows of its queries. With `is_causal`
    (top-left aligned) a block reads only the keys up to its last query's
    position, which skips about half of the products of a long causal
    sequence; the first block stays `is_causal`, a later one gets the
    causal rule shifted by its offset as an `i1` mask, joined with the
    op's own mask (`ober.and` for `i1`, `-inf` where a float mask's
    position is hidden). The outputs and `dQ` are concatenated along the
    queries; `dK` and `dV` are summed over the blocks, padded with zeros
    over the keys a block does not read. An op that is one block seeing
    every key is left as it is, as are ops with dynamic shapes.

    ```mlir
    // Before: 8 queries, block=4
    %o = ober.attention %q, %k, %v {is_causal}
        : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
        -> tensor<2x8x16xf32>
    // After: queries 0-3 against keys 0-3 (is_causal), queries 4-7
    // against keys 0-7 under the mask row + 4 >= column; ober.concat.
    ```
  }];
  let options = [
    Option<"block", "block", "int64_t", /*default=*/"0",
           "Queries a block (0: chosen from the scores' size)">,
  ];
  let dependentDialects = ["::mlir::ober::OberDialect"];
}

def TestShardingRulesPass
    : Pass<"test-ober-sharding-rules", "ModuleOp"> {
  let summary = "Print each op's sharding rule (test pass)";
  let description = [{
    Prints, for every op of every function (in order), its rule from the sharding rule
    table (`ober/Dialect/Ober/IR/ShardingRules.h`) in factor form, or
    `none`: `name: (operand dims) -> (result dims) {factor=size, ...}`
    followed by the reduction (with its kind, `/mean` for a mean),
    statistics (values all-reduced), replication, permutation and indexed
    factors, and the operands partial sums pass through. A rule that does
    not match its op's types is an error on the op.

    ```
    ober.matmul: ([i, k], [k, j]) -> ([i, j]) {i=4, j=16, k=8} reduction={k:sum} multilinear=(0, 1)
    ```
  }];
}

def RecordShardingsPass
    : Pass<"ober-record-shardings", "func::FuncOp"> {
  let summary = "Keep the shardings of arguments and results as attributes";
  let description = [{
    Partitioning (`shard-partition`) gives a function per-device argument
    and result types and drops the `shard.shard` annotations that said how
    each global tensor is cut. Run before it, this pass records them as
    `ober.split` on the arguments (annotated by `shard.shard`) and results
    (returned through `shard.shard ... annotate_for_users`): one entry per
    dimension, the grid axis that splits it or -1. `ober-run` cuts global
    inputs and assembles global results with them. A dimension split over
    several grid axes, halos and uneven splits are rejected.

    ```mlir
    %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %w = shard.shard %arg1 to %s : tensor<8x16xf32>
    // arg 1 gets {ober.split = array<i64: -1, 0>}
    ```
  }];
}

#endif // OBER_TRANSFORMS_PASSES_TD
