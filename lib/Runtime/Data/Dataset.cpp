//===- Dataset.cpp - training data sets read by sample --------------------===//
//
// Part of Ober-Train's runtime (no MLIR). The `.idx` layout is Megatron's
// MMapIndexedDataset: "MMIDIDX\0\0", u64 version 1, u8 dtype code (1 u8,
// 2 i8, 3 i16, 4 i32, 5 i64, 6 f64, 7 f32, 8 u16), u64 sequence count, u64
// document count, i32 lengths[seq], i64 pointers[seq] (byte offsets into
// `.bin`), i64 document indices[doc + 1].
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Dataset.h"

#include "ober/Runtime/Files.h"
#include "ober/Runtime/Npy.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ober::rt;

Dataset::~Dataset() = default;

namespace {

/// A read-only memory map of a file.
class Mapped {
public:
  bool open(const std::string &path, std::string &error) {
    int fd = ::open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      if (fd >= 0)
        ::close(fd);
      error = path + ": cannot open";
      return false;
    }
    bytes = static_cast<size_t>(st.st_size);
    if (bytes) {
      void *p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        error = path + ": cannot map";
        return false;
      }
      base = static_cast<const char *>(p);
    }
    ::close(fd);
    return true;
  }
  ~Mapped() {
    if (base)
      munmap(const_cast<char *>(base), bytes);
  }
  const char *data() const { return base; }
  size_t size() const { return bytes; }

private:
  const char *base = nullptr;
  size_t bytes = 0;
};

template <typename T> T readAt(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// A Megatron indexed token data set.
class Tokens final : public Dataset {
public:
  bool open(const std::string &prefix, const std::vector<SampleSpec> &specs,
            std::string &error) {
    if (specs.size() != 2 || specs[0].shape.size() != 1 ||
        specs[0].shape != specs[1].shape ||
        (specs[0].dtype != DType::I64 && specs[0].dtype != DType::I32) ||
        specs[1].dtype != specs[0].dtype) {
      error = "a token data set feeds a step with two token-id inputs of "
              "[seq] tokens per sample (inputs and targets); this step's "
              "batch inputs are";
      for (const SampleSpec &s : specs) {
        error += " '" + s.name + "' " + dtypeName(s.dtype) + " [";
        for (size_t i = 0; i < s.shape.size(); ++i)
          error += (i ? ", " : "") + std::to_string(s.shape[i]);
        error += "] per sample";
      }
      return false;
    }
    seq = specs[0].shape[0];
    out = specs[0].dtype;
    idxPath = prefix + ".idx";
    if (!idx.open(idxPath, error) || !bin.open(prefix + ".bin", error))
      return false;
    const char *p = idx.data();
    size_t n = idx.size();
    auto bad = [&](const std::string &why) {
      error = idxPath + ": " + why;
      return false;
    };
    if (n < 34 || std::memcmp(p, "MMIDIDX\0\0", 9) != 0)
      return bad("not a Megatron index (magic MMIDIDX)");
    if (readAt<uint64_t>(p + 9) != 1)
      return bad("version " + std::to_string(readAt<uint64_t>(p + 9)) +
                 " (supported: 1)");
    uint8_t code = static_cast<uint8_t>(p[17]);
    if (code < 1 || code > 8 || code == 6 || code == 7)
      return bad("token dtype code " + std::to_string(code) +
                 " (supported: 1 u8, 2 i8, 3 i16, 4 i32, 5 i64, 8 u16)");
    tokenCode = code;
    tokenBytes = code == 1 || code == 2 ? 1 : code == 3 || code == 8 ? 2
                                        : code == 4                 ? 4
                                                                    : 8;
    uint64_t sequences = readAt<uint64_t>(p + 18);
    uint64_t documents = readAt<uint64_t>(p + 26);
    uint64_t need = 34 + sequences * 12 + (documents + 1) * 8;
    if (sequences > (n - 34) / 12 || n < need)
      return bad(std::to_string(sequences) + " sequences and " +
                 std::to_string(documents) + " documents need " +
                 std::to_string(need) + " bytes; the file has " +
                 std::to_string(n));
    const char *lengths = p + 34, *pointers = lengths + sequences * 4;
    starts.reserve(sequences + 1);
    int64_t total = 0;
    for (uint64_t i = 0; i < sequences; ++i) {
      int32_t length = readAt<int32_t>(lengths + i * 4);
      int64_t pointer = readAt<int64_t>(pointers + i * 8);
      if (length < 0 || pointer < 0 ||
          static_cast<uint64_t>(pointer) + static_cast<uint64_t>(length) *
                                               tokenBytes >
              bin.size())
        return bad("sequence " + std::to_string(i) + " (" +
                   std::to_string(length) + " tokens at byte " +
                   std::to_string(pointer) + ") lies outside " + prefix +
                   ".bin (" + std::to_string(bin.size()) + " bytes)");
      offsets.push_back(pointer);
      starts.push_back(total);
      total += length;
    }
    starts.push_back(total);
    samples = total > seq ? (total - 1) / seq : 0;
    if (samples == 0)
      return bad("the data set's " + std::to_string(total) +
                 " tokens make no sample of " + std::to_string(seq + 1));
    hash = hashFile(idxPath);
    return true;
  }

  int64_t size() const override { return samples; }

  void read(size_t k, int64_t sample, char *dst) const override {
    // Sample i: tokens [i * seq, i * seq + seq + 1) of the stream; input 0
    // its first seq, input 1 its last seq.
    int64_t first = sample * seq + (k == 1 ? 1 : 0);
    size_t seqIndex =
        std::upper_bound(starts.begin(), starts.end(), first) - starts.begin() -
        1;
    size_t esize = dtypeSize(out);
    for (int64_t t = 0; t < seq; ++t) {
      int64_t at = first + t;
      while (at >= starts[seqIndex + 1])
        ++seqIndex;
      const char *p = bin.data() + offsets[seqIndex] +
                      (at - starts[seqIndex]) * tokenBytes;
      int64_t v = 0;
      switch (tokenCode) {
      case 1: v = readAt<uint8_t>(p); break;
      case 2: v = readAt<int8_t>(p); break;
      case 3: v = readAt<int16_t>(p); break;
      case 8: v = readAt<uint16_t>(p); break;
      case 4: v = readAt<int32_t>(p); break;
      default: v = readAt<int64_t>(p); break;
      }
      if (out == DType::I64)
        std::memcpy(dst + t * esize, &v, esize);
      else {
        int32_t w = static_cast<int32_t>(v);
        std::memcpy(dst + t * esize, &w, esize);
      }
    }
  }

  std::string fingerprint() const override {
    return "tokens seq=" + std::to_string(seq) + " tokens=" +
           std::to_string(starts.back()) + " idx=" + hash;
  }

private:
  Mapped idx, bin;
  std::string idxPath, hash;
  int64_t seq = 0, samples = 0;
  int tokenCode = 5;
  size_t tokenBytes = 8;
  DType out = DType::I64;
  std::vector<int64_t> offsets, starts;
};

/// A folder of .npy arrays, one per batch input.
class Arrays final : public Dataset {
public:
  bool open(const std::string &dir, const std::vector<SampleSpec> &specs,
            std::string &error) {
    files.resize(specs.size());
    for (size_t k = 0; k < specs.size(); ++k) {
      const SampleSpec &s = specs[k];
      std::string path = dir + "/" + s.name + ".npy";
      if (!files[k].map.open(path, error)) {
        error += " (the data set needs <input name>.npy for input '" +
                 s.name + "')";
        return false;
      }
      NpyArray meta;
      size_t offset = 0;
      if (!parseNpy(files[k].map.data(), files[k].map.size(), meta, error,
                    &offset)) {
        error = path + ": " + error;
        return false;
      }
      std::vector<int64_t> sample(meta.shape.begin() + (meta.shape.empty() ? 0 : 1),
                                  meta.shape.end());
      if (meta.shape.empty() || sample != s.shape || meta.type != s.dtype) {
        error = path + ": holds " + dtypeName(meta.type) + " [";
        for (size_t i = 0; i < meta.shape.size(); ++i)
          error += (i ? ", " : "") + std::to_string(meta.shape[i]);
        error += "], input '" + s.name + "' needs " + dtypeName(s.dtype) +
                 " [samples";
        for (int64_t d : s.shape)
          error += ", " + std::to_string(d);
        error += "]";
        return false;
      }
      files[k].offset = offset;
      files[k].bytes = dtypeSize(s.dtype);
      for (int64_t d : s.shape)
        files[k].bytes *= static_cast<size_t>(d);
      int64_t n = meta.shape[0];
      if (k > 0 && n != samples) {
        error = path + ": " + std::to_string(n) + " samples, " +
                specs[0].name + ".npy has " + std::to_string(samples);
        return false;
      }
      samples = n;
      print += s.name + ":" + std::to_string(files[k].map.size()) + ";";
    }
    if (samples == 0) {
      error = dir + ": the arrays hold no sample";
      return false;
    }
    return true;
  }
  int64_t size() const override { return samples; }
  void read(size_t k, int64_t sample, char *dst) const override {
    const File &f = files[k];
    std::memcpy(dst, f.map.data() + f.offset + sample * f.bytes, f.bytes);
  }
  std::string fingerprint() const override { return "arrays " + print; }

private:
  struct File {
    Mapped map;
    size_t offset = 0, bytes = 0;
  };
  std::vector<File> files;
  int64_t samples = 0;
  std::string print;
};

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

uint64_t splitMix(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace

std::unique_ptr<Dataset>
ober::rt::openDataset(const std::string &path,
                      const std::vector<SampleSpec> &specs,
                      std::string &error) {
  if (isDirectory(path)) {
    auto arrays = std::make_unique<Arrays>();
    if (!arrays->open(path, specs, error))
      return nullptr;
    return arrays;
  }
  std::string prefix = path;
  for (const char *ext : {".bin", ".idx"})
    if (prefix.size() > 4 && prefix.compare(prefix.size() - 4, 4, ext) == 0)
      prefix.resize(prefix.size() - 4);
  auto tokens = std::make_unique<Tokens>();
  if (!tokens->open(prefix, specs, error))
    return nullptr;
  return tokens;
}

int64_t SampleOrder::at(int64_t position) {
  int64_t e = position / n;
  if (e != epoch) {
    // Fisher-Yates from the seed and the epoch (the same on every rank
    // and every machine).
    epoch = e;
    order.resize(n);
    for (int64_t i = 0; i < n; ++i)
      order[i] = i;
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(e);
    for (int64_t i = n - 1; i > 0; --i) {
      int64_t j = static_cast<int64_t>(splitMix(state) %
                                       static_cast<uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
  }
  return order[position % n];
}
