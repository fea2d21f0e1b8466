//===- FilesTest.cpp - .npy and weights files -----------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Npy.h"
#include "ober/Runtime/Weights.h"

#include "../TestSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace ober::rt;

namespace {

std::string tempDir() {
  char pattern[] = "/tmp/ober-files-XXXXXX";
  const char *dir = mkdtemp(pattern);
  return dir ? dir : "/tmp";
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string u64le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

void npyRoundTrip(const std::string &dir) {
  NpyArray a;
  a.type = DType::F32;
  a.shape = {2, 3};
  float values[6] = {1, 2, 3, 4, 5, -6.5f};
  a.data.assign(reinterpret_cast<char *>(values),
                reinterpret_cast<char *>(values) + sizeof values);
  std::string error;
  EXPECT(writeNpy(dir + "/a.npy", a, error));
  NpyArray b;
  EXPECT(readNpy(dir + "/a.npy", b, error));
  EXPECT(b.type == DType::F32 && b.shape == a.shape && b.data == a.data);

  NpyArray scalar;
  scalar.type = DType::I64;
  int64_t v = -7;
  scalar.data.assign(reinterpret_cast<char *>(&v),
                     reinterpret_cast<char *>(&v) + 8);
  EXPECT(writeNpy(dir + "/s.npy", scalar, error));
  NpyArray s2;
  EXPECT(readNpy(dir + "/s.npy", s2, error) && s2.shape.empty() &&
         s2.data == scalar.data);

  NpyArray bf;
  bf.type = DType::BF16;
  EXPECT(!writeNpy(dir + "/bf.npy", bf, error) &&
         error.find("NumPy has no bfloat16") != std::string::npos);
}

void npyErrors(const std::string &dir) {
  NpyArray out;
  std::string error;
  EXPECT(!readNpy(dir + "/missing.npy", out, error) &&
         error.find("cannot open") != std::string::npos);
  writeBytes(dir + "/bad.npy", "hello world");
  EXPECT(!readNpy(dir + "/bad.npy", out, error) &&
         error.find("bad magic") != std::string::npos);
  std::string header = "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size());
  file += '\0';
  writeBytes(dir + "/complex.npy", file + header + std::string(8, '\0'));
  EXPECT(!readNpy(dir + "/complex.npy", out, error) &&
         error.find("unsupported dtype '<c8'") != std::string::npos);
  header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size());
  file += '\0';
  writeBytes(dir + "/short.npy", file + header + std::string(8, '\0'));
  EXPECT(!readNpy(dir + "/short.npy", out, error) &&
         error.find("does not match shape") != std::string::npos);
  // Found by fuzzing: a shape whose element count overflows int64.
  header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
           "9223372036854775807), }";
  file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size());
  file += '\0';
  writeBytes(dir + "/overflow.npy", file + header + std::string(8, '\0'));
  EXPECT(!readNpy(dir + "/overflow.npy", out, error) &&
         error.find("holds more than 2^62 bytes") != std::string::npos);
}

void weightsRoundTrip(const std::string &dir) {
  float w[4] = {1, 2, 3, 4};
  int64_t ids[3] = {5, 6, 7};
  std::vector<WeightData> weights = {
      {"fc.weight", DType::F32, {2, 2}, w, sizeof w},
      {"emb \"ids\"", DType::I64, {3}, ids, sizeof ids}};
  std::string error;
  EXPECT(writeWeights(dir + "/w.safetensors", weights, {{"producer", "test"}},
                      error));
  WeightsFile file;
  EXPECT(file.open(dir + "/w.safetensors", error));
  EXPECT(file.entries().size() == 2);
  EXPECT(file.metadata().at("producer") == "test");
  const WeightInfo *info = file.find("fc.weight");
  EXPECT(info && info->dtype == DType::F32 && info->shape.size() == 2);
  std::vector<char> bytes;
  EXPECT(info && file.read(*info, bytes, error) &&
         std::memcmp(bytes.data(), w, sizeof w) == 0);
  info = file.find("emb \"ids\"");
  EXPECT(info && file.read(*info, bytes, error) &&
         std::memcmp(bytes.data(), ids, sizeof ids) == 0);

  EXPECT(!writeWeights(dir + "/dup.safetensors",
                       {weights[0], weights[0]}, {}, error) &&
         error.find("written twice") != std::string::npos);
}

void weightsErrors(const std::string &dir) {
  WeightsFile file;
  std::string error;
  auto bad = [&](const std::string &header, const std::string &data,
                 const char *expected) {
    writeBytes(dir + "/bad.safetensors", u64le(header.size()) + header + data);
    bool ok = file.open(dir + "/bad.safetensors", error);
    if (ok || error.find(expected) == std::string::npos) {
      std::fprintf(stderr, "header %s: got '%s', expected '%s'\n",
                   header.c_str(), error.c_str(), expected);
      ++testFailures();
    }
  };
  bad("{", "", "malformed header");
  bad("[1]", "", "not a JSON object");
  bad(R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})",
      std::string(8, '\0'), "unsupported dtype \"C64\"");
  bad(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
      std::string(8, '\0'), "outside the 8-byte data section");
  bad(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
      std::string(8, '\0'), "do not match its shape");
  bad(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
      std::string(4, '\0'), "bad dimension -1");
  bad(R"({"a":{"shape":[1]}})", "", "needs 'dtype', 'shape' and 'data_offsets'");
  // Sizes whose product overflows 64 bits.
  bad(R"({"a":{"dtype":"F32","shape":[281474976710656,281474976710656],)"
      R"("data_offsets":[0,0]}})",
      "", "shape too large");
  writeBytes(dir + "/huge.safetensors", u64le(1ull << 40) + "{}");
  EXPECT(!file.open(dir + "/huge.safetensors", error) &&
         error.find("exceeds the file") != std::string::npos);
}
} // namespace

int main() {
  std::string dir = tempDir();
  npyRoundTrip(dir);
  npyErrors(dir);
  weightsRoundTrip(dir);
  weightsErrors(dir);
  std::string cleanup = "rm -rf '" + dir + "'";
  if (std::system(cleanup.c_str()) != 0)
    std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  return testSummary();
}
