//===- Tensor.h - tensors of the reference interpreter ----------*- C++ -*-===//
//
// Part of Ober-Train. The reference interpreter keeps floats as doubles and
// integers as int64, rounding every stored value to its element type (f16,
// bf16, f32 round to nearest even; integers wrap to their width; i1 is 0/1),
// so results carry the element type's precision while kernels stay plain.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_TENSOR_H
#define OBER_REFERENCE_TENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace mlir::ober::reference {

/// Rounds `v` to what `elementType` (a float type) can hold.
double roundToFloat(Type elementType, double v);
/// Wraps `v` to the width of `elementType` (an integer type), sign-extended.
int64_t wrapToInteger(Type elementType, int64_t v);

class Tensor {
public:
  Tensor() = default;
  /// A zero tensor.
  Tensor(Type elementType, ArrayRef<int64_t> shape);

  /// The values of a constant attribute.
  static Tensor fromAttr(ElementsAttr attr);
  /// This tensor as a constant of `type` (its shape and element type).
  DenseElementsAttr toAttr(RankedTensorType type) const;

  Type getElementType() const { return elementType; }
  ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  int64_t getNumElements() const { return numElements; }
  bool isFloat() const { return isa<FloatType>(elementType); }
  /// String tensors (element type !ober.string) hold UTF-8 strings.
  bool isString() const { return !isFloat() && !elementType.isIntOrIndex(); }
  const std::string &getString(int64_t i) const { return strings[i]; }
  void setString(int64_t i, std::string s) { strings[i] = std::move(s); }
  /// Bytes at the element type's width (i1 counts one byte).
  int64_t getSizeInBytes() const;

  double getFloat(int64_t i) const {
    return isFloat() ? floats[i] : static_cast<double>(ints[i]);
  }
  int64_t getInt(int64_t i) const {
    return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
  }
  void setFloat(int64_t i, double v) {
    if (isFloat())
      floats[i] = roundToFloat(elementType, v);
    else
      ints[i] = wrapToInteger(elementType, static_cast<int64_t>(v));
  }
  void setInt(int64_t i, int64_t v) {
    if (isFloat())
      floats[i] = roundToFloat(elementType, static_cast<double>(v));
    else
      ints[i] = wrapToInteger(elementType, v);
  }
  /// Copies element `from` of `src` (same element type) to element `i`.
  void copyElement(int64_t i, const Tensor &src, int64_t from) {
    if (isString())
      strings[i] = src.strings[from];
    else if (isFloat())
      floats[i] = src.floats[from];
    else
      ints[i] = src.ints[from];
  }

  /// Same data, new shape (same element count).
  Tensor reshaped(ArrayRef<int64_t> newShape) const;

private:
  Type elementType;
  SmallVector<int64_t> shape;
  int64_t numElements = 0;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Strides that read a tensor of `shape` broadcast (NumPy rules) to
/// `target`: 0 along broadcast dimensions, aligned to the target's rank.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> target);

/// Calls `fn(outIndex, offsets)` for every element of `shape` in row-major
/// order, where offsets[k] is the element offset into operand k given its
/// per-dimension `strides[k]`.
void forEachElement(ArrayRef<int64_t> shape,
                    ArrayRef<SmallVector<int64_t>> strides,
                    function_ref<void(int64_t, ArrayRef<int64_t>)> fn);

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_TENSOR_H
