//===- GradientImport.cpp - ai.onnx.preview.training's Gradient -----------===//
//
// Part of Ober-Train. `Gradient<xs, y>` returns the gradient of (the sum of)
// `y` with respect to each value named in `xs`, differentiated through the
// graph imported so far with ober's own gradient rules.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "ober/Training/Autodiff.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;

LogicalResult mlir::ober::onnx_import::importGradient(NodeContext &ctx) {
  std::string yName = ctx.getString("y", "");
  Value y = ctx.valueNamed(yName);
  if (!y) {
    ctx.error() << "y '" << yName << "' is not a value of the graph";
    return failure();
  }
  SmallVector<Value> xs;
  if (const onnx::AttributeProto *a = ctx.attr("xs"))
    for (const std::string &name : a->strings()) {
      Value x = ctx.valueNamed(name);
      if (!x) {
        ctx.error() << "xs entry '" << name << "' is not a value of the graph";
        return failure();
      }
      xs.push_back(x);
    }
  if (static_cast<int>(xs.size()) != ctx.node.output_size()) {
    ctx.error() << "has " << ctx.node.output_size() << " outputs for "
                << xs.size() << " xs";
    return failure();
  }
  FailureOr<SmallVector<Value>> grads =
      differentiateValues(ctx.b, ctx.loc, y, xs);
  if (failed(grads))
    return failure();
  for (auto [i, g] : llvm::enumerate(*grads))
    ctx.setOutput(i, g);
  return success();
}
