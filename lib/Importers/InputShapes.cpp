//===- InputShapes.cpp - `--input-shape` for models without shapes --------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Importers/InputShapes.h"
#include "ober/Tools/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir::ober;
namespace rt = ::ober::rt;

static llvm::cl::list<std::string> inputShapeOption(
    "input-shape",
    llvm::cl::desc("Shape and type of a model input the file does not record "
                   "(TorchScript): --input-shape=x:2x3x64x64:f32, by name or "
                   "in order"),
    llvm::cl::value_desc("[name:]2x3x64x64[:f32]"),
    llvm::cl::cat(importOptionCategory()));

/// `2x3x64x64` (or nothing: a scalar).
static bool parseDims(llvm::StringRef text, std::vector<int64_t> &dims,
                      std::string &error) {
  if (text.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t size;
    if (p.getAsInteger(10, size) || size < 0) {
      error = "'" + p.str() +
              "' is not a size (sizes are non-negative "
              "integers joined by 'x': 2x3x64x64)";
      return false;
    }
    dims.push_back(size);
  }
  return true;
}

std::optional<InputShape> mlir::ober::parseInputShape(llvm::StringRef spec,
                                                      std::string &error) {
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ':');
  InputShape shape;
  llvm::StringRef dims, type;
  if (parts.size() == 3) {
    shape.name = parts[0].str();
    dims = parts[1];
    type = parts[2];
  } else if (parts.size() == 2 && rt::dtypeFromName(parts[1].str())) {
    dims = parts[0];
    type = parts[1];
  } else if (parts.size() == 2) {
    shape.name = parts[0].str();
    dims = parts[1];
  } else if (parts.size() == 1) {
    dims = parts[0];
  } else {
    error = "expected [name:]2x3x64x64[:f32]";
    return std::nullopt;
  }
  if (!type.empty()) {
    std::optional<rt::DType> d = rt::dtypeFromName(type.str());
    if (!d) {
      error = "unknown element type '" + type.str() +
              "' (supported: " + rt::dtypeNames() + ")";
      return std::nullopt;
    }
    shape.dtype = *d;
  }
  if (!parseDims(dims, shape.shape, error))
    return std::nullopt;
  if (!rt::checkedBytes(shape.shape,
                        rt::dtypeSize(shape.dtype.value_or(rt::DType::F64)))) {
    error = "the shape has more bytes than 64 bits count";
    return std::nullopt;
  }
  return shape;
}

std::string mlir::ober::formatInputShape(const InputShape &shape) {
  std::string out = shape.name + ":";
  out += llvm::join(
      llvm::map_range(shape.shape, [](int64_t d) { return std::to_string(d); }),
      "x");
  return shape.dtype ? out + ":" + rt::dtypeMLIRName(*shape.dtype) : out;
}

bool mlir::ober::inputShapesFromCommandLine(std::vector<InputShape> &out,
                                            std::string &error) {
  for (const std::string &spec : inputShapeOption) {
    std::optional<InputShape> shape = parseInputShape(spec, error);
    if (!shape) {
      error = "--input-shape=" + spec + ": " + error;
      return false;
    }
    out.push_back(std::move(*shape));
  }
  return true;
}

bool mlir::ober::assignInputShapes(llvm::ArrayRef<std::string> names,
                                   llvm::ArrayRef<InputShape> shapes,
                                   std::vector<std::optional<InputShape>> &out,
                                   std::string &error) {
  out.assign(names.size(), std::nullopt);
  std::string known = "'" + llvm::join(names, "', '") + "'";
  if (names.empty())
    known = "none";
  // Named entries first, then the others fill the free inputs in order
  // (so the flags' order does not matter).
  for (const InputShape &s : shapes) {
    if (s.name.empty())
      continue;
    size_t i = llvm::find(names, s.name) - names.begin();
    if (i == names.size()) {
      error = "--input-shape names '" + s.name +
              "', which is not an input of the model (its inputs: " + known +
              ")";
      return false;
    }
    if (out[i]) {
      error = "--input-shape gives input '" + names[i] + "' twice";
      return false;
    }
    out[i] = s;
  }
  size_t next = 0;
  for (const InputShape &s : shapes) {
    if (!s.name.empty())
      continue;
    while (next < names.size() && out[next])
      ++next;
    if (next == names.size()) {
      error = std::to_string(shapes.size()) +
              " input shapes are given (--input-shape, or ober-run's --input "
              "files); the model has " +
              std::to_string(names.size()) + " input(s): " + known;
      return false;
    }
    out[next++] = s;
  }
  return true;
}

void mlir::ober::linkInputShapeOption() {}
