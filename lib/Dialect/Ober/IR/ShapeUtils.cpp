//===- ShapeUtils.cpp - shape helpers for ober op verification ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"

#include "llvm/Support/MathExtras.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ober::detail;

std::string mlir::ober::detail::shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return s;
}

std::string mlir::ober::detail::listString(ArrayRef<int64_t> values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return s;
}

FailureOr<SmallVector<int64_t>>
mlir::ober::detail::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &r = result[offset + i];
      int64_t d = s[i];
      if (d == 1)
        continue;
      if (r == 1) {
        r = d;
        continue;
      }
      if (ShapedType::isDynamic(d) || ShapedType::isDynamic(r)) {
        // ? with ? stays ?; ? with a static N > 1 is N (or a runtime error).
        r = ShapedType::isDynamic(r) ? d : r;
        continue;
      }
      if (r != d)
        return failure();
    }
  }
  return result;
}

LogicalResult mlir::ober::detail::checkAxis(const OpDiag &diag,
                                            StringRef attrName, int64_t axis,
                                            int64_t rank) {
  if (axis < 0 || axis >= rank)
    return diag("'", attrName, "' ", axis, " is out of range for rank ", rank,
                " (expected 0 <= ", attrName, " < ", rank, ")");
  return success();
}

LogicalResult mlir::ober::detail::checkArraySize(const OpDiag &diag,
                                                 StringRef attrName,
                                                 ArrayRef<int64_t> values,
                                                 size_t size) {
  if (values.size() != size)
    return diag("'", attrName, "' has ", values.size(), " entries, expected ",
                size);
  return success();
}

bool mlir::ober::detail::compatibleShapes(ArrayRef<int64_t> a,
                                          ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (!compatibleSize(x, y))
      return false;
  return true;
}

std::optional<int64_t>
mlir::ober::detail::staticElementCount(ArrayRef<int64_t> shape,
                                       bool *overflow) {
  int64_t n = 1;
  bool past = false, dynamic = false;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      dynamic = true;
    else
      past |= llvm::MulOverflow(n, d, n);
  }
  if (overflow)
    *overflow = past;
  if (past || dynamic)
    return std::nullopt;
  return n;
}
