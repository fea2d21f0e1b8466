//===- ConstantFolding.cpp - folding helpers for ober ops -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"

#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::ober::detail;
using llvm::APFloat;
using llvm::APInt;

namespace {
/// Dense elements small enough to fold, or null.
DenseElementsAttr foldable(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense)
    return {};
  if (!dense.isSplat() && dense.getNumElements() > kMaxFoldedElements)
    return {};
  return dense;
}

template <typename T> SmallVector<T> valuesOf(DenseElementsAttr attr) {
  return llvm::to_vector(attr.getValues<T>());
}
} // namespace

bool mlir::ober::detail::isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  Type elem = dense.getElementType();
  if (isa<FloatType>(elem))
    return dense.getSplatValue<APFloat>().convertToDouble() == value;
  if (auto intType = dyn_cast<IntegerType>(elem)) {
    APInt v = dense.getSplatValue<APInt>();
    if (intType.getWidth() == 1)
      return static_cast<double>(v.getZExtValue()) == value;
    return static_cast<double>(v.getSExtValue()) == value;
  }
  return false;
}

Attribute mlir::ober::detail::foldBinary(Attribute lhsAttr, Attribute rhsAttr,
                                         ShapedType resultType,
                                         FloatFn floatFn, IntFn intFn) {
  DenseElementsAttr lhs = foldable(lhsAttr), rhs = foldable(rhsAttr);
  if (!lhs || !rhs || !resultType.hasStaticShape() ||
      resultType.getNumElements() > kMaxFoldedElements)
    return {};
  auto fits = [&](DenseElementsAttr a) {
    return a.isSplat() || a.getType().getShape() == resultType.getShape();
  };
  if (!fits(lhs) || !fits(rhs) || lhs.getElementType() != rhs.getElementType())
    return {};
  bool splat = lhs.isSplat() && rhs.isSplat();
  int64_t n = splat ? 1 : resultType.getNumElements();
  auto pick = [&](auto &values, int64_t i) -> auto & {
    return values[values.size() == 1 ? 0 : i];
  };
  if (isa<FloatType>(lhs.getElementType())) {
    SmallVector<APFloat> a = lhs.isSplat()
                                 ? SmallVector<APFloat>{lhs.getSplatValue<APFloat>()}
                                 : valuesOf<APFloat>(lhs);
    SmallVector<APFloat> b = rhs.isSplat()
                                 ? SmallVector<APFloat>{rhs.getSplatValue<APFloat>()}
                                 : valuesOf<APFloat>(rhs);
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APFloat> v = floatFn(pick(a, i), pick(b, i));
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(resultType, out);
  }
  if (!intFn || lhs.getElementType().isInteger(1))
    return {};
  SmallVector<APInt> a = lhs.isSplat()
                             ? SmallVector<APInt>{lhs.getSplatValue<APInt>()}
                             : valuesOf<APInt>(lhs);
  SmallVector<APInt> b = rhs.isSplat()
                             ? SmallVector<APInt>{rhs.getSplatValue<APInt>()}
                             : valuesOf<APInt>(rhs);
  SmallVector<APInt> out;
  for (int64_t i = 0; i < n; ++i) {
    std::optional<APInt> v = intFn(pick(a, i), pick(b, i));
    if (!v)
      return {};
    out.push_back(*v);
  }
  return DenseElementsAttr::get(resultType, out);
}

Attribute mlir::ober::detail::foldUnary(
    Attribute inputAttr, ShapedType resultType,
    function_ref<std::optional<APFloat>(const APFloat &)> floatFn,
    function_ref<std::optional<APInt>(const APInt &)> intFn) {
  DenseElementsAttr input = foldable(inputAttr);
  if (!input || input.getType() != resultType)
    return {};
  if (isa<FloatType>(input.getElementType())) {
    SmallVector<APFloat> out;
    for (const APFloat &v : input.isSplat()
                                ? SmallVector<APFloat>{input.getSplatValue<APFloat>()}
                                : valuesOf<APFloat>(input)) {
      std::optional<APFloat> r = floatFn(v);
      if (!r)
        return {};
      out.push_back(*r);
    }
    return DenseElementsAttr::get(resultType, out);
  }
  if (!intFn || input.getElementType().isInteger(1))
    return {};
  SmallVector<APInt> out;
  for (const APInt &v : input.isSplat()
                            ? SmallVector<APInt>{input.getSplatValue<APInt>()}
                            : valuesOf<APInt>(input)) {
    std::optional<APInt> r = intFn(v);
    if (!r)
      return {};
    out.push_back(*r);
  }
  return DenseElementsAttr::get(resultType, out);
}

Attribute mlir::ober::detail::castElements(Attribute inputAttr,
                                           ShapedType resultType) {
  DenseElementsAttr input = foldable(inputAttr);
  if (!input)
    return {};
  Type from = input.getElementType(), to = resultType.getElementType();
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  auto toFloat = dyn_cast<FloatType>(to);
  SmallVector<Attribute> out;
  auto convertOne = [&](Attribute v) -> Attribute {
    if (auto f = dyn_cast<FloatAttr>(v)) {
      APFloat value = f.getValue();
      if (toFloat) {
        bool losesInfo;
        value.convert(toFloat.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
        return FloatAttr::get(to, value);
      }
      if (toInt.getWidth() == 1)
        return IntegerAttr::get(to, APInt(1, value.isZero() ? 0 : 1));
      llvm::APSInt result(toInt.getWidth(), /*isUnsigned=*/false);
      bool isExact;
      if (value.convertToInteger(result, APFloat::rmTowardZero, &isExact) &
          APFloat::opInvalidOp)
        return {};
      return IntegerAttr::get(to, result);
    }
    APInt value = cast<IntegerAttr>(v).getValue();
    bool isBool = fromInt.getWidth() == 1;
    if (toFloat) {
      APFloat result(toFloat.getFloatSemantics());
      result.convertFromAPInt(value, /*IsSigned=*/!isBool,
                              APFloat::rmNearestTiesToEven);
      return FloatAttr::get(to, result);
    }
    if (toInt.getWidth() == 1)
      return IntegerAttr::get(to, APInt(1, value.isZero() ? 0 : 1));
    return IntegerAttr::get(to, isBool ? value.zext(toInt.getWidth())
                                       : value.sextOrTrunc(toInt.getWidth()));
  };
  if (input.isSplat()) {
    Attribute v = convertOne(input.getSplatValue<Attribute>());
    return v ? DenseElementsAttr::get(resultType, v) : Attribute();
  }
  for (Attribute v : input.getValues<Attribute>()) {
    Attribute c = convertOne(v);
    if (!c)
      return {};
    out.push_back(c);
  }
  return DenseElementsAttr::get(resultType, out);
}
