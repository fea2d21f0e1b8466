//===- Weights.cpp - the external weights file ----------------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Weights.h"

#include "JsonLite.h"

#include <cstring>
#include <set>

using namespace ober::rt;

namespace {
/// Headers above this size are not safetensors files written by anyone sane.
constexpr uint64_t kMaxHeaderSize = 256ull << 20;
} // namespace

const WeightInfo *WeightsFile::find(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &infos[it->second];
}

bool WeightsFile::open(const std::string &file, std::string &error) {
  path = file;
  infos.clear();
  index.clear();
  meta.clear();
  stream.close();
  stream.clear();
  stream.open(path, std::ios::binary);
  auto fail = [&](const std::string &message) {
    error = path + ": " + message;
    return false;
  };
  if (!stream)
    return fail("cannot open weights file");
  stream.seekg(0, std::ios::end);
  uint64_t fileSize = static_cast<uint64_t>(stream.tellg());
  stream.seekg(0);
  unsigned char lenBytes[8];
  if (fileSize < 8 || !stream.read(reinterpret_cast<char *>(lenBytes), 8))
    return fail("too short for a weights file");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | lenBytes[i];
  if (headerSize > kMaxHeaderSize || headerSize > fileSize - 8)
    return fail("header size " + std::to_string(headerSize) +
                " exceeds the file");
  std::string header(headerSize, '\0');
  if (!stream.read(header.data(), headerSize))
    return fail("cannot read the header");
  dataStart = 8 + headerSize;
  uint64_t dataSize = fileSize - dataStart;

  json::Value root;
  std::string parseError;
  if (!json::parse(header, root, parseError))
    return fail("malformed header: " + parseError);
  if (!root.isObject())
    return fail("header is not a JSON object");
  for (const auto &[key, entry] : root.object) {
    const std::string &name = key;
    const json::Value &value = entry;
    if (name == "__metadata__") {
      if (!value.isObject())
        return fail("__metadata__ is not an object");
      for (const auto &[k, v] : value.object) {
        if (!v.isString())
          return fail("__metadata__." + k + " is not a string");
        meta[k] = v.string;
      }
      continue;
    }
    auto field = [&](const char *key) -> const json::Value * {
      auto it = value.object.find(key);
      return it == value.object.end() ? nullptr : &it->second;
    };
    const json::Value *dtype = field("dtype"), *shape = field("shape"),
                      *offsets = field("data_offsets");
    if (!value.isObject() || !dtype || !shape || !offsets)
      return fail("tensor '" + name +
                  "' needs 'dtype', 'shape' and 'data_offsets'");
    WeightInfo info;
    info.name = name;
    std::optional<DType> type =
        dtype->isString() ? dtypeFromSafeTensorsName(dtype->string)
                          : std::nullopt;
    if (!type)
      return fail("tensor '" + name + "': unsupported dtype " + dtype->dump() +
                  " (supported: F16, BF16, F32, F64, BOOL, I8, U8, I16, I32, "
                  "I64)");
    info.dtype = *type;
    if (!shape->isArray())
      return fail("tensor '" + name + "': 'shape' is not an array");
    for (const json::Value &d : shape->array) {
      if (!d.isInteger() || d.integer < 0)
        return fail("tensor '" + name + "': bad dimension " + d.dump());
      info.shape.push_back(d.integer);
    }
    std::optional<uint64_t> bytes = checkedBytes(info.shape, dtypeSize(*type));
    if (!bytes)
      return fail("tensor '" + name + "': shape too large");
    if (!offsets->isArray() || offsets->array.size() != 2 ||
        !offsets->array[0].isInteger() || !offsets->array[1].isInteger())
      return fail("tensor '" + name +
                  "': 'data_offsets' must be [begin, end]");
    int64_t begin = offsets->array[0].integer, end = offsets->array[1].integer;
    if (begin < 0 || end < begin || static_cast<uint64_t>(end) > dataSize)
      return fail("tensor '" + name + "': data_offsets [" +
                  std::to_string(begin) + ", " + std::to_string(end) +
                  "] outside the " + std::to_string(dataSize) +
                  "-byte data section");
    info.offset = begin;
    info.size = end - begin;
    if (info.size != *bytes)
      return fail("tensor '" + name + "': " + std::to_string(info.size) +
                  " bytes do not match its shape and dtype");
    index[name] = infos.size();
    infos.push_back(std::move(info));
  }
  return true;
}

bool WeightsFile::read(const WeightInfo &info, std::vector<char> &out,
                       std::string &error) const {
  out.resize(info.size);
  stream.clear();
  stream.seekg(static_cast<std::streamoff>(dataStart + info.offset));
  if (info.size && !stream.read(out.data(), info.size)) {
    error = path + ": cannot read tensor '" + info.name + "'";
    return false;
  }
  return true;
}

bool ober::rt::writeWeights(const std::string &path,
                            const std::vector<WeightData> &weights,
                            const std::map<std::string, std::string> &metadata,
                            std::string &error) {
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[k, v] : metadata) {
      header += (first ? "" : ",") + json::quote(k) + ":" + json::quote(v);
      first = false;
    }
    header += "}";
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const WeightData &w : weights) {
    if (!names.insert(w.name).second) {
      error = path + ": tensor '" + w.name + "' written twice";
      return false;
    }
    uint64_t elements = 1;
    for (int64_t d : w.shape)
      elements *= static_cast<uint64_t>(d);
    if (elements * dtypeSize(w.dtype) != w.size) {
      error = path + ": tensor '" + w.name + "' size does not match its shape";
      return false;
    }
    if (header.size() > 1)
      header += ",";
    header += json::quote(w.name) + ":{\"dtype\":\"" +
              dtypeSafeTensorsName(w.dtype) + "\",\"shape\":[";
    for (size_t i = 0; i < w.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(w.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + w.size) + "]}";
    offset += w.size;
  }
  header += "}";
  // Align the data section to 8 bytes, as the safetensors writer does.
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = path + ": cannot create";
    return false;
  }
  uint64_t n = header.size();
  char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.write(lenBytes, 8);
  out.write(header.data(), header.size());
  for (const WeightData &w : weights)
    out.write(static_cast<const char *>(w.data), w.size);
  if (!out) {
    error = path + ": write failed";
    return false;
  }
  return true;
}
