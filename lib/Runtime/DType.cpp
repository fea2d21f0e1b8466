//===- DType.cpp - element types of runtime tensors -----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/DType.h"

using namespace ober::rt;

namespace {
struct Info {
  DType type;
  size_t size;
  const char *name;
  const char *safetensors;
};
constexpr Info kInfo[] = {
    {DType::F16, 2, "float16", "F16"},   {DType::BF16, 2, "bfloat16", "BF16"},
    {DType::F32, 4, "float32", "F32"},   {DType::F64, 8, "float64", "F64"},
    {DType::Bool, 1, "bool", "BOOL"},    {DType::I8, 1, "int8", "I8"},
    {DType::U8, 1, "uint8", "U8"},       {DType::I16, 2, "int16", "I16"},
    {DType::I32, 4, "int32", "I32"},     {DType::I64, 8, "int64", "I64"},
    {DType::Unicode, 4, "str", "STRING"},
};
const Info &info(DType type) { return kInfo[static_cast<int>(type)]; }
} // namespace

size_t ober::rt::dtypeSize(DType type) { return info(type).size; }
const char *ober::rt::dtypeName(DType type) { return info(type).name; }
const char *ober::rt::dtypeSafeTensorsName(DType type) {
  return info(type).safetensors;
}
std::optional<DType> ober::rt::dtypeFromSafeTensorsName(const std::string &name) {
  for (const Info &i : kInfo)
    if (name == i.safetensors)
      return i.type;
  return std::nullopt;
}
