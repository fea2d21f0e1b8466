//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Npy.h"

#include "ober/Runtime/Files.h"

#include <cstring>
#include <optional>
#include <fstream>
#include <sstream>

using namespace ober::rt;

namespace {

struct TypeInfo {
  DType type;
  const char *descr; // without the byte-order character
};

constexpr TypeInfo kTypes[] = {
    {DType::F16, "f2"}, {DType::F32, "f4"}, {DType::F64, "f8"},
    {DType::Bool, "b1"}, {DType::I8, "i1"}, {DType::U8, "u1"},
    {DType::I16, "i2"}, {DType::I32, "i4"}, {DType::I64, "i8"},
};

const TypeInfo *info(DType type) {
  for (const TypeInfo &t : kTypes)
    if (t.type == type)
      return &t;
  return nullptr;
}

/// The value of `key` in the header dictionary, as raw text up to the next
/// top-level comma or closing brace.
bool dictValue(const std::string &header, const std::string &key,
               std::string &value) {
  std::string quoted[] = {"'" + key + "'", "\"" + key + "\""};
  size_t pos = std::string::npos;
  for (const std::string &q : quoted)
    if ((pos = header.find(q)) != std::string::npos) {
      pos += q.size();
      break;
    }
  if (pos == std::string::npos)
    return false;
  pos = header.find(':', pos);
  if (pos == std::string::npos)
    return false;
  ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  value = header.substr(pos, end - pos);
  size_t b = value.find_first_not_of(" \t"), e = value.find_last_not_of(" \t");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  return true;
}

} // namespace


int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool ober::rt::parseNpy(const char *bytes, size_t size, NpyArray &out,
                        std::string &error, size_t *dataOffsetOut) {
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (headerLen > size - offset) {
    error = "truncated .npy header";
    return false;
  }
  std::string header(bytes + offset, headerLen);
  std::string descr, fortran, shape;
  if (!dictValue(header, "descr", descr) ||
      !dictValue(header, "fortran_order", fortran) ||
      !dictValue(header, "shape", shape)) {
    error = "malformed .npy header: " + header;
    return false;
  }
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"')) {
    error = "malformed dtype " + descr;
    return false;
  }
  descr = descr.substr(1, descr.size() - 2);
  char order = descr.empty() ? '?' : descr[0];
  std::string code = descr.size() > 1 ? descr.substr(1) : "";
  const TypeInfo *found = nullptr;
  for (const TypeInfo &t : kTypes)
    if (code == t.descr)
      found = &t;
  static constexpr TypeInfo unicode = {DType::Unicode, "U"};
  int64_t itemChars = 0;
  if (!found && code.size() > 1 && code[0] == 'U' && order != '>') {
    char *end = nullptr;
    itemChars = std::strtoll(code.c_str() + 1, &end, 10);
    if (*end == '\0' && itemChars > 0 && itemChars < (1 << 20))
      found = &unicode;
  }
  if (!found || (order == '>' && dtypeSize(found->type) > 1) ||
      (order != '<' && order != '|' && order != '=' && order != '>')) {
    error = "unsupported dtype '" + descr +
            "' (supported: little-endian float16/32/64, bool, int8, uint8, "
            "int16, int32, int64, unicode strings)";
    return false;
  }
  if (fortran != "False") {
    error = "Fortran-ordered arrays are not supported (save with "
            "numpy.ascontiguousarray)";
    return false;
  }
  out.type = found->type;
  out.itemChars = itemChars;
  out.shape.clear();
  std::string dims = shape;
  if (dims.size() < 2 || dims.front() != '(' || dims.back() != ')') {
    error = "malformed shape " + shape;
    return false;
  }
  std::stringstream ss(dims.substr(1, dims.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" "), e = item.find_last_not_of(" L");
    if (b == std::string::npos)
      continue;
    item = item.substr(b, e - b + 1);
    char *end = nullptr;
    long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || d < 0) {
      error = "malformed shape " + shape;
      return false;
    }
    out.shape.push_back(d);
  }
  std::optional<uint64_t> needed = checkedBytes(
      out.shape, dtypeSize(found->type) *
                     (found->type == DType::Unicode ? itemChars : 1));
  size_t dataOffset = offset + headerLen;
  if (!needed) {
    error = "shape " + shape + " of " + dtypeName(found->type) +
            " holds more than 2^62 bytes";
    return false;
  }
  size_t bytesNeeded = static_cast<size_t>(*needed);
  if (size - dataOffset != bytesNeeded) {
    error = "data size " + std::to_string(size - dataOffset) +
            " bytes does not match shape " + shape + " of " +
            dtypeName(found->type) +
            " (" + std::to_string(bytesNeeded) + " bytes)";
    return false;
  }
  if (dataOffsetOut)
    *dataOffsetOut = dataOffset;
  else
    out.data.assign(bytes + dataOffset, bytes + size);
  return true;
}

bool ober::rt::readNpy(const std::string &path, NpyArray &out,
                       std::string &error) {
  // Pipes and devices are read; a folder would throw at the first read.
  std::ifstream in(path, std::ios::binary);
  if (!in || isDirectory(path)) {
    error = path + ": cannot open" + (in ? " (a folder)" : "");
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (!parseNpy(bytes.data(), bytes.size(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

bool ober::rt::writeNpy(const std::string &path, const NpyArray &array,
                        std::string &error) {
  static constexpr TypeInfo unicode = {DType::Unicode, "U"};
  const TypeInfo *t = array.type == DType::Unicode ? &unicode : info(array.type);
  std::string descr = t ? t->descr : "";
  if (array.type == DType::Unicode)
    descr += std::to_string(std::max<int64_t>(array.itemChars, 1));
  if (!t) {
    error = path + ": NumPy has no " + dtypeName(array.type) + " type";
    return false;
  }
  size_t size = dtypeSize(array.type) *
                (array.type == DType::Unicode ? std::max<int64_t>(array.itemChars, 1) : 1);
  if (array.data.size() != static_cast<size_t>(array.numElements()) * size) {
    error = path + ": data does not match the shape";
    return false;
  }
  std::string shape = "(";
  for (int64_t d : array.shape)
    shape += std::to_string(d) + (array.shape.size() == 1 ? "," : ", ");
  if (array.shape.size() > 1)
    shape.resize(shape.size() - 2);
  shape += ")";
  std::string dict = std::string("{'descr': '") + (size == 1 ? "|" : "<") +
                     descr + "', 'fortran_order': False, 'shape': " + shape +
                     ", }";
  // Pad so that the data starts on a 64-byte boundary; end with a newline.
  bool v2 = dict.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::ofstream outFile(path, std::ios::binary);
  if (!outFile) {
    error = path + ": cannot create";
    return false;
  }
  outFile.write("\x93NUMPY", 6);
  char version[2] = {static_cast<char>(v2 ? 2 : 1), 0};
  outFile.write(version, 2);
  uint32_t len = static_cast<uint32_t>(dict.size());
  char lenBytes[4] = {static_cast<char>(len & 0xff),
                      static_cast<char>((len >> 8) & 0xff),
                      static_cast<char>((len >> 16) & 0xff),
                      static_cast<char>((len >> 24) & 0xff)};
  outFile.write(lenBytes, v2 ? 4 : 2);
  outFile.write(dict.data(), dict.size());
  outFile.write(array.data.data(), array.data.size());
  if (!outFile) {
    error = path + ": write failed";
    return false;
  }
  return true;
}
