//===- GPT.h - the standard GPT family as ober IR ---------------*- C++ -*-===//
//
// Part of Ober-Train. Generates GPT models of any size (learned positions,
// pre-LayerNorm blocks, causal attention, GELU MLP of 4h, tied head,
// cross-entropy loss) with shape-only parameters, for planning and for
// seeded-initialization training.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_IMPORTERS_GENERATORS_GPT_H
#define OBER_IMPORTERS_GENERATORS_GPT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::ober {

struct GPTConfig {
  int64_t layers = 2, hidden = 64, heads = 4, seq = 16, vocab = 128;
  /// Sequences per forward (the micro-batch the step is built for).
  int64_t batch = 1;
  /// Element type of parameters and activations: f32, bf16 or f16.
  std::string dtype = "f32";
  /// Dropout probability (Megatron's sites: attention probabilities, after
  /// the attention projection and after the MLP). With dropout, attention is
  /// emitted unfused and the function takes a 0-D i64 `seed` after the
  /// targets.
  double dropout = 0.0;
};

/// Parses `layers=96 hidden=12288 heads=96 seq=2048 vocab=51200 [batch=1]
/// [dtype=bf16] [dropout=0.1]`; on failure returns false and names the bad
/// key in `error`.
bool parseGPTConfig(StringRef spec, GPTConfig &config, std::string &error);

/// Whether `config` describes a model buildGPT can build (positive sizes,
/// heads dividing hidden, dropout in [0, 1)); if not, names what is wrong
/// in `error`. parseGPTConfig checks this too.
bool checkGPTConfig(const GPTConfig &config, std::string &error);

/// The model as `func.func @gpt(tokens, targets, params...) -> loss`.
OwningOpRef<ModuleOp> buildGPT(MLIRContext &context, const GPTConfig &config);

} // namespace mlir::ober

#endif // OBER_IMPORTERS_GENERATORS_GPT_H
