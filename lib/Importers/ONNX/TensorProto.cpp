//===- TensorProto.cpp - ONNX TensorProto decoding ------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "ober/Reference/TensorIO.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::onnx_import;
using ::ober::rt::DType;

namespace {
/// Element counts above this are refused: no model we take has them, and a
/// malformed file must not make us allocate without bound.
constexpr uint64_t kMaxElements = uint64_t(1) << 36;

std::optional<DType> dtypeOfProto(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT: return DType::F32;
  case onnx::TensorProto::DOUBLE: return DType::F64;
  case onnx::TensorProto::FLOAT16: return DType::F16;
  case onnx::TensorProto::BFLOAT16: return DType::BF16;
  case onnx::TensorProto::BOOL: return DType::Bool;
  case onnx::TensorProto::INT8: return DType::I8;
  case onnx::TensorProto::INT32: return DType::I32;
  case onnx::TensorProto::INT64: return DType::I64;
  default: return std::nullopt;
  }
}

/// Checks that `location` stays inside `baseDir` and returns the full path.
std::optional<std::string> externalPath(StringRef baseDir, StringRef location,
                                        std::string &error) {
  if (baseDir.empty()) {
    error = "external data is not available for a model read from memory";
    return std::nullopt;
  }
  if (location.empty() || llvm::sys::path::is_absolute(location)) {
    error = "external data location '" + location.str() +
            "' must be a relative path inside the model's folder";
    return std::nullopt;
  }
  for (auto it = llvm::sys::path::begin(location),
            e = llvm::sys::path::end(location);
       it != e; ++it)
    if (*it == "..") {
      error = "external data location '" + location.str() +
              "' must not leave the model's folder ('..')";
      return std::nullopt;
    }
  SmallString<256> full(baseDir);
  llvm::sys::path::append(full, location);
  // Symbolic links may not lead outside either.
  SmallString<256> realBase, realFull;
  if (llvm::sys::fs::real_path(baseDir, realBase) ||
      llvm::sys::fs::real_path(full, realFull)) {
    error = "external data file '" + full.str().str() + "' does not exist";
    return std::nullopt;
  }
  if (!StringRef(realFull).starts_with(realBase.str().str() + "/")) {
    error = "external data file '" + location.str() +
            "' resolves outside the model's folder";
    return std::nullopt;
  }
  return realFull.str().str();
}
} // namespace

Type mlir::ober::onnx_import::elementTypeOf(MLIRContext *context,
                                            int32_t dataType) {
  std::optional<DType> d = dtypeOfProto(dataType);
  return d ? reference::elementTypeOf(context, *d) : Type();
}

const char *mlir::ober::onnx_import::dataTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
               static_cast<onnx::TensorProto_DataType>(dataType))
        .c_str();
  return "an unknown type";
}

std::optional<reference::Tensor> mlir::ober::onnx_import::decodeTensor(
    MLIRContext *context, const onnx::TensorProto &proto, StringRef baseDir,
    std::string &error) {
  std::optional<DType> dtype = dtypeOfProto(proto.data_type());
  if (!dtype) {
    error = std::string("unsupported data type ") +
            dataTypeName(proto.data_type()) +
            " (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL, INT8, "
            "INT32, INT64)";
    return std::nullopt;
  }
  SmallVector<int64_t> shape;
  uint64_t count = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) {
      error = "negative dimension " + std::to_string(d);
      return std::nullopt;
    }
    shape.push_back(d);
    count *= static_cast<uint64_t>(d);
    if (count > kMaxElements) {
      error = "too many elements";
      return std::nullopt;
    }
  }
  size_t size = ::ober::rt::dtypeSize(*dtype);
  Type elementType = reference::elementTypeOf(context, *dtype);
  std::vector<char> bytes;

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = count * size;
    bool hasLength = false;
    for (const auto &entry : proto.external_data()) {
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset" || entry.key() == "length") {
        char *end = nullptr;
        unsigned long long v = std::strtoull(entry.value().c_str(), &end, 10);
        if (entry.value().empty() || *end != '\0') {
          error = "external data " + entry.key() + " '" + entry.value() +
                  "' is not a number";
          return std::nullopt;
        }
        (entry.key() == "offset" ? offset : length) = v;
        hasLength |= entry.key() == "length";
      }
    }
    std::optional<std::string> path = externalPath(baseDir, location, error);
    if (!path)
      return std::nullopt;
    uint64_t fileSize = 0;
    if (llvm::sys::fs::file_size(*path, fileSize) || offset > fileSize ||
        count * size > fileSize - offset ||
        (hasLength && length != count * size)) {
      error = "external data in '" + location + "' at offset " +
              std::to_string(offset) + " does not hold " +
              std::to_string(count * size) + " bytes";
      return std::nullopt;
    }
    bytes.resize(count * size);
    std::ifstream in(*path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(bytes.data(), bytes.size())) {
      error = "cannot read external data '" + location + "'";
      return std::nullopt;
    }
  } else if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != count * size) {
      error = "raw_data holds " + std::to_string(raw.size()) +
              " bytes, expected " + std::to_string(count * size);
      return std::nullopt;
    }
    bytes.assign(raw.begin(), raw.end());
  } else {
    // Typed fields: widen into little-endian bytes of `dtype`.
    auto fill = [&](auto values, auto convert) -> bool {
      if (static_cast<uint64_t>(values.size()) != count) {
        error = "holds " + std::to_string(values.size()) +
                " values, expected " + std::to_string(count);
        return false;
      }
      bytes.resize(count * size);
      for (uint64_t i = 0; i < count; ++i)
        convert(bytes.data() + i * size, values.Get(i));
      return true;
    };
    bool ok;
    switch (*dtype) {
    case DType::F32:
      ok = fill(proto.float_data(), [](char *p, float v) { std::memcpy(p, &v, 4); });
      break;
    case DType::F64:
      ok = fill(proto.double_data(), [](char *p, double v) { std::memcpy(p, &v, 8); });
      break;
    case DType::I64:
      ok = fill(proto.int64_data(), [](char *p, int64_t v) { std::memcpy(p, &v, 8); });
      break;
    case DType::I32:
      ok = fill(proto.int32_data(), [](char *p, int32_t v) { std::memcpy(p, &v, 4); });
      break;
    case DType::F16:
    case DType::BF16:
      ok = fill(proto.int32_data(), [](char *p, int32_t v) {
        uint16_t bits = static_cast<uint16_t>(v);
        std::memcpy(p, &bits, 2);
      });
      break;
    default: // BOOL, INT8
      ok = fill(proto.int32_data(), [](char *p, int32_t v) {
        *p = static_cast<char>(v);
      });
      break;
    }
    if (!ok)
      return std::nullopt;
  }
  return reference::decodeTensor(*dtype, shape, bytes, elementType, error);
}
