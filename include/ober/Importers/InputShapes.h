//===- InputShapes.h - `--input-shape` for models without shapes -*- C++
//-*-===//
//
// Part of Ober-Train. A model file that records no input shapes (a plain
// `torch.jit.trace(...).save`) gets them from the command line:
//
//   --input-shape=x:2x3x64x64:f32    by name
//   --input-shape=2x3x64x64          in order (with no type: the recorded
//                                    one, else f32)
//   --input-shape=tokens:8x128:i64
//   --input-shape=t::f32             a scalar (no dimensions)
//
// Shapes given this way also re-specialise a file that records its export
// shapes (another batch size).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_IMPORTERS_INPUTSHAPES_H
#define OBER_IMPORTERS_INPUTSHAPES_H

#include "ober/Runtime/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ober {

struct InputShape {
  /// The input's name; empty: the next input in order.
  std::string name;
  std::vector<int64_t> shape;
  /// Unset: the type the file records for the input, else f32.
  std::optional<::ober::rt::DType> dtype;
};

/// Parses `[NAME:]DIMS[:TYPE]`; on failure returns nullopt and says why in
/// `error`.
std::optional<InputShape> parseInputShape(llvm::StringRef spec,
                                          std::string &error);

/// The spelling parseInputShape reads back (`name:2x3:f32`, `:2x3`).
std::string formatInputShape(const InputShape &shape);

/// The `--input-shape` entries of the command line (this library registers
/// the option); an entry that does not parse is an error naming it.
bool inputShapesFromCommandLine(std::vector<InputShape> &out,
                                std::string &error);

/// Links the option into a tool that only passes it on (ober-translate to
/// ober-import-torchscript), so that the tool's --help lists it.
void linkInputShapeOption();

/// Gives each of a model's inputs, named `names` in order, its entry of
/// `shapes`: named entries by name, the others in order. An unknown name,
/// an input given twice or more entries than inputs is an error naming
/// the model's inputs. Inputs without an entry stay nullopt.
bool assignInputShapes(llvm::ArrayRef<std::string> names,
                       llvm::ArrayRef<InputShape> shapes,
                       std::vector<std::optional<InputShape>> &out,
                       std::string &error);

} // namespace mlir::ober

#endif // OBER_IMPORTERS_INPUTSHAPES_H
