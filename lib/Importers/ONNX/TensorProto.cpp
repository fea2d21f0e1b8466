//===- TensorProto.cpp - ONNX TensorProto decoding ------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
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
  if (dataType == onnx::TensorProto::STRING)
    return StringType::get(context);
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

namespace {
/// Where and how a TensorProto's data is stored, checked for consistency.
struct DataPlan {
  DType dtype;
  SmallVector<int64_t> shape;
  uint64_t count = 1;
  size_t size = 0;
  bool external = false;
  std::string path;
  uint64_t offset = 0;
};

std::optional<DataPlan> planTensor(const onnx::TensorProto &proto,
                                   StringRef baseDir, std::string &error) {
  std::optional<DType> dtype = dtypeOfProto(proto.data_type());
  if (!dtype) {
    error = std::string("unsupported data type ") +
            dataTypeName(proto.data_type()) +
            " (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL, INT8, "
            "INT32, INT64)";
    return std::nullopt;
  }
  DataPlan plan;
  plan.dtype = *dtype;
  plan.size = ::ober::rt::dtypeSize(*dtype);
  for (int64_t d : proto.dims()) {
    if (d < 0) {
      error = "negative dimension " + std::to_string(d);
      return std::nullopt;
    }
    plan.shape.push_back(d);
    plan.count *= static_cast<uint64_t>(d);
    if (plan.count > kMaxElements) {
      error = "too many elements";
      return std::nullopt;
    }
  }
  uint64_t bytes = plan.count * plan.size;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t length = bytes;
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
        (entry.key() == "offset" ? plan.offset : length) = v;
        hasLength |= entry.key() == "length";
      }
    }
    std::optional<std::string> path = externalPath(baseDir, location, error);
    if (!path)
      return std::nullopt;
    uint64_t fileSize = 0;
    if (llvm::sys::fs::file_size(*path, fileSize) || plan.offset > fileSize ||
        bytes > fileSize - plan.offset || (hasLength && length != bytes)) {
      error = "external data in '" + location + "' at offset " +
              std::to_string(plan.offset) + " does not hold " +
              std::to_string(bytes) + " bytes";
      return std::nullopt;
    }
    plan.external = true;
    plan.path = *path;
    return plan;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) {
      error = "raw_data holds " + std::to_string(proto.raw_data().size()) +
              " bytes, expected " + std::to_string(bytes);
      return std::nullopt;
    }
    return plan;
  }
  int64_t held;
  switch (*dtype) {
  case DType::F32: held = proto.float_data_size(); break;
  case DType::F64: held = proto.double_data_size(); break;
  case DType::I64: held = proto.int64_data_size(); break;
  default: held = proto.int32_data_size(); break;
  }
  if (static_cast<uint64_t>(held) != plan.count) {
    error = "holds " + std::to_string(held) + " values, expected " +
            std::to_string(plan.count);
    return std::nullopt;
  }
  return plan;
}
} // namespace

bool mlir::ober::onnx_import::validateTensorData(
    const onnx::TensorProto &proto, StringRef baseDir, std::string &error) {
  return planTensor(proto, baseDir, error).has_value();
}

std::optional<reference::Tensor> mlir::ober::onnx_import::decodeTensor(
    MLIRContext *context, const onnx::TensorProto &proto, StringRef baseDir,
    std::string &error) {
  std::optional<DataPlan> plan = planTensor(proto, baseDir, error);
  if (!plan)
    return std::nullopt;
  DType dtype = plan->dtype;
  uint64_t count = plan->count;
  size_t size = plan->size;
  Type elementType = reference::elementTypeOf(context, dtype);
  std::vector<char> bytes;
  if (plan->external) {
    bytes.resize(count * size);
    std::ifstream in(plan->path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(plan->offset));
    if (!in.read(bytes.data(), bytes.size())) {
      error = "cannot read external data '" + plan->path + "'";
      return std::nullopt;
    }
  } else if (proto.has_raw_data()) {
    bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    // Typed fields: widen into little-endian bytes of `dtype`.
    bytes.resize(count * size);
    for (uint64_t i = 0; i < count; ++i) {
      char *p = bytes.data() + i * size;
      switch (dtype) {
      case DType::F32: {
        float v = proto.float_data(i);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::F64: {
        double v = proto.double_data(i);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::I64: {
        int64_t v = proto.int64_data(i);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::I32: {
        int32_t v = proto.int32_data(i);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::F16:
      case DType::BF16: {
        uint16_t bits = static_cast<uint16_t>(proto.int32_data(i));
        std::memcpy(p, &bits, 2);
        break;
      }
      default: // BOOL, INT8
        *p = static_cast<char>(proto.int32_data(i));
        break;
      }
    }
  }
  return reference::decodeTensor(dtype, plan->shape, bytes, elementType, error);
}
